#!/usr/bin/env bash
# Builds the WebAssembly modules (ES module glue + .wasm), Debian's emscripten 3.1.6:
#   dist/wasmformer.mjs/.wasm        SIMD, single thread: runs everywhere (the fallback)
#   dist/wasmformer-mt.mjs/.wasm     SIMD + pthreads: Node, and browsers when crossOriginIsolated
#                                    (src/js/loader.js picks it); Node's pthreads run .worker.js,
#                                    browsers' the glue itself (scripts/pthread-glue.mjs)
#   dist/wasmformer-relaxed{,-mt}.*  the same two with relaxed SIMD (f32x4.relaxed_madd: one
#                                    fused multiply-add where the engine has it), compiled by
#                                    Debian's clang-19 under emcc; loader.js picks them where
#                                    WebAssembly.validate accepts relaxed SIMD
#   dist/bench/wasmformer-ref.*      reference kernels, no SIMD: the benchmark's baseline,
#                                    built only by `./build.sh ref` (bench/run.mjs does it)
#   build/wasm-tests/test_{simd,quant}{,-mt}.js  tests/test_simd.c and tests/test_quant.c in
#                                    wasm, single-thread and with pthreads, built only by
#                                    `./build.sh tests` (npm test runs them in Node: the wasm SIMD
#                                    kernels, float and quantized, against their scalar
#                                    references, the pool and its workers' stacks)
#   build/wasm-tests/test_{simd,quant}-relaxed{,-mt}.js  the same with the relaxed kernels,
#                                    compiled and linked as the relaxed builds are:
#                                    `./build.sh relaxed-tests`
#   build/wasm-bench/bench_wasmformer{,-mt}.js  bench/bench.c in wasm (SIMD128; the step's
#                                    profile by kernel, in V8), built only by `./build.sh bench`
#                                    (not relaxed: clang-19 names a main(argc, argv) as emcc 3.1.6
#                                    does not look for, so the program would never start)
#   build/wasm-tests/example_train.js  examples/c/train.c as a Node program (SIMD, one thread,
#                                    Node's file system): `./build.sh example` (npm test runs it,
#                                    and holds its losses to the package's: tests/js/example.test.mjs)
# Usage: ./build.sh [--force] [ref] [tests] [relaxed-tests] [bench] [example]
set -euo pipefail
cd "$(dirname "$0")"

OUT=dist
# The core's sources: one list, src/sources.txt, which CMakeLists.txt reads too.
mapfile -t SOURCES < <(sed -n 's|^\([^#].*\)$|src/\1|p' src/sources.txt)
FORCE=""
VARIANTS=(st mt relaxed relaxed-mt)
for arg in "$@"; do
  case "$arg" in
    --force) FORCE=--force ;;
    ref) VARIANTS=(ref) ;;
    tests) VARIANTS=(tests) ;;
    relaxed-tests) VARIANTS=(relaxed-tests) ;;
    bench) VARIANTS=(bench) ;;
    example) VARIANTS=(example) ;;
    *) echo "build.sh: unknown argument $arg (use --force, ref, tests, relaxed-tests, bench or example)" >&2; exit 2 ;;
  esac
done

# The JavaScript copy of the header's config tables (src/js/config-table.js); in CI only
# checked, so that a stale committed copy fails instead of being rewritten.
node scripts/gen-config.mjs ${CI:+--check}

need_emcc() {
  command -v emcc >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && { [ -n "${CI:-}" ] || [ ! -t 0 ]; }; then
    echo "build.sh: emcc not found; installing Debian's emscripten (apt-get install -y emscripten)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -q >&2 &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q emscripten >&2
    command -v emcc >/dev/null 2>&1 && return 0
  fi
  cat >&2 <<'MSG'
build.sh: emcc (Emscripten) is not installed. On Debian 12 or Ubuntu run:
    sudo apt-get install -y emscripten
then run this script again.
MSG
  exit 1
}

