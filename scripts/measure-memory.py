#!/usr/bin/env python3
"""Measure the GPU memory of real Megatron-core training steps beside Megatron's own estimate.

For one configuration (--config NAME) this builds a GPTModel with Megatron-core's local
(non-Transformer-Engine) layer spec in bf16, wraps it as megatron/training/training.py does
(Float16Module, Megatron DDP with fp32 gradient buffers), builds Megatron's own optimizer (with or
without the distributed optimizer), runs two training steps on mock data (random tokens) and
records, on every rank:

  - torch.cuda.max_memory_allocated and max_memory_reserved after the second optimizer step,
  - nvidia-smi's used memory (the process's own and the whole GPU's) at the same moment,
  - the same counters after model+optimizer set-up, before each optimizer step (so forward and
    backward's peak is told apart from the optimizer step's) and after the first step.

Beside it, it computes Megatron's theoretical figure for the same arguments by running
megatron/training/theoretical_memory_usage.py from the extracted Megatron-LM tree (its one
relative import, `.utils`, is replaced by the two helpers it uses, so nothing else of
megatron.training is imported).

Usage (the driver scripts/measure-memory.sh runs every configuration):
  measure-memory.py --megatron DIR --list                  configurations as JSON
  measure-memory.py --megatron DIR --theory [--config N]   Megatron's figure only (no torch needed)
  measure-memory.py --megatron DIR --layout --config N     the configuration as a mimoplan layout
  torchrun --nproc_per_node G measure-memory.py --megatron DIR --config N --out FILE
A single-GPU configuration may also be started with plain python3 (it sets up a one-rank group).
"""

import argparse
import importlib.util
import json
import math
import os
import subprocess
import sys
import time
import types

MiB = 1024 * 1024

# Megatron-LM argument destinations (arguments.py names). Defaults are Megatron's.
BASE = dict(
    num_layers=None, hidden_size=None, ffn_hidden_size=None, num_attention_heads=None,
    kv_channels=None, num_query_groups=None, seq_length=None, vocab_size=50257,
    make_vocab_size_divisible_by=128, swiglu=False, normalization="LayerNorm",
    untie_embeddings_and_output_weights=False, add_bias_linear=True,
    position_embedding_type="learned_absolute", num_experts=None, moe_ffn_hidden_size=None,
    moe_router_topk=2, moe_layer_freq=1, moe_shared_expert_intermediate_size=None,
    mtp_num_layers=None,
    tensor_model_parallel_size=1, pipeline_model_parallel_size=1, expert_model_parallel_size=1,
    sequence_parallel=False, use_distributed_optimizer=False, recompute_granularity=None,
    recompute_method=None, recompute_num_layers=None, micro_batch_size=1, global_batch_size=None,
)

GPT_MEDIUM = dict(num_layers=24, hidden_size=2048, ffn_hidden_size=8192, num_attention_heads=16,
                  seq_length=2048, micro_batch_size=2)
LLAMA_LIKE = dict(num_layers=16, hidden_size=2048, ffn_hidden_size=5632, num_attention_heads=16,
                  num_query_groups=4, seq_length=4096, vocab_size=32000, swiglu=True,
                  normalization="RMSNorm", untie_embeddings_and_output_weights=True,
                  add_bias_linear=False, position_embedding_type="rope", micro_batch_size=1)
MOE_SMALL = dict(num_layers=8, hidden_size=1024, ffn_hidden_size=4096, num_attention_heads=16,
                 seq_length=2048, micro_batch_size=2, num_experts=8, moe_ffn_hidden_size=2048,
                 moe_router_topk=2, normalization="RMSNorm", add_bias_linear=False,
                 recompute_granularity="selective")

