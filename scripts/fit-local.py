#!/usr/bin/env python3
"""The step-time model's local-stack figures (internal/steptime/local.go, LocalMeasured), derived
from the component measurements alone, never from the whole-step runs they are checked against:

  testdata/measured/components-h200.json   scripts/measure-components.py on 2 H200 (c1-c6)
  testdata/measured/gemm-h200.json, gemm-h100.json   scripts/measure-gemm.py

  fit-local.py [REPO]     prints each figure and what it comes from

Every figure is a mean or a least-squares line over the measurements named beside it;  a
GEMM's time is its FLOPs at one efficiency plus a fixed latency (the calibrated model's
d/(d+D0) m/(m+M0) form misses small products by up to 2x). Pure Python (no numpy).
"""

import json
import math
import os
import statistics
import sys

PEAK = 989e12      # H100/H200 dense BF16 (internal/steptime/device.go)
HBM = 4.8e12       # H200 (device.go): the components ran on H200
ATTN_EFF, ATTN_HALF = 0.2, 899  # the calibrated model's attention (constants.go, Fitted)


def load(root, name):
    with open(os.path.join(root, "testdata", "measured", name)) as f:
        return json.load(f)


def fit_gemm(rows):
    """t = F / (E peak) + t0 for every measured product, least squares in the relative error."""
    a11 = a12 = a22 = b1 = b2 = 0.0
    for r in rows:
        f, t = 2 * r["m"] * r["n"] * r["k"], r["median_s"]
        w = 1 / (t * t)
        a11, a12, a22 = a11 + w * f * f, a12 + w * f, a22 + w
        b1, b2 = b1 + w * f * t, b2 + w * t
    det = a11 * a22 - a12 * a12
    x1, x2 = (b1 * a22 - b2 * a12) / det, (a11 * b2 - a12 * b1) / det
    rel = sorted(abs((2 * r["m"] * r["n"] * r["k"] * x1 + x2) / r["median_s"] - 1) for r in rows)
    return 1 / (x1 * PEAK), x2, statistics.median(rel), rel[int(0.9 * len(rel))]


