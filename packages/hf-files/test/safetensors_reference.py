"""Independent safetensors reader/writer used by the cross-check test.

It parses and writes the format by hand (struct + json) and lets PyTorch do every dtype
conversion, so the TypeScript reader and writer are compared against torch's own F16/BF16 code.

  read PATH...         print a JSON list describing every tensor of each PATH (raw bits, float32
                       bits of torch's conversion, and for F32 tensors torch's F16/BF16 rounding)
  write PATH           write a file of F32, F16 and BF16 tensors (special values included) and print
                       the same JSON description of what was written
  checkpoint DIR       write a tiny LLaMA checkpoint folder as Hugging Face lays it out (config.json,
                       two BF16 shards, model.safetensors.index.json) and print its description
"""
import os
import json
import struct
import sys

import torch

DTYPES = {
    "F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
    "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8,
    "U8": torch.uint8, "BOOL": torch.bool,
}
NAMES = {v: k for k, v in DTYPES.items()}
INT_VIEW = {2: (torch.int16, 0xFFFF), 4: (torch.int32, 0xFFFFFFFF), 8: (torch.int64, (1 << 64) - 1)}


def bits(t):
    """Unsigned bit patterns of a float tensor's elements, as Python ints."""
    flat = t.contiguous().reshape(-1)
    view, mask = INT_VIEW[flat.element_size()]
    return [x & mask for x in flat.view(view).tolist()]


def describe(tensors, metadata):
    out = {"metadata": metadata, "tensors": {}}
    for name, t in tensors.items():
        d = {"dtype": NAMES[t.dtype], "shape": list(t.shape)}
        if t.is_floating_point():
            d["bits"] = bits(t)
            d["f32bits"] = bits(t.to(torch.float32))
            if t.dtype == torch.float32:
                d["f16bits"] = bits(t.to(torch.float16))
                d["bf16bits"] = bits(t.to(torch.bfloat16))
        else:
            d["values"] = t.reshape(-1).to(torch.int64).tolist()
        out["tensors"][name] = d
    return out


def read(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    metadata = header.pop("__metadata__", {})
    data = bytearray(raw[8 + n:])
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        dtype = DTYPES[info["dtype"]]
        chunk = data[begin:end]
        if len(chunk) == 0:
            t = torch.empty(0, dtype=dtype)
        else:
            t = torch.frombuffer(chunk, dtype=dtype).clone()
        tensors[name] = t.reshape(info["shape"])
    return tensors, metadata


def specials():
    return torch.tensor([
        0.0, -0.0, 1.0, -2.5, 1.0 / 3.0, 65504.0, 65519.0, 65520.0, 70000.0, 6.0e-8, 2.0 ** -25,
        3 * 2.0 ** -25, 1e-5, 1.0 + 2.0 ** -11, 1.0 + 3 * 2.0 ** -11, 1.0 + 2.0 ** -8,
        1.0 + 3 * 2.0 ** -8, 1e-40, -1e-45, 3.4028234663852886e38, float("inf"), float("-inf"),
        float("nan"),
    ], dtype=torch.float32)


def save_file(path, tensors, metadata, order=None, spaces=None):
    """Write tensors in `order` (default: sorted); pad the header with `spaces` (default: to 8 bytes)."""
    header = {"__metadata__": metadata}
    blobs = []
    offset = 0
    for name in order or sorted(tensors):
        t = tensors[name].contiguous()
        if t.dtype == torch.bfloat16 or t.dtype == torch.float16:
            blob = t.view(torch.int16).numpy().tobytes()
        else:
            blob = t.numpy().tobytes()
        header[name] = {"dtype": NAMES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode("utf-8")
    text += b" " * (-len(text) % 8 if spaces is None else spaces)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def checkpoint(folder):
    config = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "vocab_size": 32,
              "hidden_size": 8, "intermediate_size": 12, "num_hidden_layers": 2,
              "num_attention_heads": 2, "num_key_value_heads": 1, "rms_norm_eps": 1e-5,
              "rope_theta": 10000.0, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
              "bos_token_id": 1, "eos_token_id": 2}
    g = torch.Generator().manual_seed(5)
    d, f, kv = 8, 12, 4
    shapes = {"model.embed_tokens.weight": [32, d], "model.norm.weight": [d], "lm_head.weight": [32, d]}
    for i in range(2):
        p = f"model.layers.{i}."
        shapes.update({p + "input_layernorm.weight": [d], p + "post_attention_layernorm.weight": [d],
                       p + "self_attn.q_proj.weight": [d, d], p + "self_attn.k_proj.weight": [kv, d],
                       p + "self_attn.v_proj.weight": [kv, d], p + "self_attn.o_proj.weight": [d, d],
                       p + "mlp.gate_proj.weight": [f, d], p + "mlp.up_proj.weight": [f, d],
                       p + "mlp.down_proj.weight": [d, f]})
    tensors = {n: torch.randn(*s, generator=g).to(torch.bfloat16) for n, s in shapes.items()}
    names = sorted(tensors)
    shards = {"model-00001-of-00002.safetensors": names[: len(names) // 2],
              "model-00002-of-00002.safetensors": names[len(names) // 2:]}
    os.makedirs(folder, exist_ok=True)
    weight_map = {}
    for shard, members in shards.items():
        save_file(os.path.join(folder, shard), {n: tensors[n] for n in members}, {"format": "pt"})
        weight_map.update({n: shard for n in members})
    total = sum(t.numel() * t.element_size() for t in tensors.values())
    with open(os.path.join(folder, "model.safetensors.index.json"), "w") as fh:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, fh, indent=2)
    with open(os.path.join(folder, "config.json"), "w") as fh:
        json.dump(config, fh, indent=2)
    return tensors, {"format": "pt"}


def write(path):
    g = torch.Generator().manual_seed(1234)
    base = torch.cat([specials(), torch.randn(41, generator=g) * 3.0])
    tensors = {
        "f32.mixed": base.reshape(4, 16),
        "f16.mixed": base.to(torch.float16).reshape(2, 32),
        "bf16.mixed": base.to(torch.bfloat16).reshape(64),
        "f16.cube": (torch.randn(2, 3, 4, generator=g) * 100).to(torch.float16),
        "bf16.wide": (torch.randn(3, 5, generator=g) * 1e30).to(torch.bfloat16),
        "f64.small": torch.randn(3, generator=g, dtype=torch.float64),
        "i64.ids": torch.tensor([0, -1, 123456, 2 ** 24], dtype=torch.int64),
        "u8.bytes": torch.tensor([0, 1, 255], dtype=torch.uint8),
        "bool.mask": torch.tensor([True, False, True]),
        "scalar": torch.tensor(7.25, dtype=torch.float32),
        "empty": torch.empty(0, 3, dtype=torch.float16),
    }
    metadata = {"format": "pt", "note": "written by the reference script"}
    # Deliberately not in name order, and not 8-byte aligned, to exercise the reader.
    order = ["i64.ids", "bf16.mixed", "scalar", "f16.cube", "u8.bytes", "f32.mixed", "empty",
             "bool.mask", "f64.small", "f16.mixed", "bf16.wide"]
    save_file(path, tensors, metadata, order, spaces=3)
    return tensors, metadata


if __name__ == "__main__":
    mode, paths = sys.argv[1], sys.argv[2:]
    if sys.byteorder != "little":
        raise SystemExit("this script assumes a little-endian host")
    if mode == "read":
        print(json.dumps([describe(*read(p)) for p in paths]))
    elif mode == "checkpoint":
        print(json.dumps(describe(*checkpoint(paths[0]))))
    else:
        print(json.dumps(describe(*write(paths[0]))))