# name -> (gpus, arguments). global_batch_size is per job; dp = gpus / (tp * pp).
CONFIGS = {
    "dense-small": (1, dict(num_layers=12, hidden_size=768, ffn_hidden_size=3072,
                            num_attention_heads=12, seq_length=1024, micro_batch_size=8,
                            global_batch_size=16)),
    "dense-medium-selective": (1, dict(GPT_MEDIUM, recompute_granularity="selective",
                                       global_batch_size=4)),
    "dense-medium-selective-distopt": (1, dict(GPT_MEDIUM, recompute_granularity="selective",
                                               use_distributed_optimizer=True,
                                               global_batch_size=4)),
    "dense-medium-full": (1, dict(GPT_MEDIUM, recompute_granularity="full",
                                  recompute_method="uniform", recompute_num_layers=1,
                                  global_batch_size=4)),
    "gqa-swiglu-selective": (1, dict(LLAMA_LIKE, recompute_granularity="selective",
                                     global_batch_size=2)),
    "gqa-swiglu-full-distopt": (1, dict(LLAMA_LIKE, recompute_granularity="full",
                                        recompute_method="uniform", recompute_num_layers=1,
                                        use_distributed_optimizer=True, global_batch_size=2)),
    "moe-ep1": (1, dict(MOE_SMALL, global_batch_size=4)),
    # Two GPUs each.
    "moe-ep2": (2, dict(MOE_SMALL, expert_model_parallel_size=2, global_batch_size=8,
                        use_distributed_optimizer=True)),
    "dense-medium-tp2-sp": (2, dict(GPT_MEDIUM, tensor_model_parallel_size=2,
                                    sequence_parallel=True, recompute_granularity="selective",
                                    global_batch_size=4)),
    "dense-medium-pp2": (2, dict(GPT_MEDIUM, pipeline_model_parallel_size=2,
                                 recompute_granularity="selective", global_batch_size=8)),
}


def config_args(name):
    gpus, over = CONFIGS[name]
    a = dict(BASE)
    a.update(over)
    unknown = set(over) - set(BASE)
    if unknown:
        raise SystemExit(f"{name}: unknown keys {sorted(unknown)}")
    a["world_size"] = gpus
    return gpus, a


def megatron_namespace(a):
    """The argparse.Namespace that arguments.py's parse_args+validate_args would give for `a`,
    restricted to what theoretical_memory_usage.py reads."""
    tp, pp, ep = (a["tensor_model_parallel_size"], a["pipeline_model_parallel_size"],
                  a["expert_model_parallel_size"])
    world = a["world_size"]
    dp = world // (tp * pp)
    # training/tokenizer: _vocab_size_with_padding.
    multiple = a["make_vocab_size_divisible_by"] * tp
    padded = int(math.ceil(a["vocab_size"] / multiple) * multiple)
    ns = argparse.Namespace(**a)
    ns.padded_vocab_size = padded
    ns.data_parallel_size = dp
    ns.kv_channels = a["kv_channels"] or a["hidden_size"] // a["num_attention_heads"]
    ns.group_query_attention = a["num_query_groups"] is not None
    if a["num_experts"] is not None and a["moe_ffn_hidden_size"] is None:
        ns.moe_ffn_hidden_size = a["ffn_hidden_size"]
    ns.expert_tensor_parallel_size = tp  # validate_args: defaults to tp
    ns.sequence_parallel = a["sequence_parallel"] and tp > 1  # validate_args turns it off
    ns.multi_latent_attention = False
    ns.moe_latent_size = None
    ns.moe_shared_expert_gate = False
    ns.virtual_pipeline_model_parallel_size = None
    ns.hybrid_layer_pattern = None
    gbs = a["global_batch_size"] or a["micro_batch_size"] * dp
    ns.global_batch_size = gbs
    ns.num_microbatches = gbs // (a["micro_batch_size"] * dp)
    return ns


# The arguments a mimoplan layout's `model` section takes (the rest is the module's sizes, `batch`
# and `training`).
LAYOUT_MODEL_KEYS = [
    "num_layers", "hidden_size", "ffn_hidden_size", "num_attention_heads", "num_query_groups",
    "kv_channels", "seq_length", "vocab_size", "make_vocab_size_divisible_by", "swiglu",
    "normalization", "untie_embeddings_and_output_weights", "add_bias_linear", "num_experts",
    "moe_ffn_hidden_size", "moe_router_topk", "moe_layer_freq",
    "moe_shared_expert_intermediate_size",
]


def layout_yaml(name):
    """The configuration as a mimoplan layout, for `mimoplan estimate`."""
    gpus, a = config_args(name)

    def v(x):
        return str(x).lower() if isinstance(x, bool) else str(x)

    training = {"use_distributed_optimizer": a["use_distributed_optimizer"],
                "sequence_parallel": a["sequence_parallel"]}
    for k in ("recompute_granularity", "recompute_method", "recompute_num_layers"):
        if a[k]:
            training[k] = a[k]
    sizes = "".join(f"    {k}: {a[f]}\n" for k, f in (
        ("tp", "tensor_model_parallel_size"), ("pp", "pipeline_model_parallel_size"),
        ("ep", "expert_model_parallel_size")) if a[f] > 1)
    keys = [k for k in LAYOUT_MODEL_KEYS
            if a[k] is not None and (a["num_experts"] is not None or not k.startswith("moe_"))]
    model = "".join(f"      {k}: {v(a[k])}\n" for k in keys)
    return (f"# scripts/measure-memory.py --layout {name}\n"
            "version: 1\n"
            f"cluster: {{nodes: 1, gpus_per_node: {gpus}}}\n"
            f"batch: {{micro_batch_size: {a['micro_batch_size']}, "
            f"global_batch_size: {a['global_batch_size']}}}\n"
            "training: {" + ", ".join(f"{k}: {v(x)}" for k, x in training.items()) + "}\n"
            "modules:\n"
            "  - name: language\n"
            f"    num_ranks: {gpus}\n" + sizes + "    model:\n" + model)


