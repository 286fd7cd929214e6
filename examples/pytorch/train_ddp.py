#!/usr/bin/env python3
"""Step 2 of 3 (README.md here): continue training a wasmformer export with PyTorch's
DistributedDataParallel, one process per CPU core or GPU.

    torchrun --nproc_per_node 2 examples/pytorch/train_ddp.py --data run --steps 200

--data is the folder export.mjs wrote (wasmformer/, train.bin, val.bin, export.json). Each
process holds the whole model; each step every process draws its own batch of random
windows from train.bin, and DDP averages the gradients over the processes before the AdamW
step, so the global batch is --batch times the number of processes and the copies stay
equal. The backend is NCCL when CUDA is there (one GPU per process, by LOCAL_RANK), else
Gloo on the CPU: the same command runs on a laptop and on a GPU node (several nodes: add
torchrun's --nnodes and --rdzv_endpoint). Without torchrun it runs as one process.

Writes --out (default DATA/pytorch): config.json, model.safetensors and tokenizer.wft,
which wasmformer imports (generate.mjs, the page, `wasmformer import`); probe.safetensors,
input_ids from val.bin and the logits PyTorch computes for them, for generate.mjs --check;
report.json: the losses, the validation loss before and after, and whether every process
ended with the same weights (a SHA-256 of each process's parameters).
"""
import argparse
import hashlib
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

import hf_model


def options():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", required=True, help="the folder export.mjs wrote")
    p.add_argument("--out", help="where the trained model goes (default DATA/pytorch)")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--batch", type=int, default=8, help="windows per process and step")
    p.add_argument("--context", type=int, help="window length (default: the model's context)")
    p.add_argument("--lr", type=float, default=1e-3, help="peak learning rate")
    p.add_argument("--warmup", type=int, help="steps of linear warm-up (default a tenth, at most 100)")
    p.add_argument("--min-lr-ratio", type=float, default=0.1, help="the cosine decay ends at lr times this")
    p.add_argument("--weight-decay", type=float, default=0.1, help="AdamW's, on matrices only")
    p.add_argument("--grad-clip", type=float, default=1.0)
    p.add_argument("--eval-every", type=int, default=0, help="validate every N steps too (0: at the start and end only)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--impl", choices=["auto", "plain", "transformers"], default="auto",
                   help="the model: hf_model.py's modules, or transformers' (auto: when installed)")
    return p.parse_args()


def lr_at(step, a):
    """Linear warm-up, then cosine decay to lr * min_lr_ratio at the last step."""
    if step < a.warmup:
        return a.lr * (step + 1) / a.warmup
    t = (step - a.warmup) / max(1, a.steps - a.warmup)
    return a.lr * (a.min_lr_ratio + (1 - a.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * t)))


def validate(model, val, T, B, rank, world, device):
    """Mean cross-entropy over the non-overlapping windows of val (as wasmformer's evaluate
    does: window w is ids w*T .. w*T+T-1 and the next ids), the windows shared out over the
    processes and the sums added up."""
    n = (len(val) - 1) // T
    mine = list(range(rank, n, world))
    total = torch.zeros(2, dtype=torch.float64, device=device)
    model.eval()
    with torch.no_grad():
        for i in range(0, len(mine), B):
            w = torch.tensor(mine[i:i + B]) * T
            x = torch.stack([val[s:s + T] for s in w]).to(device)
            y = torch.stack([val[s + 1:s + T + 1] for s in w]).to(device)
            logits = hf_model.logits_of(model, x)
            total[0] += F.cross_entropy(logits.flatten(0, 1).float(), y.flatten(), reduction="sum").double()
            total[1] += y.numel()
    model.train()
    if world > 1:
        dist.all_reduce(total)
    return (total[0] / total[1]).item()


