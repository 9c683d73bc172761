"""MoE layers on two GPUs, part by part (scripts/measure-components.py --parts moepair; issue 24).

The whole-step MoE runs on 2 GPUs (testdata/measured/h200-x2.json, step-moe-*, step8-moe-*)
take longer per layer and micro-batch than the local-stack model predicts from layers measured
one rank at a time. This part measures, on a shape none of those runs has (hidden 1,536,
8 experts of FFN 3,072, sequence 1,024, top-2), a MoE GPTModel through Megatron's schedule and
DDP (4 micro-batches, 2 and 6 layers: the difference is 4 layers), in four modes:

  solo   rank 0 alone (rank 1 waits at the barrier): one process, as the 1-GPU runs
  pair   both ranks, each its own model, nothing shared: two processes on one host
  dp2    as pair, the gradients reduced over both (finalize_model_grads), as dp 2 runs
  ep2    expert parallelism 2 (the allgather dispatcher's collectives in every MoE layer),
         the dense gradients reduced over both

at 4,096 and 16,384 tokens a micro-batch (batch 4 and 16), each twice (rep 1 and 2, in that
order, so that a drift of the machine shows as a difference between reps). Each records the
wall time (median of 8 after 3), the kernels' summed GPU time, the allocator's cudaMalloc count
over the timed runs, and for the 6-layer model one profiled run's kernels (name: microseconds,
count) and CUDA runtime calls (cudaStreamSynchronize, cudaMemcpyAsync, cudaLaunchKernel, ...:
host microseconds, count); dp2 and ep2 also the time of finalize_model_grads alone.
"""

import statistics
import time

MODES = ("solo", "pair", "dp2", "ep2")
VARIANTS = [dict(hidden=1536, batch=_b, seq=1024, layers=0, experts=8, moe_ffn=3072,
                 attention="flash", mode=_m, rep=_r)
            for _r in (1, 2) for _b in (4, 16) for _m in MODES]


def kernel_table(fn):
    """One profiled run of fn: each CUDA kernel's summed time (us) and count, and each CUDA
    runtime call's host time (us) and count."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    kern, api = {}, {}
    for e in prof.key_averages():
        if str(e.device_type).endswith("CUDA"):
            kern[e.key[:160]] = [round(e.self_device_time_total, 1), e.count]
        elif e.key.startswith("cuda"):
            api[e.key] = [round(e.cpu_time_total, 1), e.count]
    return kern, api


def case(mc, v, rate):
    """One mode at one size: mc is measure-components.py (gpt_model, setup_parallel, timed,
    gpu_busy)."""
    import torch
    from megatron.core.distributed.finalize_model_grads import finalize_model_grads
    from megatron.core.pipeline_parallel import get_forward_backward_func
    mode = v["mode"]
    pv = dict(v, ep=2 if mode == "ep2" else 1)
    mc.setup_parallel(pv)
    idle = mode == "solo" and torch.distributed.get_rank() != 0
    mbs, seq, nmb = v["batch"], v["seq"], 4
    rec = {"case": v, "microbatches": nmb}
    for layers in (2, 6):
        config, model = mc.gpt_model(pv, layers)
        pos = torch.arange(seq, device="cuda").unsqueeze(0).expand(mbs, -1).contiguous()
        tok = torch.randint(0, 50257, (mbs, seq), device="cuda")

        def forward_step(data_iterator, m):
            out = m(tok, pos, None, labels=tok)

            def loss_func(output_tensor):
                loss = output_tensor.float().mean()
                return loss, {"lm loss": loss.detach().clone()}
            return out, loss_func

        if mode in ("dp2", "ep2"):
            config.finalize_model_grads_func = finalize_model_grads
        fbf = get_forward_backward_func()

        def run():
            model.zero_grad_buffer()
            fbf(forward_step_func=forward_step, data_iterator=iter(range(nmb)), model=[model],
                num_microbatches=nmb, seq_length=seq, micro_batch_size=mbs, forward_only=False)

        fn = (lambda: None) if idle else run
        before = torch.cuda.memory_stats().get("num_device_alloc", 0)
        r = mc.timed(fn, rate, host=False)
        r["device_allocs"] = torch.cuda.memory_stats().get("num_device_alloc", 0) - before
        r["gpu_s"] = mc.gpu_busy(fn)
        if layers == 6:
            r["kernels"], r["runtime"] = kernel_table(fn)
        if mode in ("dp2", "ep2"):
            ts = []
            for _ in range(4):
                torch.distributed.barrier()
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                finalize_model_grads([model])
                torch.cuda.synchronize()
                ts.append(time.perf_counter() - t0)
            r["finalize_s"] = statistics.median(ts[1:])
        rec[f"layers{layers}"] = r
        del model
        torch.cuda.empty_cache()
    a, b = rec["layers2"], rec["layers6"]
    rec["per_layer_wall_s"] = (b["wall_s"] - a["wall_s"]) / (4 * nmb)
    rec["per_layer_gpu_s"] = (b["gpu_s"] - a["gpu_s"]) / (4 * nmb)
    rec["wall_s"] = b["wall_s"]
    return rec
