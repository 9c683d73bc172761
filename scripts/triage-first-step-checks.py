#!/usr/bin/env python3
"""Lists every raise and assert that building a MIMO model and running its
first training step can reach in Megatron-LM at d98e8a64ddf3
(TransformerConfig.__post_init__, the MoE layer, router, experts and token
dispatchers, attention, the optimizer, DDP and its buffers, the pipeline
schedules, the MIMO example's entry point and grid arguments), with the
settings each one's condition reads, and writes docs/first-step-checks.md:
for each, the mimoplan rule that covers it or why it is out of scope.

A check whose condition reads no setting a layout holds (the table LAYOUT
below: the module sizes, the model keys, the training block) cannot be
reached differently by two layouts: it is out of scope as such, with the
settings it reads named. The checks that do read a layout setting are
triaged by hand in VERDICTS (path:line -> verdict); the script fails when
one is missing, so a new upstream check cannot go unread.

Upstream's code is read from the mirror, never copied: the table holds
path:line, the function, the settings and the verdict.

Usage: scripts/triage-first-step-checks.py [--megatron DIR] [--out FILE]
"""

import argparse
import ast
import subprocess
import sys

COMMIT = "d98e8a64ddf34856e74b24714e3bedb2f5a39553"
FILES = [
    "megatron/core/transformer/transformer_config.py",
    "megatron/core/transformer/moe/moe_layer.py",
    "megatron/core/transformer/moe/router.py",
    "megatron/core/transformer/moe/experts.py",
    "megatron/core/transformer/moe/token_dispatcher.py",
    "megatron/core/transformer/attention.py",
    "megatron/core/transformer/dot_product_attention.py",
    "megatron/core/optimizer/__init__.py",
    "megatron/core/optimizer/distrib_optimizer.py",
    "megatron/core/distributed/distributed_data_parallel.py",
    "megatron/core/distributed/param_and_grad_buffer.py",
    "megatron/core/pipeline_parallel/schedules.py",
    "examples/mimo/pretrain_mimo.py",
    "examples/mimo/training/args.py",
]

# Settings a layout sets (Megatron's names, as TransformerConfig, the
# arguments or the DDP/optimizer configs spell them), and the layout key.
LAYOUT = {
    "tensor_model_parallel_size": "tp", "llm_tp": "tp", "encoder_tp": "tp", "mimo_llm_tp": "tp",
    "pipeline_model_parallel_size": "pp", "llm_pp": "pp", "pipeline_parallel_size": "pp",
    "num_microbatches": "batch.global_batch_size",
    "virtual_pipeline_model_parallel_size": "vpp",
    "context_parallel_size": "cp", "llm_cp": "cp", "cp_size": "cp",
    "expert_model_parallel_size": "ep", "llm_ep": "ep", "ep_size": "ep",
    "expert_tensor_parallel_size": "expt_tp", "llm_expt_tp": "expt_tp",
    "llm_dp": "dp", "encoder_dp": "dp", "data_parallel_size": "dp", "llm_offset": "rank_offset", "llm_only": "modules",
    "num_layers": "model.num_layers", "hidden_size": "model.hidden_size", "ffn_hidden_size": "model.ffn_hidden_size",
    "num_attention_heads": "model.num_attention_heads", "num_query_groups": "model.num_query_groups",
    "kv_channels": "model.kv_channels", "seq_length": "model.seq_length",
    "num_moe_experts": "model.num_experts", "num_experts": "model.num_experts",
    "moe_router_topk": "model.moe_router_topk", "moe_ffn_hidden_size": "model.moe_ffn_hidden_size",
    "moe_layer_freq": "model.moe_layer_freq", "moe_shared_expert_intermediate_size": "model.moe_shared_expert_intermediate_size",
    "moe_shared_expert_gate": "model.moe_shared_expert_gate", "moe_latent_size": "model.moe_latent_size",
    "moe_router_pre_softmax": "model.moe_router_pre_softmax", "moe_router_score_function": "model.moe_router_score_function",
    "multi_latent_attention": "model.multi_latent_attention", "q_lora_rank": "model.q_lora_rank",
    "kv_lora_rank": "model.kv_lora_rank", "qk_head_dim": "model.qk_head_dim", "qk_pos_emb_head_dim": "model.qk_pos_emb_head_dim",
    "v_head_dim": "model.v_head_dim", "mtp_num_layers": "model.mtp_num_layers",
    "gated_linear_unit": "model.swiglu", "normalization": "model.normalization", "add_bias_linear": "model.add_bias_linear",
    "attention_output_gate": "model.attention_output_gate",
    "num_layers_in_first_pipeline_stage": "decoder_first_pipeline_num_layers",
    "num_layers_in_last_pipeline_stage": "decoder_last_pipeline_num_layers",
    "account_for_embedding_in_pipeline_split": "account_for_embedding_in_pipeline_split",
    "account_for_loss_in_pipeline_split": "account_for_loss_in_pipeline_split",
    "pipeline_model_parallel_layout": "pipeline_model_parallel_layout",
    "sequence_parallel": "training.sequence_parallel", "use_distributed_optimizer": "training.use_distributed_optimizer",
    "recompute_granularity": "training.recompute_granularity", "recompute_method": "training.recompute_method",
    "recompute_num_layers": "training.recompute_num_layers", "recompute_modules": "training.recompute_modules",
    "overlap_grad_reduce": "training.overlap_grad_reduce",
    "overlap_param_gather": "training.overlap_param_gather", "tp_comm_overlap": "training.tp_comm_overlap",
    "grad_reduce_in_fp32": "training.grad_reduce_in_fp32", "moe_token_dispatcher_type": "training.moe_token_dispatcher_type",
    "overlap_moe_expert_parallel_comm": "training.overlap_moe_expert_parallel_comm",
    "moe_expert_capacity_factor": "training.moe_expert_capacity_factor",
    "capacity_factor": "training.moe_expert_capacity_factor",
    "moe_pad_expert_input_to_capacity": "training.moe_pad_expert_input_to_capacity",
    "drop_and_pad": "training.moe_pad_expert_input_to_capacity",
    "transformer_impl": "training.transformer_impl", "attention_backend": "training.attention_backend",
    "fp8": "training.fp8", "fp8_param_gather": "training.fp8_param_gather", "micro_batch_size": "batch.micro_batch_size", "global_batch_size": "batch.global_batch_size",
}


