"""Independent PyTorch forward pass of a LLaMA-family decoder, used as the parity reference.

Usage: python3 llama_reference.py MODEL_DIR IDS_JSON OUT_BIN [MODEL_DIR IDS_JSON OUT_BIN ...]
  MODEL_DIR  folder with config.json and model.safetensors (F32, or F16/BF16 upcast to float32)
  IDS_JSON   JSON list of equal-length token id lists
  OUT_BIN    raw little-endian float32 logits, row-major [batch, seq, vocab]

When MODEL_DIR has an `adapter/` folder (PEFT layout: adapter_config.json +
adapter_model.safetensors with base_model.model.<module>.lora_A/B.weight keys, A [r, in],
B [out, r]), its update W += (alpha / r) * B @ A is applied first, as PEFT's merge does.
When MODEL_DIR also has a file `grads.request`, A and B are leaves with gradients and the script
writes OUT_BIN.grads.json: the gradient of sum_t log p(ids[t+1] | ids[<=t]) (all rows) with
respect to every lora_A / lora_B tensor, by PEFT key, in PEFT's [r, in] / [out, r] layout.

Follows the Hugging Face LLaMA / Qwen2 / Qwen3 definitions: pre-norm RMSNorm, rotate-half rotary
embeddings (optionally with Llama 3 frequency scaling, `rope_scaling.rope_type` "llama3"),
grouped-query attention by repeating kv heads, SwiGLU MLP, optional q/k/v (and o) biases, Qwen3's
per-head RMSNorm of queries and keys before the rotation, tied or untied LM head. Reads
safetensors with numpy only.
"""
import json
import math
import os
import struct
import sys