# Relaxed SIMD needs the standard opcodes (f32x4.relaxed_madd = 0xfd 0x85 0x02), which LLVM 14
# (emscripten 3.1.6's) does not emit; Debian's clang-19 does. emcc drives it through a folder
# of the tool names it looks for: clang, clang++ and wasm-ld from LLVM 19, the archive and
# symbol tools from LLVM 14 (Debian has no llvm-19 tools package to install beside them).
need_clang19() {
  if ! command -v clang-19 >/dev/null 2>&1 || ! command -v wasm-ld-19 >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && { [ -n "${CI:-}" ] || [ ! -t 0 ]; }; then
      echo "build.sh: clang-19 or wasm-ld-19 not found; installing Debian's clang-19 lld-19" >&2
      DEBIAN_FRONTEND=noninteractive apt-get update -q >&2 &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q clang-19 lld-19 >&2
    fi
  fi
  if ! command -v clang-19 >/dev/null 2>&1 || ! command -v wasm-ld-19 >/dev/null 2>&1; then
    cat >&2 <<'MSG'
build.sh: the relaxed-SIMD builds need clang-19 and lld-19. On Debian 12 run:
    sudo apt-get install -y clang-19 lld-19
then run this script again.
MSG
    exit 1
  fi
  local tools=$PWD/build/llvm19
  mkdir -p "$tools"
  for t in clang clang++ wasm-ld; do ln -sf "$(command -v $t-19)" "$tools/$t"; done
  for t in llvm-ar llvm-nm llvm-ranlib llvm-objcopy llvm-dwarfdump llvm-strip; do ln -sf "/usr/bin/$t-14" "$tools/$t"; done
  export EM_LLVM_ROOT=$tools EM_LLVM_ADD_VERSION= EM_CLANG_ADD_VERSION=
}

# Skip a build when its outputs are newer than every input.
up_to_date() { # base name
  [ -z "$FORCE" ] || return 1
  [ -f "$1.wasm" ] && [ -f "$1.mjs" ] || return 1
  local newer
  newer=$(find src include build.sh scripts/pthread-glue.mjs -newer "$1.wasm" -type f 2>/dev/null | head -n 1)
  [ -z "$newer" ]
}

# emcc's JS optimizer at -O1 and above needs acorn, which Debian ships under /usr/share/nodejs.
export NODE_PATH="${NODE_PATH:+$NODE_PATH:}/usr/share/nodejs"

EXPORTS=$(grep -v '^#' src/exports.txt | grep -v '^$' | sed 's/^/_/' | paste -sd, -)

FLAGS=(
  -O3                          # speed; no -ffast-math: it breaks NaN checks and fixture sums
  -std=c11                     # the C the core is written in, as the native build (CMakeLists.txt)
  -Wall -Wextra -Werror        # the native build's warnings, as errors: wasm-only slips fail here too
  -Wno-unused-parameter        # op signatures keep llm.c's full argument order even when unused
  -Iinclude -Isrc              # the public header, and the private ones beside the sources
  -sMODULARIZE -sEXPORT_ES6    # an ES module exporting a factory
  -sEXPORT_NAME=createWasmformerModule  # the factory's name, which src/js/loader.js imports
  -sALLOW_MEMORY_GROWTH        # models and batches of any size up to the limit below
  -sMAXIMUM_MEMORY=4GB         # all that wasm32 addresses; the core refuses beyond it (WF_ERR_NOMEM)
  -sABORTING_MALLOC=0          # malloc returns NULL instead of aborting: the core reports WF_ERR_NOMEM
  -sINITIAL_MEMORY=16MB        # enough for the glue and a small model; it grows from there
  -sTOTAL_STACK=2MB            # the 3.1.6 name of STACK_SIZE; wf_matmul packs ~310 KB on the stack
  -sFILESYSTEM=0               # the core reads and writes memory buffers only
  -mbulk-memory                # memcpy/memset as memory.copy/fill: without it 3.1.6 calls out to JS
                               # for every copy of 512 bytes or more (a KV cache row in decoding);
                               # -pthread turns it on anyway, and every SIMD-capable engine has it
  -sEXPORTED_FUNCTIONS="$EXPORTS"  # src/exports.txt: every WF_API function, malloc and free
  -sEXPORTED_RUNTIME_METHODS=[]    # the JS side reads the heap views directly; no runtime helpers
)
SIMD=(-msimd128)               # wasm SIMD (Node 16+, every current browser); src/simd.h's wasm backend
RELAXED=(
  -msimd128 -mrelaxed-simd     # src/simd.h's wf_vmadd becomes f32x4.relaxed_madd
  -sWASM_BIGINT                # no i64 legalisation: binaryen (108, which cannot read the standard
                               # relaxed opcodes) then never rewrites the module
  -sERROR_ON_WASM_CHANGES_AFTER_LINK  # and if a flag ever made it, the build fails here, loudly
)
ST=(-sENVIRONMENT=web,worker)  # 3.1.6's node glue mis-loads in ESM; Node passes wasmBinary instead
MT=(
  -pthread -DWF_THREADS        # shared memory + Web Workers; src/pool.c's worker threads
  -sENVIRONMENT=web,worker,node  # the pthread glue needs Node's worker_threads in Node
  -sPTHREAD_POOL_SIZE=Module.wfWorkers\|\|0  # Web Workers loaded before the module resolves, as
                               # many as loader.js asks for: only those can start a thread without
                               # the main thread yielding (src/pool.c waits for them to check in)
  -sDEFAULT_PTHREAD_STACK_SIZE=2MB  # any thread but the pool's, which sets WF_POOL_STACK (src/pool.h)
  -Wno-pthreads-mem-growth     # growth with threads is slower in JS glue, not in wasm code
)

