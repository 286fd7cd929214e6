#!/usr/bin/python3
"""Writes DIR/model.onnx from the Llama-layout model in DIR (config.json, model.safetensors, as
wasmformer exports it), for ONNX Runtime Web to run the same weights as wasmformer (the
anchor of bench/studies/smollm-anchor.mjs). The graph is one decoding step over a KV cache:

  inputs   input_ids [1, S] (int64), past_key_i, past_value_i [1, NKV, P, HS] (float32, i < L)
  outputs  logits [1, S, V], present_key_i, present_value_i [1, NKV, P + S, HS]

S and P are free: a prompt is one call with P = 0, each new token a call with S = 1. The
model is examples/pytorch/hf_model.py's LlamaLM (the maths of transformers' LlamaForCausalLM),
traced by torch.onnx.export (opset 14).

Usage: /usr/bin/python3 bench/studies/smollm_onnx.py DIR
"""
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "pytorch"))
import hf_model  # noqa: E402


class Step(torch.nn.Module):
    """LlamaLM's KV-cache forward with the cache as flat arguments and results."""

    def __init__(self, lm):
        super().__init__()
        self.lm = lm

    def forward(self, input_ids, *past):
        logits, present = self.lm(input_ids, [(past[2 * i], past[2 * i + 1]) for i in range(len(past) // 2)])
        return (logits, *[t for kv in present for t in kv])


def main():
    d = sys.argv[1]
    t0 = time.time()
    lm = hf_model.load(d, impl="plain")
    layer = lm.model.layers[0]
    L, NKV, HS = len(lm.model.layers), layer.nkv, layer.hs
    ids = torch.zeros(1, 4, dtype=torch.int64)
    past = [torch.zeros(1, NKV, 3, HS) for _ in range(2 * L)]
    kv = lambda kind: [f"{kind}_{w}_{i}" for i in range(L) for w in ("key", "value")]
    axes = {"input_ids": {1: "S"}, "logits": {1: "S"}}
    axes.update({n: {2: "P"} for n in kv("past")})
    axes.update({n: {2: "P_plus_S"} for n in kv("present")})
    with torch.no_grad():
        torch.onnx.export(Step(lm).eval(), (ids, *past), os.path.join(d, "model.onnx"), opset_version=14,
                          input_names=["input_ids", *kv("past")], output_names=["logits", *kv("present")],
                          dynamic_axes=axes, do_constant_folding=True)
    print("%s: %d layers, %d KV heads of %d, %.0f MB, written in %.1f s"
          % (os.path.join(d, "model.onnx"), L, NKV, HS, os.path.getsize(os.path.join(d, "model.onnx")) / 2 ** 20, time.time() - t0))


if __name__ == "__main__":
    main()
