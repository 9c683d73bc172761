#!/usr/bin/env python3
"""bf16 matrix-product rate by shape on this machine's GPU, for the step-time model's GEMM
efficiency (issue 24): for each (m, n, k), torch.matmul of an [m, k] by a [k, n] bf16 matrix of
random normal values, timed with CUDA events over --reps products after --warmup, median.

The shapes are those of transformer layers' linear layers: m tokens per microbatch and rank
(micro-batch x sequence / cp), k x n the weight of a QKV, projection or MLP layer at tp 1, 2, 4
and 8 for hidden sizes 1,024 to 8,192, and the square 8192^3 reference.

  measure-gemm.py --out FILE.json
"""

import json
import platform

import torch

from measure_runtime import cuda_median, kernel_options

TOKENS = [1024, 2048, 4096, 8192, 16384, 32768]
HIDDEN = [1024, 2048, 4096, 8192]
TP = [1, 2, 4, 8]


def shapes():
    out = {(8192, 8192, 8192)}
    for h in HIDDEN:
        for tp in TP:
            for m in TOKENS:
                out.add((m, 3 * h // tp, h))   # QKV (forward)
                out.add((m, h, h // tp))       # attention projection (forward)
                out.add((m, 4 * h // tp, h))   # MLP fc1 (forward)
                out.add((m, h, 4 * h // tp))   # MLP fc2 (forward)
    return sorted(out)


def rate(m, n, k, warmup, reps, g):
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=g)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16, generator=g)
    t = cuda_median(lambda: torch.matmul(a, b), warmup, reps)
    return {"m": m, "n": n, "k": k, "median_s": t, "tflops": 2 * m * n * k / t / 1e12}


def main():
    o, g = kernel_options(__doc__.split("\n")[0])
    rows = [rate(m, n, k, o.warmup, o.reps, g) for m, n, k in shapes()]
    doc = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
           "cuda": torch.version.cuda, "python": platform.python_version(),
           "dtype": "bfloat16", "warmup": o.warmup, "reps": o.reps, "gemms": rows}
    with open(o.out, "w") as f:
        json.dump(doc, f, indent=1)
    ref = next(r for r in rows if (r["m"], r["n"], r["k"]) == (8192, 8192, 8192))
    print(f"{doc['gpu']}: {len(rows)} shapes, 8192^3 {ref['tflops']:.0f} TFLOP/s, "
          f"min {min(r['tflops'] for r in rows):.0f}, max {max(r['tflops'] for r in rows):.0f}")


if __name__ == "__main__":
    main()
