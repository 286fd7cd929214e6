#!/usr/bin/env python3
"""The PyTorch reference of the time-to-quality benchmark (issue 14).

nanoGPT's README recipe for a CPU (the character-level Shakespeare config with the
overrides the README gives for a laptop) applied to Pride and Prejudice, written here from
a reading of what that recipe does:

  model      decoder, 4 layers, 4 heads, d_model 128, d_ff 512, context 64, learned
             positions, Pre-LN, LayerNorm eps 1e-5, exact (erf) GELU, no biases in the
             linears or the norms, output head tied to the token embedding, dropout 0
  init       every linear weight and both embeddings ~ N(0, 0.02); the two projections that
             write into the residual stream (attention output, MLP output) ~ N(0, 0.02 /
             sqrt(2 * n_layer)); norm gains 1, biases (when on) 0
  data       char-level: id 0 is <unk>, ids 1..n the distinct characters of the training
             text in ascending code point order (wasmformer's char tokenizer, so both sides
             score identical ids); the last floor(0.1 n) tokens are held out
  batches    12 windows of 64 + 1 tokens, each start uniform in [0, n_train - 65]
  optimizer  AdamW, betas 0.9 / 0.99, eps 1e-8, weight decay 0.1 on the 2-D tensors only
             (matrices and embeddings; gains and biases undecayed), gradient norm clipped to
             1.0 over all parameters
  schedule   step i (from 0) of 2,000: lr = 1e-3 (i + 1) / 101 for i < 100, then a cosine
             from 1e-3 at i = 100 to 1e-4 at i = 2000

The loss reported after the run is evaluate() below over the held-out tokens and over the
first 50,000 characters of Emma (see bench/ttq/README.md for the definition). Flags switch
in wasmformer's choices one at a time (see bench/ttq/GAP.md); --micro is wasmformer's own
recipe, the default of `wasmformer train` (issue 28: the same recipe in PyTorch):

  model      2 layers, 4 heads, d_model 64, d_ff 256, context 64, rotary positions (Hugging
             Face's rotate_half pairing, theta 10000; no position table), Pre-LN, GELU
             (tanh), biases in the linears and the norms, tied head
  optimizer  Muon on the blocks' weight matrices (each layer's q, k, v, attention output, fc
             and fc projection apart): Nesterov momentum in EMA form (mu 0.95), five
             Newton-Schulz steps (3.4445, -4.7750, 2.0315) in the wide form, an update of
             lr * 0.2 sqrt(max(R, C)) times the result, decoupled decay 0.1; AdamW (beta2
             0.99) on the rest (embedding, norms, biases); clipping 1.0 over all
  schedule   batch 16, lr 3e-3; by steps: warmup lr (i + 1) / 100 over 100 steps, then a
             cosine to 0.1 lr; with --budget, train()'s time budget: lr follows the clock
             (warmup over the first 5 % of the seconds, from 1 % of the peak; cosine to 0.1
             as the seconds end; src/js/training.js budgetFactor)

Output: one JSON object per line on stdout: the run's settings first, then one line per
evaluation {elapsed, step, tokens, lr, train_loss, val_loss, val_bpc, emma_loss, emma_bpc}
(elapsed: seconds of training, evaluation time left out; train_loss: mean loss of the
batches since the previous line), then a summary line.

Run with OpenBLAS, one thread:
  LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp OMP_NUM_THREADS=1 \
    /usr/bin/python3 bench/ttq/reference.py --seed 1
"""
import argparse
import json
import math
import os
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LN2 = math.log(2.0)

# ---- data: wasmformer's char tokenizer and split ----


def char_vocab(text):
    """Token id of each character: 1 + its rank among the text's distinct code points."""
    return {ch: i + 1 for i, ch in enumerate(sorted(set(text)))}


def encode(text, vocab):
    """Characters outside the vocabulary become <unk> (id 0), as in wasmformer."""
    return torch.tensor([vocab.get(ch, 0) for ch in text], dtype=torch.long)


def held_out_size(n, fraction=0.1):
    return int(math.floor(n * fraction))


