"""Hugging Face models in plain PyTorch, and the safetensors format, for machines without
the transformers and safetensors packages (Debian's python3-torch has neither).

gpt2_lm_logits(state, config, ids) computes what transformers' GPT2LMHeadModel computes in
eval mode from a state dict with Hugging Face names and a config.json dict: learned
positions, Pre-LN blocks with LayerNorm(eps = layer_norm_epsilon), Conv1D layers (weights
stored [in, out]), attention scaled by 1/sqrt(head size) with the causal mask filled with
the dtype's lowest value, gelu_new (GELU, tanh approximation) or relu, a final LayerNorm
and a bias-free head (the token embedding when tie_word_embeddings).

llama_lm_logits(state, config, ids) computes what transformers' LlamaForCausalLM computes in
eval mode with eager attention, in float32: RMSNorm as weight * (x * rsqrt(mean(x^2) + eps))
with the statistics in float32, rotary positions in the rotate_half convention (channel i
pairs with i + head_dim/2) with inv_freq = 1 / theta^(2i/head_dim) and the angles, cos and
sin all in float32 as LlamaRotaryEmbedding computes them, scores times head_dim^-0.5 plus a
causal mask of the dtype's lowest value, softmax in float32, grouped key/value heads
repeated, a SiLU-gated MLP down_proj(silu(gate_proj x) * up_proj x), no biases, a final
RMSNorm and the head (the token embedding when tie_word_embeddings).

neox_lm_logits(state, config, ids) computes what transformers' GPTNeoXForCausalLM computes in
eval mode with eager attention, in float32: Pre-LN layers with LayerNorm (eps = layer_norm_eps),
one fused query_key_value Linear whose output is viewed as [heads, 3 * head_size] and split
into each head's query, key and value; rotary positions on the first rotary_ndims =
int(head_size * rotary_pct) channels of each head, rotate_half convention, inv_freq = 1 /
base^(2i/rotary_ndims), base rotary_emb_base; scores times head_size^-0.5 with the causal mask
of the dtype's lowest value; a dense output Linear; with use_parallel_residual false the MLP
dense_4h_to_h(act(dense_h_to_4h(post_attention_layernorm(h)))) reads h after the attention's
residual (true, the class's default, reads the layer's input: not what wasmformer computes); a
final LayerNorm and embed_out (the embedding when tie_word_embeddings).

safetensors: u64 little-endian header length, a JSON header {name: {dtype, shape,
data_offsets: [begin, end]}, "__metadata__": {...}}, then the raw little-endian data.
"""
import json
import math
import os
import struct

import torch
import torch.nn.functional as F

DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16, "F64": torch.float64,
          "I32": torch.int32, "I64": torch.int64, "BOOL": torch.bool}
NAMES = {v: k for k, v in DTYPES.items()}


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack_from("<Q", data, 0)
    header = json.loads(data[8:8 + n])
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        begin, end = e["data_offsets"]
        raw = bytearray(data[8 + n + begin:8 + n + end])
        dtype = DTYPES[e["dtype"]]
        t = torch.frombuffer(raw, dtype=dtype) if raw else torch.empty(0, dtype=dtype)
        out[name] = t.reshape(e["shape"]).clone()
    return out


def tensor_bytes(t):
    t = t.detach().contiguous().cpu()
    if t.dtype == torch.bfloat16:  # numpy has no bfloat16: the same 16 bits as int16
        t = t.view(torch.int16)
    return t.numpy().tobytes()  # little-endian on every machine this runs on


