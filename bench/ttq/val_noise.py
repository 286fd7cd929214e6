#!/usr/bin/env python3
"""How far a validation loss from a few random batches strays from the full evaluation,
for a model saved by `reference.py --save FILE`: draws N random windows of the held-out
split (starts uniform, as wasmformer's and nanoGPT's validation draw them), and reports the
spread of the mean over 4 batches of 12 (wasmformer train's validation) and over 20
batches of 12 (the nanoGPT README's --eval_iters=20), next to the full evaluation.
  /usr/bin/python3 bench/ttq/val_noise.py FILE [--windows 2400]"""
import argparse
import math

import torch
import torch.nn.functional as F

import reference as ref


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model")
    p.add_argument("--windows", type=int, default=2400)
    a = p.parse_args()
    saved = torch.load(a.model)
    s = saved["settings"]
    text = open(ref.os.path.join(ref.ROOT, "data/austen/pride_and_prejudice.txt"), encoding="utf-8").read()
    ids = ref.encode(text, ref.char_vocab(text))
    val = ids[len(ids) - ref.held_out_size(len(ids)):]
    T = s["context"]
    model = ref.Decoder(saved["vocab"], T, s["layers"], s["heads"], s["width"], 4 * s["width"], s["bias"], s["gelu"])
    model.load_state_dict(saved["state"])
    full, _ = ref.evaluate(model, val, T)
    g = torch.Generator().manual_seed(12345)
    starts = torch.randint(len(val) - T, (a.windows,), generator=g)
    per_window = []
    with torch.no_grad():
        for i in range(0, a.windows, 64):
            st = starts[i:i + 64]
            x = torch.stack([val[j:j + T] for j in st])
            y = torch.stack([val[j + 1:j + T + 1] for j in st])
            logits = model(x)
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1), reduction="none")
            per_window += loss.view(len(st), T).mean(dim=1).tolist()
    w = torch.tensor(per_window, dtype=torch.float64)
    sd = w.std().item()
    print(f"full evaluation {full:.4f}; mean of {a.windows} random windows {w.mean().item():.4f}; per-window sd {sd:.4f}")
    for name, n in [("4 x 12 (wasmformer train)", 48), ("20 x 12 (nanoGPT README)", 240)]:
        draws = torch.stack([w[torch.randint(len(w), (n,), generator=g)].mean() for _ in range(2000)])
        print(f"{name}: sd of the estimate {draws.std().item():.4f} (sd/sqrt(n) {sd / math.sqrt(n):.4f}); "
              f"95 % of estimates within +-{(draws - full).abs().quantile(0.95).item():.4f} of the full evaluation")


if __name__ == "__main__":
    main()
