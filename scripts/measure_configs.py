"""The configurations scripts/measure-memory.py measures, and what needs no GPU: Megatron's own
memory figure (theoretical_memory_usage.py) and model FLOPs (training.py's
num_floating_point_operations) for each, and each as a mimoplan layout.

Both Megatron functions are run from the extracted Megatron-LM tree (--megatron DIR, at the commit
in DIR/COMMIT), never copied: theoretical_memory_usage.py is imported alone (its one relative import,
`.utils`, replaced by the two helpers it uses) and num_floating_point_operations is cut out of
training.py with ast and run with stubs for the three helpers it calls, which answer as upstream
does for a model that is neither hybrid nor linear-attention and raise otherwise.
"""

import argparse
import ast
import importlib.util
import math
import os
import sys
import types

# Megatron-LM argument destinations (arguments.py names). Defaults are Megatron's, except
# `attention_backend`, which says which core attention the local layer spec runs here, under
# Megatron's AttnBackend names: "local" is Megatron-core's DotProductAttention (the local spec's
# own, a*s*s scores kept), "flash" the scaled_dot_product_attention shim (measure_shims.py), which
# runs FlashAttention-2 kernels as Transformer Engine's flash backend does.
BASE = dict(
    num_layers=None, hidden_size=None, ffn_hidden_size=None, num_attention_heads=None,
    kv_channels=None, num_query_groups=None, seq_length=None, vocab_size=50257,
    make_vocab_size_divisible_by=128, swiglu=False, normalization="LayerNorm",
    untie_embeddings_and_output_weights=False, add_bias_linear=True,
    position_embedding_type="learned_absolute", num_experts=None, moe_ffn_hidden_size=None,
    moe_router_topk=2, moe_layer_freq=1, moe_shared_expert_intermediate_size=None,
    mtp_num_layers=None, moe_token_dispatcher_type="allgather", moe_expert_capacity_factor=None,
    moe_pad_expert_input_to_capacity=False,
    tensor_model_parallel_size=1, pipeline_model_parallel_size=1, expert_model_parallel_size=1,
    context_parallel_size=1, virtual_pipeline_model_parallel_size=None,
    sequence_parallel=False, use_distributed_optimizer=False, recompute_granularity=None,
    recompute_method=None, recompute_num_layers=None, micro_batch_size=1, global_batch_size=None,
    transformer_impl="local", attention_backend="local",
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
# Step-time models: no recompute, flash attention (what performance recipes run), a global batch
# of 16 so that every layout has several microbatches.
STEP_DENSE = dict(GPT_MEDIUM, attention_backend="flash", global_batch_size=16)
# The same at micro-batch 8 and global batch 32: kernels four times larger, so that host-side
# launch overhead (the local spec runs unfused PyTorch ops, ~30k launches a step at micro-batch 2)
# no longer bounds the step of tp or cp, which keep every microbatch on every rank.
STEP8_DENSE = dict(STEP_DENSE, micro_batch_size=8, global_batch_size=32)
STEP_MOE = dict(num_layers=12, hidden_size=2048, ffn_hidden_size=8192, num_attention_heads=16,
                seq_length=2048, micro_batch_size=2, num_experts=8, moe_ffn_hidden_size=4096,
                moe_router_topk=2, normalization="RMSNorm", add_bias_linear=False,
                attention_backend="flash", global_batch_size=16)
STEP8_MOE = dict(STEP_MOE, micro_batch_size=8, global_batch_size=32)
# The MIMO pair (measure_mimo.py): a CLIP ViT-L/14 at 336 px (577 tokens with the class token) and
# its two-layer MLP projector on rank 0, GPT_MEDIUM (untied) on rank 1; each sample is one image's
# 576 embeddings followed by 1,472 text tokens. "-coloc": both on both ranks, data-parallel.
MIMO_VISION = dict(num_layers=24, hidden_size=1024, ffn_hidden_size=4096, num_attention_heads=16,
                   seq_length=577, vocab_size=None, attention_backend="flash",
                   micro_batch_size=2, global_batch_size=8)
MIMO_LANGUAGE = dict(GPT_MEDIUM, untie_embeddings_and_output_weights=True,
                     attention_backend="flash", global_batch_size=8)
MIMO_IMAGE = dict(img=336, patch=14, image_tokens=576)

# name -> (gpus, arguments). global_batch_size is per job; dp = gpus / (tp * pp * cp).
CONFIGS = {
    # One GPU each (the first six were measured before on H100 and H200 alone).
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
    "step-dense-1gpu": (1, dict(STEP_DENSE)),
    "step-moe-ep1": (1, dict(STEP_MOE)),
    "step8-dense-1gpu": (1, dict(STEP8_DENSE)),
    "step8-moe-ep1": (1, dict(STEP8_MOE)),
    # Two GPUs each.
    "moe-ep2": (2, dict(MOE_SMALL, expert_model_parallel_size=2, global_batch_size=8,
                        use_distributed_optimizer=True)),
    "moe-ep2-nodistopt": (2, dict(MOE_SMALL, expert_model_parallel_size=2, global_batch_size=8)),
    "dense-medium-tp2-sp": (2, dict(GPT_MEDIUM, tensor_model_parallel_size=2,
                                    sequence_parallel=True, recompute_granularity="selective",
                                    global_batch_size=4)),
    "dense-medium-tp2-sp-full": (2, dict(GPT_MEDIUM, tensor_model_parallel_size=2,
                                         sequence_parallel=True, recompute_granularity="full",
                                         recompute_method="uniform", recompute_num_layers=1,
                                         global_batch_size=4)),
    "dense-medium-pp2": (2, dict(GPT_MEDIUM, pipeline_model_parallel_size=2,
                                 recompute_granularity="selective", global_batch_size=8)),
    "dense-medium-dp2": (2, dict(GPT_MEDIUM, recompute_granularity="selective",
                                 global_batch_size=8)),
    "step-dense-dp2": (2, dict(STEP_DENSE)),
    "step-dense-tp2": (2, dict(STEP_DENSE, tensor_model_parallel_size=2)),
    "step-dense-pp2": (2, dict(STEP_DENSE, pipeline_model_parallel_size=2)),
    "step-dense-cp2": (2, dict(STEP_DENSE, context_parallel_size=2)),
    "step-moe-ep1-dp2": (2, dict(STEP_MOE)),
    "step-moe-ep2": (2, dict(STEP_MOE, expert_model_parallel_size=2)),
    "step8-dense-dp2": (2, dict(STEP8_DENSE)),
    "step8-dense-tp2": (2, dict(STEP8_DENSE, tensor_model_parallel_size=2)),
    "step8-dense-tp2-sp": (2, dict(STEP8_DENSE, tensor_model_parallel_size=2,
                                   sequence_parallel=True)),
    "step8-dense-pp2": (2, dict(STEP8_DENSE, pipeline_model_parallel_size=2)),
    # The interleaved schedule's cost a virtual stage: pp 2 at vpp 2, 4 and 12 (24 layers), at
    # micro-batch 8 (GPU-bound, 4 micro-batches) and 2 (host-bound, 8 micro-batches).
    "step8-dense-pp2-vpp2": (2, dict(STEP8_DENSE, pipeline_model_parallel_size=2,
                                     virtual_pipeline_model_parallel_size=2)),
    "step8-dense-pp2-vpp4": (2, dict(STEP8_DENSE, pipeline_model_parallel_size=2,
                                     virtual_pipeline_model_parallel_size=4)),
    "step8-dense-pp2-vpp12": (2, dict(STEP8_DENSE, pipeline_model_parallel_size=2,
                                      virtual_pipeline_model_parallel_size=12)),
    "step-dense-pp2-vpp4": (2, dict(STEP_DENSE, pipeline_model_parallel_size=2,
                                    virtual_pipeline_model_parallel_size=4)),
    "step-dense-pp2-vpp12": (2, dict(STEP_DENSE, pipeline_model_parallel_size=2,
                                     virtual_pipeline_model_parallel_size=12)),
    "step8-dense-cp2": (2, dict(STEP8_DENSE, context_parallel_size=2)),
    "step8-dense-dp2-distopt": (2, dict(STEP8_DENSE, use_distributed_optimizer=True)),
    "step8-moe-ep1-dp2": (2, dict(STEP8_MOE)),
    "step8-moe-ep2": (2, dict(STEP8_MOE, expert_model_parallel_size=2)),
    # Dropless and padded to capacity 1 through the alltoall dispatcher: padding fixes every
    # MoE buffer's size (the allocator's reserve above the peak) and spares the host the token
    # counts' read-back (the step).
    "moe-ep2-a2a": (2, dict(MOE_SMALL, expert_model_parallel_size=2, global_batch_size=8,
                            use_distributed_optimizer=True, moe_token_dispatcher_type="alltoall")),
    "moe-ep2-pad": (2, dict(MOE_SMALL, expert_model_parallel_size=2, global_batch_size=8,
                            use_distributed_optimizer=True, moe_token_dispatcher_type="alltoall",
                            moe_expert_capacity_factor=1.0, moe_pad_expert_input_to_capacity=True)),
    "step8-moe-ep2-a2a": (2, dict(STEP8_MOE, expert_model_parallel_size=2,
                                  moe_token_dispatcher_type="alltoall")),
    "step8-moe-ep2-pad": (2, dict(STEP8_MOE, expert_model_parallel_size=2,
                                  moe_token_dispatcher_type="alltoall", moe_expert_capacity_factor=1.0,
                                  moe_pad_expert_input_to_capacity=True)),
    # Four GPUs each: issue 26's configurations, defined for when a 4-GPU machine is lent (not
    # run yet; testdata/measured/README.md lists what has run). Its three-module MIMO job needs
    # a second encoder in measure_mimo.py first.
    "moe-ep4-distopt": (4, dict(MOE_SMALL, expert_model_parallel_size=4, global_batch_size=16,
                                use_distributed_optimizer=True)),
    "dense-medium-tp2-pp2-sp": (4, dict(GPT_MEDIUM, tensor_model_parallel_size=2,
                                        pipeline_model_parallel_size=2, sequence_parallel=True,
                                        recompute_granularity="selective", global_batch_size=8)),
    "dense-medium-tp4": (4, dict(GPT_MEDIUM, tensor_model_parallel_size=4,
                                 recompute_granularity="selective", global_batch_size=4)),
    "dense-medium-pp4": (4, dict(GPT_MEDIUM, pipeline_model_parallel_size=4,
                                 recompute_granularity="selective", global_batch_size=8)),
    "step8-dense-cp2-dp2": (4, dict(STEP8_DENSE, context_parallel_size=2)),
    "step8-dense-dp4": (4, dict(STEP8_DENSE)),
    "step8-dense-tp2-dp2": (4, dict(STEP8_DENSE, tensor_model_parallel_size=2)),
    "step8-dense-tp4": (4, dict(STEP8_DENSE, tensor_model_parallel_size=4)),
    "step8-dense-pp2-dp2": (4, dict(STEP8_DENSE, pipeline_model_parallel_size=2)),
    "step8-dense-pp4": (4, dict(STEP8_DENSE, pipeline_model_parallel_size=4)),
    "step8-dense-tp2-pp2": (4, dict(STEP8_DENSE, tensor_model_parallel_size=2,
                                    pipeline_model_parallel_size=2)),
    "step8-moe-ep1-dp4": (4, dict(STEP8_MOE)),
    "step8-moe-ep2-dp4": (4, dict(STEP8_MOE, expert_model_parallel_size=2)),
    "step8-moe-ep4": (4, dict(STEP8_MOE, expert_model_parallel_size=4)),
    "mimo-vit-gpt": (2, {"vision": MIMO_VISION, "language": MIMO_LANGUAGE}),
    "mimo-vit-gpt-coloc": (2, {"vision": MIMO_VISION, "language": MIMO_LANGUAGE}),
}


def is_mimo(name):
    return name.startswith("mimo-")


def is_coloc(name):
    """A colocated MIMO configuration: every module on every rank, data-parallel."""
    return is_mimo(name) and name.endswith("-coloc")


def _module_args(over, world):
    a = dict(BASE)
    a.update(over)
    unknown = set(over) - set(BASE)
    if unknown:
        raise SystemExit(f"unknown keys {sorted(unknown)}")
    a["world_size"] = world
    return a


def config_args(name):
    """(gpus, arguments); for a MIMO configuration the arguments are {module: arguments}, each
    module on one rank of its own, or on every rank when colocated."""
    gpus, over = CONFIGS[name]
    if is_mimo(name):
        world = gpus if is_coloc(name) else 1
        return gpus, {m: _module_args(o, world) for m, o in over.items()}
    return gpus, _module_args(over, gpus)


def megatron_namespace(a):
    """The argparse.Namespace that arguments.py's parse_args+validate_args would give for `a`,
    restricted to what theoretical_memory_usage.py and num_floating_point_operations read."""
    tp, pp, cp = (a["tensor_model_parallel_size"], a["pipeline_model_parallel_size"],
                  a["context_parallel_size"])
    world = a["world_size"]
    dp = world // (tp * pp * cp)
    ns = argparse.Namespace(**a)
    # training/tokenizer: _vocab_size_with_padding.
    if a["vocab_size"]:
        multiple = a["make_vocab_size_divisible_by"] * tp
        ns.padded_vocab_size = int(math.ceil(a["vocab_size"] / multiple) * multiple)
    else:
        ns.padded_vocab_size = 0  # an encoder: no embedding table, no logits
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
    ns.attention_output_gate = False
    ns.experimental_attention_variant = None
    ns.virtual_pipeline_model_parallel_size = a["virtual_pipeline_model_parallel_size"]
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
SIZES = (("tp", "tensor_model_parallel_size"), ("pp", "pipeline_model_parallel_size"),
         ("cp", "context_parallel_size"), ("ep", "expert_model_parallel_size"),
         ("vpp", "virtual_pipeline_model_parallel_size"))


def _v(x):
    return str(x).lower() if isinstance(x, bool) else str(x)


def _module_yaml(mname, a, num_ranks, offset=None):
    sizes = "".join(f"    {k}: {a[f]}\n" for k, f in SIZES if (a[f] or 1) > 1)
    keys = [k for k in LAYOUT_MODEL_KEYS
            if a[k] is not None and (a["num_experts"] is not None or not k.startswith("moe_"))]
    if not a["vocab_size"]:
        keys = [k for k in keys if k != "make_vocab_size_divisible_by"]
    model = "".join(f"      {k}: {_v(a[k])}\n" for k in keys)
    off = "" if offset is None else f"    rank_offset: {offset}\n"
    return (f"  - name: {mname}\n    num_ranks: {num_ranks}\n" + off + sizes
            + "    model:\n" + model)


def layout_yaml(name):
    """The configuration as a mimoplan layout, for `mimoplan estimate` and `suggest`; its
    `training` states the stack (transformer_impl, attention_backend) under Megatron's names."""
    gpus, a = config_args(name)
    mods = a if is_mimo(name) else {"language": a}
    first = next(iter(mods.values()))
    training = {"use_distributed_optimizer": first["use_distributed_optimizer"],
                "sequence_parallel": first["sequence_parallel"]}
    for k in ("recompute_granularity", "recompute_method", "recompute_num_layers"):
        if first[k]:
            training[k] = first[k]
    training["transformer_impl"] = first["transformer_impl"]
    training["attention_backend"] = first["attention_backend"]
    if first["moe_token_dispatcher_type"] != "allgather":
        training["moe_token_dispatcher_type"] = first["moe_token_dispatcher_type"]
    if first["moe_expert_capacity_factor"] is not None:
        training["moe_expert_capacity_factor"] = first["moe_expert_capacity_factor"]
    if first["moe_pad_expert_input_to_capacity"]:
        training["moe_pad_expert_input_to_capacity"] = True
    body = ""
    for i, (m, x) in enumerate(mods.items()):
        offset = (0 if is_coloc(name) else i) if is_mimo(name) else None
        body += _module_yaml(m, x, x["world_size"], offset)
    return (f"# scripts/measure-memory.py --layout --config {name}\n"
            "version: 1\n"
            f"cluster: {{nodes: 1, gpus_per_node: {gpus}}}\n"
            f"batch: {{micro_batch_size: {first['micro_batch_size']}, "
            f"global_batch_size: {first['global_batch_size']}}}\n"
            "training: {" + ", ".join(f"{k}: {_v(x)}" for k, x in training.items()) + "}\n"
            "modules:\n" + body)


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
    """Megatron's report_theoretical_memory, in bytes, as training.py calls it (None for an
    encoder, which the formula cannot take: it has no vocabulary)."""
    if not a["vocab_size"]:
        return None
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


def _only_plain(kind):
    def check(x):
        if x is not None:
            raise SystemExit(f"num_floating_point_operations: {kind} {x!r} not supported here")
        return False
    return check


def load_flops(megatron_dir):
    """training.py's num_floating_point_operations, cut out with ast."""
    path = os.path.join(megatron_dir, "megatron", "training", "training.py")
    with open(path) as f:
        src = f.read()
    fn = next(n for n in ast.parse(src).body
              if isinstance(n, ast.FunctionDef) and n.name == "num_floating_point_operations")
    ns = {"is_hybrid_model": lambda args: args.hybrid_layer_pattern is not None,
          "is_linear_attention_variant": _only_plain("experimental_attention_variant"),
          "is_gated_delta_net_variant": _only_plain("experimental_attention_variant")}
    exec(compile(ast.Module(body=[fn], type_ignores=[]), path, "exec"), ns)
    return ns["num_floating_point_operations"]


def model_flops(megatron_dir, a):
    """Model FLOPs of one global batch (forward and backward, no recompute), as Megatron reports
    them for its throughput and MFU."""
    ns = megatron_namespace(a)
    return float(load_flops(megatron_dir)(ns, ns.global_batch_size))


def theory_of(megatron_dir, name):
    """Megatron's memory figure and model FLOPs per step of a configuration (per module for MIMO)."""
    _, a = config_args(name)
    mods = a if is_mimo(name) else {"language": a}
    out = {m: {"megatron_theory": megatron_theory(megatron_dir, x),
               "model_flops_per_step": model_flops(megatron_dir, x)} for m, x in mods.items()}
    if not is_mimo(name):
        return out["language"]
    # The language model's figure on top, as for one module; every module's beside it.
    return {"megatron_theory": out["language"]["megatron_theory"],
            "model_flops_per_step": sum(x["model_flops_per_step"] for x in out.values()),
            "modules": out}