def write_safetensors(path, tensors, metadata=None):
    header, blobs, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name, t in tensors.items():
        b = tensor_bytes(t)
        header[name] = {"dtype": NAMES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-(8 + len(h)) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for b in blobs:
            f.write(b)


def load_dir(path):
    """(state dict, config dict) of a directory with model.safetensors and config.json."""
    with open(os.path.join(path, "config.json")) as f:
        config = json.load(f)
    return read_safetensors(os.path.join(path, "model.safetensors")), config


def gpt2_state(state, config):
    """The float32 state dict of a GPT2LMHeadModel: names with the transformer. prefix (a
    GPT2Model checkpoint has none), lm_head.weight tied to the embedding unless
    tie_word_embeddings is false, no causal-mask buffers."""
    out = {}
    for k, v in state.items():
        if k.endswith(".attn.bias") or k.endswith(".attn.masked_bias"):
            continue
        if not k.startswith("transformer.") and k != "lm_head.weight":
            k = "transformer." + k
        out[k] = v.to(torch.float32)
    if config.get("tie_word_embeddings", True):
        out["lm_head.weight"] = out["transformer.wte.weight"]
    return out


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


ACTIVATIONS = {"gelu_new": gelu_new, "gelu_pytorch_tanh": lambda x: F.gelu(x, approximate="tanh"), "relu": F.relu}


def conv1d(x, w, b):
    """transformers' Conv1D: y = x W + b with W stored [in, out]."""
    y = torch.addmm(b, x.reshape(-1, x.size(-1)), w)
    return y.view(x.shape[:-1] + (w.size(1),))


def no_adapter(x, module):
    return 0


def gpt2_lm_logits(state, config, ids, lora=no_adapter):
    """lora(x, module) is an adapter's term added to a module's output (check_peft.py), 0 without."""
    p = gpt2_state(state, config)
    C, NH, L = config["n_embd"], config["n_head"], config["n_layer"]
    eps = config.get("layer_norm_epsilon", 1e-5)
    act = ACTIVATIONS[config.get("activation_function", "gelu_new")]
    assert config.get("scale_attn_weights", True) and not config.get("scale_attn_by_inverse_layer_idx", False)
    B, T = ids.shape
    h = p["transformer.wte.weight"][ids] + p["transformer.wpe.weight"][torch.arange(T)]
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool)).view(1, 1, T, T)
    for l in range(L):
        w = lambda name: p["transformer.h.%d.%s" % (l, name)]
        m = lambda name: "transformer.h.%d.%s" % (l, name)
        x = F.layer_norm(h, (C,), w("ln_1.weight"), w("ln_1.bias"), eps)
        q, k, v = (conv1d(x, w("attn.c_attn.weight"), w("attn.c_attn.bias")) + lora(x, m("attn.c_attn"))).split(C, dim=2)
        q, k, v = (t.view(B, T, NH, C // NH).permute(0, 2, 1, 3) for t in (q, k, v))
        a = torch.matmul(q, k.transpose(-1, -2))
        a = a / torch.full([], v.size(-1) ** 0.5, dtype=a.dtype)
        a = torch.where(causal, a, torch.full([], torch.finfo(a.dtype).min, dtype=a.dtype))
        a = torch.softmax(a, dim=-1)
        y = torch.matmul(a, v).permute(0, 2, 1, 3).contiguous().view(B, T, C)
        h = conv1d(y, w("attn.c_proj.weight"), w("attn.c_proj.bias")) + lora(y, m("attn.c_proj")) + h
        x = F.layer_norm(h, (C,), w("ln_2.weight"), w("ln_2.bias"), eps)
        u = act(conv1d(x, w("mlp.c_fc.weight"), w("mlp.c_fc.bias")) + lora(x, m("mlp.c_fc")))
        h = h + conv1d(u, w("mlp.c_proj.weight"), w("mlp.c_proj.bias")) + lora(u, m("mlp.c_proj"))
    h = F.layer_norm(h, (C,), p["transformer.ln_f.weight"], p["transformer.ln_f.bias"], eps)
    return F.linear(h, p["lm_head.weight"])


def llama_state(state, config):
    """The float32 state dict of a LlamaForCausalLM: lm_head.weight tied to the embedding when
    tie_word_embeddings (default false), no rotary_emb.inv_freq buffers (older transformers
    versions saved them; llama_lm_logits checks they match rope_theta)."""
    out = {k: v.to(torch.float32) for k, v in state.items() if not k.endswith(".rotary_emb.inv_freq")}
    if config.get("tie_word_embeddings", False):
        out["lm_head.weight"] = out["model.embed_tokens.weight"]
    return out


def llama_rope_theta(config):
    """rope_theta (transformers 4.x) or rope_parameters["rope_theta"] (5.x); no scaling."""
    params = config.get("rope_parameters") or config.get("rope_scaling") or {}
    assert params.get("rope_type", params.get("type", "default")) == "default", "scaled RoPE: not modelled here"
    return float(params.get("rope_theta", config.get("rope_theta", 10000.0)))


def llama_rms_norm(x, weight, eps):
    """LlamaRMSNorm: the statistics in float32, the weight applied in the input's dtype."""
    dtype = x.dtype
    h = x.to(torch.float32)
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    return weight * h.to(dtype)


def llama_rope(T, head_dim, theta):
    """LlamaRotaryEmbedding (default type) for positions 0..T-1: cos, sin [1, T, head_dim]."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim))
    positions = torch.arange(T, dtype=torch.int64)[None, :]
    freqs = (inv_freq[None, :, None].float() @ positions[:, None, :].float()).transpose(1, 2)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def llama_lm_logits(state, config, ids, lora=no_adapter):
    assert config.get("hidden_act", "silu") in ("silu", "swish")
    assert not config.get("attention_bias", False) and not config.get("mlp_bias", False)
    p = llama_state(state, config)
    C, L, NH = config["hidden_size"], config["num_hidden_layers"], config["num_attention_heads"]
    NKV = config.get("num_key_value_heads") or NH
    HS = config.get("head_dim") or C // NH
    eps = config.get("rms_norm_eps", 1e-6)
    theta = llama_rope_theta(config)
    for k, v in state.items():
        if k.endswith(".rotary_emb.inv_freq"):  # what older versions then used instead
            want = 1.0 / (theta ** (torch.arange(0, HS, 2, dtype=torch.int64).float() / HS))
            assert torch.allclose(v.float(), want, rtol=8e-3, atol=0), k
    B, T = ids.shape
    h = p["model.embed_tokens.weight"][ids]
    cos, sin = (t[:, None] for t in llama_rope(T, HS, theta))  # [1, 1, T, HS]: over the heads
    mask = torch.full((T, T), torch.finfo(torch.float32).min).triu(1)[None, None]
    for l in range(L):
        w = lambda name: p["model.layers.%d.%s" % (l, name)]
        lin = lambda x, name: F.linear(x, w(name + ".weight")) + lora(x, "model.layers.%d.%s" % (l, name))
        x = llama_rms_norm(h, w("input_layernorm.weight"), eps)
        q = lin(x, "self_attn.q_proj").view(B, T, NH, HS).transpose(1, 2)
        k = lin(x, "self_attn.k_proj").view(B, T, NKV, HS).transpose(1, 2)
        v = lin(x, "self_attn.v_proj").view(B, T, NKV, HS).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k, v = (t.repeat_interleave(NH // NKV, dim=1) for t in (k, v))
        a = torch.matmul(q, k.transpose(2, 3)) * HS ** -0.5 + mask
        a = torch.softmax(a, dim=-1, dtype=torch.float32).to(q.dtype)
        y = torch.matmul(a, v).transpose(1, 2).reshape(B, T, NH * HS)
        h = h + lin(y, "self_attn.o_proj")
        x = llama_rms_norm(h, w("post_attention_layernorm.weight"), eps)
        gated = F.silu(lin(x, "mlp.gate_proj")) * lin(x, "mlp.up_proj")
        h = h + lin(gated, "mlp.down_proj")
    h = llama_rms_norm(h, p["model.norm.weight"], eps)
    return F.linear(h, p["lm_head.weight"])


NEOX_BUFFERS = (".attention.bias", ".attention.masked_bias", ".attention.rotary_emb.inv_freq")


def neox_state(state, config):
    """The float32 state dict of a GPTNeoXForCausalLM: embed_out.weight tied to the embedding
    when tie_word_embeddings (default false), without the mask and rotary buffers older
    transformers versions saved."""
    out = {k: v.to(torch.float32) for k, v in state.items() if not k.endswith(NEOX_BUFFERS)}
    if config.get("tie_word_embeddings", False):
        out["embed_out.weight"] = out["gpt_neox.embed_in.weight"]
    return out


def neox_rope_settings(config):
    """(base, rotary fraction): rotary_emb_base and rotary_pct (transformers 4.x), or
    rope_parameters' rope_theta and partial_rotary_factor (5.x); GPTNeoXConfig's defaults
    10000 and 0.25; no scaling."""
    params = config.get("rope_parameters") or config.get("rope_scaling") or {}
    assert params.get("rope_type", params.get("type", "default")) == "default", "scaled RoPE: not modelled here"
    base = params.get("rope_theta", config.get("rotary_emb_base", config.get("rope_theta", 10000.0)))
    return float(base), float(params.get("partial_rotary_factor", config.get("rotary_pct", 0.25)))


NEOX_ACTIVATIONS = {"gelu": F.gelu, "gelu_new": gelu_new, "gelu_pytorch_tanh": lambda x: F.gelu(x, approximate="tanh"),
                    "relu": F.relu, "relu2": lambda x: torch.square(F.relu(x))}


def neox_lm_logits(state, config, ids, lora=no_adapter):
    assert config.get("attention_bias", True), "attention without biases: not modelled here"
    p = neox_state(state, config)
    C, L, NH = config["hidden_size"], config["num_hidden_layers"], config["num_attention_heads"]
    HS = C // NH
    eps = config.get("layer_norm_eps", 1e-5)
    act = NEOX_ACTIVATIONS[config.get("hidden_act", "gelu")]
    base, pct = neox_rope_settings(config)
    rot = int(HS * pct)  # GPTNeoXAttention.rotary_ndims
    B, T = ids.shape
    # GPTNeoXRotaryEmbedding: cos, sin [T, rot] over the rotated channels, in float32
    inv_freq = 1.0 / (base ** (torch.arange(0, rot, 2, dtype=torch.int64).float() / rot))
    freqs = torch.outer(torch.arange(T, dtype=torch.int64).float(), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos()[None, None], emb.sin()[None, None]
    for k, v in state.items():
        if k.endswith(".rotary_emb.inv_freq"):  # what older versions then used instead
            assert torch.allclose(v.float(), inv_freq, rtol=8e-3, atol=0), k
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool)).view(1, 1, T, T)
    h = p["gpt_neox.embed_in.weight"][ids]
    for l in range(L):
        w = lambda name: p["gpt_neox.layers.%d.%s" % (l, name)]
        lin = lambda x, name: F.linear(x, w(name + ".weight"), w(name + ".bias")) + lora(x, "gpt_neox.layers.%d.%s" % (l, name))
        x = F.layer_norm(h, (C,), w("input_layernorm.weight"), w("input_layernorm.bias"), eps)
        # [B, T, 3C] viewed as [B, T, heads, 3 HS]: each head's q, k, v side by side
        qkv = lin(x, "attention.query_key_value").view(B, T, NH, 3 * HS)
        q, k, v = (qkv[..., i * HS:(i + 1) * HS].permute(0, 2, 1, 3) for i in range(3))
        q = torch.cat((q[..., :rot] * cos + rotate_half(q[..., :rot]) * sin, q[..., rot:]), dim=-1)
        k = torch.cat((k[..., :rot] * cos + rotate_half(k[..., :rot]) * sin, k[..., rot:]), dim=-1)
        a = torch.matmul(q, k.transpose(-1, -2)) * HS ** -0.5
        a = torch.where(causal, a, torch.full([], torch.finfo(a.dtype).min, dtype=a.dtype))
        a = torch.softmax(a, dim=-1)
        y = torch.matmul(a, v).permute(0, 2, 1, 3).contiguous().view(B, T, C)
        attn = lin(y, "attention.dense")
        if config.get("use_parallel_residual", True):  # GPTNeoXLayer: the MLP reads the layer's input
            x2 = F.layer_norm(h, (C,), w("post_attention_layernorm.weight"), w("post_attention_layernorm.bias"), eps)
            u = act(lin(x2, "mlp.dense_h_to_4h"))
            h = h + attn + lin(u, "mlp.dense_4h_to_h")
        else:  # sequential: the MLP reads the stream after the attention's residual
            h = h + attn
            x2 = F.layer_norm(h, (C,), w("post_attention_layernorm.weight"), w("post_attention_layernorm.bias"), eps)
            u = act(lin(x2, "mlp.dense_h_to_4h"))
            h = h + lin(u, "mlp.dense_4h_to_h")
    h = F.layer_norm(h, (C,), p["gpt_neox.final_layer_norm.weight"], p["gpt_neox.final_layer_norm.bias"], eps)
    return F.linear(h, p["embed_out.weight"])


def full_state(state, config):
    """The state dict PyTorch holds for the model (float32, the head even when tied)."""
    if config["model_type"] == "gpt2":
        return gpt2_state(state, config)
    if config["model_type"] == "llama":
        return llama_state(state, config)
    if config["model_type"] == "gpt_neox":
        return neox_state(state, config)
    return state


def lm_logits(state, config, ids, lora=no_adapter):
    if config["model_type"] == "gpt2":
        return gpt2_lm_logits(state, config, ids, lora)
    if config["model_type"] == "llama":
        return llama_lm_logits(state, config, ids, lora)
    if config["model_type"] == "gpt_neox":
        return neox_lm_logits(state, config, ids, lora)
    raise SystemExit("model_type %r: no PyTorch reference here" % config["model_type"])
