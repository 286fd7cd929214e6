#!/usr/bin/env python3
"""PyTorch's rows of the speed table (bench/run.mjs), on the same configs and the same
measurements as bench/bench.c and bench/wasm.mjs, so every table has its peer from the
same run.

  python3 bench/torch_ref.py A|B [--steps N] [--warmup N] [--threads N] [--gen N] [--batch N] [--vocab V] [--cpu]

--batch and --vocab change the config's batch size and vocabulary: the CLI row of the table
(nanoGPT's CPU recipe, config A's shape at batch 12, the bundled text's characters).

The model is the one the wasm and native rows time (bench/configs.mjs, wasmformer's
defaults): a decoder with learned positions, Pre-LN LayerNorm with biases, tanh GELU, an
MLP of width 4C, biases in every linear, the output head tied to the token embedding,
AdamW (betas 0.9/0.95, weight decay 0.1 on matrices and embeddings, gradient clipping at
1.0). Written here for the benchmark; nothing is imported from wasmformer.

- Training: median seconds of one step (forward, backward, clipping, AdamW) on a fixed
  random batch of B x T tokens after --warmup steps; train_tok_s = B T / that.
- Generation: 128 new tokens from a 16-token prompt at batch 1 (temperature 0.8, no top-k),
  with a KV cache and wasmformer's window slide (a full context keeps its newest half and
  re-reads it), median of --gen runs after one warm-up; decode_tok_s: the T - 16 tokens
  after the prompt, which fill the cache without a slide.

Prints one JSON line like bench_wasmformer's. Run it with OpenBLAS (Debian's reference
BLAS is ~16x slower and no fair peer):
  LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp OMP_NUM_THREADS=1 \\
    /usr/bin/python3 bench/torch_ref.py A --steps 5 --gen 3
"""
import argparse
import json
import math
import resource
import statistics
import time

import torch
import torch.nn.functional as F

clock = time.perf_counter  # --cpu: time.process_time (one thread on a busy machine)

CONFIGS = {  # bench/configs.mjs
    "A": dict(V=96, L=4, NH=4, C=128, T=64, B=8),
    "B": dict(V=96, L=6, NH=6, C=384, T=256, B=4),
}


class Block(torch.nn.Module):
    def __init__(self, C, NH):
        super().__init__()
        self.NH = NH
        self.ln1 = torch.nn.LayerNorm(C)
        self.qkv = torch.nn.Linear(C, 3 * C)
        self.proj = torch.nn.Linear(C, C)
        self.ln2 = torch.nn.LayerNorm(C)
        self.fc = torch.nn.Linear(C, 4 * C)
        self.fcproj = torch.nn.Linear(4 * C, C)

    def heads(self, x):  # [B, T, C] -> [B, NH, T, HS]
        B, T, C = x.shape
        return x.view(B, T, self.NH, C // self.NH).transpose(1, 2)

    def forward(self, x, cache=None, pos=0):
        """cache: None (training: causal over x) or [k, v] tensors [1, NH, context, HS]
        holding positions [0, pos); x's rows are positions pos, pos + 1, ..."""
        B, T, C = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        q, k, v = self.heads(q), self.heads(k), self.heads(v)
        if cache is None:
            mask = torch.ones(T, T, dtype=torch.bool).tril()
        else:
            cache[0][:, :, pos:pos + T] = k
            cache[1][:, :, pos:pos + T] = v
            k, v = cache[0][:, :, :pos + T], cache[1][:, :, :pos + T]
            mask = torch.ones(T, pos + T, dtype=torch.bool).tril(diagonal=pos)
        s = (q @ k.transpose(-2, -1)) / math.sqrt(C // self.NH)
        a = s.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = (a @ v).transpose(1, 2).reshape(B, T, C)
        x = x + self.proj(y)
        return x + self.fcproj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GPT(torch.nn.Module):
    def __init__(self, V, L, NH, C, T):
        super().__init__()
        self.T = T
        self.wte = torch.nn.Embedding(V, C)
        self.wpe = torch.nn.Embedding(T, C)
        self.blocks = torch.nn.ModuleList(Block(C, NH) for _ in range(L))
        self.lnf = torch.nn.LayerNorm(C)
        for name, p in self.named_parameters():
            if p.dim() == 2:
                std = 0.02 / math.sqrt(2 * L) if name.endswith(("proj.weight",)) else 0.02
                torch.nn.init.normal_(p, 0.0, std)
            elif name.endswith("bias"):
                torch.nn.init.zeros_(p)

    def forward(self, idx, caches=None, pos=0):
        x = self.wte(idx) + self.wpe(torch.arange(pos, pos + idx.shape[1]))
        for i, blk in enumerate(self.blocks):
            x = blk(x, None if caches is None else caches[i], pos)
        return self.lnf(x) @ self.wte.weight.t()  # the tied head


def optimizer(model):
    decay = [p for p in model.parameters() if p.dim() == 2]
    rest = [p for p in model.parameters() if p.dim() != 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}],
                             lr=3e-4, betas=(0.9, 0.95), eps=1e-8)


