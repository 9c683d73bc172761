#!/usr/bin/env python3
"""How much of tensor parallelism's communication an overlapped GEMM leaves exposed, on this
machine's GPUs, without Transformer Engine (issue 24: the step-time model's TPExposed).

Transformer Engine's tp_comm_overlap splits each sequence-parallel GEMM into tp chunks and moves
the next chunk over NVLink while the current one multiplies (user buffers: ring exchange, or a
pipelined reduce-scatter on a few SMs). Transformer Engine cannot be installed on the lent
machines, so this times two stand-ins for it, each for every linear layer of a sequence-parallel
transformer layer, forward and backward (the all-gather before QKV and fc1 and before the data
gradients of the projection and fc2; the reduce-scatter after the projection and fc2 and after the
data gradients of QKV and fc1), median over --reps after --warmup, CUDA events, the slower rank's:

  mm       the GEMM alone on the whole (gathered) input;
  chunked  the same GEMM as tp row chunks, nothing moving;
  coll     the collective alone through NCCL (all_gather_into_tensor / reduce_scatter_tensor);
  pipe     ring_all_gather_gemm / pipelined_gemm_reduce_scatter below: Transformer Engine's two
           schemes written with NCCL on a side stream;
  fused    PyTorch's symmetric-memory ops (torch.ops.symm_mem.fused_all_gather_matmul,
           fused_matmul_reduce_scatter and their fp8 forms: peer copies on a side stream).

exposed = (pipe - mm) / sheet (exposed_symm_mem: fused for pipe), where sheet is the collective's
bytes over NVLink's data-sheet bandwidth per direction, (tp-1)/tp x tokens x hidden x 2 bytes /
450 GB/s: the share the step-time model multiplies its tp traffic by under tp_comm_overlap. bf16
throughout; with fp8 (tensor-wise scales, torch._scaled_mm) the GEMMs run in fp8 and the gathered
inputs move in fp8.

  torchrun --nproc-per-node N measure-tp-overlap.py --out FILE.json
"""

import argparse
import json
import os
import platform
import statistics
import traceback

import torch
import torch.distributed as dist
import torch.distributed._symmetric_memory as symm_mem

NVLINK = 450e9  # H100 SXM NVLink 4: 900 GB/s, 450 a direction (the model's Devices["H100"])

# (name, hidden, heads, query groups, head dim, ffn, gated)
MODELS = [
    ("llama3-8b", 4096, 32, 8, 128, 14336, True),
    ("llama3-70b", 8192, 64, 8, 128, 28672, True),
    ("gpt3-175b", 12288, 96, 96, 128, 49152, False),
]
TOKENS = [4096, 8192]


def layers(h, heads, groups, dh, ffn, gated, tp):
    """The sequence-parallel layer's overlapped GEMMs at tp: (op, kind, k, n) of an [s, k] x [k, n]
    product, kind "ag" (input gathered over the sequence first) or "rs" (output reduce-scattered)."""
    qkv = (heads + 2 * groups) * dh // tp
    proj = heads * dh // tp
    fc1 = (2 if gated else 1) * ffn // tp
    fc2 = ffn // tp
    return [
        ("qkv-fprop", "ag", h, qkv), ("fc1-fprop", "ag", h, fc1),
        ("proj-fprop", "rs", proj, h), ("fc2-fprop", "rs", fc2, h),
        ("qkv-dgrad", "rs", qkv, h), ("fc1-dgrad", "rs", fc1, h),
        ("proj-dgrad", "ag", h, proj), ("fc2-dgrad", "ag", h, fc2),
    ]


def timed(fn, group, warmup, reps):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        dist.barrier(group=group)
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) / 1e3)
    t = torch.tensor([statistics.median(times)], device="cuda")
    dist.all_reduce(t, op=dist.ReduceOp.MAX, group=group)
    return t.item()


_side = {}


