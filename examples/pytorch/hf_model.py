"""The three Hugging Face layouts wasmformer exports, as trainable PyTorch modules, and the
safetensors container, for machines without the `transformers` and `safetensors` packages
(Debian's python3-torch has neither).

A wasmformer export is a folder of config.json, model.safetensors and tokenizer.wft:
- "model_type": "gpt2": GPT2LMHeadModel's names and maths. Learned positions, Pre-LN blocks
  with LayerNorm, Conv1D linears (weights stored [in, out]), GELU (tanh form) or ReLU, a
  final LayerNorm, the head tied to the token embedding unless tie_word_embeddings is false.
- "model_type": "llama": LlamaForCausalLM's. RMSNorm (statistics in float32), rotary
  positions in the rotate_half convention (channel i pairs with i + head_dim/2, inverse
  frequencies theta^(-2i/head_dim)), grouped-query attention (num_key_value_heads), the
  SiLU-gated MLP down_proj(silu(gate_proj x) * up_proj x), no biases.
- "model_type": "gpt_neox": GPTNeoXForCausalLM's, the shape of `wasmformer train`'s default
  model (micro). LayerNorm with biases, one query_key_value Linear whose output is viewed as
  [heads, 3 * head_size] (each head's query, key and value side by side), rotary positions
  as Llama's on the first int(head_size * rotary_pct) channels (wasmformer: all of them),
  base rotary_emb_base, then a dense Linear; the MLP dense_4h_to_h(act(dense_h_to_4h x)).
  use_parallel_residual false (wasmformer's) adds the attention, then the MLP of the sum;
  true adds both to the layer's input. hidden_dropout drops the embeddings and both outputs.
The modules' state_dict() keys are the file's tensor names, so load_state_dict takes the
file as it is and save() writes what wasmformer's importer reads.

safetensors, the whole format: an unsigned 64-bit little-endian header length N, N bytes of
JSON {name: {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, "__metadata__":
{...}}, then the tensors' raw little-endian bytes, offsets counted from the end of the header.

With `transformers` installed, load(dir, impl="auto") returns its AutoModelForCausalLM
instead and save() uses save_pretrained; the training script does not care which.
"""
import json
import math
import os
import shutil
import struct

import torch
import torch.nn as nn
import torch.nn.functional as F

DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16, "F64": torch.float64,
          "I32": torch.int32, "I64": torch.int64}
NAMES = {v: k for k, v in DTYPES.items()}


# ---- safetensors ----

def read_safetensors(path):
    """{name: tensor} of a safetensors file (the metadata is skipped)."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        begin, end = e["data_offsets"]
        dtype = DTYPES[e["dtype"]]
        raw = bytearray(data[begin:end])
        t = torch.frombuffer(raw, dtype=dtype) if raw else torch.empty(0, dtype=dtype)
        out[name] = t.reshape(e["shape"])
    return out


def write_safetensors(path, tensors, metadata=None):
    """Writes {name: tensor} (on any device) as a safetensors file, through a temporary
    file renamed over path."""
    header, blobs, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name, t in tensors.items():
        t = t.detach().contiguous().cpu()
        b = (t.view(torch.int16) if t.dtype == torch.bfloat16 else t).numpy().tobytes()
        header[name] = {"dtype": NAMES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-(8 + len(h)) % 8)  # the data starts 8-byte aligned
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


# ---- GPT-2 layout ----

class Conv1D(nn.Module):
    """transformers' Conv1D: y = x W + b with W stored [in, out]."""

    def __init__(self, n_in, n_out, bias=True):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_in, n_out))
        self.bias = nn.Parameter(torch.zeros(n_out)) if bias else None

    def forward(self, x):
        y = x @ self.weight
        return y + self.bias if self.bias is not None else y


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


GPT2_ACTIVATIONS = {"gelu_new": gelu_tanh, "gelu_pytorch_tanh": gelu_tanh, "relu": F.relu}


