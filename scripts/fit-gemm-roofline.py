#!/usr/bin/env python3
"""The calibrated step-time model's GEMM roofline (internal/steptime/shard.go, bf16Roofline and
fp8Roofline), from the lent H100's GEMMs alone:

  testdata/measured/attention-h100.json   scripts/measure-attention.py, its fp8_gemms: 96 shapes,
                                          each timed in bf16 (torch.matmul) and fp8
                                          (torch._scaled_mm, e4m3 in, bf16 out)

  fit-gemm-roofline.py [REPO]     prints each dtype's figures and their error

A GEMM of [m, k] by [k, n] takes t = 2mnk / (E peak) + 2mn / B + t0: its FLOPs at a share E of the
data sheet's peak, its bf16 output at B bytes/s and a fixed time t0. The three are a least-squares
line in the relative error (weights 1/t^2), as fit-local.py fits the local stack's GEMMs. The
inputs' bytes were tried as a fourth term and take no weight (the output and the fixed time carry
it). Pure Python (no numpy).
"""

import json
import math
import os
import sys

PEAK = {"bf16": 989e12, "fp8": 1979e12}  # H100 SXM dense (internal/steptime/device.go)
HBM = 3.35e12                             # H100 SXM HBM3


def solve(a, b):
    """Gaussian elimination with partial pivoting: a x = b."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                m[r] = [x - f * y for x, y in zip(m[r], m[c])]
    return [m[i][n] / m[i][i] for i in range(n)]


def fit(rows, key):
    """(E, B, t0) and the rms log error of t = F/(E peak) + out/B + t0 over rows' key times."""
    feats = [(2.0 * r["m"] * r["n"] * r["k"], 2.0 * r["m"] * r["n"], 1.0) for r in rows]
    times = [r[key + "_s"] for r in rows]
    a = [[0.0] * 3 for _ in range(3)]
    b = [0.0] * 3
    for x, t in zip(feats, times):
        w = 1 / (t * t)
        for i in range(3):
            b[i] += w * x[i] * t
            for j in range(3):
                a[i][j] += w * x[i] * x[j]
    ca, cb, c0 = solve(a, b)
    rms = math.sqrt(sum(math.log((ca * x[0] + cb * x[1] + c0 * x[2]) / t) ** 2
                        for x, t in zip(feats, times)) / len(times))
    return 1 / (ca * PEAK[key]), 1 / cb, c0, rms


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    with open(os.path.join(root, "testdata", "measured", "attention-h100.json")) as f:
        rows = json.load(f)["fp8_gemms"]
    for key in ("bf16", "fp8"):
        e, bw, t0, rms = fit(rows, key)
        print(f"{key}: peakShare {e:.3f}, output {bw / 1e12:.2f} TB/s (hbmShare {bw / HBM:.3f}), "
              f"fixed {t0 * 1e6:.2f} us; rms log error {rms:.3f} over {len(rows)} GEMMs")


if __name__ == "__main__":
    main()