# ---- the shared evaluation ----


@torch.no_grad()
def evaluate(model, ids, T, batch=64):
    """Mean cross-entropy in nats per predicted token over consecutive, non-overlapping
    windows: window w (w = 0 .. W-1, W = floor((len(ids) - 1) / T)) reads ids[wT, wT + T)
    and predicts ids[wT + 1, wT + T + 1). Every token after the first is predicted at most
    once; the few past the last whole window are left out. No randomness.
    Returns (mean nats, tokens scored)."""
    W = (len(ids) - 1) // T
    if W < 1:
        raise ValueError(f"evaluation needs at least {T + 1} tokens, got {len(ids)}")
    total, count = 0.0, 0
    was_training = model.training
    model.eval()
    for w0 in range(0, W, batch):
        b = min(batch, W - w0)
        x = torch.stack([ids[(w0 + i) * T:(w0 + i) * T + T] for i in range(b)])
        y = torch.stack([ids[(w0 + i) * T + 1:(w0 + i) * T + T + 1] for i in range(b)])
        logits = model(x)
        total += F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1), reduction="sum").item()
        count += b * T
    model.train(was_training)
    return total / count, count


def bits_per_char(nats, tokens, chars):
    """Bits per character of the scored text: tokens * nats / chars / ln 2 (= nats / ln 2
    for a char tokenizer, where each token is one character)."""
    return nats * tokens / chars / LN2


# ---- the model ----


