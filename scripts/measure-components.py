#!/usr/bin/env python3
"""The parts of a Megatron-core training step on the local stack, each timed alone, for the
step-time model's local-stack terms (issue 24; internal/steptime/local.go).

The stack is the one scripts/measure-memory.py measures whole steps of: Megatron-core's local
layer spec (torch norms, unfused bias/activation/dropout), bf16, Megatron DDP with fp32 gradient
buffers and Megatron's optimizer over the torch AdamW fallback (no Apex, no Transformer Engine).
The shapes here are deliberately not those of testdata/measured (hidden 1,536 and 3,072, sequence
1,024, 16 experts), so that the whole-step runs stay a held-out check of what is derived here.

  optimizer   Megatron's optimizer.step() alone (fp32 gradients filled with random values of
              norm > 1, so that clipping runs as in the measured steps) and zero_grad_buffer,
              over models of different parameter and tensor counts; with and without the
              distributed optimizer (sharded over the 2 ranks).
  block       a TransformerBlock of the local spec, forward and backward, at several token
              counts, 2 and 6 layers (the difference is one layer's cost): tp 1, tp 2 with and
              without sequence parallelism, cp 2 (measure_shims.SDPAttention), MoE with 16
              experts at ep 1 and 2, full recompute, local (unfused) and flash attention.
              `wall_s`: synchronised wall time; `host_s`: the time to issue the same work while the
              GPU is held busy by torch.cuda._sleep (the host's launch cost alone; `host_valid`
              false when the issue had to wait for the GPU).
  profile     blocks as `block` (tp 1, flash; dense, and MoE with 4 and 16 experts) at 1,024 to
              32,768 tokens, with their kernels' summed GPU time beside (`gpu_s`, torch.profiler):
              how a layer's host time and GPU time combine.
  gpt         a whole GPTModel through Megatron's forward_backward_func (no pipelining), 2 and 6
              layers, 4 micro-batches of few tokens: the host's cost per micro-batch outside the
              layers (embedding, output layer, loss, schedule). `--parts gptmoe`: the same for MoE
              models (4 and 16 experts) at 256 to 16,384 tokens, with their kernels' GPU time;
              `--parts gptmoe2`: 16 experts at ep 2 and at dp 2 with the gradients' reduction
              (finalize_model_grads), and 8 experts.
  moepair     measure_moe.py: a MoE GPTModel (8 experts) through the schedule on rank 0 alone, on
              both ranks apart, at dp 2 and at ep 2, at 4,096 and 16,384 tokens a micro-batch,
              with its kernels and CUDA runtime calls: what two GPUs add to a MoE layer.

Run on 2 GPUs from the repository root, with measure_runtime.py and measure_shims.py beside it
and Megatron extracted as measure-memory.sh's header says. testdata/measured/components-h200.json
ran (the device tool's nvidia-h200-x2, .dev carried) as
  export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 \
         CUDA_DEVICE_MAX_CONNECTIONS=1 PYTHONUNBUFFERED=1
  python3 -m torch.distributed.run --nproc_per_node 2 --master_addr 127.0.0.1 \
      --master_port 29611 .dev/local/measure-components.py --megatron .dev/megatron \
      --out $OUT/components.json [--parts block,gpt] --budget-s 440
(moepair: --parts moepair, run c6, the same way with measure_moe.py beside it.)
Rank 0 writes the JSON ("env", and one record a measurement under "optimizer", "block", "gpt");
testdata/measured/README.md describes it.
"""

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--megatron", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--parts", default="optimizer,block,gpt")
    p.add_argument("--budget-s", type=float, default=420)
    o = p.parse_args()
    sys.path.insert(0, o.megatron)
    import torch
    import measure_runtime as rt

    rank, world = rt.init_process(2, "measure-components")
    torch.distributed.init_process_group(backend="nccl", rank=rank, world_size=world)
    t_start = time.perf_counter()
    res = {"env": rt.env_info(), "optimizer": [], "block": [], "gpt": [], "profile": [],
           "moepair": []}
    res["env"]["sleep_cycles_per_s"] = sleep_rate()
    parts = o.parts.split(",")
    runs = []
    if "optimizer" in parts:
        runs += [("optimizer", v) for v in OPT_VARIANTS]
    if "block" in parts:
        runs += [("block", v) for v in BLOCK_VARIANTS]
    if "gpt" in parts:
        runs += [("gpt", v) for v in GPT_VARIANTS]
    if "profile" in parts:
        runs += [("profile", v) for v in PROFILE_VARIANTS]
    if "gptmoe" in parts:
        runs += [("gpt", v) for v in GPT_MOE_VARIANTS]
    if "gptmoe2" in parts:
        runs += [("gpt", v) for v in GPT_MOE2_VARIANTS]
    if "moepair" in parts:
        import measure_moe
        runs += [("moepair", v) for v in measure_moe.VARIANTS]
    for kind, v in runs:
        if time.perf_counter() - t_start > o.budget_s:
            if rank == 0:
                print(f"budget spent; skipping {kind} {v}", flush=True)
            continue
        fn = {"optimizer": opt_case, "block": block_case, "gpt": gpt_case,
              "profile": profile_case,
              "moepair": lambda _, v, rate: measure_moe.case(sys.modules[__name__], v, rate)}[kind]
        try:
            rec = fn(o.megatron, dict(v), res["env"]["sleep_cycles_per_s"])
        except Exception as e:  # one failing shape must not lose the rest
            rec = {"case": v, "error": repr(e)}
        recs = [None] * world
        torch.distributed.all_gather_object(recs, rec)
        if rank == 0:
            out = dict(recs[0])
            for k in ("wall_s", "host_s", "opt_s", "zero_s") + (
                    ("per_layer_wall_s",) if kind == "moepair" else ()):
                if k in out:
                    out[k + "_ranks"] = [r.get(k) for r in recs]
                    out[k] = max(r.get(k) or 0 for r in recs)
            res[kind].append(out)
            print(kind, json.dumps(out), flush=True)
            with open(o.out, "w") as f:
                json.dump(res, f, indent=1)
        torch.cuda.empty_cache()
    torch.distributed.barrier()
    torch.distributed.destroy_process_group()