build() { # base name, flags...
  local base=$1
  shift
  if up_to_date "$base"; then
    echo "build.sh: $base.wasm is up to date"
    return 0
  fi
  need_emcc
  mkdir -p "$(dirname "$base")"
  emcc "${FLAGS[@]}" "$@" "${SOURCES[@]}" -o "$base.mjs"
  # The pthread worker script is CommonJS; the package is "type": "module", so tell Node
  # that this folder's .js files are CommonJS (the glue itself is .mjs either way).
  if [ -f "$base.worker.js" ]; then
    # in browsers the glue is its own pthread worker, a module worker (the script says why)
    node scripts/pthread-glue.mjs "$base.mjs"
    echo '{ "type": "commonjs" }' > "$(dirname "$base")/package.json"
  fi
  echo "build.sh: built $base.mjs and $base.wasm ($(stat -c %s "$base.wasm") bytes)"
}

# The relaxed-SIMD builds: each source compiled at -O3 by clang-19, then linked at -O1, where
# emcc runs no wasm-opt (binaryen 108 cannot parse the standard relaxed opcodes). V8 compiles
# the module itself; the cost of skipping wasm-opt is measured in bench/ (relaxed vs simd128).
# The relaxed kernel tests (relaxed-tests below) are made the same way, so they test the code
# that ships rather than an -O1 compile of it.
relaxed_objects() { # object folder, flags...: compiles SRCS (an array) there, into OBJS
  local obj=$1
  shift
  local cflags=()
  for f in "$@"; do case "$f" in -s*) ;; *) cflags+=("$f") ;; esac; done  # settings are the linker's
  mkdir -p "$obj"
  OBJS=()
  for s in "${SRCS[@]}"; do
    emcc "${cflags[@]}" -c "$s" -o "$obj/$(basename "$s" .c).o"
    OBJS+=("$obj/$(basename "$s" .c).o")
  done
}

build_relaxed() ( # base name, flags... (a subshell: EM_LLVM_ROOT stays here)
  local base=$1
  shift
  if up_to_date "$base"; then
    echo "build.sh: $base.wasm is up to date"
    exit 0
  fi
  need_emcc
  need_clang19
  mkdir -p "$(dirname "$base")"
  SRCS=("${SOURCES[@]}")
  relaxed_objects "build/relaxed-obj/$(basename "$base")" "${FLAGS[@]}" "$@"
  emcc "${FLAGS[@]/-O3/-O1}" "$@" "${OBJS[@]}" -o "$base.mjs"
  if [ -f "$base.worker.js" ]; then
    # in browsers the glue is its own pthread worker, a module worker (the script says why)
    node scripts/pthread-glue.mjs "$base.mjs"
    echo '{ "type": "commonjs" }' > "$(dirname "$base")/package.json"
  fi
  echo "build.sh: built $base.mjs and $base.wasm ($(stat -c %s "$base.wasm") bytes, relaxed SIMD)"
)

