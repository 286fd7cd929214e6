#!/usr/bin/env bash
# Builds the WebAssembly module: dist/wasmformer.mjs (ES module glue) + dist/wasmformer.wasm.
# Needs Debian's emscripten (3.1.6). Usage: ./build.sh [--force]
set -euo pipefail
cd "$(dirname "$0")"

OUT=dist
SOURCES=(src/util.c src/embed.c src/norm.c src/linear.c src/attention.c src/activation.c
         src/rope.c src/loss.c src/optim.c src/model.c src/generate.c src/seq2seq.c src/tokenizer.c src/bpe.c
         src/checkpoint.c src/safetensors.c)

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

# Skip the build when the outputs are newer than every input.
up_to_date() {
  [ "${1:-}" != "--force" ] || return 1
  [ -f "$OUT/wasmformer.wasm" ] && [ -f "$OUT/wasmformer.mjs" ] || return 1
  local newer
  newer=$(find src include build.sh -newer "$OUT/wasmformer.wasm" -type f 2>/dev/null | head -n 1)
  [ -z "$newer" ]
}

if up_to_date "${1:-}"; then
  echo "build.sh: dist/wasmformer.wasm is up to date"
  exit 0
fi
need_emcc

# emcc's JS optimizer at -O1 and above needs acorn, which Debian ships under /usr/share/nodejs.
export NODE_PATH="${NODE_PATH:+$NODE_PATH:}/usr/share/nodejs"

EXPORTS=$(grep -v '^#' src/exports.txt | grep -v '^$' | sed 's/^/_/' | paste -sd, -)
mkdir -p "$OUT"

FLAGS=(
  -O3                          # speed; no -ffast-math: it breaks NaN checks and fixture sums
  -msimd128                    # wasm SIMD (Node 16+, every current browser)
  -std=c11 -Wall -Wextra -Werror -Wno-unused-parameter
  -Iinclude -Isrc
  -sMODULARIZE -sEXPORT_ES6    # an ES module exporting a factory
  -sEXPORT_NAME=createWasmformerModule
  -sENVIRONMENT=web,worker     # 3.1.6's node glue mis-loads in ESM; Node passes wasmBinary instead
  -sALLOW_MEMORY_GROWTH        # models and batches of any size up to the limit below
  -sMAXIMUM_MEMORY=4GB
  -sABORTING_MALLOC=0          # malloc returns NULL instead of aborting: the core reports WF_ERR_NOMEM
  -sINITIAL_MEMORY=16MB
  -sTOTAL_STACK=1MB             # the 3.1.6 name of STACK_SIZE
  -sFILESYSTEM=0               # the core reads and writes memory buffers only
  -sEXPORTED_FUNCTIONS="$EXPORTS"
  -sEXPORTED_RUNTIME_METHODS=[]
)

emcc "${FLAGS[@]}" "${SOURCES[@]}" -o "$OUT/wasmformer.mjs"
echo "build.sh: built $OUT/wasmformer.mjs and $OUT/wasmformer.wasm ($(stat -c %s "$OUT/wasmformer.wasm") bytes)"