# Model shapes. Optimizer: parameters and tensors varied apart (16 small experts give many
# tensors for few parameters).
OPT_VARIANTS = [
    dict(layers=4, hidden=1536, distopt=False),
    dict(layers=12, hidden=1536, distopt=False),
    dict(layers=4, hidden=3072, distopt=False),
    dict(layers=12, hidden=3072, distopt=False),
    dict(layers=4, hidden=1536, experts=16, moe_ffn=768, distopt=False),
    dict(layers=12, hidden=1536, experts=16, moe_ffn=768, distopt=False),
    dict(layers=4, hidden=1536, distopt=True),
    dict(layers=12, hidden=3072, distopt=True),
    dict(layers=12, hidden=1536, experts=16, moe_ffn=768, distopt=True),
]

BLOCK_VARIANTS = []
for _b in (1, 4, 16):
    for _attn in ("flash", "local"):
        BLOCK_VARIANTS.append(dict(hidden=1536, batch=_b, attention=_attn))
    BLOCK_VARIANTS.append(dict(hidden=1536, batch=_b, attention="flash", tp=2))
    BLOCK_VARIANTS.append(dict(hidden=1536, batch=_b, attention="flash", tp=2, sp=True))
    BLOCK_VARIANTS.append(dict(hidden=1536, batch=_b, attention="flash", cp=2, seq=2048))
    BLOCK_VARIANTS.append(dict(hidden=1536, batch=_b, attention="flash", experts=16, moe_ffn=1536))
    BLOCK_VARIANTS.append(dict(hidden=1536, batch=_b, attention="flash", experts=16, moe_ffn=1536,
                               ep=2))
BLOCK_VARIANTS += [
    dict(hidden=3072, batch=4, attention="flash"),
    dict(hidden=3072, batch=1, attention="flash"),
    dict(hidden=1536, batch=4, attention="flash", recompute="full"),
    dict(hidden=1536, batch=4, attention="local", recompute="selective"),
    dict(hidden=1536, batch=4, attention="flash", experts=4, moe_ffn=1536),
    dict(hidden=1536, batch=1, attention="flash", experts=4, moe_ffn=1536),
]

# How a layer's host time and GPU time combine: blocks timed as `block` does and, apart, their
# kernels' summed GPU time (torch.profiler), at token counts from host-bound to GPU-bound.
PROFILE_VARIANTS = [dict(hidden=1536, batch=_b, attention="flash", experts=_e, moe_ffn=1536)
                    for _e in (4, 16) for _b in (1, 4, 16, 32)]
