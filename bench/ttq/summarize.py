#!/usr/bin/env python3
"""Reads the runs of bench/ttq/queue.sh (OUT/NAME.jsonl, NAME = VARIANT-sSEED) and prints,
per variant, the final val and Emma losses by seed, their mean, and the mean difference to
the reference of the same length on the same seeds (`ref1k-*` against `ref1k`, the rest
against `ref`; paired: a seed gives both the same init and batches). With --json FILE, writes the same as JSON (a few KB).
  /usr/bin/python3 bench/ttq/summarize.py /tmp/ttq-runs [--json bench/ttq/results.json]"""
import json
import os
import re
import sys


def load(out):
    runs = {}
    for f in sorted(os.listdir(out)):
        m = re.fullmatch(r"(.+)-s(\d+)\.jsonl", f)
        if not m:
            continue
        lines = [json.loads(x) for x in open(os.path.join(out, f)) if x.strip()]
        summary = next((x for x in lines if x.get("kind") == "summary"), None)
        if summary:
            runs.setdefault(m.group(1), {})[int(m.group(2))] = summary
    return runs


def main():
    out = sys.argv[1]
    runs = load(out)
    rows = []
    for name, by_seed in sorted(runs.items(), key=lambda kv: (kv[0].startswith("ref1k"), kv[0].startswith("wf"), kv[0])):
        base = "ref1k" if name.startswith("ref1k") else "ref"
        ref = runs.get(base, {})
        seeds = sorted(by_seed)
        val = [by_seed[s]["val_loss"] for s in seeds]
        emma = [by_seed[s]["emma_loss"] for s in seeds]
        paired = [s for s in seeds if s in ref]
        dval = [by_seed[s]["val_loss"] - ref[s]["val_loss"] for s in paired]
        demma = [by_seed[s]["emma_loss"] - ref[s]["emma_loss"] for s in paired]
        rows.append({
            "variant": name, "seeds": seeds, "val": val, "emma": emma,
            "val_mean": sum(val) / len(val), "emma_mean": sum(emma) / len(emma),
            "d_val_vs_ref": (sum(dval) / len(dval)) if dval and name != base else None,
            "d_emma_vs_ref": (sum(demma) / len(demma)) if demma and name != base else None,
            "train_seconds": [by_seed[s]["train_seconds"] for s in seeds],
            "ms_per_step": [by_seed[s]["ms_per_step"] for s in seeds],
            "loadavg_1min": [round(by_seed[s]["loadavg"][0], 2) for s in seeds],
        })
    fmt = lambda xs: " ".join(f"{x:.4f}" for x in xs)
    print(f"{'variant':<16} {'seeds':<8} {'val by seed':<22} {'val mean':>8} {'d vs ref':>9} {'emma mean':>9} {'d vs ref':>9}  s/run")
    for r in rows:
        d = lambda x: f"{x:+.4f}" if x is not None else "-"
        print(f"{r['variant']:<16} {','.join(map(str, r['seeds'])):<8} {fmt(r['val']):<22} {r['val_mean']:8.4f} "
              f"{d(r['d_val_vs_ref']):>9} {r['emma_mean']:9.4f} {d(r['d_emma_vs_ref']):>9}  "
              f"{' '.join(str(round(t)) for t in r['train_seconds'])}")
    if "--json" in sys.argv:
        with open(sys.argv[sys.argv.index("--json") + 1], "w") as f:
            json.dump(rows, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