def causal_attention(q, k, v, dropout, training):
    """softmax(q kᵀ / sqrt(head size), causal) v; q [B, H, T, HS], k and v [B, H, P + T, HS]:
    query row i sees keys up to P + i (with a cache of P rows, the new rows come last)."""
    T, S = q.size(2), k.size(2)
    a = (q @ k.transpose(-1, -2)) * q.size(-1) ** -0.5
    # positions as tensors, not Python ints, so that a traced graph (ONNX) keeps T and S free
    query_pos = torch.arange(T, device=q.device) + (S - T)
    keep = torch.arange(S, device=q.device)[None, :] <= query_pos[:, None]
    a = a.masked_fill(~keep, torch.finfo(a.dtype).min)
    a = F.dropout(torch.softmax(a, dim=-1), dropout, training)
    return a @ v


class GPT2Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        C, eps, bias = cfg["n_embd"], cfg.get("layer_norm_epsilon", 1e-5), True
        self.n_head = cfg["n_head"]
        self.attn_pdrop, self.resid_pdrop = cfg.get("attn_pdrop", 0.0), cfg.get("resid_pdrop", 0.0)
        self.act = GPT2_ACTIVATIONS[cfg.get("activation_function", "gelu_new")]
        self.ln_1 = nn.LayerNorm(C, eps=eps)
        self.attn = nn.Module()
        self.attn.c_attn, self.attn.c_proj = Conv1D(C, 3 * C, bias), Conv1D(C, C, bias)
        self.ln_2 = nn.LayerNorm(C, eps=eps)
        self.mlp = nn.Module()
        inner = cfg.get("n_inner") or 4 * C
        self.mlp.c_fc, self.mlp.c_proj = Conv1D(C, inner, bias), Conv1D(inner, C, bias)

    def forward(self, h):
        B, T, C = h.shape
        q, k, v = self.attn.c_attn(self.ln_1(h)).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        y = causal_attention(q, k, v, self.attn_pdrop, self.training).transpose(1, 2).reshape(B, T, C)
        h = h + F.dropout(self.attn.c_proj(y), self.resid_pdrop, self.training)
        m = self.mlp.c_proj(self.act(self.mlp.c_fc(self.ln_2(h))))
        return h + F.dropout(m, self.resid_pdrop, self.training)


class GPT2LMHead(nn.Module):
    """GPT2LMHeadModel: forward(ids [B, T]) -> logits [B, T, V]."""

    def __init__(self, cfg):
        super().__init__()
        C, V = cfg["n_embd"], cfg["vocab_size"]
        self.config = cfg
        self.embd_pdrop = cfg.get("embd_pdrop", 0.0)
        self.transformer = nn.Module()
        self.transformer.wte = nn.Embedding(V, C)
        self.transformer.wpe = nn.Embedding(cfg["n_positions"], C)
        self.transformer.h = nn.ModuleList(GPT2Block(cfg) for _ in range(cfg["n_layer"]))
        self.transformer.ln_f = nn.LayerNorm(C, eps=cfg.get("layer_norm_epsilon", 1e-5))
        self.lm_head = nn.Linear(C, V, bias=False)
        if cfg.get("tie_word_embeddings", True):
            self.lm_head.weight = self.transformer.wte.weight

    def forward(self, ids):
        t = self.transformer
        pos = torch.arange(ids.size(1), device=ids.device)
        h = F.dropout(t.wte(ids) + t.wpe(pos), self.embd_pdrop, self.training)
        for block in t.h:
            h = block(h)
        return self.lm_head(t.ln_f(h))


# ---- Llama layout ----

class RMSNorm(nn.Module):
    def __init__(self, C, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(C))
        self.eps = eps

    def forward(self, x):
        h = x.float()
        return self.weight * (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype)


