/* The one-row quantized dots of src/qsimd.h alone, in wasm, on rows streamed from memory (a
 * study for issue 29's decoding: bench/studies/qdot_wasm.mjs drives it and has the commands).
 * Built freestanding with Debian's clang-19 against emscripten's libc headers: no libc is
 * linked (the kernels call none). */
#include "qsimd.h"

/* The sum of rows dots of the rows at w (nb blocks each, packed as the model holds them)
 * against one activation row x (packed, or its split for relaxed Q8_0), xd, xs. */
__attribute__((export_name("rows8"))) float rows8(const uint8_t *w, int rows, int nb, const int8_t *x, const float *xd,
                                                  const int32_t *xs) {
    float tot = 0;
    for (int r = 0; r < rows; r++) tot += wf_q8_row(w + (size_t)r * nb * WF_Q8_BYTES, x, xd, xs, nb);
    return tot;
}
__attribute__((export_name("rows4"))) float rows4(const uint8_t *w, int rows, int nb, const int8_t *x, const float *xd,
                                                  const int32_t *xs) {
    float tot = 0;
    for (int r = 0; r < rows; r++) tot += wf_q4_row(w + (size_t)r * nb * WF_Q4_BYTES, x, xd, xs, nb);
    return tot;
}