def lsq(xs, ys):
    """y = a + b x."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - b * mx, b


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    comp = load(root, "components-h200.json")

    # GEMM: both GPUs' tables together, each relative to the same data-sheet peak.
    rows = load(root, "gemm-h200.json")["gemms"] + load(root, "gemm-h100.json")["gemms"]
    eff, t0, med, p90 = fit_gemm(rows)
    print(f"LocalGEMMEfficiency {eff:.3f}, LocalGEMMLatency {t0 * 1e6:.1f} us: {len(rows)} products "
          f"(H200 and H100), |fit/measured - 1| median {med:.3f}, 90th percentile {p90:.3f}")

    # Optimizer: Float16Optimizer over torch AdamW, step + zero_grad_buffer, against the
    # parameters and parameter tensors it holds (the distributed optimizer's cases are held out:
    # their step also all-gathers the parameters, which dpComm costs).
    opt = [r for r in comp["optimizer"] if not r["case"]["distopt"]]
    # Two unknowns, bytes per parameter and seconds per tensor: normal equations.
    xs = [(r["optimizer_parameters"], r["optimizer_tensors"], r["opt_s"] + r["zero_s"]) for r in opt]
    s11 = sum(p * p for p, _, _ in xs)
    s12 = sum(p * t for p, t, _ in xs)
    s22 = sum(t * t for _, t, _ in xs)
    b1 = sum(p * y for p, _, y in xs)
    b2 = sum(t * y for _, t, y in xs)
    det = s11 * s22 - s12 * s12
    per_param = (b1 * s22 - b2 * s12) / det
    per_tensor = (s11 * b2 - s12 * b1) / det
    print(f"LocalOptimizerBytes {per_param * HBM:.1f} (bytes a parameter at the H200's {HBM / 1e12} TB/s), "
          f"LocalOptimizerTensor {per_tensor * 1e6:.1f} us: {len(opt)} optimizer steps")
    for r in comp["optimizer"]:
        pred = r["optimizer_parameters"] * per_param + r["optimizer_tensors"] * per_tensor
        print(f"  {r['case']}: measured {(r['opt_s'] + r['zero_s']) * 1e3:.1f} ms, "
              f"model {pred * 1e3:.1f} ms (params {r['optimizer_parameters'] / 1e6:.0f} M, tensors {r['optimizer_tensors']})")

    blocks = comp["block"]

    def case(r, **kw):
        c = r["case"]
        keys = ("tp", "sp", "cp", "experts", "recompute", "ep")
        want = {k: kw.get(k) for k in keys}
        have = {k: c.get(k) for k in keys}
        return (c.get("attention") == kw.get("attention", "flash") and have == want
                and r.get("run") == "c2")

    def host(**kw):
        v = [r["per_layer_host_s"] for r in blocks if case(r, **kw) and "per_layer_host_s" in r]
        return statistics.fmean(v), len(v)

    # Elementwise traffic: the GPU-bound dense layers (flash, tp 1, wall well above the host's
    # issue time), less their GEMMs at the fitted rate and attention at the model's.
    eb = []
    for r in blocks:
        if not case(r) or r["per_layer_wall_s"] < 2 * r.get("per_layer_host_s", 0):
            continue
        c = r["case"]
        h, seq, b = c["hidden"], c.get("seq", 1024), c["batch"]
        tok = b * seq
        # 4 GEMMs a pass, 3 passes (forward, input and weight gradients)
        gemm = 72 * h * h * tok / (PEAK * eff) + 12 * t0
        attn = 6 * h * seq * tok / (PEAK * ATTN_EFF * tok / (tok + ATTN_HALF))
        rest = r["per_layer_wall_s"] - gemm - attn
        eb.append(rest * HBM / (tok * h))
        print(f"  elementwise: {c}: layer {r['per_layer_wall_s'] * 1e3:.2f} ms, GEMMs {gemm * 1e3:.2f}, "
              f"attention {attn * 1e3:.2f}: {eb[-1]:.0f} bytes a token and hidden unit")
    print(f"LocalElementwiseBytes {statistics.fmean(eb):.0f}: mean of {len(eb)}")

    # Host: Megatron's schedule through DDP, per layer and micro-batch (the GPT cases: 2 and 6
    # layers, 4 micro-batches each, few tokens), and what it spends outside the layers.
    g = {(r["case"]["layers"], r["case"]["batch"]): r["wall_s"] for r in comp["gpt"]
         if not r["case"].get("experts")}
    per_layer = [(g[(6, b)] - g[(2, b)]) / (4 * 4) for b in (1, 4)]
    layer = statistics.fmean(per_layer)
    micro = g[(2, 1)] / 4 - 2 * layer
    print(f"a layer through the schedule and DDP {layer * 1e3:.2f} ms ({', '.join(f'{x * 1e3:.2f}' for x in per_layer)}), "
          f"LocalHostMicrobatch {micro * 1e3:.2f} ms (2 layers, 256 tokens: {g[(2, 1)] / 4 * 1e3:.2f} ms a micro-batch)")
    # The same layer's issue time as a bare block (no DDP, no schedule); what DDP and the schedule
    # add is put on the layer's 12 parameter tensors (DDP's per-parameter gradient hook).
    bare, nb = host()
    print(f"LocalHostBlock {bare * 1e3:.2f} ms: a bare block layer's issue time (tp 1, flash; mean of {nb} sizes); "
          f"LocalHostTensor {(layer - bare) / 12 * 1e6:.0f} us: ({layer * 1e3:.2f} - {bare * 1e3:.2f}) ms over 12 tensors")
    # What each setting adds to a layer's issue time, against the layer without it.
    for name, kw, ref in (("LocalHostTP", dict(tp=2), {}), ("LocalHostSP", dict(tp=2, sp=True), dict(tp=2)),
                          ("LocalHostCP", dict(cp=2), {}),
                          ("LocalHostUnfusedAttention", dict(attention="local"), {})):
        x, m = host(**kw)
        base, n = host(**ref)
        print(f"{name} {(x - base) * 1e3:.2f} ms: issue time a layer {x * 1e3:.2f} ms ({m} sizes) "
              f"against {ref or 'tp 1'} {base * 1e3:.2f} ms ({n} sizes)")
    full, _ = host(recompute="full")
    b4 = [r["per_layer_host_s"] for r in blocks if case(r) and r["case"]["batch"] == 4 and r["case"]["hidden"] == 1536]
    print(f"LocalHostRecompute {(full - b4[0]) * 1e3:.2f} ms: full recompute's issue time a layer {full * 1e3:.2f} ms "
          f"against {b4[0] * 1e3:.2f} ms without (hidden 1,536, batch 4)")

    # Context parallelism through measure_shims.SDPAttention: the GPU-bound cp 2 layers, less
    # their GEMMs, element-wise traffic and the exposed all-gather and reduce-scatter of keys and
    # values (at NVLink's data-sheet rate), leave the attention: its rate against the model's
    # fused attention on the same tokens.
    eb_mean = statistics.fmean(eb)
    cpf = []
    for r in blocks:
        if not case(r, cp=2) or r["per_layer_wall_s"] < 2 * r.get("per_layer_host_s", 0):
            continue
        c = r["case"]
        h, seq, b, cp = c["hidden"], c["seq"], c["batch"], 2
        tok = b * seq // cp
        gemm = 72 * h * h * tok / (PEAK * eff) + 12 * t0
        elem = eb_mean * tok * h / HBM
        comm = 2 * b * seq * 2 * h * 2 * (cp - 1) / cp / 450e9
        attn = r["per_layer_wall_s"] - gemm - elem - comm
        model = 6 * h * seq * seq * b / cp / (PEAK * ATTN_EFF * tok / (tok + ATTN_HALF))
        cpf.append(model / attn)
        print(f"  cp attention: {c}: layer {r['per_layer_wall_s'] * 1e3:.2f} ms, GEMMs {gemm * 1e3:.2f}, "
              f"element-wise {elem * 1e3:.2f}, keys and values {comm * 1e3:.2f}: attention {attn * 1e3:.2f} ms, "
              f"{model * 1e3:.2f} at the fused rate")
    print(f"LocalCPAttention {statistics.fmean(cpf):.2f}: mean of {len(cpf)}")

    # MoE layers through the schedule and DDP (the gptmoe and gptmoe2 cases: MoE GPTModels of 2 and
    # 6 layers, 4 micro-batches; 4, 8 and 16 experts; ep 1, ep 2, dp 2 with the gradients'
    # reduction): a layer's time per micro-batch is the 6-layer less the 2-layer model's over 16;
    # at 256 and 4,096 tokens the GPU's work is a fraction of it, so it is the host's (with the
    # dispatcher's stall), a line in the experts on the GPU (16 at ep 2: 8). Two calls on two
    # machines (c4, c5), which differ by up to a third on the same layer: both are kept.
    gm = {}
    for r in comp["gpt"]:
        c = r["case"]
        if c.get("experts"):
            gm[(c["experts"], c.get("ep", 1), bool(c.get("finalize")), c["batch"], c["layers"], r["run"])] = r

    def moe_layer(k):
        a, z = gm[k[:4] + (2, k[4])], gm[k[:4] + (6, k[4])]
        return (z["wall_s"] - a["wall_s"]) / 16, (z["gpu_s"] - a["gpu_s"]) / 16

    keys = sorted({(e, ep, f, b, run) for e, ep, f, b, _, run in gm if b <= 4})
    pts = [(e / ep, moe_layer(k)) for k in keys for e, ep in [k[:2]]]
    # c6 (measure_moe.py, another machine): 8 experts of FFN 3,072 at 4,096 tokens, rank 0 alone,
    # both ranks apart, dp 2 and ep 2 (4 experts on the GPU), the slower rank's layer; the same
    # quantity as above, so it joins the line.
    for r in comp.get("moepair", []):
        c = r["case"]
        if c["batch"] == 4 and "error" not in r:
            ep = 2 if c["mode"] == "ep2" else 1
            w = max(x for x in r["per_layer_wall_s_ranks"] if x > 0)
            pts.append((c["experts"] / ep, (w, r["per_layer_gpu_s"])))
    a0, a1 = lsq([e for e, _ in pts], [w for _, (w, _) in pts])
    # Where a MoE layer's GPU work exceeds the host's time, its wall time exceeds its GPU time by
    # a near-constant stall: the dispatcher's synchronisation. Those are the 4-expert layers at
    # 16,384 tokens and more (GPU 6-12 ms, above the 4.9-6.6 ms the same layers take at few
    # tokens on the same machine), bare (profile) and through the schedule (gptmoe); the stall is
    # their mean excess, the host's issue time the line less it.
    bound = [r["per_layer_wall_s"] - r["per_layer_gpu_s"] for r in comp.get("profile", [])
             if r["case"].get("experts") == 4 and r["case"]["batch"] >= 16]
    bound += [moe_layer(k)[0] - moe_layer(k)[1]
              for k in sorted({(e, ep, f, b, run) for e, ep, f, b, _, run in gm if b >= 16 and e == 4})]
    sync = statistics.fmean(bound)
    print(f"LocalMoELayer {(a0 - sync) * 1e3:.2f} ms, LocalMoEExpert {a1 * 1e3:.3f} ms, LocalMoESync {sync * 1e3:.2f} ms: "
          f"{len(pts)} MoE layers through the schedule and DDP at 256 and 4,096 tokens "
          f"({', '.join(f'{e:g} experts {w * 1e3:.2f}' for e, (w, _) in pts)} ms: {a0 * 1e3:.2f} + {a1 * 1e3:.3f} an expert), "
          f"the stall the mean of {len(bound)} GPU-bound layers ({', '.join(f'{x * 1e3:.2f}' for x in bound)} ms)")
    moe_permute(comp)
    for k in sorted({(e, ep, f, b, run) for e, ep, f, b, _, run in gm}):
        w, gpu = moe_layer(k)
        print(f"  MoE layer {k}: wall {w * 1e3:.2f} ms, GPU {gpu * 1e3:.2f} ms")
    for r in comp.get("profile", []):
        c = r["case"]
        print(f"  bare layer: experts {c.get('experts', 0)}, {c['batch'] * 1024} tokens, {c['attention']} "
              f"{c.get('recompute', '')}: wall {r['per_layer_wall_s'] * 1e3:.2f} ms, GPU {r['per_layer_gpu_s'] * 1e3:.2f} ms")


# The MoE layer's routing kernels (c6's kernel tables): token permutation and unpermutation,
# the router's top-k and the dispatcher's index sorting (torch index_select / index_add /
# scatter / gather / cat / sort / top-k / scan; Megatron-core moe_utils.permute, unpermute,
# the local spec's SequentialMLP split and cat).
ROUTING = ("indexFunc", "scatter_gather", "vectorized_gather", "CatArrayBatchedCopy", "radix",
           "index_elementwise", "DeviceScan", "sort", "topk")


def moe_permute(comp):
    """LocalMoEPermuteBytes: the routing kernels' GPU time per MoE layer and micro-batch, its
    growth from 4,096 to 16,384 tokens a micro-batch (the fixed part, the embedding's backward
    sort included, cancels) as HBM traffic per routed token copy (top-k of them a token) and
    hidden unit; and each layer's kernels against the model's GPU time with it."""
    per = {}
    for r in comp.get("moepair", []):
        c = r["case"]
        if "error" in r or "kernels" not in r["layers6"]:
            continue
        t = sum(us for name, (us, _) in r["layers6"]["kernels"].items()
                if not name.startswith("nccl") and any(p.lower() in name.lower() for p in ROUTING)
                and "compute_grad_weight" not in name)
        per.setdefault(c["batch"], []).append(t * 1e-6 / (6 * r["microbatches"]))
    if 4 not in per or 16 not in per:
        return
    lo, hi = statistics.fmean(per[4]), statistics.fmean(per[16])
    h, k = 1536, 2
    slope = (hi - lo) / ((16 - 4) * 1024)
    print(f"LocalMoEPermuteBytes {slope * HBM / (k * h):.0f}: routing kernels a MoE layer and micro-batch "
          f"{lo * 1e3:.3f} ms at 4,096 tokens ({len(per[4])} runs), {hi * 1e3:.3f} ms at 16,384 ({len(per[16])}); "
          f"{slope * 1e9:.1f} ns a token at hidden {h}, top-{k}")


if __name__ == "__main__":
    main()
