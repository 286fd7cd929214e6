#!/usr/bin/python3
"""Writes llama2.c model files and PyTorch's logits for them (tests/js/llama2c.test.mjs).

The model is llama2.c's (its model.py, written here from the architecture it documents):
token embedding; per layer x += wo(attention(rmsnorm(x) * rms_att)) and
x += w2(silu(w1 h) * w3 h) with h = rmsnorm(x) * rms_ffn; a final RMSNorm and the classifier
(the embedding when shared). RMSNorm eps 1e-5. RoPE turns the adjacent channels (2i, 2i + 1)
of each query and key head by t * 10000^(-2i/HS), as complex numbers; keys and values have
n_kv_heads heads, each shared by n_heads / n_kv_heads query heads. Computed in float64 from
the float32 weights the file holds.

The file is export.py's legacy layout (version 0): seven int32 (dim, hidden_dim, n_layers,
n_heads, n_kv_heads, vocab_size, seq_len; vocab_size negated when the classifier is not the
embedding), then float32: token_embedding_table, rms_att_weight, wq, wk, wv, wo,
rms_ffn_weight, w1, w2, w3 (each stacked over layers, matrices [out, in]),
rms_final_weight, freq_cis_real, freq_cis_imag [seq_len, HS/2], and wcls when unshared.

Writes tests/fixtures/llama2c_<case>.bin and llama2c_<case>.json ({ids, logits [T][V]}).
Usage: /usr/bin/python3 tests/pytorch/make_llama2c_fixture.py [out_dir]
"""
import json
import os
import struct
import sys

import torch

CASES = {
    # grouped-query (4 query heads over 2 key/value heads), a classifier of its own
    "gqa": dict(dim=32, hidden_dim=72, n_layers=2, n_heads=4, n_kv_heads=2, vocab_size=50, seq_len=16, shared=False),
    # stories260K's kind of shape in miniature: shared classifier, one key/value head per query head
    "mha": dict(dim=24, hidden_dim=64, n_layers=3, n_heads=3, n_kv_heads=3, vocab_size=40, seq_len=12, shared=True),
}


def weights(c, gen):
    D, F, L, H, KV, V = c["dim"], c["hidden_dim"], c["n_layers"], c["n_heads"], c["n_kv_heads"], c["vocab_size"]
    HS = D // H
    r = lambda *shape, s=0.2: (torch.randn(*shape, generator=gen, dtype=torch.float32) * s)
    w = {
        "token_embedding_table": r(V, D, s=0.5),
        "rms_att_weight": 1 + r(L, D, s=0.1),
        "wq": r(L, D, D), "wk": r(L, KV * HS, D), "wv": r(L, KV * HS, D), "wo": r(L, D, D),
        "rms_ffn_weight": 1 + r(L, D, s=0.1),
        "w1": r(L, F, D), "w2": r(L, D, F), "w3": r(L, F, D),
        "rms_final_weight": 1 + r(D, s=0.1),
    }
    freqs = 1.0 / (10000.0 ** (torch.arange(0, HS, 2, dtype=torch.float64) / HS))
    angles = torch.outer(torch.arange(c["seq_len"], dtype=torch.float64), freqs)
    w["freq_cis_real"], w["freq_cis_imag"] = angles.cos().float(), angles.sin().float()
    if not c["shared"]:
        w["wcls"] = r(V, D, s=0.5)
    return w


def rmsnorm(x, g):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * g


def rope_pairs(x, cos, sin):
    """x [T, heads, HS]: channels (2i, 2i+1) as the complex number x_2i + i x_2i+1, times e^(i t theta_i)."""
    a, b = x[..., 0::2], x[..., 1::2]
    c, s = cos[:, None, :], sin[:, None, :]
    return torch.stack((a * c - b * s, a * s + b * c), dim=-1).flatten(-2)


def logits_of(c, w, ids):
    D, L, H, KV = c["dim"], c["n_layers"], c["n_heads"], c["n_kv_heads"]
    HS, T = D // H, len(ids)
    W = {k: v.double() for k, v in w.items()}
    cos, sin = W["freq_cis_real"][:T], W["freq_cis_imag"][:T]
    x = W["token_embedding_table"][torch.tensor(ids)]
    mask = torch.ones(T, T, dtype=torch.bool).tril()
    for l in range(L):
        h = rmsnorm(x, W["rms_att_weight"][l])
        q = rope_pairs((h @ W["wq"][l].t()).view(T, H, HS), cos, sin)
        k = rope_pairs((h @ W["wk"][l].t()).view(T, KV, HS), cos, sin)
        v = (h @ W["wv"][l].t()).view(T, KV, HS)
        k, v = (t.repeat_interleave(H // KV, dim=1) for t in (k, v))
        s = torch.einsum("ihd,jhd->hij", q, k) / HS ** 0.5
        a = s.masked_fill(~mask, float("-inf")).softmax(-1)
        y = torch.einsum("hij,jhd->ihd", a, v).reshape(T, D)
        x = x + y @ W["wo"][l].t()
        h = rmsnorm(x, W["rms_ffn_weight"][l])
        x = x + (torch.nn.functional.silu(h @ W["w1"][l].t()) * (h @ W["w3"][l].t())) @ W["w2"][l].t()
    x = rmsnorm(x, W["rms_final_weight"])
    head = W["token_embedding_table"] if c["shared"] else W["wcls"]
    return x @ head.t()


def write_bin(path, c, w):
    V = c["vocab_size"] if c["shared"] else -c["vocab_size"]
    header = struct.pack("<7i", c["dim"], c["hidden_dim"], c["n_layers"], c["n_heads"], c["n_kv_heads"], V, c["seq_len"])
    order = ["token_embedding_table", "rms_att_weight", "wq", "wk", "wv", "wo", "rms_ffn_weight", "w1", "w2", "w3",
             "rms_final_weight", "freq_cis_real", "freq_cis_imag"] + ([] if c["shared"] else ["wcls"])
    with open(path, "wb") as f:
        f.write(header)
        for name in order:
            f.write(w[name].contiguous().numpy().astype("<f4").tobytes())


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures")
    for i, (name, c) in enumerate(CASES.items()):
        gen = torch.Generator().manual_seed(100 + i)
        w = weights(c, gen)
        ids = torch.randint(0, c["vocab_size"], (c["seq_len"],), generator=gen).tolist()
        logits = logits_of(c, w, ids)
        write_bin(os.path.join(out, f"llama2c_{name}.bin"), c, w)
        with open(os.path.join(out, f"llama2c_{name}.json"), "w") as f:
            json.dump({"config": c, "ids": ids, "logits": [[float("%.9g" % v) for v in row] for row in logits.tolist()]}, f)
            f.write("\n")
        print(f"llama2c_{name}: {os.path.getsize(os.path.join(out, f'llama2c_{name}.bin'))} bytes, logits {tuple(logits.shape)}")


if __name__ == "__main__":
    main()