def fingerprint(model):
    """SHA-256 of the parameters' bytes, in state_dict order."""
    h = hashlib.sha256()
    for name, t in model.state_dict().items():
        h.update(name.encode())
        h.update(t.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def main():
    a = options()
    a.out = a.out or os.path.join(a.data, "pytorch")
    src = os.path.join(a.data, "wasmformer")
    world = int(os.environ.get("WORLD_SIZE", "1"))
    cuda = torch.cuda.is_available()
    backend = "nccl" if cuda else "gloo"
    if world > 1:
        dist.init_process_group(backend)
    rank, local = (dist.get_rank(), int(os.environ["LOCAL_RANK"])) if world > 1 else (0, 0)
    device = torch.device("cuda", local) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    say = print if rank == 0 else (lambda *_: None)

    torch.manual_seed(a.seed)
    model = hf_model.load(src, a.impl).to(device).train()
    cfg = model.config if isinstance(model.config, dict) else model.config.to_dict()
    T = a.context or cfg.get("n_positions") or cfg["max_position_embeddings"]
    V = cfg["vocab_size"]
    a.warmup = a.warmup if a.warmup is not None else min(100, max(1, a.steps // 10))
    load = lambda name: torch.from_numpy(np.fromfile(os.path.join(a.data, name), dtype="<i4").astype(np.int64))
    train, val = load("train.bin"), load("val.bin")
    with open(os.path.join(a.data, "export.json")) as f:
        exported = json.load(f)
    n_params = sum(p.numel() for p in model.parameters())
    say("%d process(es), backend %s on %s; %s, %s parameters; %s training ids, windows of %d, batch %d per process"
        % (world, backend, device.type, type(model).__name__, format(n_params, ","), format(len(train), ","), T, a.batch))

    ddp = DistributedDataParallel(model, device_ids=[local] if cuda else None) if world > 1 else model
    matrices = [p for p in model.parameters() if p.dim() >= 2]
    others = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": matrices, "weight_decay": a.weight_decay}, {"params": others, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.95), eps=1e-8)
    rng = torch.Generator().manual_seed(a.seed * 1000 + rank)  # each process its own windows

    val_before = validate(model, val, T, a.batch, rank, world, device)
    say("validation loss before: %.4f (wasmformer's on the same ids: %.4f)" % (val_before, exported["valLoss"]))
    losses, vals = [], [[0, val_before]]
    t0 = time.time()
    for step in range(a.steps):
        starts = torch.randint(0, len(train) - T - 1, (a.batch,), generator=rng)
        x = torch.stack([train[s:s + T] for s in starts]).to(device)
        y = torch.stack([train[s + 1:s + T + 1] for s in starts]).to(device)
        for g in opt.param_groups:
            g["lr"] = lr_at(step, a)
        loss = F.cross_entropy(hf_model.logits_of(ddp, x).flatten(0, 1).float(), y.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()  # DDP averages the gradients over the processes here
        torch.nn.utils.clip_grad_norm_(model.parameters(), a.grad_clip)
        opt.step()
        mean = loss.detach().clone()
        if world > 1:
            dist.all_reduce(mean)
        losses.append(mean.item() / world)
        if step % 10 == 0 or step == a.steps - 1:
            say("step %4d  loss %.4f  lr %.2e  %.0f tok/s" % (step, losses[-1], lr_at(step, a),
                                                           (step + 1) * a.batch * T * world / (time.time() - t0)))
        if a.eval_every and (step + 1) % a.eval_every == 0 and step + 1 < a.steps:
            vals.append([step + 1, validate(model, val, T, a.batch, rank, world, device)])
            say("validation loss at step %d: %.4f" % tuple(vals[-1]))
    seconds = time.time() - t0
    val_after = validate(model, val, T, a.batch, rank, world, device)
    vals.append([a.steps, val_after])
    say("validation loss after %d steps: %.4f" % (a.steps, val_after))

    mine = fingerprint(model)
    prints = [None] * world
    if world > 1:
        dist.all_gather_object(prints, mine)
    else:
        prints = [mine]
    identical = all(p == prints[0] for p in prints)
    say("weights of the %d process(es): %s (sha256 %s...)" % (world, "identical" if identical else "DIFFERENT", mine[:16]))

    if rank == 0:
        model.eval()
        hf_model.save(model, src, a.out)
        ids = val[:2 * T].view(2, T).to(device)
        with torch.no_grad():
            logits = hf_model.logits_of(model, ids).float()
        hf_model.write_safetensors(os.path.join(a.out, "probe.safetensors"),
                                   {"input_ids": ids.to(torch.int32), "logits": logits})
        report = {"world_size": world, "backend": backend, "device": device.type, "impl": type(model).__name__,
                  "parameters": n_params, "steps": a.steps, "batch_per_process": a.batch, "context": T,
                  "tokens_per_second": a.steps * a.batch * T * world / seconds, "seconds": seconds,
                  "losses": losses, "validation": vals, "wasmformer_validation": exported["valLoss"],
                  "identical_weights": identical, "fingerprints": prints}
        with open(os.path.join(a.out, "report.json"), "w") as f:
            json.dump(report, f, indent=1)
        say("%s/: config.json, model.safetensors, tokenizer.wft, probe.safetensors, report.json" % a.out)
        say("next: node examples/pytorch/generate.mjs %s --check" % a.out)
    if world > 1:
        dist.barrier()
        dist.destroy_process_group()
        # Every file is written and closed. Leave without the interpreter's teardown: with
        # PyTorch 1.13 on Python 3.11 it can hang for good, freeing the Gloo process group
        # that DistributedDataParallel's reducer still holds (the group's worker thread
        # waits for a GIL that finalisation never hands back; seen once in 2026-11-26's
        # npm test: rank 0 done and spinning, rank 1 gone).
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0 if identical else 1)
    if not identical:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