def rotate_half(x):
    half = x.size(-1) // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class LlamaLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        C, eps = cfg["hidden_size"], cfg.get("rms_norm_eps", 1e-6)
        self.nh = cfg["num_attention_heads"]
        self.nkv = cfg.get("num_key_value_heads") or self.nh
        self.hs = cfg.get("head_dim") or C // self.nh
        self.attn_pdrop = cfg.get("attention_dropout", 0.0)
        self.input_layernorm = RMSNorm(C, eps)
        self.self_attn = nn.Module()
        a = self.self_attn
        a.q_proj = nn.Linear(C, self.nh * self.hs, bias=False)
        a.k_proj = nn.Linear(C, self.nkv * self.hs, bias=False)
        a.v_proj = nn.Linear(C, self.nkv * self.hs, bias=False)
        a.o_proj = nn.Linear(self.nh * self.hs, C, bias=False)
        self.post_attention_layernorm = RMSNorm(C, eps)
        self.mlp = nn.Module()
        F_ = cfg["intermediate_size"]
        self.mlp.gate_proj = nn.Linear(C, F_, bias=False)
        self.mlp.up_proj = nn.Linear(C, F_, bias=False)
        self.mlp.down_proj = nn.Linear(F_, C, bias=False)

    def forward(self, h, cos, sin, past=None):
        """h [B, T, C]; cos, sin [T, HS] for the new rows' positions; past: this layer's
        (keys, values) [B, NKV, P, HS] or None. Returns h and the cache with the new rows."""
        B, T, _ = h.shape
        x = self.input_layernorm(h)
        a = self.self_attn
        q = a.q_proj(x).view(B, T, self.nh, self.hs).transpose(1, 2)
        k = a.k_proj(x).view(B, T, self.nkv, self.hs).transpose(1, 2)
        v = a.v_proj(x).view(B, T, self.nkv, self.hs).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if past is not None:
            k, v = torch.cat((past[0], k), dim=2), torch.cat((past[1], v), dim=2)
        present = (k, v)
        g = self.nh // self.nkv  # query head i reads key/value head i // g
        S = k.size(2)
        k = k[:, :, None].expand(B, self.nkv, g, S, self.hs).reshape(B, self.nh, S, self.hs)
        v = v[:, :, None].expand(B, self.nkv, g, S, self.hs).reshape(B, self.nh, S, self.hs)
        y = causal_attention(q, k, v, self.attn_pdrop, self.training).transpose(1, 2).reshape(B, T, self.nh * self.hs)
        h = h + a.o_proj(y)
        x = self.post_attention_layernorm(h)
        h = h + self.mlp.down_proj(F.silu(self.mlp.gate_proj(x)) * self.mlp.up_proj(x))
        return h, present


class LlamaLM(nn.Module):
    """LlamaForCausalLM: forward(ids [B, T]) -> logits [B, T, V]; forward(ids, past) ->
    (logits, present) over a KV cache (a list of per-layer (keys, values), [B, NKV, P, HS])."""

    def __init__(self, cfg):
        super().__init__()
        C, V = cfg["hidden_size"], cfg["vocab_size"]
        assert cfg.get("hidden_act", "silu") in ("silu", "swish") and not cfg.get("attention_bias") and not cfg.get("mlp_bias")
        assert (cfg.get("rope_scaling") or {}).get("rope_type", "default") == "default", "scaled RoPE is not modelled here"
        self.config = cfg
        self.model = nn.Module()
        self.model.embed_tokens = nn.Embedding(V, C)
        self.model.layers = nn.ModuleList(LlamaLayer(cfg) for _ in range(cfg["num_hidden_layers"]))
        self.model.norm = RMSNorm(C, cfg.get("rms_norm_eps", 1e-6))
        self.lm_head = nn.Linear(C, V, bias=False)
        if cfg.get("tie_word_embeddings", False):
            self.lm_head.weight = self.model.embed_tokens.weight
        hs = self.model.layers[0].hs
        inv_freq = 1.0 / (float(cfg.get("rope_theta", 10000.0)) ** (torch.arange(0, hs, 2).float() / hs))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def rope(self, start, T):
        """cos, sin [T, HS] for positions start .. start + T - 1 (the angles in float32)."""
        pos = torch.arange(T, device=self.inv_freq.device).float() + start
        freqs = pos[:, None] * self.inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos(), emb.sin()

    def forward(self, ids, past=None):
        h = self.model.embed_tokens(ids)
        start = 0 if past is None else past[0][0].size(2)
        cos, sin = self.rope(start, ids.size(1))
        present = []
        for i, layer in enumerate(self.model.layers):
            h, kv = layer(h, cos, sin, None if past is None else past[i])
            present.append(kv)
        logits = self.lm_head(self.model.norm(h))
        return logits if past is None else (logits, present)


# ---- GPT-NeoX layout ----

NEOX_ACTIVATIONS = {"gelu": F.gelu, "gelu_new": gelu_tanh, "gelu_pytorch_tanh": gelu_tanh, "relu": F.relu,
                    "relu2": lambda x: torch.square(F.relu(x))}