def load_theory(megatron_dir):
    """Import megatron/training/theoretical_memory_usage.py alone, its `.utils` replaced."""
    path = os.path.join(megatron_dir, "megatron", "training", "theoretical_memory_usage.py")
    pkg = types.ModuleType("_mm_training")
    pkg.__path__ = []
    utils = types.ModuleType("_mm_training.utils")
    # Same bodies as megatron/training/utils/common_utils.py (print_rank_0 on one process).
    utils.is_hybrid_model = lambda args: args.hybrid_layer_pattern is not None
    utils.print_rank_0 = lambda message: None
    sys.modules["_mm_training"] = pkg
    sys.modules["_mm_training.utils"] = utils
    spec = importlib.util.spec_from_file_location("_mm_training.theoretical_memory_usage", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def megatron_theory(megatron_dir, a):
    """Megatron's report_theoretical_memory, in bytes, as training.py calls it."""
    tmu = load_theory(megatron_dir)
    ns = megatron_namespace(a)
    weight = tmu.compute_weight_and_optimizer_memory(argparse.Namespace(**vars(ns)))
    if ns.sequence_parallel and ns.recompute_granularity == "selective":
        fn = "compute_activation_memory"
        act = tmu.compute_activation_memory(ns, num_microbatches=ns.num_microbatches)
    else:
        fn = "compute_activation_memory_without_sp"
        act = tmu.compute_activation_memory_without_sp(ns, num_microbatches=ns.num_microbatches)
    return {
        "weight_and_optimizer_bytes": weight,
        "activation_bytes": act,
        "total_bytes": weight + act,
        "activation_function": fn,
        "padded_vocab_size": ns.padded_vocab_size,
        "data_parallel_size": ns.data_parallel_size,
        "num_microbatches": ns.num_microbatches,
    }


# ---------------------------------------------------------------------------------------------
# GPU part (imports torch and megatron.core only here).


def smi(pid):
    """nvidia-smi's used memory, MiB: this process's and each GPU's."""
    out = {}
    try:
        apps = subprocess.run(
            ["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=30).stdout
        for line in apps.splitlines():
            p, used = [x.strip() for x in line.split(",")]
            if p == str(pid):
                out["process_used_mib"] = int(used)
        gpus = subprocess.run(
            ["nvidia-smi", "--query-gpu=index,pci.bus_id,memory.used,memory.total",
             "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=30).stdout
        out["gpus"] = [dict(zip(("index", "bus_id", "used_mib", "total_mib"),
                                [x.strip() for x in line.split(",")]))
                       for line in gpus.splitlines()]
    except (OSError, subprocess.SubprocessError, ValueError) as e:
        out["error"] = repr(e)
    return out


def snapshot(torch):
    torch.cuda.synchronize()
    s = torch.cuda.memory_stats()
    return {
        "allocated": torch.cuda.memory_allocated(),
        "reserved": torch.cuda.memory_reserved(),
        "max_allocated": torch.cuda.max_memory_allocated(),
        "max_reserved": torch.cuda.max_memory_reserved(),
        "num_alloc_retries": s.get("num_alloc_retries", 0),
        "inactive_split_bytes": s.get("inactive_split_bytes.all.current", 0),
    }


def run(megatron_dir, name, out_path, steps):
    import torch
    import torch.nn.functional as F

    gpus, a = config_args(name)
    single = "RANK" not in os.environ
    if single:
        os.environ.update(RANK="0", LOCAL_RANK="0", WORLD_SIZE="1",
                          MASTER_ADDR="127.0.0.1", MASTER_PORT=os.environ.get("MASTER_PORT", "29511"))
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    if world != gpus:
        raise SystemExit(f"{name} needs {gpus} ranks, started with {world}")
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    context_smi = smi(os.getpid())

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

    torch.distributed.init_process_group(backend="nccl", rank=rank, world_size=world)
    tp, pp, ep = (a["tensor_model_parallel_size"], a["pipeline_model_parallel_size"],
                  a["expert_model_parallel_size"])
    parallel_state.initialize_model_parallel(
        tensor_model_parallel_size=tp, pipeline_model_parallel_size=pp,
        expert_model_parallel_size=ep)
    model_parallel_cuda_manual_seed(1234)
    groups_smi = smi(os.getpid())
    ns = megatron_namespace(a)

    # As megatron/training/arguments.py core_transformer_config_from_args maps the arguments.
    cfg = dict(
        num_layers=a["num_layers"], hidden_size=a["hidden_size"],
        ffn_hidden_size=a["ffn_hidden_size"], num_attention_heads=a["num_attention_heads"],
        kv_channels=ns.kv_channels, num_query_groups=a["num_query_groups"],
        normalization=a["normalization"], add_bias_linear=a["add_bias_linear"],
        tensor_model_parallel_size=tp, pipeline_model_parallel_size=pp,
        expert_model_parallel_size=ep, sequence_parallel=ns.sequence_parallel,
        bf16=True, params_dtype=torch.bfloat16, pipeline_dtype=torch.bfloat16,
        attention_softmax_in_fp32=False,
        recompute_granularity=a["recompute_granularity"], recompute_method=a["recompute_method"],
        recompute_num_layers=a["recompute_num_layers"],
    )
    if a["swiglu"]:
        cfg.update(gated_linear_unit=True, activation_func=F.silu)
    if a["num_experts"] is not None:
        cfg.update(num_moe_experts=a["num_experts"], moe_ffn_hidden_size=ns.moe_ffn_hidden_size,
                   moe_router_topk=a["moe_router_topk"],
                   moe_shared_expert_intermediate_size=a["moe_shared_expert_intermediate_size"])
    config = TransformerConfig(**cfg)
    spec = get_gpt_layer_local_spec(num_experts=a["num_experts"], moe_grouped_gemm=False,
                                    normalization=a["normalization"])
    model = GPTModel(
        config=config, transformer_layer_spec=spec, vocab_size=ns.padded_vocab_size,
        max_sequence_length=a["seq_length"],
        pre_process=parallel_state.is_pipeline_first_stage(),
        post_process=parallel_state.is_pipeline_last_stage(),
        parallel_output=True,
        share_embeddings_and_output_weights=not a["untie_embeddings_and_output_weights"],
        position_embedding_type=a["position_embedding_type"])
    model.cuda(torch.cuda.current_device())
    model = Float16Module(config, model)
    ddp_config = DistributedDataParallelConfig(
        grad_reduce_in_fp32=True,  # --accumulate-allreduce-grads-in-fp32, forced on with bf16
        use_distributed_optimizer=a["use_distributed_optimizer"])
    model = DistributedDataParallel(config=config, ddp_config=ddp_config, module=model)
    params_here = sum(p.numel() for p in model.parameters())
    opt_config = OptimizerConfig(
        optimizer="adam", lr=1e-4, weight_decay=0.01, bf16=True, params_dtype=torch.bfloat16,
        use_distributed_optimizer=a["use_distributed_optimizer"], clip_grad=1.0)
    optimizer = get_megatron_optimizer(opt_config, [model])
    config.finalize_model_grads_func = finalize_model_grads
    config.grad_scale_func = optimizer.scale_loss
    after_setup = snapshot(torch)
    after_setup["smi"] = smi(os.getpid())

    mbs, seq = a["micro_batch_size"], a["seq_length"]

    def batches():
        g = torch.Generator(device="cuda")
        g.manual_seed(42)  # same tokens on every rank of a tp/pp group
        while True:
            tokens = torch.randint(0, a["vocab_size"], (mbs, seq), device="cuda", generator=g)
            labels = torch.randint(0, a["vocab_size"], (mbs, seq), device="cuda", generator=g)
            yield tokens, labels

    data = batches()
    position_ids = torch.arange(seq, device="cuda").unsqueeze(0).expand(mbs, -1)
    loss_mask = torch.ones(mbs, seq, device="cuda")

    def loss_func(output_tensor):
        losses = output_tensor.view(-1).float()
        loss = torch.sum(losses * loss_mask.view(-1)) / loss_mask.sum()
        return loss, {"lm loss": loss.detach()}

    def forward_step(data_iterator, m):
        tokens, labels = next(data_iterator)
        out = m(tokens, position_ids, None, labels=labels)
        return out, loss_func

    fb = get_forward_backward_func()
    per_step = []
    t0 = time.time()
    for _ in range(steps):
        model.zero_grad_buffer()
        optimizer.zero_grad()
        losses = fb(forward_step_func=forward_step, data_iterator=data, model=[model],
                    num_microbatches=ns.num_microbatches, seq_length=seq, micro_batch_size=mbs,
                    forward_only=False)
        # Peak so far before the step: in the first step this is set-up plus forward/backward
        # alone (the optimizer's state and temporaries come with its first step).
        before_step = snapshot(torch)
        ok, grad_norm, _ = optimizer.step()
        snap = snapshot(torch)
        snap["before_optimizer_step"] = before_step
        snap["update_successful"] = bool(ok)
        snap["grad_norm"] = None if grad_norm is None else float(grad_norm)
        if losses:
            snap["loss"] = float(sum(float(x["lm loss"]) for x in losses) / len(losses))
        if not per_step:
            snap["smi"] = smi(os.getpid())
        per_step.append(snap)
    elapsed = time.time() - t0
    step_smi = smi(os.getpid())

    mine = {
        "rank": rank,
        "pp_rank": parallel_state.get_pipeline_model_parallel_rank(),
        "tp_rank": parallel_state.get_tensor_model_parallel_rank(),
        "parameters_on_rank": params_here,
        "smi_after_cuda_init": context_smi,
        "smi_after_process_groups": groups_smi,
        "after_setup": after_setup,
        "steps": per_step,
        "max_allocated": per_step[-1]["max_allocated"],
        "max_reserved": per_step[-1]["max_reserved"],
        "smi_after_last_step": step_smi,
        "seconds_for_steps": elapsed,
    }
    ranks = [None] * world
    torch.distributed.all_gather_object(ranks, mine)
    if rank == 0:
        import platform
        result = {
            "config": name,
            "gpus": gpus,
            "arguments": a,
            "megatron_theory": megatron_theory(megatron_dir, a),
            "steps": steps,
            "ranks": ranks,
            "env": {
                "torch": torch.__version__, "cuda": torch.version.cuda,
                "nccl": ".".join(map(str, torch.cuda.nccl.version())),
                "gpu": torch.cuda.get_device_name(), "python": platform.python_version(),
                "megatron_commit": os.environ.get("MEGATRON_COMMIT", "unknown"),
            },
        }
        with open(out_path, "w") as f:
            json.dump(result, f, indent=1)
        r = max(ranks, key=lambda x: x["max_reserved"])
        print(f"{name}: max_allocated={r['max_allocated'] / MiB:.0f} MiB "
              f"max_reserved={r['max_reserved'] / MiB:.0f} MiB "
              f"smi={r['smi_after_last_step'].get('process_used_mib')} MiB "
              f"megatron={result['megatron_theory']['total_bytes'] / MiB:.0f} MiB "
              f"({elapsed:.1f}s for {steps} steps)", flush=True)
    torch.distributed.barrier()
    parallel_state.destroy_model_parallel()
    torch.distributed.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--megatron", required=True, help="extracted Megatron-LM tree (holds megatron/)")
    p.add_argument("--config", choices=sorted(CONFIGS))
    p.add_argument("--list", action="store_true", help="print the configurations as JSON")
    p.add_argument("--theory", action="store_true", help="print Megatron's figure only")
    p.add_argument("--layout", action="store_true", help="print --config as a mimoplan layout")
    p.add_argument("--out", help="result JSON (rank 0 writes it)")
    p.add_argument("--steps", type=int, default=2)
    o = p.parse_args()
    if o.list:
        json.dump({n: {"gpus": g, "arguments": config_args(n)[1]} for n, (g, _) in CONFIGS.items()},
                  sys.stdout, indent=1)
        print()
        return
    if o.layout:
        if not o.config:
            p.error("--layout needs --config")
        sys.stdout.write(layout_yaml(o.config))
        return
    if o.theory:
        names = [o.config] if o.config else list(CONFIGS)
        try:
            with open(os.path.join(o.megatron, "COMMIT")) as f:
                commit = f.read().strip()
        except OSError:
            commit = "unknown"
        json.dump({"megatron_commit": commit,
                   "configs": {n: megatron_theory(o.megatron, config_args(n)[1]) for n in names}},
                  sys.stdout, indent=1)
        print()
        return
    if not o.config or not o.out:
        p.error("--config and --out are needed for a measurement")
    run(o.megatron, o.config, o.out, o.steps)


if __name__ == "__main__":
    main()
