"""PyTorch baseline for bench/run.ts: the same decoder, sizes and modes, on CUDA when torch sees a
GPU (float32 with TF32 off, or the spec's "precision": "tf32" / "bf16"), else on the CPU.

Usage: python3 torch_bench.py JSON_SPEC            (one-shot: medians for every config and mode)
       python3 torch_bench.py --serve JSON_SPEC    (reads "CONFIG MODE" lines on stdin, answers
                                                    each with the seconds of one step, so a caller
                                                    can interleave its own steps with these)
JSON_SPEC: {"configs": [{"name", "d", "layers", "heads", "ffn", "vocab", "batch", "seq",
                          optional "kvHeads", "tied"}],
            "modes": ["fwd", "lora", "score"], "reps": 3, "score": {"prompt": 100, "cands": 10, "len": 8}}
One-shot prints one JSON line per measurement: {"config", "mode", "tokens_per_s", "median_s"}.

Precision "bf16" is what a PEFT user loading a bf16 checkpoint runs: the frozen base weights are
stored in bfloat16, the LoRA matrices stay float32, and the products run under bf16 autocast.
Each reply carries the CUDA peak memory of its config so far ("peak", bytes; 0 on the CPU); one
config's model serves all its modes and is freed before the next config is built.

On the CPU it runs with torch.set_num_threads(1) (OpenBLAS keeps its own pool), the fastest
setting measured on the 2-core development machine. On CUDA every timed step ends with
torch.cuda.synchronize().
"""
import json
import statistics
import sys
import time

import torch

torch.manual_seed(0)
DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
if DEVICE.type == "cpu":
    torch.set_num_threads(1)
PRECISION = "fp32"


def configure(spec):
    """Precision of the CUDA baseline: fp32 (TF32 off, as our float32 kernels), tf32 or bf16."""
    global PRECISION
    PRECISION = spec.get("precision", "fp32")
    if PRECISION not in ("fp32", "tf32", "bf16"):
        raise ValueError(f"precision must be fp32, tf32 or bf16, got {PRECISION}")
    if DEVICE.type == "cuda":
        tf32 = PRECISION == "tf32"
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32


def describe():
    if DEVICE.type == "cuda":
        return f"torch {torch.__version__} on CUDA ({torch.cuda.get_device_name(0)}), {PRECISION}, eager"
    return f"torch {torch.__version__} on the CPU, set_num_threads(1), float32"


def sync():
    if DEVICE.type == "cuda":
        torch.cuda.synchronize()