def neox_rope_settings(cfg):
    """(base, rotary fraction): rotary_emb_base and rotary_pct (transformers 4.x) or
    rope_parameters' rope_theta and partial_rotary_factor (5.x); the class's defaults 10000, 0.25."""
    params = cfg.get("rope_parameters") or cfg.get("rope_scaling") or {}
    assert params.get("rope_type", params.get("type", "default")) == "default", "scaled RoPE is not modelled here"
    base = params.get("rope_theta", cfg.get("rotary_emb_base", cfg.get("rope_theta", 10000.0)))
    return float(base), float(params.get("partial_rotary_factor", cfg.get("rotary_pct", 0.25)))


class NeoXLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        C, eps = cfg["hidden_size"], cfg.get("layer_norm_eps", 1e-5)
        self.nh = cfg["num_attention_heads"]
        self.hs = C // self.nh
        self.parallel = cfg.get("use_parallel_residual", True)
        self.act = NEOX_ACTIVATIONS[cfg.get("hidden_act", "gelu")]
        self.attn_pdrop, self.hidden_pdrop = cfg.get("attention_dropout", 0.0), cfg.get("hidden_dropout", 0.0)
        self.input_layernorm = nn.LayerNorm(C, eps=eps)
        self.post_attention_layernorm = nn.LayerNorm(C, eps=eps)
        self.attention = nn.Module()
        bias = cfg.get("attention_bias", True)
        self.attention.query_key_value = nn.Linear(C, 3 * C, bias=bias)
        self.attention.dense = nn.Linear(C, C, bias=bias)
        self.mlp = nn.Module()
        self.mlp.dense_h_to_4h = nn.Linear(C, cfg["intermediate_size"])
        self.mlp.dense_4h_to_h = nn.Linear(cfg["intermediate_size"], C)

    def mlp_of(self, x):
        return self.mlp.dense_4h_to_h(self.act(self.mlp.dense_h_to_4h(self.post_attention_layernorm(x))))

    def forward(self, h, cos, sin, rot, past=None):
        """h [B, T, C]; cos, sin [T, rot]; past: this layer's (keys, values) [B, NH, P, HS]
        or None. Returns h and the cache with the new rows."""
        B, T, C = h.shape
        qkv = self.attention.query_key_value(self.input_layernorm(h)).view(B, T, self.nh, 3 * self.hs)
        q, k, v = (qkv[..., i * self.hs:(i + 1) * self.hs].transpose(1, 2) for i in range(3))
        q = torch.cat((q[..., :rot] * cos + rotate_half(q[..., :rot]) * sin, q[..., rot:]), dim=-1)
        k = torch.cat((k[..., :rot] * cos + rotate_half(k[..., :rot]) * sin, k[..., rot:]), dim=-1)
        if past is not None:
            k, v = torch.cat((past[0], k), dim=2), torch.cat((past[1], v), dim=2)
        present = (k, v)
        y = causal_attention(q, k, v, self.attn_pdrop, self.training).transpose(1, 2).reshape(B, T, C)
        a = F.dropout(self.attention.dense(y), self.hidden_pdrop, self.training)
        if self.parallel:  # both read the layer's input
            return h + a + F.dropout(self.mlp_of(h), self.hidden_pdrop, self.training), present
        h = h + a  # sequential: the MLP reads the stream after the attention
        return h + F.dropout(self.mlp_of(h), self.hidden_pdrop, self.training), present