PROFILE_VARIANTS += [dict(hidden=1536, batch=_b, attention="flash") for _b in (1, 4, 16, 32)]
PROFILE_VARIANTS += [dict(hidden=1536, batch=4, attention="local", experts=16, moe_ffn=1536),
                     dict(hidden=1536, batch=4, attention="local", experts=16, moe_ffn=1536,
                          recompute="selective")]

GPT_VARIANTS = [dict(hidden=1536, batch=1, seq=256, layers=2),
                dict(hidden=1536, batch=1, seq=256, layers=6),
                dict(hidden=1536, batch=4, seq=1024, layers=2),
                dict(hidden=1536, batch=4, seq=1024, layers=6)]
# MoE GPT models through the schedule and DDP (the profile part): 4 and 16 experts, few tokens
# (the host's time) and many (how it combines with the GPU's), with their kernels' GPU time.
GPT_MOE_VARIANTS = [dict(hidden=1536, batch=_b, seq=_s, layers=_l, experts=_e, moe_ffn=1536,
                         attention="flash", profile=True)
                    for _e in (4, 16) for _b, _s in ((1, 256), (4, 1024), (16, 1024))
                    for _l in (2, 6)]
# The same with the 2 ranks cooperating: ep 2 (the allgather dispatcher's collectives every layer)
# and dp 2 (the gradients all-reduced at the end by finalize_model_grads), and 8 experts at ep 1.
GPT_MOE2_VARIANTS = [dict(hidden=1536, batch=_b, seq=_s, layers=_l, experts=_e, moe_ffn=1536,
                          attention="flash", profile=True, **_x)
                     for _e, _x in ((16, dict(ep=2, finalize=True)), (16, dict(finalize=True)),
                                    (8, {}))
                     for _b, _s in ((1, 256), (4, 1024)) for _l in (2, 6)]


def sleep_rate():
    """torch.cuda._sleep cycles per second on this GPU."""
    import torch
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    torch.cuda._sleep(int(1e8))
    e.record()
    torch.cuda.synchronize()
    return 1e8 / (s.elapsed_time(e) / 1e3)


def timed(fn, rate, warm=3, reps=8, host=True):
    """Median synchronised wall time of fn over reps after warm; and the time to issue fn while
    the GPU sleeps (0.25 s), with whether the issue finished before the GPU woke."""
    import torch
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    walls, hosts = [], []
    for _ in range(reps):
        torch.distributed.barrier()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        walls.append(time.perf_counter() - t0)
    out = {"wall_s": statistics.median(walls), "wall_min_s": min(walls),
           "wall_max_s": max(walls)}
    if host:
        sleep_s = 0.25
        for _ in range(3):
            torch.distributed.barrier()
            torch.cuda.synchronize()
            torch.cuda._sleep(int(sleep_s * rate))
            t0 = time.perf_counter()
            fn()
            hosts.append(time.perf_counter() - t0)
            torch.cuda.synchronize()
        out["host_s"] = statistics.median(hosts)
        out["host_valid"] = max(hosts) < 0.8 * sleep_s
    return out


def transformer_config(v, layers):
    import torch
    import torch.nn.functional as F  # noqa: F401
    from megatron.core.transformer.transformer_config import TransformerConfig
    h = v["hidden"]
    cfg = dict(num_layers=layers, hidden_size=h, ffn_hidden_size=4 * h,
               num_attention_heads=h // 128, kv_channels=128,
               tensor_model_parallel_size=v.get("tp", 1), context_parallel_size=v.get("cp", 1),
               expert_model_parallel_size=v.get("ep", 1),
               sequence_parallel=v.get("sp", False), bf16=True, params_dtype=torch.bfloat16,
               pipeline_dtype=torch.bfloat16, attention_softmax_in_fp32=False,
               normalization="LayerNorm", add_bias_linear=True)
    if v.get("recompute") == "full":
        cfg.update(recompute_granularity="full", recompute_method="uniform",
                   recompute_num_layers=1)
    elif v.get("recompute") == "selective":
        cfg.update(recompute_granularity="selective")
    if v.get("cp", 1) > 1:
        cfg["cp_comm_type"] = "all_gather"
    if v.get("experts"):
        cfg.update(num_moe_experts=v["experts"], moe_ffn_hidden_size=v["moe_ffn"],
                   moe_router_topk=2, normalization="RMSNorm", add_bias_linear=False)
    return TransformerConfig(**cfg)


