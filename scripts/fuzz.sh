#!/usr/bin/env bash
# Fuzzes the loaders of hostile input with libFuzzer under AddressSanitizer and
# UndefinedBehaviorSanitizer: checkpoints, safetensors + config.json, tokenizer files and
# BPE/char training text, llama2.c model files, PEFT LoRA adapters (targets in tests/fuzz/). Needs clang-14 and libclang-rt-14-dev.
#   scripts/fuzz.sh [--m32] [seconds per target, default 60] [target ...]
# Each target starts from its committed seeds (tests/fuzz/corpus/<target>) plus what
# earlier runs found (build/fuzz/work/<target>), two targets at a time. A crash stops
# with its input saved under build/fuzz/crashes/<target>/: fix the bug, then commit the
# input to tests/fuzz/regressions/<target>/, where ctest replays it from then on.
# --m32: the targets built for 32 bits (-m32), where size_t is as narrow as in wasm and a
# size that wraps there wraps here too (issue 25); in build/fuzz32. Needs gcc-multilib and
# lib32stdc++-12-dev (libFuzzer is C++).
set -euo pipefail
cd "$(dirname "$0")/.."

build=build/fuzz
m32=()
if [ "${1:-}" = --m32 ]; then
  build=build/fuzz32
  m32=(-DWF_M32=ON)
  shift
fi
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(checkpoint safetensors tokenizer bpe llama2c tokjson tokbin peft)

cc=$(command -v clang-14 || command -v clang || true)
if [ -z "$cc" ]; then
  echo "fuzz.sh: clang is missing. On Debian 12: sudo apt-get install -y clang-14 libclang-rt-14-dev" >&2
  exit 1
fi
cmake -S . -B "$build" -DWF_FUZZ=ON "${m32[@]}" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j 2 >/dev/null

run_target() {
  local t=$1 work="$build/work/$1" crashes="$build/crashes/$1" log="$build/$1.log"
  mkdir -p "$work" "$crashes"
  # -rss_limit_mb: the 256 MB cap on described models plus the sanitizers' own memory;
  # -timeout: one input taking more than 10 s is a hang worth reporting.
  if ! "$build/fuzz_$t" "$work" "tests/fuzz/corpus/$t" -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb=2048 -max_len=65536 -artifact_prefix="$crashes/" -print_final_stats=1 >"$log" 2>&1; then
    echo "fuzz $t: FAILED; the input is in $crashes/, the log in $log:" >&2
    grep -E "ERROR|SUMMARY|fuzz property failed" "$log" | head -n 5 >&2
    return 1
  fi
  local runs
  runs=$(grep -m1 -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$')
  echo "fuzz${m32:+ (32-bit)} $t: $runs executions in ${seconds} s, 0 crashes ($(ls "tests/fuzz/corpus/$t" | wc -l) committed seeds; $(ls "$work" | wc -l) inputs in $work)"
}

status=0
pids=()
for t in "${targets[@]}"; do
  run_target "$t" &
  pids+=($!)
  if [ ${#pids[@]} -eq 2 ]; then
    for p in "${pids[@]}"; do wait "$p" || status=1; done
    pids=()
  fi
done
for p in "${pids[@]}"; do wait "$p" || status=1; done
exit $status
