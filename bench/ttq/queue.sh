#!/bin/sh
# Runs the jobs of a file (one a line: NAME then the command's arguments), PARALLEL (2) at a time,
# each into OUT/NAME.jsonl; a job whose file exists when its turn comes (done, or running in
# another queue) is skipped: delete a file to run its job again.
#   sh bench/ttq/queue.sh bench/ttq/jobs.txt /tmp/ttq-runs
# A line's arguments go to reference.py, to wasmformer_run.mjs when NAME starts with wf-, or to
# the native curve (build/native/ttq_curve, key=value arguments) when it starts with nat-.
set -eu
jobs=$1 out=$2 here=$(dirname "$0")
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp OMP_NUM_THREADS=1
grep -v '^#' "$jobs" | grep . | while read -r name args; do
  case $name in
    wf-*) run="node $here/wasmformer_run.mjs" ;;
    nat-*) run="$here/../../build/native/ttq_curve" ;;
    *) run="/usr/bin/python3 $here/reference.py" ;;
  esac
  echo "[ -e $out/$name.jsonl ] || $run $args > $out/$name.jsonl 2> $out/$name.err"
done | xargs -P "${PARALLEL:-2}" -I{} sh -c '{}'
