#!/usr/bin/env python3
"""Fused attention's and fp8 GEMMs' rates on this machine's GPU, for the step-time model's
attention efficiency and fp8 efficiency (issue 24).

Attention: PyTorch's scaled_dot_product_attention, causal, bf16, head dim 128, one sequence of
s tokens and H query heads (those of one tp rank; keys and values H/8 heads, grouped-query, where
the backend takes enable_gqa), forward and backward timed together with CUDA events, the median of
--reps after --warmup (the committed run: 10 after 3). Each backend PyTorch has on the GPU: cuDNN's fused attention (the engine
Transformer Engine's FusedAttention runs on Hopper) and FlashAttention-2. The rate counts the
FLOPs Megatron counts for core attention: 6 s^2 H d (forward and both gradients, causal halved:
`num_floating_point_operations`), so that rate / peak is the model's attention efficiency.

fp8: torch._scaled_mm of an [m, k] e4m3 matrix by a [k, n] one (unit scales, bf16 out) beside
torch.matmul of the same bf16 shapes, for the transformer shapes of measure-gemm.py at hidden
4,096 and 8,192.

  measure-attention.py --out FILE.json
"""

import json
import platform
import statistics

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from measure_runtime import cuda_median, kernel_options

TOKENS = [512, 1024, 2048, 4096, 8192, 16384, 32768]
HEADS = [8, 16, 32, 64]
HEAD_DIM = 128
BACKENDS = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}


def attention(backend, s, h, warmup, reps, g):
    kv = max(1, h // 8)
    q = torch.randn(1, h, s, HEAD_DIM, device="cuda", dtype=torch.bfloat16, generator=g, requires_grad=True)
    k = torch.randn(1, kv, s, HEAD_DIM, device="cuda", dtype=torch.bfloat16, generator=g, requires_grad=True)
    v = torch.randn(1, kv, s, HEAD_DIM, device="cuda", dtype=torch.bfloat16, generator=g, requires_grad=True)
    grad = torch.randn(1, h, s, HEAD_DIM, device="cuda", dtype=torch.bfloat16, generator=g)
    gqa = True

    def step():
        with sdpa_kernel(BACKENDS[backend]):
            if gqa:
                out = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            else:
                rep = h // kv
                out = F.scaled_dot_product_attention(q, k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1),
                                                     is_causal=True)
        out.backward(grad)

    try:
        t = cuda_median(step, warmup, reps)
    except RuntimeError:
        gqa = False  # the backend has no grouped-query path: keys and values repeated
        try:
            t = cuda_median(step, warmup, reps)
        except RuntimeError as err:
            return {"backend": backend, "tokens": s, "heads": h, "error": str(err).splitlines()[0][:200]}
    flops = 6 * s * s * h * HEAD_DIM
    return {"backend": backend, "tokens": s, "heads": h, "kv_heads": kv, "gqa": gqa, "median_s": t,
            "tflops": flops / t / 1e12}


def fp8_gemm(m, n, k, warmup, reps, g):
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=g)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=g)
    a8, b8 = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
    one = torch.ones((), device="cuda", dtype=torch.float32)
    bt = b.t()
    t16 = cuda_median(lambda: torch.matmul(a, bt), warmup, reps)
    t8 = cuda_median(lambda: torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16),
               warmup, reps)
    return {"m": m, "n": n, "k": k, "bf16_s": t16, "fp8_s": t8,
            "bf16_tflops": 2 * m * n * k / t16 / 1e12, "fp8_tflops": 2 * m * n * k / t8 / 1e12}


def gemm_shapes():
    out = set()
    for h in (4096, 8192):
        for tp in (1, 2, 4, 8):
            for m in (2048, 4096, 8192, 16384):
                out |= {(m, 3 * h // tp, h), (m, h, h // tp), (m, 4 * h // tp, h), (m, h, 4 * h // tp)}
    return sorted(out)


def main():
    o, g = kernel_options(__doc__.split("\n")[0])
    attn = [attention(b, s, h, o.warmup, o.reps, g) for b in BACKENDS for h in HEADS for s in TOKENS]
    gemms = [fp8_gemm(m, n, k, o.warmup, o.reps, g) for m, n, k in gemm_shapes()]
    doc = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "cuda": torch.version.cuda,
           "cudnn": torch.backends.cudnn.version(), "python": platform.python_version(),
           "head_dim": HEAD_DIM, "warmup": o.warmup, "reps": o.reps, "attention": attn, "fp8_gemms": gemms}
    with open(o.out, "w") as f:
        json.dump(doc, f, indent=1)
    for b in BACKENDS:
        ok = [r for r in attn if r["backend"] == b and "tflops" in r]
        if ok:
            print(f"{b}: {len(ok)} shapes, {min(r['tflops'] for r in ok):.0f}-{max(r['tflops'] for r in ok):.0f} TFLOP/s")
    ratio = statistics.median(r["fp8_tflops"] / r["bf16_tflops"] for r in gemms)
    print(f"fp8/bf16 GEMM rate: median {ratio:.2f} over {len(gemms)} shapes")


if __name__ == "__main__":
    main()