class NeoXLM(nn.Module):
    """GPTNeoXForCausalLM: forward(ids [B, T]) -> logits [B, T, V]; forward(ids, past) ->
    (logits, present) over a KV cache (a list of per-layer (keys, values), [B, NH, P, HS])."""

    def __init__(self, cfg):
        super().__init__()
        C, V = cfg["hidden_size"], cfg["vocab_size"]
        self.config = cfg
        self.hidden_pdrop = cfg.get("hidden_dropout", 0.0)
        self.gpt_neox = nn.Module()
        self.gpt_neox.embed_in = nn.Embedding(V, C)
        self.gpt_neox.layers = nn.ModuleList(NeoXLayer(cfg) for _ in range(cfg["num_hidden_layers"]))
        self.gpt_neox.final_layer_norm = nn.LayerNorm(C, eps=cfg.get("layer_norm_eps", 1e-5))
        self.embed_out = nn.Linear(C, V, bias=False)
        if cfg.get("tie_word_embeddings", False):
            self.embed_out.weight = self.gpt_neox.embed_in.weight
        base, pct = neox_rope_settings(cfg)
        hs = C // cfg["num_attention_heads"]
        self.rot = int(hs * pct)  # the rotated channels of each head
        inv_freq = 1.0 / (base ** (torch.arange(0, self.rot, 2).float() / self.rot))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    rope = LlamaLM.rope

    def forward(self, ids, past=None):
        h = F.dropout(self.gpt_neox.embed_in(ids), self.hidden_pdrop, self.training)
        start = 0 if past is None else past[0][0].size(2)
        cos, sin = self.rope(start, ids.size(1))
        present = []
        for i, layer in enumerate(self.gpt_neox.layers):
            h, kv = layer(h, cos, sin, self.rot, None if past is None else past[i])
            present.append(kv)
        logits = self.embed_out(self.gpt_neox.final_layer_norm(h))
        return logits if past is None else (logits, present)


# the head's state-dict name and the embedding it is tied to (when it is), per class
HEADS = {GPT2LMHead: ("lm_head", lambda m: m.transformer.wte), LlamaLM: ("lm_head", lambda m: m.model.embed_tokens),
         NeoXLM: ("embed_out", lambda m: m.gpt_neox.embed_in)}


def head_tied(model):
    """(the head's name, whether it is the token embedding)."""
    name, embedding = HEADS[type(model)]
    return name, getattr(model, name).weight is embedding(model).weight


# ---- folders ----

def have_transformers():
    try:
        import transformers  # noqa: F401
        return True
    except ImportError:
        return False


def load(path, impl="auto"):
    """The model in folder path (config.json, model.safetensors), float32, in eval mode.
    impl: "plain" (the modules above), "transformers" (its AutoModelForCausalLM), "auto"
    (transformers when installed). Both give logits from model(ids) (transformers' as
    .logits)."""
    if impl == "transformers" or (impl == "auto" and have_transformers()):
        from transformers import AutoModelForCausalLM
        return AutoModelForCausalLM.from_pretrained(path, torch_dtype=torch.float32).eval()
    with open(os.path.join(path, "config.json")) as f:
        cfg = json.load(f)
    kinds = {"gpt2": GPT2LMHead, "llama": LlamaLM, "gpt_neox": NeoXLM}
    if cfg.get("model_type") not in kinds:
        raise SystemExit("%s: model_type %r; this example reads gpt2, llama and gpt_neox (wasmformer exports its "
                         "other architectures in its own layout)" % (path, cfg.get("model_type")))
    model = kinds[cfg["model_type"]](cfg)
    state = {k: v.float() for k, v in read_safetensors(os.path.join(path, "model.safetensors")).items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    head, tied = head_tied(model)
    if unexpected or [k for k in missing if not (tied and k == head + ".weight")]:
        raise SystemExit("%s: tensors missing %s, unexpected %s" % (path, missing, unexpected))
    return model.eval()


def logits_of(model, ids):
    out = model(ids)
    return out.logits if hasattr(out, "logits") else out


def save(model, src, dst):
    """Writes model into folder dst as src's files are (config.json, model.safetensors, and
    src's tokenizer.wft: the tokenizer does not change)."""
    os.makedirs(dst, exist_ok=True)
    if hasattr(model, "save_pretrained"):  # transformers
        model.save_pretrained(dst, safe_serialization=True)
    else:
        state = model.state_dict()
        head, tied = head_tied(model)
        if tied:
            del state[head + ".weight"]  # saved once, as Hugging Face does
        write_safetensors(os.path.join(dst, "model.safetensors"), state, {"format": "pt"})
        shutil.copyfile(os.path.join(src, "config.json"), os.path.join(dst, "config.json"))
    if os.path.exists(os.path.join(src, "tokenizer.wft")):
        shutil.copyfile(os.path.join(src, "tokenizer.wft"), os.path.join(dst, "tokenizer.wft"))