def setup_parallel(v):
    from megatron.core import parallel_state
    from megatron.core.tensor_parallel.random import model_parallel_cuda_manual_seed
    if parallel_state.model_parallel_is_initialized():
        parallel_state.destroy_model_parallel()
    parallel_state.initialize_model_parallel(
        tensor_model_parallel_size=v.get("tp", 1), pipeline_model_parallel_size=1,
        expert_model_parallel_size=v.get("ep", 1), context_parallel_size=v.get("cp", 1))
    model_parallel_cuda_manual_seed(1234)


def layer_spec(v, config):
    from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec
    import measure_shims
    measure_shims.install_sp_norm()
    spec = get_gpt_layer_local_spec(num_experts=v.get("experts"), moe_grouped_gemm=False,
                                    normalization=config.normalization)
    if v.get("attention", "flash") == "flash":
        spec.submodules.self_attention.submodules.core_attention = measure_shims.SDPAttention
    return spec


def block_case(megatron_dir, v, rate):
    import torch
    from megatron.core.transformer.transformer_block import TransformerBlock
    setup_parallel(v)
    seq = v.get("seq", 1024)
    tokens = seq // v.get("cp", 1)
    if v.get("sp"):
        tokens //= v.get("tp", 1)
    rec = {"case": v}
    for layers in (2, 6):
        config = transformer_config(v, layers)
        # bf16 throughout, as Float16Module makes a model (torch norms are built in fp32)
        block = TransformerBlock(config, layer_spec(v, config), post_process=False).cuda()
        block = block.bfloat16()
        x = torch.randn(tokens, v["batch"], v["hidden"], device="cuda", dtype=torch.bfloat16,
                        requires_grad=True)
        g = torch.randn_like(x)

        def fb():
            out = block(x, attention_mask=None)
            out.backward(g)
        rec[f"layers{layers}"] = timed(fb, rate)
        rec[f"layers{layers}"]["parameters"] = sum(p.numel() for p in block.parameters())
        del block, x, g
        torch.cuda.empty_cache()
    a, b = rec["layers2"], rec["layers6"]
    rec["per_layer_wall_s"] = (b["wall_s"] - a["wall_s"]) / 4
    if a.get("host_valid") and b.get("host_valid"):
        rec["per_layer_host_s"] = (b["host_s"] - a["host_s"]) / 4
    rec["wall_s"] = rec["per_layer_wall_s"]
    return rec


