// The one-row Q8_0 and Q4_0 dots (src/qsimd.h) alone in wasm: ~140 MB of Q8_0 rows or ~75 MB of
// Q4_0 rows (the SmolLM-135M shape's bytes per decoded token) streamed from memory, at the
// shape's two widths (18 and 48 blocks a row), CPU time, the best of 5; GB/s of weights read.
// What a decoded token's product costs without the rest of the model (issue 29's study).
//   clang-19 --target=wasm32-unknown-emscripten --sysroot=/usr/share/emscripten/cache/sysroot \
//     -Isrc -Iinclude -O3 -msimd128 [-mrelaxed-simd] -nostdlib -Wl,--no-entry -Wl,--import-memory \
//     -Wl,--allow-undefined -Wl,--max-memory=1073741824 -o build/qdot.wasm bench/studies/qdot_wasm.c
//   node bench/studies/qdot_wasm.mjs build/qdot.wasm
// (Random quants, scales of 1: the timing does not depend on the values.)
import { readFileSync } from 'node:fs';

const file = process.argv[2];
if (!file) { console.error('usage: node bench/studies/qdot_wasm.mjs FILE.wasm'); process.exit(2); }
const mem = new WebAssembly.Memory({ initial: 4096, maximum: 16384 });
const { instance } = await WebAssembly.instantiate(readFileSync(file), { env: { memory: mem } });
const e = instance.exports, bytes = new Uint8Array(mem.buffer);
const W = 1 << 20, X = 64, XD = 16384, XS = 20480;
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
function setup(nb, blockBytes, rows) {
  const rb = nb * blockBytes;
  for (let i = 0; i < rows * rb; i++) bytes[W + i] = (i * 2654435761) >>> 24;
  for (let r = 0; r < rows; r++) for (let b = 0; b < nb; b++) bytes.set([0, 0x3c], W + r * rb + nb * (blockBytes - 2) + 2 * b);
  for (let i = 0; i < 2 * nb * 32; i++) bytes[X + i] = (i * 37) % 128;
  new Float32Array(mem.buffer, XD, nb).fill(0.01);
  new Int32Array(mem.buffer, XS, nb).fill(3);
}
function time(f) {
  let best = Infinity;
  for (let k = 0; k < 5; k++) { f(); const t0 = cpu(); let n = 0; while (cpu() - t0 < 0.3) { f(); n++; } best = Math.min(best, (cpu() - t0) / n); }
  return best;
}
console.log(`${file}, Node ${process.version}`);
console.log('| weights | blocks a row | ms a pass | GB/s |');
console.log('|---|---:|---:|---:|');
for (const nb of [18, 48]) {
  for (const [name, bb, total, f] of [['Q8_0', 34, 140e6, e.rows8], ['Q4_0', 18, 75e6, e.rows4]]) {
    const rows = Math.floor(total / (nb * bb));
    setup(nb, bb, rows);
    const s = time(() => f(W, rows, nb, X, XD, XS));
    console.log(`| ${name} | ${nb} | ${(s * 1000).toFixed(2)} | ${(rows * nb * bb / s / 1e9).toFixed(1)} |`);
  }
}
