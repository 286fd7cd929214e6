#!/usr/bin/python3
"""Applies LoRA adapters wasmformer exported in PEFT's layout to the base it exported, as PEFT
does, and reproduces wasmformer's logits in PyTorch. peft is not installed here (nor
installable): its LoRA layer is written out by hand, from PEFT's definition:

  adapter_config.json: r, lora_alpha, rank_pattern and alpha_pattern (keys matched against
  the end of a module's name), use_rslora; adapter_model.safetensors: for each adapted module
  M, base_model.model.M.lora_A.weight [r, in] and lora_B.weight [out, r]. The module's output
  gains lora_B(lora_A(x)) * scaling, scaling = lora_alpha / r (use_rslora: / sqrt(r)),
  whatever the layer's own storage (GPT-2's Conv1D keeps W as [in, out]: fan_in_fan_out).

Checks two ways: the adapters beside the frozen base (PeftModel's forward), and merged into
it (merge_and_unload: W += scaling B A, transposed for Conv1D).

Usage: /usr/bin/python3 tests/pytorch/check_peft.py DIR [tolerance]   (default 1e-5)
DIR: model.safetensors and config.json (the base), adapter_model.safetensors and
adapter_config.json, expected.safetensors (input_ids [B, T], logits [B, T, V] from
wasmformer). Writes DIR/torch_logits.safetensors (the adapters' forward). Exits 1 when a
difference exceeds the tolerance.
"""
import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hf_reference import lm_logits, load_dir, read_safetensors, write_safetensors  # noqa: E402

PREFIX = "base_model.model."


def pattern(patterns, module, default):
    """PEFT's rank_pattern / alpha_pattern: a key matching the module's name or its dotted end."""
    best = None
    for key, value in (patterns or {}).items():
        if module == key or module.endswith("." + key):
            if best is None or len(key) > len(best[0]):
                best = (key, value)
    return best[1] if best else default


def adapters(d):
    """{module: (A, B, scaling)} of a PEFT LoRA folder."""
    with open(os.path.join(d, "adapter_config.json")) as f:
        cfg = json.load(f)
    assert cfg["peft_type"] == "LORA" and not cfg.get("use_dora", False)
    weights = read_safetensors(os.path.join(d, "adapter_model.safetensors"))
    out = {}
    for name, a in weights.items():
        if not name.endswith(".lora_A.weight"):
            assert name.endswith(".lora_B.weight"), name
            continue
        module = name[len(PREFIX):-len(".lora_A.weight")]
        b = weights[name.replace(".lora_A.", ".lora_B.")]
        r = pattern(cfg.get("rank_pattern"), module, cfg["r"])
        alpha = pattern(cfg.get("alpha_pattern"), module, cfg["lora_alpha"])
        assert a.shape[0] == r and b.shape[1] == r, (module, a.shape, b.shape, r)
        scaling = alpha / (math.sqrt(r) if cfg.get("use_rslora", False) else r)
        out[module] = (a.float(), b.float(), scaling)
    return out, cfg


def merged(state, config, ad, fan_in_fan_out):
    """merge_and_unload: each adapted module's weight plus scaling B A (transposed for Conv1D)."""
    out = dict(state)
    for module, (a, b, s) in ad.items():
        delta = (b @ a) * s
        w = out[module + ".weight"].float()
        out[module + ".weight"] = w + (delta.t() if fan_in_fan_out else delta)
    return out


def main():
    d = sys.argv[1]
    tol = float(sys.argv[2]) if len(sys.argv) > 2 else 1e-5
    torch.set_num_threads(1)
    state, config = load_dir(d)
    ad, cfg = adapters(d)
    expected = read_safetensors(os.path.join(d, "expected.safetensors"))
    ids = expected["input_ids"].long()

    def lora(x, module):
        if module not in ad:
            return 0
        a, b, s = ad[module]
        return torch.nn.functional.linear(torch.nn.functional.linear(x, a), b) * s

    with torch.no_grad():
        logits = lm_logits(state, config, ids, lora)
        logits_merged = lm_logits(merged(state, config, ad, cfg.get("fan_in_fan_out", False)), config, ids)
        base = lm_logits(state, config, ids)
    diff = (logits - expected["logits"]).abs().max().item()
    diff_m = (logits_merged - expected["logits"]).abs().max().item()
    moved = (base - expected["logits"]).abs().max().item()
    print("PyTorch + PEFT-style LoRA (%s, %d adapted modules, r %d, targets %s) vs wasmformer logits %s: "
          "max abs diff %.3e beside the base, %.3e merged (the base alone differs by %.3e; tolerance %g)"
          % (config["model_type"], len(ad), cfg["r"], cfg["target_modules"], tuple(logits.shape), diff, diff_m, moved,
             tol))
    write_safetensors(os.path.join(d, "torch_logits.safetensors"), {"logits": logits})
    ok = diff <= tol and diff_m <= tol and moved > 100 * tol  # the adapters must matter
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