def checks(path, text):
    """Every assert and raise of the file: line, function, the names its
    condition (or the conditions of the ifs around a raise) reads."""
    tree = ast.parse(text)
    parents = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Assert, ast.Raise)):
            continue
        exprs = [node.test] if isinstance(node, ast.Assert) else []
        func = ""
        p, child = parents.get(node), node
        while p is not None:
            if isinstance(p, (ast.If, ast.While)) and child in p.body + p.orelse:
                exprs.append(p.test)
            if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef)) and not func:
                func = p.name
                cls = parents.get(p)
                if isinstance(cls, ast.ClassDef):
                    func = cls.name + "." + func
            p, child = parents.get(p), p
        names = set()
        for e in exprs:
            for n in ast.walk(e):
                if isinstance(n, ast.Attribute):
                    names.add(n.attr)
                elif isinstance(n, ast.Name):
                    names.add(n.id)
        out.append((node.lineno, func, sorted(names)))
    return sorted(out)


# Verdicts for the checks that read a layout setting: a rule id (covered),
# or "out: reason".
VERDICTS = {}


def load_verdicts(path):
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key, verdict = line.split(" ", 1)
            VERDICTS[key] = verdict.strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--megatron", default="/work/.mirror/NVIDIA+Megatron-LM/repo")
    ap.add_argument("--verdicts", default="scripts/first-step-verdicts.txt")
    ap.add_argument("--out", default="docs/first-step-checks.md")
    opt = ap.parse_args()
    load_verdicts(opt.verdicts)
    rows, missing = [], []
    counts = {"rule": 0, "out": 0, "gap": 0, "no layout setting": 0}
    used = set()
    for f in FILES:
        text = subprocess.check_output(["git", "-C", opt.megatron, "show", f"{COMMIT}:{f}"], text=True)
        for line, func, names in checks(f, text):
            keys = sorted({LAYOUT[n] for n in names if n in LAYOUT})
            key = f"{f}:{line}"
            if not keys:
                verdict = "out of scope: reads no layout setting"
                counts["no layout setting"] += 1
            elif key in VERDICTS:
                verdict = VERDICTS[key]
                used.add(key)
                kind = verdict.split(":", 1)[0]
                counts[kind if kind in ("out", "gap") else "rule"] += 1
            else:
                missing.append(f"{key} ({func}; {', '.join(keys)})")
                continue
            rows.append(f"| `{f}:{line}` | {func or '(module)'} | {', '.join(keys) or '—'} | {verdict} |")
    stale = sorted(set(VERDICTS) - used)
    if stale:
        sys.exit("verdicts for checks that are not there (or read no layout setting): " + ", ".join(stale))
    if missing:
        sys.exit("checks that read a layout setting and have no verdict in " + opt.verdicts + ":\n  " + "\n  ".join(missing))
    with open(opt.out, "w") as out:
        out.write(f"""# Checks at model build and first step

Every `raise` and `assert` that building a MIMO model and running its first
training step can reach in Megatron-LM@{COMMIT[:12]}: TransformerConfig,
the MoE layer, router, experts and token dispatchers, attention, the
optimizer, DDP and its buffers, the pipeline schedules, and the MIMO
example's entry point and grid arguments. Written by
`scripts/triage-first-step-checks.py` from the Megatron-LM mirror and
`scripts/first-step-verdicts.txt` (the script stops when a check that reads
a layout setting has no verdict).

A check is **covered** when a mimoplan rule (docs/rules.md) refuses the
layouts it refuses; **out of scope** when its condition reads no setting a
layout holds (two layouts cannot differ on it), or for the reason given.
Settings are named by the layout key they come from.

{counts['rule']} covered by a rule, {counts['out']} out of scope with a reason, {counts['gap']} gaps (a layout
reaches them and mimoplan does not refuse it yet: `gap:`), {counts['no layout setting']} reading no
layout setting.

| check | function | layout settings read | verdict |
|---|---|---|---|
""")
        out.write("\n".join(rows) + "\n")
    print(f"wrote {opt.out}: {len(rows)} checks ({counts})")


if __name__ == "__main__":
    main()
