#!/usr/bin/env python3
"""A transformer layer's GEMMs split by tensor parallelism, timed on this machine's GPU, for the
step-time model's shardPenalty (internal/steptime/shard.go), which predicts them from a roofline
fitted to other shapes (scripts/fit-gemm-roofline.py over attention-h100.json): the check of that
term on layers it was not fitted to.

For each layer (published models' widths: QKV, the attention projection, fc1 and fc2; a routed
expert's fc1 and fc2), tokens a GEMM and tp in 1, 2, 4, 8, the layer's twelve (or six) GEMMs of
one tp shard as Megatron splits them (column-parallel QKV and fc1 by their output, row-parallel
projection and fc2 by their input), forward, data gradient and weight gradient, each timed alone
(median of --reps after --warmup, CUDA events), in bf16 (torch.matmul) and fp8
(torch._scaled_mm, e4m3 in, unit scales, bf16 out). The measured penalty is the shard's total
times tp over the whole layer's.

  measure-shard-gemms.py --out FILE.json
"""

import json
import platform

import torch

from measure_runtime import cuda_median, kernel_options

# name: hidden, key/value width (query groups x kv channels), MLP width, gated; None: an expert.
LAYERS = {
    "llama3-8b": (4096, 1024, 14336, True),
    "llama3-70b": (8192, 1024, 28672, True),
    "nemotron4-15b": (6144, 1024, 24576, False),
    "gpt3-175b": (12288, 12288, 49152, False),
    "qwen3-235b-expert": (4096, None, 1536, True),
    "deepseek-v3-expert": (7168, None, 2048, True),
}
TOKENS = {"expert": (2048, 8192), "dense": (4096, 8192)}
TPS = (1, 2, 4, 8)


def linears(h, kv, ffn, gated):
    """(in, out, column-parallel) of the layer's linear layers."""
    g = 2 if gated else 1
    if kv is None:
        return [(h, g * ffn, True), (ffn, h, False)]
    return [(h, h + 2 * kv, True), (h, h, False), (h, g * ffn, True), (ffn, h, False)]


def gemm(m, n, k, fp8, warmup, reps, g):
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=g)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=g)
    if not fp8:
        bt = b.t()
        return cuda_median(lambda: torch.matmul(a, bt), warmup, reps)
    a8, b8 = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
    one = torch.ones((), device="cuda", dtype=torch.float32)
    return cuda_median(lambda: torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16),
                       warmup, reps)


def shard_time(layer, tokens, tp, fp8, warmup, reps, g):
    total = 0.0
    for i, o, column in linears(*layer):
        if column:
            o //= tp
        else:
            i //= tp
        # forward [m, i] x [i, o]; data gradient [m, o] x [o, i]; weight gradient [o, m] x [m, i]
        for m, n, k in ((tokens, o, i), (tokens, i, o), (o, i, tokens)):
            total += gemm(m, n, k, fp8, warmup, reps, g)
    return total


def main():
    o, g = kernel_options(__doc__.split("\n")[0])
    cases = []
    for name, layer in LAYERS.items():
        for tokens in TOKENS["expert" if layer[1] is None else "dense"]:
            for fp8 in (False, True):
                times = {tp: shard_time(layer, tokens, tp, fp8, o.warmup, o.reps, g) for tp in TPS}
                for tp in TPS:
                    cases.append({"layer": name, "hidden": layer[0], "kv": layer[1], "ffn": layer[2],
                                  "gated": layer[3], "tokens": tokens, "tp": tp,
                                  "dtype": "fp8" if fp8 else "bf16", "shard_s": times[tp],
                                  "penalty": times[tp] * tp / times[1]})
                print(name, tokens, "fp8" if fp8 else "bf16",
                      " ".join(f"tp{tp} {times[tp] * tp / times[1]:.3f}" for tp in TPS), flush=True)
    doc = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "cuda": torch.version.cuda,
           "python": platform.python_version(), "warmup": o.warmup, "reps": o.reps, "cases": cases}
    with open(o.out, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
