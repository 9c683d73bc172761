#!/usr/bin/env python3
"""Measure the GPU memory and step time of real Megatron-core training steps beside Megatron's
own memory figure and model FLOPs.

For one configuration (--config NAME, listed in measure_configs.py) this builds a GPTModel with
Megatron-core's local (non-Transformer-Engine) layer spec in bf16, wraps it as
megatron/training/training.py does (Float16Module, Megatron DDP with fp32 gradient buffers),
builds Megatron's own optimizer (with or without the distributed optimizer), runs --warmup plus
--timed training steps on mock data (random tokens) and records, on every rank:

  - torch.cuda.max_memory_allocated and max_memory_reserved after the last step, and nvidia-smi's
    used memory (the process's own and the whole GPU's) at the same moment;
  - the same counters after model+optimizer set-up, before each of the first two optimizer steps
    (forward and backward's peak told apart from the optimizer step's) and after them;
  - the wall time of every step (torch.cuda.synchronize on both sides, a barrier before), from
    which rank 0 writes the median of the timed steps of the slowest rank, tokens/s and the
    model FLOPs per step (training.py's num_floating_point_operations, for MFU).

Two documented shims (measure_shims.py) make the local spec run sequence parallelism (torch norms
with their weights marked sequence-parallel) and fused attention (attention_backend "flash":
scaled_dot_product_attention's flash kernel, also under context parallelism). A "mimo-"
configuration runs measure_mimo.py instead: an encoder on rank 0, the language model on rank 1.

Usage (the driver scripts/measure-memory.sh runs every configuration):
  measure-memory.py --megatron DIR --list                  configurations as JSON
  measure-memory.py --megatron DIR --theory [--config N]   Megatron's figures only (no torch)
  measure-memory.py --megatron DIR --layout --config N     the configuration as a mimoplan layout
  torchrun --nproc_per_node G measure-memory.py --megatron DIR --config N --out FILE
A single-GPU configuration may also be started with plain python3 (it sets up a one-rank group).
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure_configs as mc  # noqa: E402


def run_gpt(megatron_dir, name, out_path, warmup, timed):
    import torch
    import torch.nn.functional as F
    import measure_runtime as rt

    gpus, a = mc.config_args(name)
    rank, world = rt.init_process(gpus, name)
    context_smi = rt.smi(os.getpid())

    sys.path.insert(0, megatron_dir)
    from megatron.core import parallel_state
    from megatron.core.distributed import DistributedDataParallel, DistributedDataParallelConfig
    from megatron.core.distributed.finalize_model_grads import finalize_model_grads
    from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec
    from megatron.core.models.gpt.gpt_model import GPTModel
    from megatron.core.optimizer import OptimizerConfig, get_megatron_optimizer
    from megatron.core.pipeline_parallel import get_forward_backward_func
    from megatron.core.tensor_parallel.random import model_parallel_cuda_manual_seed
    from megatron.core.transformer.module import Float16Module
    from megatron.core.transformer.transformer_config import TransformerConfig
    from megatron.core.utils import get_batch_on_this_cp_rank
    import measure_shims

    torch.distributed.init_process_group(backend="nccl", rank=rank, world_size=world)
    tp, pp, ep, cp = (a["tensor_model_parallel_size"], a["pipeline_model_parallel_size"],
                      a["expert_model_parallel_size"], a["context_parallel_size"])
    vpp = a["virtual_pipeline_model_parallel_size"]
    parallel_state.initialize_model_parallel(
        tensor_model_parallel_size=tp, pipeline_model_parallel_size=pp,
        virtual_pipeline_model_parallel_size=vpp,
        expert_model_parallel_size=ep, context_parallel_size=cp)
    model_parallel_cuda_manual_seed(1234)
    groups_smi = rt.smi(os.getpid())
    ns = mc.megatron_namespace(a)
    measure_shims.install_sp_norm()

    # As megatron/training/arguments.py core_transformer_config_from_args maps the arguments.
    cfg = dict(
        num_layers=a["num_layers"], hidden_size=a["hidden_size"],
        ffn_hidden_size=a["ffn_hidden_size"], num_attention_heads=a["num_attention_heads"],
        kv_channels=ns.kv_channels, num_query_groups=a["num_query_groups"],
        normalization=a["normalization"], add_bias_linear=a["add_bias_linear"],
        tensor_model_parallel_size=tp, pipeline_model_parallel_size=pp,
        expert_model_parallel_size=ep, context_parallel_size=cp,
        sequence_parallel=ns.sequence_parallel,
        bf16=True, params_dtype=torch.bfloat16, pipeline_dtype=torch.bfloat16,
        attention_softmax_in_fp32=False,
        recompute_granularity=a["recompute_granularity"], recompute_method=a["recompute_method"],
        recompute_num_layers=a["recompute_num_layers"],
    )
    if vpp:
        # Megatron-LM's defaults with interleaving: --overlap-p2p-communication on, so the sends
        # are not batched (arguments.py:3118, argument_utils.py:307 at d98e8a6).
        cfg.update(virtual_pipeline_model_parallel_size=vpp, overlap_p2p_comm=True,
                   batch_p2p_comm=False)
    if cp > 1:
        cfg["cp_comm_type"] = "all_gather"  # what measure_shims.SDPAttention does
    if a["swiglu"]:
        cfg.update(gated_linear_unit=True, activation_func=F.silu)
    if a["num_experts"] is not None:
        cfg.update(num_moe_experts=a["num_experts"], moe_ffn_hidden_size=ns.moe_ffn_hidden_size,
                   moe_router_topk=a["moe_router_topk"],
                   moe_shared_expert_intermediate_size=a["moe_shared_expert_intermediate_size"],
                   moe_token_dispatcher_type=a["moe_token_dispatcher_type"],
                   moe_expert_capacity_factor=a["moe_expert_capacity_factor"],
                   moe_pad_expert_input_to_capacity=a["moe_pad_expert_input_to_capacity"])
    config = TransformerConfig(**cfg)
    spec = get_gpt_layer_local_spec(num_experts=a["num_experts"], moe_grouped_gemm=False,
                                    normalization=a["normalization"])
    if a["attention_backend"] == "flash":
        spec.submodules.self_attention.submodules.core_attention = measure_shims.SDPAttention
    elif cp > 1:
        raise SystemExit(f"{name}: context parallelism needs attention_backend flash")
    cp_check = None
    if cp > 1:
        cp_check = measure_shims.check_cp_attention(config, a["seq_length"])
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()  # the check's tensors are no part of training
    ddp_config = DistributedDataParallelConfig(
        grad_reduce_in_fp32=True,  # --accumulate-allreduce-grads-in-fp32, forced on with bf16
        use_distributed_optimizer=a["use_distributed_optimizer"])
    chunks = []
    # One model chunk a virtual stage (megatron/training/training.py get_model: vp_stage i, the
    # first and last stage read with ignore_virtual=False, bucketing off past the first chunk).
    for i in range(vpp or 1):
        vp = i if vpp else None
        chunk = GPTModel(
            config=config, transformer_layer_spec=spec, vocab_size=ns.padded_vocab_size,
            max_sequence_length=a["seq_length"],
            pre_process=parallel_state.is_pipeline_first_stage(ignore_virtual=not vpp, vp_stage=vp),
            post_process=parallel_state.is_pipeline_last_stage(ignore_virtual=not vpp, vp_stage=vp),
            parallel_output=True,
            share_embeddings_and_output_weights=not a["untie_embeddings_and_output_weights"],
            position_embedding_type=a["position_embedding_type"], vp_stage=vp)
        chunk.cuda(torch.cuda.current_device())
        chunk = Float16Module(config, chunk)
        chunks.append(DistributedDataParallel(config=config, ddp_config=ddp_config, module=chunk,
                                              disable_bucketing=i > 0))
    params_here = sum(p.numel() for c in chunks for p in c.parameters())
    opt_config = OptimizerConfig(
        optimizer="adam", lr=1e-4, weight_decay=0.01, bf16=True, params_dtype=torch.bfloat16,
        use_distributed_optimizer=a["use_distributed_optimizer"], clip_grad=1.0)
    optimizer = get_megatron_optimizer(opt_config, chunks)
    config.finalize_model_grads_func = finalize_model_grads
    config.grad_scale_func = optimizer.scale_loss
    after_setup = rt.snapshot()
    after_setup["smi"] = rt.smi(os.getpid())

    mbs, seq = a["micro_batch_size"], a["seq_length"]
    cp_group = parallel_state.get_context_parallel_group()

    def batches():
        g = torch.Generator(device="cuda")
        g.manual_seed(42)  # same tokens on every rank of a tp/pp/cp group
        pos = torch.arange(seq, device="cuda").unsqueeze(0).expand(mbs, -1).contiguous()
        while True:
            b = {"tokens": torch.randint(0, a["vocab_size"], (mbs, seq), device="cuda",
                                         generator=g),
                 "labels": torch.randint(0, a["vocab_size"], (mbs, seq), device="cuda",
                                         generator=g),
                 "loss_mask": torch.ones(mbs, seq, device="cuda"),
                 "position_ids": pos}
            if cp > 1:  # Megatron's load-balanced split: chunks r and 2cp-1-r
                b = get_batch_on_this_cp_rank(b, is_hybrid_cp=False, cp_group=cp_group)
            yield b

    data = batches()

    def forward_step(data_iterator, m):
        b = next(data_iterator)
        out = m(b["tokens"], b["position_ids"], None, labels=b["labels"])

        def loss_func(output_tensor):
            losses = output_tensor.view(-1).float()
            mask = b["loss_mask"].reshape(-1)
            loss = torch.sum(losses * mask) / mask.sum()
            # a copy: the schedule divides `loss` in place by the number of microbatches
            return loss, {"lm loss": loss.detach().clone()}
        return out, loss_func

    fb = get_forward_backward_func()
    per_step = []
    timer = rt.StepTimer()
    for i in range(warmup + timed):
        timer.start()
        for c in chunks:
            c.zero_grad_buffer()
        optimizer.zero_grad()
        losses = fb(forward_step_func=forward_step, data_iterator=[data] * len(chunks) if vpp else data, model=chunks,
                    num_microbatches=ns.num_microbatches, seq_length=seq, micro_batch_size=mbs,
                    forward_only=False)
        if i < 2:
            # Peak so far before the step: in the first step this is set-up plus
            # forward/backward alone (the optimizer's state and temporaries come with its step).
            torch.cuda.synchronize()
            before_step = rt.snapshot()
        ok, grad_norm, _ = optimizer.step()
        timer.stop()
        if i < 2:
            snap = rt.snapshot()
            snap["before_optimizer_step"] = before_step
            snap["update_successful"] = bool(ok)
            snap["grad_norm"] = None if grad_norm is None else float(grad_norm)
            if losses:
                snap["loss"] = float(sum(float(x["lm loss"]) for x in losses) / len(losses))
            if i == 0:
                snap["smi"] = rt.smi(os.getpid())
            per_step.append(snap)
    last = rt.snapshot()
    step_smi = rt.smi(os.getpid())

    mine = {
        "rank": rank,
        "pp_rank": parallel_state.get_pipeline_model_parallel_rank(),
        "tp_rank": parallel_state.get_tensor_model_parallel_rank(),
        "cp_rank": parallel_state.get_context_parallel_rank(),
        "parameters_on_rank": params_here,
        "smi_after_cuda_init": context_smi,
        "smi_after_process_groups": groups_smi,
        "after_setup": after_setup,
        "steps": per_step,
        "after_last_step": last,
        "max_allocated": last["max_allocated"],
        "max_reserved": last["max_reserved"],
        "smi_after_last_step": step_smi,
        "step_seconds": timer.times,
    }
    ranks = [None] * world
    torch.distributed.all_gather_object(ranks, mine)
    if rank == 0:
        theory = mc.theory_of(megatron_dir, name)
        tokens = a["global_batch_size"] * seq
        result = {
            "config": name,
            "gpus": gpus,
            "arguments": a,
            "megatron_theory": theory["megatron_theory"],
            "stack": {"transformer_impl": "local", "attention_backend": a["attention_backend"],
                      "grad_reduce_in_fp32": True,
                      "moe_token_dispatcher_type": config.moe_token_dispatcher_type,
                      "sequence_parallel_norm_shim": ns.sequence_parallel,
                      "cp_attention_check_rel_error": cp_check},
            "step": rt.step_summary(ranks, warmup, tokens, theory["model_flops_per_step"], gpus),
            "ranks": ranks,
            "env": rt.env_info(optimizer),
        }
        with open(out_path, "w") as f:
            json.dump(result, f, indent=1)
        report(result)
    torch.distributed.barrier()
    parallel_state.destroy_model_parallel()
    torch.distributed.destroy_process_group()


def report(result):
    MiB = 1024 * 1024
    r = max(result["ranks"], key=lambda x: x["smi_after_last_step"].get("process_used_mib", 0))
    s = result["step"]
    print(f"{result['config']}: smi={r['smi_after_last_step'].get('process_used_mib')} MiB "
          f"max_allocated={max(x['max_allocated'] for x in result['ranks']) / MiB:.0f} MiB "
          f"max_reserved={max(x['max_reserved'] for x in result['ranks']) / MiB:.0f} MiB "
          f"step={s.get('median_step_s', 0) * 1e3:.1f} ms "
          f"tokens/s={s.get('tokens_per_s', 0):.0f} "
          f"TFLOP/s/GPU={s.get('model_tflops_per_s_per_gpu', 0):.0f}", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--megatron", required=True, help="extracted Megatron-LM tree (holds megatron/)")
    p.add_argument("--config", choices=sorted(mc.CONFIGS))
    p.add_argument("--list", action="store_true", help="print the configurations as JSON")
    p.add_argument("--theory", action="store_true", help="print Megatron's figures only")
    p.add_argument("--layout", action="store_true", help="print --config as a mimoplan layout")
    p.add_argument("--out", help="result JSON (rank 0 writes it)")
    p.add_argument("--warmup", type=int, default=3, help="untimed steps first")
    p.add_argument("--timed", type=int, default=10, help="timed steps after the warm-up")
    o = p.parse_args()
    if o.list:
        json.dump({n: {"gpus": g, "arguments": mc.config_args(n)[1]}
                   for n, (g, _) in mc.CONFIGS.items()}, sys.stdout, indent=1)
        print()
        return
    if o.layout:
        if not o.config:
            p.error("--layout needs --config")
        sys.stdout.write(mc.layout_yaml(o.config))
        return
    if o.theory:
        names = [o.config] if o.config else list(mc.CONFIGS)
        try:
            with open(os.path.join(o.megatron, "COMMIT")) as f:
                commit = f.read().strip()
        except OSError:
            commit = "unknown"
        json.dump({"megatron_commit": commit,
                   "configs": {n: mc.theory_of(o.megatron, n) for n in names}},
                  sys.stdout, indent=1)
        print()
        return
    if not o.config or not o.out:
        p.error("--config and --out are needed for a measurement")
    if o.warmup + o.timed < 2:
        p.error("at least two steps are needed (the memory record keeps the first two)")
    if mc.is_mimo(o.config):
        import measure_mimo
        measure_mimo.run(o.megatron, o.config, o.out, o.warmup, o.timed, report)
    else:
        run_gpt(o.megatron, o.config, o.out, o.warmup, o.timed)


if __name__ == "__main__":
    main()