# A C program (a test, or bench/bench.c) as a Node program: its own main, exit status and
# stdout; the glue is CommonJS.
TEST_FLAGS=(
  -O3 -std=c11 -Wall -Wextra -Werror -Wno-unused-parameter -Iinclude -Isrc -Itests  # as above
  -mbulk-memory                # as the package's builds: the kernels' objects are then the shipped ones
  -sENVIRONMENT=node           # run by Node, not loaded by the package
  -sWASM_ASYNC_COMPILATION=0   # 3.1.6's async path fetch()es a file path in Node 18+ and fails
  -sALLOW_MEMORY_GROWTH -sMAXIMUM_MEMORY=4GB -sTOTAL_STACK=2MB  # as the package's builds
  -sEXIT_RUNTIME=1             # main's return value is the process's exit status
)
test_build() { # output without .js, main source, flags...
  local out=$1 main=$2
  shift 2
  need_emcc
  mkdir -p "$(dirname "$out")"
  echo '{ "type": "commonjs" }' > "$(dirname "$out")/package.json"
  emcc "${TEST_FLAGS[@]}" "$@" "$main" "${SOURCES[@]}" -o "$out.js"
  echo "build.sh: built $out.js"
}

# Threads in a test or bench program: a pool of four workers made before main runs.
TEST_MT=(-pthread -DWF_THREADS -sPTHREAD_POOL_SIZE=4 -Wno-pthreads-mem-growth)

# The C example as a Node program: the package's single-thread SIMD build of the core (the
# same flags, so the same numbers), with Node's file system for the text it reads.
example_build() {
  local out=build/wasm-tests/example_train
  need_emcc
  mkdir -p build/wasm-tests
  echo '{ "type": "commonjs" }' > build/wasm-tests/package.json
  emcc "${TEST_FLAGS[@]}" "${SIMD[@]}" -sNODERAWFS=1 examples/c/train.c "${SOURCES[@]}" -o "$out.js"
  echo "build.sh: built $out.js"
}

# The same with the relaxed kernels, compiled at -O3 and linked at -O1 as build_relaxed does.
test_build_relaxed() ( # output without .js, main source, flags... (a subshell, as build_relaxed)
  local out=$1 main=$2
  shift 2
  need_emcc
  need_clang19
  mkdir -p "$(dirname "$out")"
  echo '{ "type": "commonjs" }' > "$(dirname "$out")/package.json"
  SRCS=("$main" "${SOURCES[@]}")
  relaxed_objects "build/relaxed-obj/$(basename "$out")" "${TEST_FLAGS[@]}" "$@"
  emcc "${TEST_FLAGS[@]/-O3/-O1}" "$@" "${OBJS[@]}" -o "$out.js"
  echo "build.sh: built $out.js (relaxed SIMD)"
)

for v in "${VARIANTS[@]}"; do
  case "$v" in
    st) build "$OUT/wasmformer" "${SIMD[@]}" "${ST[@]}" ;;
    mt) build "$OUT/wasmformer-mt" "${SIMD[@]}" "${MT[@]}" ;;
    relaxed) build_relaxed "$OUT/wasmformer-relaxed" "${RELAXED[@]}" "${ST[@]}" ;;
    relaxed-mt) build_relaxed "$OUT/wasmformer-relaxed-mt" "${RELAXED[@]}" "${MT[@]}" ;;
    ref) build "$OUT/bench/wasmformer-ref" -DWF_REFERENCE_KERNELS "${ST[@]}" ;;
    tests)
      for t in simd quant; do
        test_build build/wasm-tests/test_$t tests/test_$t.c "${SIMD[@]}"
        test_build build/wasm-tests/test_$t-mt tests/test_$t.c "${SIMD[@]}" "${TEST_MT[@]}"
      done ;;
    example) example_build ;;
    relaxed-tests)
      for t in simd quant; do
        test_build_relaxed build/wasm-tests/test_$t-relaxed tests/test_$t.c "${RELAXED[@]}"
        test_build_relaxed build/wasm-tests/test_$t-relaxed-mt tests/test_$t.c "${RELAXED[@]}" "${TEST_MT[@]}"
      done ;;
    bench)
      test_build build/wasm-bench/bench_wasmformer bench/bench.c "${SIMD[@]}"
      test_build build/wasm-bench/bench_wasmformer-mt bench/bench.c "${SIMD[@]}" "${TEST_MT[@]}" ;;
  esac
done