def gpu_busy(fn, reps=3):
    """Summed GPU time of fn's kernels (torch.profiler), median over reps, seconds."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        out.append(sum(e.self_device_time_total for e in prof.key_averages()) / 1e6)
    return statistics.median(out)


def profile_case(megatron_dir, v, rate):
    import torch
    from megatron.core.transformer.transformer_block import TransformerBlock
    setup_parallel(v)
    seq = v.get("seq", 1024)
    rec = {"case": v}
    for layers in (2, 6):
        config = transformer_config(v, layers)
        block = TransformerBlock(config, layer_spec(v, config), post_process=False).cuda()
        block = block.bfloat16()
        x = torch.randn(seq, v["batch"], v["hidden"], device="cuda", dtype=torch.bfloat16,
                        requires_grad=True)
        g = torch.randn_like(x)

        def fb():
            out = block(x, attention_mask=None)
            out.backward(g)
        r = timed(fb, rate)
        r["gpu_s"] = gpu_busy(fb)
        rec[f"layers{layers}"] = r
        del block, x, g
        torch.cuda.empty_cache()
    a, b = rec["layers2"], rec["layers6"]
    rec["per_layer_wall_s"] = (b["wall_s"] - a["wall_s"]) / 4
    rec["per_layer_gpu_s"] = (b["gpu_s"] - a["gpu_s"]) / 4
    if a.get("host_valid") and b.get("host_valid"):
        rec["per_layer_host_s"] = (b["host_s"] - a["host_s"]) / 4
    rec["wall_s"] = rec["per_layer_wall_s"]
    return rec


def gpt_model(v, layers):
    import torch
    from megatron.core.distributed import DistributedDataParallel, DistributedDataParallelConfig
    from megatron.core.models.gpt.gpt_model import GPTModel
    from megatron.core.transformer.module import Float16Module
    config = transformer_config(v, layers)
    model = GPTModel(config=config, transformer_layer_spec=layer_spec(v, config),
                     vocab_size=50304, max_sequence_length=v.get("seq", 1024),
                     pre_process=True, post_process=True, parallel_output=True,
                     share_embeddings_and_output_weights=True)
    model.cuda(torch.cuda.current_device())
    model = Float16Module(config, model)
    ddp = DistributedDataParallelConfig(grad_reduce_in_fp32=True,
                                        use_distributed_optimizer=v.get("distopt", False))
    return config, DistributedDataParallel(config=config, ddp_config=ddp, module=model)


def opt_case(megatron_dir, v, rate):
    import torch
    from megatron.core.optimizer import OptimizerConfig, get_megatron_optimizer
    setup_parallel(v)
    config, model = gpt_model(dict(v, attention="flash"), v["layers"])
    opt = get_megatron_optimizer(OptimizerConfig(
        optimizer="adam", lr=1e-4, weight_decay=0.01, bf16=True, params_dtype=torch.bfloat16,
        use_distributed_optimizer=v["distopt"], clip_grad=1.0), [model])
    params = list(model.parameters())
    n = sum(p.numel() for p in params)
    scale = 4.0 / n ** 0.5  # gradient norm ~4: clipping runs, as in the measured steps

    def fill():
        for b in model.buffers:
            b.grad_data.normal_(0, scale)
        if hasattr(model, "expert_parallel_buffers"):
            for b in model.expert_parallel_buffers:
                b.grad_data.normal_(0, scale)

    def step():
        fill()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        opt.step()
        torch.cuda.synchronize()
        return time.perf_counter() - t0

    for _ in range(2):
        step()
    ts = []
    for _ in range(6):
        torch.distributed.barrier()
        ts.append(step())
    zero = timed(lambda: (model.zero_grad_buffer(), opt.zero_grad()), rate, host=False)
    opts = getattr(opt, "chained_optimizers", None) or [opt]
    tensors = sum(len(g["params"]) for o in opts for g in o.optimizer.param_groups)
    shard = sum(p.numel() for o in opts for g in o.optimizer.param_groups for p in g["params"])
    rec = {"case": v, "parameters_on_rank": n, "tensors_on_rank": len(params),
           "optimizer_tensors": tensors, "optimizer_parameters": shard,
           "opt_s": statistics.median(ts), "opt_min_s": min(ts), "opt_max_s": max(ts),
           "zero_s": zero["wall_s"],
           "optimizer": type(opt).__name__ + ": " + ", ".join(
               f"{type(o).__name__}({type(o.optimizer).__module__}.{type(o.optimizer).__name__})"
               for o in opts)}
    del opt, model
    return rec


def gpt_case(megatron_dir, v, rate):
    import torch
    from megatron.core.pipeline_parallel import get_forward_backward_func
    setup_parallel(v)
    config, model = gpt_model(v, v["layers"])
    mbs, seq, nmb = v["batch"], v["seq"], 4
    pos = torch.arange(seq, device="cuda").unsqueeze(0).expand(mbs, -1).contiguous()
    tok = torch.randint(0, 50257, (mbs, seq), device="cuda")

    def forward_step(data_iterator, m):
        out = m(tok, pos, None, labels=tok)

        def loss_func(output_tensor):
            loss = output_tensor.float().mean()
            return loss, {"lm loss": loss.detach().clone()}
        return out, loss_func

    fbf = get_forward_backward_func()
    if v.get("finalize"):
        from megatron.core.distributed.finalize_model_grads import finalize_model_grads
        config.finalize_model_grads_func = finalize_model_grads

    def run():
        model.zero_grad_buffer()
        fbf(forward_step_func=forward_step, data_iterator=iter(range(nmb)), model=[model],
            num_microbatches=nmb, seq_length=seq, micro_batch_size=mbs, forward_only=False)
    rec = {"case": v, "microbatches": nmb}
    rec.update(timed(run, rate))
    if v.get("profile"):
        rec["gpu_s"] = gpu_busy(run)
    del model
    return rec


if __name__ == "__main__":
    main()
