#!/bin/sh
# Do the new defaults' wins hold on other texts (issue 14, item 6)? Today's `wasmformer train`
# recipe (tiny, batch 8, lr 2e-3, beta2 0.95, AdamW) and the new default (micro, batch 16,
# lr 3e-3, beta2 0.99, Muon) train side by side, at the same time, for the same time budget
# (train's seconds: each schedule fitted to the budget), one thread each, in Node; the
# shared evaluation scores each text's own held-out 10 % at the end. Texts: Emma (another
# novel, char tokenizer) and Pride and Prejudice with a 512-token BPE tokenizer (bits per
# character compare across tokenizers).
#   sh bench/ttq/texts.sh OUT [SECONDS]
set -eu
out=$1 secs=${2:-240} here=$(dirname "$0")
mkdir -p "$out"
old="--preset tiny --batch 8 --lr 2e-3 --beta2 0.95 --muon 0"
new="--preset micro --batch 16 --lr 3e-3 --beta2 0.99 --muon 1"
pair() { # name, extra flags
  node "$here/wasmformer_run.mjs" $old --seconds "$secs" --eval-every 0 $2 > "$out/$1-old.jsonl" &
  node "$here/wasmformer_run.mjs" $new --seconds "$secs" --eval-every 0 $2 > "$out/$1-new.jsonl" &
  wait
}
pair emma "--text $here/../../data/austen/emma.txt --other $here/../../data/austen/persuasion.txt"
pair bpe "--tokenizer bpe:512"