def side():
    """The communication stream: NCCL's own stream waits only on what this one waits on, so a
    collective launched from it does not wait for the GEMMs queued on the main stream."""
    d = torch.cuda.current_device()
    if d not in _side:
        _side[d] = torch.cuda.Stream()
    return _side[d]


def ring_all_gather_gemm(shard, chunks, gemm, outs, group):
    """Transformer Engine's ring exchange (AG then GEMM): tp steps, each multiplying the shard in
    hand while the next one moves one rank along the ring (NCCL send/recv on the side stream)."""
    tp, r = group.size(), group.rank()
    ranks = dist.get_process_group_ranks(group)
    nxt, prv = ranks[(r + 1) % tp], ranks[(r - 1) % tp]
    main, comm = torch.cuda.current_stream(), side()
    chunks[r].copy_(shard)
    comm.wait_stream(main)
    outs[r] = gemm(chunks[r])
    for i in range(tp - 1):
        send, recv = (r - i) % tp, (r - i - 1) % tp
        with torch.cuda.stream(comm):
            view = (lambda t: t.view(torch.uint8)) if shard.dtype == torch.float8_e4m3fn else (lambda t: t)
            reqs = dist.batch_isend_irecv([dist.P2POp(dist.isend, view(chunks[send]), nxt, group),
                                           dist.P2POp(dist.irecv, view(chunks[recv]), prv, group)])
            for q in reqs:
                q.wait()
            ev = torch.cuda.Event()
            ev.record(comm)
        main.wait_event(ev)
        outs[recv] = gemm(chunks[recv])
    return outs


def pipelined_gemm_reduce_scatter(rows, gemm, parts, group):
    """Transformer Engine's pipelined GEMM then reduce-scatter: the GEMM in tp row chunks, each
    chunk's reduce-scatter (NCCL, side stream) running while the next chunk multiplies."""
    main, comm = torch.cuda.current_stream(), side()
    for x, part in zip(rows, parts):
        y = gemm(x)
        ev = torch.cuda.Event()
        ev.record(main)
        with torch.cuda.stream(comm):
            comm.wait_event(ev)
            dist.reduce_scatter_tensor(part, y, group=group)
            y.record_stream(comm)
    main.wait_stream(comm)
    return parts


def fp8(x):
    return x.to(torch.float8_e4m3fn)