def rope_tables(T, HS, theta):
    """cos and sin of t * theta^(-2i/HS), [T, HS/2], computed in double and rounded to float
    as wasmformer's wf_rope_table."""
    i = torch.arange(HS // 2, dtype=torch.float64)
    angle = torch.arange(T, dtype=torch.float64)[:, None] * theta ** (-2.0 * i / HS)[None, :]
    return angle.cos().float(), angle.sin().float()


def rotate(x, cos, sin):
    """Rotary positions on [B, H, T, HS] (src/rope.c): channel i pairs with i + HS/2;
    lo' = lo cos - hi sin, hi' = hi cos + lo sin."""
    h = x.shape[-1] // 2
    lo, hi = x[..., :h], x[..., h:]
    return torch.cat((lo * cos - hi * sin, hi * cos + lo * sin), dim=-1)


class Decoder(torch.nn.Module):
    """GPT-2-shaped decoder. Parameter names follow wasmformer's tensor table (one
    parameter per layer here, e.g. qkvw.2, where wasmformer stacks the layers in one
    tensor), so init order and weight decay can be compared line by line."""

    MATRICES = ("wte", "wpe", "qkvw", "attprojw", "fcw", "fcprojw")

    def __init__(self, V, T, L, H, C, F_, bias, gelu, rope=False, rope_theta=10000.0):
        super().__init__()
        self.V, self.T, self.L, self.H, self.C, self.F = V, T, L, H, C, F_
        self.gelu_approx = "tanh" if gelu == "tanh" else "none"
        P = torch.nn.Parameter
        each = lambda make: torch.nn.ParameterList([P(make()) for _ in range(L)])
        self.wte = P(torch.zeros(V, C))
        self.rope = rope
        if rope:  # no position table: queries and keys turn by their position (src/rope.c)
            cos, sin = rope_tables(T, C // H, rope_theta)
            self.register_buffer("rope_cos", cos, persistent=False)
            self.register_buffer("rope_sin", sin, persistent=False)
        else:
            self.wpe = P(torch.zeros(T, C))
        self.ln1w, self.ln2w, self.lnfw = each(lambda: torch.ones(C)), each(lambda: torch.ones(C)), P(torch.ones(C))
        self.qkvw = each(lambda: torch.zeros(3 * C, C))
        self.attprojw = each(lambda: torch.zeros(C, C))
        self.fcw = each(lambda: torch.zeros(F_, C))
        self.fcprojw = each(lambda: torch.zeros(C, F_))
        self.bias = bias
        if bias:  # LayerNorm shifts and linear biases, all starting at 0
            self.ln1b, self.ln2b, self.lnfb = each(lambda: torch.zeros(C)), each(lambda: torch.zeros(C)), P(torch.zeros(C))
            self.qkvb, self.attprojb = each(lambda: torch.zeros(3 * C)), each(lambda: torch.zeros(C))
            self.fcb, self.fcprojb = each(lambda: torch.zeros(F_)), each(lambda: torch.zeros(C))
        causal = torch.ones(T, T, dtype=torch.bool).tril()
        self.register_buffer("blocked", ~causal, persistent=False)

    def init_weights(self, normals):
        """Fills the matrices and embeddings from normals(n, std) -> float32 tensor of n
        draws, in wasmformer's table order: wte, wpe, then each stacked tensor over all
        layers in turn (qkvw of layers 0..L-1, attprojw of 0..L-1, fcw, fcprojw). Gains
        stay 1 and biases 0, so --bias does not move any draw."""
        std, resid = 0.02, 0.02 / math.sqrt(2 * self.L)
        with torch.no_grad():
            for name, s in [("wte", std), ("wpe", std), ("qkvw", std), ("attprojw", resid), ("fcw", std), ("fcprojw", resid)]:
                if name == "wpe" and self.rope:
                    continue
                ps = getattr(self, name)
                ps = [ps] if isinstance(ps, torch.nn.Parameter) else list(ps)
                draws = normals(sum(q.numel() for q in ps), s)
                at = 0
                for q in ps:
                    q.copy_(draws[at:at + q.numel()].view_as(q))
                    at += q.numel()

    def norm(self, x, w, b):
        return F.layer_norm(x, (self.C,), w, b, 1e-5)

    def forward(self, idx):
        B, T = idx.shape
        H, C = self.H, self.C
        hs = C // H
        b = lambda name, l: getattr(self, name)[l] if self.bias else None
        x = F.embedding(idx, self.wte)
        if not self.rope:
            x = x + self.wpe[:T]
        for l in range(self.L):
            h = self.norm(x, self.ln1w[l], b("ln1b", l))
            q, k, v = F.linear(h, self.qkvw[l], b("qkvb", l)).split(C, dim=2)
            q, k, v = (t.view(B, T, H, hs).transpose(1, 2) for t in (q, k, v))
            if self.rope:
                q, k = rotate(q, self.rope_cos[:T], self.rope_sin[:T]), rotate(k, self.rope_cos[:T], self.rope_sin[:T])
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
            att = att.masked_fill(self.blocked[:T, :T], float("-inf")).softmax(dim=-1)
            y = (att @ v).transpose(1, 2).reshape(B, T, C)
            x = x + F.linear(y, self.attprojw[l], b("attprojb", l))
            h = self.norm(x, self.ln2w[l], b("ln2b", l))
            h = F.gelu(F.linear(h, self.fcw[l], b("fcb", l)), approximate=self.gelu_approx)
            x = x + F.linear(h, self.fcprojw[l], b("fcprojb", l))
        x = self.norm(x, self.lnfw, self.lnfb if self.bias else None)
        return F.linear(x, self.wte)  # tied head

    def decayed(self, name):
        """Matrices and embeddings decay; gains and biases do not (nanoGPT: tensors of
        dim >= 2; wasmformer: its table's decay column; the same set)."""
        return name.split(".")[0] in self.MATRICES


# ---- Muon, as wasmformer's src/optim.c ----

NS_COEFFS = (3.4445, -4.7750, 2.0315)


class Muon:
    """Muon for the blocks' weight matrices, as wasmformer's wf_muon_update: each layer's
    q, k and v rows of qkvw, attprojw, fcw and fcprojw apart, in their wide form (a tall
    [R, C] matrix transposed to [C, R], so that A = X X^T is the smaller square):
        buf = mu buf + (1 - mu) g;  u = (1 - mu) g + mu buf        (Nesterov, EMA form)
        X = NS5(u / ||u||_F);  W = W (1 - lr wd) - lr 0.2 sqrt(max(R, C)) X
    The matrices of one wide shape go through Newton-Schulz together (torch.bmm over a
    stack of them): the same arithmetic per matrix, one call for the stack, so the PyTorch
    side pays no per-matrix overhead the engine does not."""

    def __init__(self, model, momentum, weight_decay):
        self.mu = float(torch.tensor(momentum, dtype=torch.float32))  # the core's float
        self.wd = weight_decay
        C = model.C
        parts = []  # (parameter, rows slice, transposed)
        for l in range(model.L):
            for r0 in range(0, 3 * C, C):
                parts.append((model.qkvw[l], slice(r0, r0 + C)))
            for w in (model.attprojw[l], model.fcw[l], model.fcprojw[l]):
                parts.append((w, slice(0, w.shape[0])))
        self.groups = {}  # wide shape -> parts, momentum stack
        for w, rows in parts:
            R, Cw = rows.stop - rows.start, w.shape[1]
            tall = R > Cw
            shape = (Cw, R) if tall else (R, Cw)
            self.groups.setdefault(shape, []).append((w, rows, tall))
        self.bufs = {shape: torch.zeros(len(ps), *shape) for shape, ps in self.groups.items()}
        self.params = {id(w): w for w, _ in parts}

    @torch.no_grad()
    def step(self, lr):
        mu = self.mu
        shrink = 1 - lr * self.wd
        a, b, c = NS_COEFFS
        for shape, ps in self.groups.items():
            g = torch.stack([w.grad[rows].t() if tall else w.grad[rows] for w, rows, tall in ps])
            buf = self.bufs[shape]
            buf.mul_(mu).add_(g, alpha=1 - mu)
            x = g.mul_(1 - mu).add_(buf, alpha=mu)
            # the Frobenius norm in double, as wf_sum_squares
            norm = x.double().square().sum(dim=(1, 2)).sqrt()
            x.mul_((1 / (norm + 1e-7)).float()[:, None, None])
            for _ in range(5):
                A = torch.bmm(x, x.transpose(1, 2))
                AA = torch.bmm(A, A).mul_(c).add_(A, alpha=b)
                x = torch.bmm(AA, x).add_(x, alpha=a)
            step = lr * 0.2 * math.sqrt(max(shape))
            for k, (w, rows, tall) in enumerate(ps):
                u = x[k].t() if tall else x[k]
                w[rows] = w[rows] * shrink - step * u


# ---- random numbers: torch's generator, or wasmformer's (for paired runs) ----


class WfRng:
    """wasmformer's src/util.c generator: splitmix64 seeding, xorshift64*, 53-bit uniforms,
    Box-Muller normals (one per pair of uniforms). With it, a seed gives the same initial
    weights and the same batch order as `wasmformer train --seed N` (bit for bit up to the
    last ulp of libm's log and cos)."""

    M64 = (1 << 64) - 1

    def __init__(self, seed):
        x = (seed + 0x9E3779B97F4A7C15) & self.M64
        x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & self.M64
        x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & self.M64
        self.s = (x ^ (x >> 31)) or 0x9E3779B97F4A7C15

    def next64(self):
        s = self.s
        s ^= s >> 12
        s ^= (s << 25) & self.M64
        s ^= s >> 27
        self.s = s
        return (s * 0x2545F4914F6CDD1D) & self.M64

    def u32(self):
        return self.next64() >> 32

    def normals(self, n, std):
        M, mul, out = self.M64, 0x2545F4914F6CDD1D, [0.0] * n
        s, scale, log, cos, sqrt = self.s, 1.0 / 9007199254740992.0, math.log, math.cos, math.sqrt
        for i in range(n):  # next64 twice, inlined: this runs ~800k times
            s ^= s >> 12; s ^= (s << 25) & M; s ^= s >> 27
            u1 = (((s * mul) & M) >> 11) * scale
            s ^= s >> 12; s ^= (s << 25) & M; s ^= s >> 27
            u2 = (((s * mul) & M) >> 11) * scale
            out[i] = std * (sqrt(-2.0 * log(max(u1, 1e-300))) * cos(6.283185307179586 * u2))
        self.s = s
        return torch.tensor(out, dtype=torch.float64).float()


def make_sources(kind, seed, n_train, T, B):
    """(normals(n, std), next_batch_starts()) for the init and the training batches."""
    if kind == "wasmformer":
        init, sampler = WfRng(seed), WfRng(seed * 2 + 1)  # src/model.c: seed_sampler
        span = n_train - T  # window starts in [0, n_train - T - 1]
        return init.normals, lambda: [(sampler.u32() * span) >> 32 for _ in range(B)]
    g_init, g_batch = torch.Generator().manual_seed(seed), torch.Generator().manual_seed(seed * 2 + 1)
    normals = lambda n, std: torch.empty(n).normal_(0.0, std, generator=g_init)
    return normals, lambda: torch.randint(n_train - T, (B,), generator=g_batch).tolist()


# ---- the learning-rate schedule ----


def budget_factor(p, warmup, min_lr_ratio):
    """train()'s time budget (src/js/training.js budgetFactor): the lr factor at p = training
    seconds so far / the budget: linear warmup over the first `warmup` of the budget (from
    1 % of the peak), then a cosine to min_lr_ratio as the budget ends."""
    if p < warmup:
        return max(p / warmup, 0.01)
    q = min(1.0, (p - warmup) / max(1e-12, 1 - warmup))
    return min_lr_ratio + (1 - min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * q))


def lr_at(i, a):
    """Learning rate of step i (0-based). Warmup nanogpt: lr (i + 1) / (warmup + 1), as
    nanoGPT's train.py; wasmformer: lr (i + 1) / warmup (src/optim.c wf_lr_at). Then a
    cosine over [warmup, steps] from lr to lr * min_lr_ratio."""
    if i < a.warmup:
        return a.lr * (i + 1) / (a.warmup + (1 if a.warmup_style == "nanogpt" else 0))
    floor = a.lr * a.min_lr_ratio
    progress = min(1.0, (i - a.warmup) / max(1, a.steps - a.warmup))
    return floor + 0.5 * (1.0 + math.cos(math.pi * progress)) * (a.lr - floor)


# ---- the run ----


def parse_every(s):
    """'250' -> (250, None) steps; '30s' -> (None, 30.0) seconds; '0' -> only at the end."""
    if s.endswith("s"):
        return None, float(s[:-1])
    return int(s), None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    p.add_argument("--steps", type=int, default=2000, help="the schedule's length, and the run's unless --seconds stops it first")
    p.add_argument("--seconds", type=float, default=0, help="stop at this much training time (0: run all --steps)")
    p.add_argument("--budget", action="store_true",
                   help="--seconds is a time budget as wasmformer's train({seconds}): the lr follows the clock, not the steps")
    p.add_argument("--warmup-fraction", type=float, default=0.05, help="with --budget: the warmup's share of the seconds")
    p.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (the schedule still fitted to --steps)")
    p.add_argument("--budget-steps", type=int, default=0,
                   help="N: a time budget's schedule as N steps of equal time would see it (lr of step k from "
                        "(k - 1) / N, as --budget from elapsed / seconds), then stop: equal seconds from a step time")
    p.add_argument("--eval-every", default="250", help="N steps, or Ns seconds of training; 0: only at the start and the end")
    p.add_argument("--text", default=os.path.join(ROOT, "data/austen/pride_and_prejudice.txt"))
    p.add_argument("--other", default=os.path.join(ROOT, "data/austen/emma.txt"), help="second held-out text")
    p.add_argument("--other-chars", type=int, default=50000)
    p.add_argument("--batch", type=int, default=12)
    p.add_argument("--context", type=int, default=64)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--width", type=int, default=128)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--min-lr-ratio", type=float, default=0.1)
    p.add_argument("--beta1", type=float, default=0.9)
    p.add_argument("--beta2", type=float, default=0.99, help="wasmformer: 0.95")
    p.add_argument("--eps", type=float, default=1e-8)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--clip", type=float, default=1.0, help="0: no clipping")
    # wasmformer's current choices, each switchable on its own
    p.add_argument("--gelu", choices=["erf", "tanh"], default="erf", help="wasmformer: tanh")
    p.add_argument("--bias", action="store_true", help="linear and LayerNorm biases (wasmformer's default)")
    p.add_argument("--warmup-style", choices=["nanogpt", "wasmformer"], default="nanogpt")
    p.add_argument("--positions", choices=["learned", "rope"], default="learned", help="wasmformer's micro: rope")
    p.add_argument("--muon", type=int, default=0, help="1: Muon on the blocks' matrices, AdamW on the rest")
    p.add_argument("--muon-momentum", type=float, default=0.95)
    p.add_argument("--rng", choices=["wasmformer", "torch"], default="wasmformer",
                   help="generator of the init and the batch starts: wasmformer's (default: seed N gives the init and "
                        "batches of wasmformer's seed N, so runs pair) or torch's")
    p.add_argument("--serve", action="store_true",
                   help="for bench/ttq/paired.mjs: after the settings line, read a number k per line on stdin, train k "
                        "steps, answer {\"seconds\": training time, \"cpu_seconds\": the process's CPU time, \"steps\", \"losses\": each "
                        "step's batch loss}; no evaluation")
    p.add_argument("--save", default="", help="write the final weights (torch.save of the state dict) to this file")
    p.add_argument("--wasmformer", action="store_true",
                   help="all of wasmformer's current choices at once: --gelu tanh --bias --beta2 0.95 --warmup-style wasmformer")
    p.add_argument("--micro", action="store_true",
                   help="wasmformer's own recipe, the default of `wasmformer train` (above): --layers 2 --width 64 --batch 16 "
                        "--lr 3e-3 --gelu tanh --bias --positions rope --muon 1 --beta2 0.99 --warmup-style wasmformer")
    a = p.parse_args(argv)
    if a.wasmformer:
        a.gelu, a.bias, a.beta2, a.warmup_style = "tanh", True, 0.95, "wasmformer"
    if a.micro:
        given = {x.split("=")[0] for x in (argv if argv is not None else sys.argv[1:]) if x.startswith("--")}
        for k, v in dict(layers=2, heads=4, width=64, batch=16, lr=3e-3, gelu="tanh", positions="rope", muon=1,
                         beta2=0.99, warmup_style="wasmformer").items():
            if "--" + k.replace("_", "-") not in given:  # flags given beside --micro win
                setattr(a, k, v)
        a.bias = True
    torch.set_num_threads(a.threads)
    every_steps, every_secs = parse_every(a.eval_every)

    text = open(a.text, encoding="utf-8").read()
    vocab = char_vocab(text)
    ids = encode(text, vocab)
    n_val = held_out_size(len(ids))
    train_ids, val_ids = ids[:len(ids) - n_val], ids[len(ids) - n_val:]
    other = open(a.other, encoding="utf-8").read()[:a.other_chars]
    other_ids = encode(other, vocab)
    V, T, B = len(vocab) + 1, a.context, a.batch

    t_setup = time.perf_counter()
    normals, starts = make_sources(a.rng, a.seed, len(train_ids), T, B)
    model = Decoder(V, T, a.layers, a.heads, a.width, 4 * a.width, a.bias, a.gelu, rope=a.positions == "rope")
    model.init_weights(normals)
    named = list(model.named_parameters())
    muon = Muon(model, a.muon_momentum, a.weight_decay) if a.muon else None
    adamw = [(n, q) for n, q in named if not muon or id(q) not in muon.params]
    groups = [{"params": [q for n, q in adamw if model.decayed(n)], "weight_decay": a.weight_decay},
              {"params": [q for n, q in adamw if not model.decayed(n)], "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=a.lr, betas=(a.beta1, a.beta2), eps=a.eps)
    params = [q for _, q in named]
    setup = time.perf_counter() - t_setup

    emit = lambda obj: print(json.dumps(obj), flush=True)
    settings = {k: v for k, v in vars(a).items() if k not in ("text", "other")}
    emit({"kind": "settings", **settings, "vocab": V, "train_tokens": len(train_ids), "val_tokens": len(val_ids),
          "other_tokens": len(other_ids), "params": sum(q.numel() for q in params), "torch": torch.__version__,
          "setup_seconds": round(setup, 3)})

    eval_seconds = 0.0

    def report(step, elapsed, lr, train_losses):
        nonlocal eval_seconds
        t0 = time.perf_counter()
        val, nv = evaluate(model, val_ids, T)
        emma, ne = evaluate(model, other_ids, T)
        eval_seconds += time.perf_counter() - t0
        emit({"elapsed": round(elapsed, 3), "step": step, "tokens": step * B * T, "lr": lr,
              "train_loss": (sum(train_losses) / len(train_losses)) if train_losses else None,
              "val_loss": round(val, 5), "val_bpc": round(bits_per_char(val, nv, nv), 5),
              "emma_loss": round(emma, 5), "emma_bpc": round(bits_per_char(emma, ne, ne), 5)})
        return val, emma

    def train_step(step, lr=None):
        lr = lr_at(step - 1, a) if lr is None else lr
        for g in opt.param_groups:
            g["lr"] = lr
        starts_now = starts()
        x = torch.stack([train_ids[s:s + T] for s in starts_now])
        y = torch.stack([train_ids[s + 1:s + T + 1] for s in starts_now])
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))
        model.zero_grad(set_to_none=True)  # Muon's matrices too: they are not in opt
        loss.backward()
        if a.clip > 0:
            torch.nn.utils.clip_grad_norm_(params, a.clip)
        opt.step()
        if muon:
            muon.step(lr)
        return lr, loss.item()

    if a.serve:
        done = 0
        for line in sys.stdin:
            t0, c0, losses = time.perf_counter(), time.process_time(), []
            for _ in range(int(line)):
                done += 1
                losses.append(train_step(min(done, a.steps))[1])
            emit({"seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0, "steps": done,
                  "losses": losses})
        return 0

    if every_steps or every_secs:
        report(0, 0.0, lr_at(0, a), [])
    elapsed, losses, last_eval_time, step = 0.0, [], 0.0, 0
    budget = a.budget and a.seconds > 0
    last = a.max_steps if a.max_steps > 0 else a.budget_steps if a.budget_steps > 0 else (10 ** 12 if budget else a.steps)
    t_start = time.perf_counter()
    for step in range(1, last + 1):
        # a budget's lr from the clock before the step, as train() sets it (or from the step's
        # place among budget_steps equal ones)
        lr = None
        if budget:
            lr = a.lr * budget_factor(elapsed / a.seconds, a.warmup_fraction, a.min_lr_ratio)
        elif a.budget_steps > 0:
            lr = a.lr * budget_factor((step - 1) / a.budget_steps, a.warmup_fraction, a.min_lr_ratio)
        lr, loss = train_step(step, lr)
        losses.append(loss)
        elapsed = time.perf_counter() - t_start
        done = step == last or (a.seconds > 0 and elapsed >= a.seconds)
        due = (every_steps and step % every_steps == 0) or (every_secs and elapsed - last_eval_time >= every_secs)
        if due or done:
            pause = time.perf_counter()
            val, emma = report(step, elapsed, lr, losses)
            losses, last_eval_time = [], elapsed
            t_start += time.perf_counter() - pause  # evaluation is not training time
        if done:
            break
    if a.save:
        torch.save({"state": model.state_dict(), "settings": settings, "vocab": V}, a.save)
    emit({"kind": "summary", "seed": a.seed, "steps": step, "train_seconds": round(elapsed, 3),
          "eval_seconds": round(eval_seconds, 3), "val_loss": round(val, 5), "emma_loss": round(emma, 5),
          "ms_per_step": round(1000 * elapsed / max(1, step), 3), "loadavg": list(os.getloadavg())})


if __name__ == "__main__":
    sys.exit(main())
