#!/usr/bin/python3
"""Loads a model wasmformer exported and reproduces wasmformer's logits in PyTorch, then
saves the model back as a PyTorch user would, for the return trip.

Usage: /usr/bin/python3 tests/pytorch/check_export.py DIR [tolerance]   (default 1e-5)

DIR holds wasmformer's export (model.safetensors, config.json) and expected.safetensors:
input_ids [B, T] and the logits [B, T, V] wasmformer computed for them. Prints the largest
absolute difference between PyTorch's logits (hf_reference.py: GPT2LMHeadModel's or
LlamaForCausalLM's forward in plain PyTorch, from the Hugging Face names as exported) and
wasmformer's, and exits 1 when it exceeds the tolerance. Writes DIR/torch/: model.safetensors
with the full state dict as PyTorch holds it (float32, lm_head.weight included even when
tied), config.json, and logits.safetensors with PyTorch's logits.
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hf_reference import full_state, lm_logits, load_dir, read_safetensors, write_safetensors  # noqa: E402


def main():
    d = sys.argv[1]
    tol = float(sys.argv[2]) if len(sys.argv) > 2 else 1e-5
    torch.set_num_threads(1)
    state, config = load_dir(d)
    expected = read_safetensors(os.path.join(d, "expected.safetensors"))
    ids = expected["input_ids"].long()
    with torch.no_grad():
        logits = lm_logits(state, config, ids)
    diff = (logits - expected["logits"]).abs().max().item()
    print("PyTorch (%s, %d tensors) vs wasmformer logits %s: max abs diff %.3e (tolerance %g)"
          % (config.get("architectures", [config["model_type"]])[0], len(state), tuple(logits.shape), diff, tol))
    out = os.path.join(d, "torch")
    os.makedirs(out, exist_ok=True)
    full = full_state(state, config)
    write_safetensors(os.path.join(out, "model.safetensors"), {k: v.clone() for k, v in full.items()}, {"format": "pt"})
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    write_safetensors(os.path.join(out, "logits.safetensors"), {"logits": logits})
    sys.exit(0 if diff <= tol else 1)


if __name__ == "__main__":
    main()