def measure(op, kind, s, k, n, tp, group, dtype, o):
    gname = group.group_name
    one = torch.ones((), device="cuda", dtype=torch.float32)
    if kind == "ag":
        shard = torch.randn(s // tp, k, device="cuda", dtype=torch.bfloat16)
        full = torch.empty(s, k, device="cuda", dtype=torch.bfloat16)
        bt = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        if dtype == "fp8":
            shard, full, b = fp8(shard), fp8(full), fp8(bt).t()
            mm = lambda: torch._scaled_mm(full, b, one, one, out_dtype=torch.bfloat16, use_fast_accum=True)
            fused = lambda: torch.ops.symm_mem.fused_all_gather_scaled_matmul(
                shard, [b], one, [one], 0, gname, [None], [None], [torch.bfloat16], [True])
        else:
            b = bt.t()
            mm = lambda: torch.mm(full, b)
            fused = lambda: torch.ops.symm_mem.fused_all_gather_matmul(shard, [b], 0, gname, return_A=False)
        coll = lambda: dist.all_gather_into_tensor(full, shard, group=group)
        chunks = [full[i * s // tp:(i + 1) * s // tp] for i in range(tp)]
        if dtype == "fp8":
            gemm = lambda x: torch._scaled_mm(x, b, one, one, out_dtype=torch.bfloat16, use_fast_accum=True)
        else:
            gemm = lambda x: torch.mm(x, b)
        outs = [None] * tp
        pipe = lambda: ring_all_gather_gemm(shard, chunks, gemm, outs, group)
        chunked = lambda: [gemm(c) for c in chunks]
        nbytes = (tp - 1) / tp * s * k * 2
    else:
        a = torch.randn(s, k, device="cuda", dtype=torch.bfloat16)
        bt = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        out = torch.empty(s, n, device="cuda", dtype=torch.bfloat16)
        part = torch.empty(s // tp, n, device="cuda", dtype=torch.bfloat16)
        if dtype == "fp8":
            a, b = fp8(a), fp8(bt).t()
            mm = lambda: torch._scaled_mm(a, b, one, one, out_dtype=torch.bfloat16, use_fast_accum=True)
            fused = lambda: torch.ops.symm_mem.fused_scaled_matmul_reduce_scatter(
                a, b, one, one, "sum", 0, 0, gname, [s, n], out_dtype=torch.bfloat16, use_fast_accum=True)
        else:
            b = bt.t()
            mm = lambda: torch.mm(a, b)
            fused = lambda: torch.ops.symm_mem.fused_matmul_reduce_scatter(a, b, "sum", 0, gname)
        coll = lambda: dist.reduce_scatter_tensor(part, out, group=group)
        if dtype == "fp8":
            gemm = lambda x: torch._scaled_mm(x, b, one, one, out_dtype=torch.bfloat16, use_fast_accum=True)
        else:
            gemm = lambda x: torch.mm(x, b)
        rows = [a[i * s // tp:(i + 1) * s // tp] for i in range(tp)]
        parts = [torch.empty(s // tp // tp, n, device="cuda", dtype=torch.bfloat16) for _ in range(tp)]
        pipe = lambda: pipelined_gemm_reduce_scatter(rows, gemm, parts, group)
        chunked = lambda: [gemm(x) for x in rows]
        nbytes = (tp - 1) / tp * s * n * 2
    rec = {"op": op, "kind": kind, "tokens": s, "k": k, "n": n, "tp": tp, "dtype": dtype,
           "sheet_s": nbytes / NVLINK}
    for name, fn in (("mm", mm), ("chunked", chunked), ("coll", coll), ("pipe", pipe), ("fused", fused)):
        try:
            rec[name + "_s"] = timed(fn, group, o.warmup, o.reps)
        except Exception as e:  # one op's failure is recorded, not fatal
            rec[name + "_error"] = "".join(traceback.format_exception_only(e)).strip()[-400:]
            dist.barrier(group=group)
    if "pipe_s" in rec and "mm_s" in rec:
        rec["exposed"] = (rec["pipe_s"] - rec["mm_s"]) / rec["sheet_s"]
    if "fused_s" in rec and "mm_s" in rec:
        rec["exposed_symm_mem"] = (rec["fused_s"] - rec["mm_s"]) / rec["sheet_s"]
    return rec


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--dtypes", default="bf16,fp8")
    o = p.parse_args()
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    world, rank = dist.get_world_size(), dist.get_rank()
    torch.manual_seed(rank)
    records = []
    tp = 2
    while tp <= world:
        groups = [dist.new_group(list(range(i, i + tp))) for i in range(0, world, tp)]
        group = groups[rank // tp]
        symm_mem.enable_symm_mem_for_group(group.group_name)
        for dtype in o.dtypes.split(","):
            for name, h, heads, groups_, dh, ffn, gated in MODELS:
                for s in TOKENS:
                    for op, kind, k, n in layers(h, heads, groups_, dh, ffn, gated, tp):
                        rec = measure(op, kind, s, k, n, tp, group, dtype, o)
                        rec["model"] = name
                        records.append(rec)
                        if rank == 0:
                            print(json.dumps(rec), flush=True)
                        torch.cuda.empty_cache()
        tp *= 2
    if rank == 0:
        doc = {"gpu": torch.cuda.get_device_name(), "gpus": world, "torch": torch.__version__,
               "cuda": torch.version.cuda, "nccl": ".".join(map(str, torch.cuda.nccl.version())),
               "python": platform.python_version(), "warmup": o.warmup, "reps": o.reps,
               "env": {k: os.environ.get(k) for k in ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST")},
               "records": records}
        with open(o.out, "w") as f:
            json.dump(doc, f, indent=1)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