@torch.no_grad()
def generate(model, prompt, n_new, gen, C, NH):
    """n_new tokens after prompt with a KV cache; a full context keeps its newest half.
    Returns the tokens and the seconds spent after reading the prompt."""
    T = model.T
    caches = [[torch.zeros(1, NH, T, C // NH) for _ in range(2)] for _ in model.blocks]
    window = list(prompt[-T:])
    logits = model(torch.tensor([window]), caches, 0)[0, -1]
    t0 = clock()
    out = []
    for _ in range(n_new):
        tok = int(torch.multinomial((logits / 0.8).softmax(-1), 1, generator=gen))
        out.append(tok)
        if len(window) == T:  # slide: re-read the newest half at positions 0..
            window = window[T - T // 2:]
            model(torch.tensor([window]), caches, 0)
        window.append(tok)
        logits = model(torch.tensor([[tok]]), caches, len(window) - 1)[0, -1]
    return out, clock() - t0


def blas():
    """The BLAS library this process runs on (Debian picks it by LD_LIBRARY_PATH)."""
    with open("/proc/self/maps") as f:
        libs = {line.split("/")[-1].strip() for line in f if "blas" in line.lower()}
    return " ".join(sorted(libs)) or "unknown"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("config", choices=sorted(CONFIGS))
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--gen", type=int, default=0)
    ap.add_argument("--batch", type=int, default=0)
    ap.add_argument("--vocab", type=int, default=0)
    ap.add_argument("--cpu", action="store_true")
    a = ap.parse_args()
    if a.cpu:
        global clock
        clock = time.process_time
    torch.set_num_threads(a.threads)
    torch.manual_seed(1337)
    c = dict(CONFIGS[a.config])
    if a.batch > 0:
        c["B"] = a.batch
    if a.vocab > 0:
        c["V"] = a.vocab
    model = GPT(c["V"], c["L"], c["NH"], c["C"], c["T"])
    opt = optimizer(model)
    g = torch.Generator().manual_seed(42)
    x = torch.randint(0, c["V"], (c["B"], c["T"]), generator=g)
    y = torch.randint(0, c["V"], (c["B"], c["T"]), generator=g)
    times, loss = [], float("nan")
    for s in range(a.warmup + a.steps):
        t0 = clock()
        logits = model(x)
        lossv = F.cross_entropy(logits.view(-1, c["V"]), y.view(-1))
        opt.zero_grad(set_to_none=True)
        lossv.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        loss = lossv.item()
        if s >= a.warmup:
            times.append(clock() - t0)
    step = statistics.median(times) if times else 0.0
    gen_tps = decode_tps = 0.0
    if a.gen > 0:
        prompt = torch.randint(0, c["V"], (16,), generator=g).tolist()
        runs, dec = [], []
        for i in range(a.gen + 1):
            t0 = clock()
            generate(model, prompt, 128, torch.Generator().manual_seed(i), c["C"], c["NH"])
            if i > 0:
                runs.append(128 / (clock() - t0))
            _, seconds = generate(model, prompt, c["T"] - 16, torch.Generator().manual_seed(i), c["C"], c["NH"])
            if i > 0:
                dec.append((c["T"] - 16) / seconds)
        gen_tps, decode_tps = statistics.median(runs), statistics.median(dec)
    params = sum(p.numel() for p in model.parameters())
    print(json.dumps({
        "config": a.config, "threads": a.threads, "step_s": step,
        "train_tok_s": c["B"] * c["T"] / step if step > 0 else 0, "gen_tok_s": gen_tps, "decode_tok_s": decode_tps,
        "max_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, "params": params, "loss": loss,
        "torch": torch.__version__, "blas": blas(),
    }))


if __name__ == "__main__":
    main()