class Model(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        d, h, f, v = c["d"], c["heads"], c["ffn"], c["vocab"]
        kv = c.get("kvHeads") or h
        self.h = h
        self.kv = kv
        self.hd = d // h
        kvd = kv * self.hd
        self.embed = torch.nn.Embedding(v, d)
        self.layers = torch.nn.ModuleList()
        for _ in range(c["layers"]):
            m = torch.nn.Module()
            m.n1 = torch.nn.Parameter(torch.ones(d))
            m.n2 = torch.nn.Parameter(torch.ones(d))
            for name, i, o in [("q", d, d), ("k", d, kvd), ("v", d, kvd), ("o", d, d), ("g", d, f), ("u", d, f), ("dn", f, d)]:
                setattr(m, name, torch.nn.Linear(i, o, bias=False))
            m.qa = torch.nn.Parameter(torch.randn(8, d) * 0.01)
            m.qb = torch.nn.Parameter(torch.zeros(d, 8))
            m.va = torch.nn.Parameter(torch.randn(8, d) * 0.01)
            m.vb = torch.nn.Parameter(torch.zeros(kvd, 8))
            self.layers.append(m)
        self.norm = torch.nn.Parameter(torch.ones(d))
        self.tied = bool(c.get("tied"))
        if not self.tied:
            self.head = torch.nn.Linear(d, v, bias=False)
        inv = 1.0 / (10000 ** (torch.arange(0, self.hd, 2).float() / self.hd))
        self.register_buffer("inv", inv)

    @staticmethod
    def rms(x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w

    @staticmethod
    def rot(x):
        half = x.shape[-1] // 2
        return torch.cat((-x[..., half:], x[..., :half]), -1)

    def forward(self, ids):
        b, t = ids.shape
        pos = torch.arange(t, device=ids.device).float()
        emb = torch.cat([torch.outer(pos, self.inv)] * 2, -1)
        cos, sin = emb.cos(), emb.sin()
        x = self.embed(ids)
        mask = torch.full((t, t), float("-inf"), device=ids.device).triu(1)
        for m in self.layers:
            y = self.rms(x, m.n1)
            q = m.q(y) + (y @ m.qa.T) @ m.qb.T * 2.0
            k = m.k(y)
            v = m.v(y) + (y @ m.va.T) @ m.vb.T * 2.0
            q = q.view(b, t, self.h, self.hd).transpose(1, 2)
            k, v = (z.view(b, t, self.kv, self.hd).transpose(1, 2) for z in (k, v))
            q = q * cos + self.rot(q) * sin
            k = k * cos + self.rot(k) * sin
            if self.kv != self.h:
                k = k.repeat_interleave(self.h // self.kv, dim=1)
                v = v.repeat_interleave(self.h // self.kv, dim=1)
            a = torch.softmax(q @ k.transpose(2, 3) / self.hd**0.5 + mask, -1) @ v
            x = x + m.o(a.transpose(1, 2).reshape(b, t, -1))
            y = self.rms(x, m.n2)
            x = x + m.dn(torch.nn.functional.silu(m.g(y)) * m.u(y))
        y = self.rms(x, self.norm)
        return y @ self.embed.weight.T if self.tied else self.head(y)


def timed(fn, reps):
    fn()
    sync()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def autocast():
    """bf16 autocast on CUDA when asked for, else nothing."""
    if DEVICE.type == "cuda" and PRECISION == "bf16":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return torch.autocast(DEVICE.type, enabled=False)


def make_model(c):
    """The config's model on the device; with bf16, its frozen base weights stored in bfloat16."""
    model = Model(c).to(DEVICE)
    for p in model.parameters():
        p.requires_grad_(False)
    lora = [p for m in model.layers for p in (m.qa, m.qb, m.va, m.vb)]
    if DEVICE.type == "cuda" and PRECISION == "bf16":
        keep = {id(p) for p in lora}
        for p in model.parameters():
            if id(p) not in keep:
                p.data = p.data.to(torch.bfloat16)
    return model, lora


def make_runner(c, mode, spec, built):
    """Return (step function, tokens per step) for one config and mode, on its built model."""
    model, lora = built
    b, t = c["batch"], c["seq"]
    ids = torch.randint(0, c["vocab"], (b, t), device=DEVICE)
    if mode == "fwd":

        def run():
            with torch.no_grad(), autocast():
                logits = model(ids[:, :-1])
                torch.nn.functional.cross_entropy(logits.reshape(-1, c["vocab"]), ids[:, 1:].reshape(-1))

        return run, b * (t - 1)
    if mode == "lora":
        for p in lora:
            p.requires_grad_(True)
        opt = torch.optim.Adam(lora, lr=1e-4)

        def run():
            opt.zero_grad()
            with autocast():
                logits = model(ids[:, :-1])
                loss = torch.nn.functional.cross_entropy(logits.reshape(-1, c["vocab"]), ids[:, 1:].reshape(-1))
            loss.backward()
            opt.step()

        return run, b * (t - 1)
    if mode == "score":
        sc = spec["score"]
        seqs = torch.randint(0, c["vocab"], (sc["cands"], sc["prompt"] + sc["len"]), device=DEVICE)

        def run():
            with torch.no_grad(), autocast():
                logits = model(seqs[:, :-1])[:, sc["prompt"] - 1 :]
                lp = torch.log_softmax(logits, -1)
                lp.gather(-1, seqs[:, sc["prompt"] :].unsqueeze(-1))

        return run, sc["cands"] * sc["len"]
    raise ValueError(f"unknown mode {mode}")


def peak():
    return torch.cuda.max_memory_allocated() if DEVICE.type == "cuda" else 0


def serve(spec):
    configure(spec)
    configs = {c["name"]: c for c in spec["configs"]}
    runners = {}
    current = None
    built = None
    print(f"ready {describe()}", flush=True)
    for line in sys.stdin:
        name, mode = line.split()
        if name != current:
            # One config at a time on the device: free the previous model and its runners.
            runners.clear()
            built = None
            if DEVICE.type == "cuda":
                torch.cuda.empty_cache()
                torch.cuda.reset_peak_memory_stats()
            built = make_model(configs[name])
            current = name
        key = (name, mode)
        if key not in runners:
            runners[key] = make_runner(configs[name], mode, spec, built)
            runners[key][0]()  # warm-up
            sync()
        run = runners[key][0]
        t0 = time.perf_counter()
        run()
        sync()
        reply = {"seconds": time.perf_counter() - t0, "tokens": runners[key][1], "peak": peak()}
        print(json.dumps(reply), flush=True)


def main():
    if sys.argv[1] == "--serve":
        serve(json.loads(sys.argv[2]))
        return
    spec = json.loads(sys.argv[1])
    configure(spec)
    reps = spec.get("reps", 3)
    for c in spec["configs"]:
        built = make_model(c)
        for mode in spec["modes"]:
            run, toks = make_runner(c, mode, spec, built)
            s = timed(run, reps)
            print(json.dumps({"config": c["name"], "mode": mode, "tokens_per_s": toks / s, "median_s": s}), flush=True)


if __name__ == "__main__":
    main()