import numpy as np
import torch


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n].decode("utf-8"))
    base = 8 + n
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        chunk = raw[base + begin : base + end]
        if entry["dtype"] == "F32":
            arr = np.frombuffer(chunk, dtype="<f4")
        elif entry["dtype"] == "F16":
            arr = np.frombuffer(chunk, dtype="<f2").astype(np.float32)
        elif entry["dtype"] == "BF16":
            # bfloat16 is the high half of a float32: shift the 16 bits up.
            arr = (np.frombuffer(chunk, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            raise ValueError(f"{name}: reference reads F32, F16 and BF16, got {entry['dtype']}")
        arr = arr.reshape(entry["shape"])
        out[name] = torch.from_numpy(arr.copy())
    return out


def apply_adapter(tensors, adapter_dir, trainable=False):
    with open(f"{adapter_dir}/adapter_config.json") as f:
        acfg = json.load(f)
    scale = acfg["lora_alpha"] / (acfg["r"] ** 0.5 if acfg.get("use_rslora") else acfg["r"])
    lora = read_safetensors(f"{adapter_dir}/adapter_model.safetensors")
    if trainable:
        for t in lora.values():
            t.requires_grad_(True)
    prefix = "base_model.model."
    for key, a in lora.items():
        if not key.endswith(".lora_A.weight"):
            continue
        module = key[len(prefix) : -len(".lora_A.weight")]
        b = lora[f"{prefix}{module}.lora_B.weight"]
        tensors[f"{module}.weight"] = tensors[f"{module}.weight"] + scale * (b @ a)
    return lora


def rms_norm(x, w, eps):
    var = x.pow(2).mean(-1, keepdim=True)
    return x * torch.rsqrt(var + eps) * w


def inverse_frequencies(cfg, hd):
    """theta^(-2i/hd) per frequency, rescaled band by band under Llama 3 scaling."""
    theta = float(cfg.get("rope_theta", 10000.0))
    freqs = [theta ** (-(2.0 * i) / hd) for i in range(hd // 2)]
    rs = cfg.get("rope_scaling")
    kind = None if rs is None else rs.get("rope_type", rs.get("type"))
    if kind not in (None, "default"):
        if kind != "llama3":
            raise ValueError(f"reference implements llama3 rope scaling only, got {kind}")
        factor = rs["factor"]
        lo, hi = rs["low_freq_factor"], rs["high_freq_factor"]
        orig = rs["original_max_position_embeddings"]
        scaled = []
        for f in freqs:
            wavelength = 2.0 * math.pi / f
            if wavelength > orig / lo:  # long wavelengths: divide the frequency by factor
                scaled.append(f / factor)
            elif wavelength < orig / hi:  # short wavelengths: untouched
                scaled.append(f)
            else:  # in between: blend the two by where the wavelength sits in the band
                t = (orig / wavelength - lo) / (hi - lo)
                scaled.append((1.0 - t) * f / factor + t * f)
        freqs = scaled
    return torch.tensor(freqs, dtype=torch.float64).float()


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def forward(cfg, t, ids):
    d = cfg["hidden_size"]
    n_heads = cfg["num_attention_heads"]
    n_kv = cfg.get("num_key_value_heads") or n_heads
    hd = cfg.get("head_dim") or d // n_heads
    eps = cfg.get("rms_norm_eps", 1e-6)
    bsz, seq = ids.shape
    qk_norm = cfg.get("model_type") == "qwen3"

    inv_freq = inverse_frequencies(cfg, hd)
    pos = torch.arange(seq, dtype=torch.float32)
    freqs = torch.outer(pos, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos()[None, None], emb.sin()[None, None]

    def lin(x, name):
        y = x @ t[name + ".weight"].T
        b = t.get(name + ".bias")
        return y + b if b is not None else y

    h = t["model.embed_tokens.weight"][ids]
    causal = torch.full((seq, seq), float("-inf")).triu(1)
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}"
        x = rms_norm(h, t[p + ".input_layernorm.weight"], eps)
        q = lin(x, p + ".self_attn.q_proj").view(bsz, seq, n_heads, hd).transpose(1, 2)
        k = lin(x, p + ".self_attn.k_proj").view(bsz, seq, n_kv, hd).transpose(1, 2)
        v = lin(x, p + ".self_attn.v_proj").view(bsz, seq, n_kv, hd).transpose(1, 2)
        if qk_norm:  # every head's query and key vector normalised on its own, then rotated
            q = rms_norm(q, t[p + ".self_attn.q_norm.weight"], eps)
            k = rms_norm(k, t[p + ".self_attn.k_norm.weight"], eps)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = n_heads // n_kv
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        scores = q @ k.transpose(2, 3) / (hd**0.5) + causal
        attn = torch.softmax(scores, dim=-1) @ v
        attn = attn.transpose(1, 2).reshape(bsz, seq, n_heads * hd)
        h = h + lin(attn, p + ".self_attn.o_proj")
        y = rms_norm(h, t[p + ".post_attention_layernorm.weight"], eps)
        gate = lin(y, p + ".mlp.gate_proj")
        up = lin(y, p + ".mlp.up_proj")
        h = h + lin(torch.nn.functional.silu(gate) * up, p + ".mlp.down_proj")
    h = rms_norm(h, t["model.norm.weight"], eps)
    head = t.get("lm_head.weight")
    if head is None or cfg.get("tie_word_embeddings", False):
        head = t["model.embed_tokens.weight"]
    return h @ head.T


def main():
    args = sys.argv[1:]
    if not args or len(args) % 3 != 0:
        raise SystemExit(__doc__)
    for i in range(0, len(args), 3):
        model_dir, ids_path, out_path = args[i : i + 3]
        with open(f"{model_dir}/config.json") as f:
            cfg = json.load(f)
        tensors = read_safetensors(f"{model_dir}/model.safetensors")
        grads = os.path.isfile(f"{model_dir}/grads.request")
        lora = {}
        if os.path.isfile(f"{model_dir}/adapter/adapter_config.json"):
            lora = apply_adapter(tensors, f"{model_dir}/adapter", trainable=grads)
        with open(ids_path) as f:
            ids = torch.tensor(json.load(f), dtype=torch.long)
        if grads:
            logits = forward(cfg, tensors, ids)
            logp = torch.log_softmax(logits[:, :-1], dim=-1)
            logp.gather(-1, ids[:, 1:, None]).sum().backward()
            out = {k: v.grad.reshape(-1).tolist() for k, v in lora.items()}
            with open(out_path + ".grads.json", "w") as f:
                json.dump(out, f)
            logits = logits.detach()
        else:
            with torch.no_grad():
                logits = forward(cfg, tensors, ids)
        logits.contiguous().numpy().astype("<f4").tofile(out_path)


if __name__ == "__main__":
    main()
