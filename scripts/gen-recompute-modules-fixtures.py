#!/usr/bin/env python3
"""Runs Megatron-LM's own argument parsing and TransformerConfig checks on
recompute_modules as mimoplan writes it, over a grid of cases, and writes
internal/model/testdata/recompute-modules-megatron.json, which
internal/model's TestRecomputeModulesMatchesMegatron compares with the rule
recompute-module-unsupported.

What runs, at COMMIT, for each case (one process each), on a one-rank bf16
launch of a small MoE GPT (4 experts, top 2, the bias-GELU fusion off) with
selective recompute, plus the case's flags (those launch-plan writes):

  megatron/training/arguments.py      parse_args() and validate_args(args)
  megatron/training/argument_utils.py core_transformer_config_from_args(args):
                                      the TransformerConfig (or, with
                                      --multi-latent-attention,
                                      MLATransformerConfig) whose __post_init__
                                      checks recompute_modules
                                      (transformer_config.py:1940-2012)

The grid: each module alone and core_attn with mlp and moe, with and without
multi-latent attention, in bf16 and with fp8 (--fp8-format hybrid, Megatron's
default recipe), moe_grouped_gemm left at Megatron's default as launch plans
leave it.

Upstream's code is never committed: megatron/ is extracted from the
Megatron-LM mirror at COMMIT into a scratch folder (--extract) and run there
(--run) on CPU, torch and the packages missing from the machine stubbed as
scripts/gen-optimizer-dtype-fixtures.py stubs them (Transformer Engine
present).

Usage:
  scripts/gen-recompute-modules-fixtures.py --extract DIR [--mirror MIRROR]
  scripts/gen-recompute-modules-fixtures.py --run DIR [--out FILE]
"""

import itertools

import upstream_stub

capacity = upstream_stub.script("capacity", "gen-moe-capacity-fixtures.py")
optdtype, mimovpp = capacity.optdtype, capacity.mimovpp

COMMIT = mimovpp.COMMIT

BASE = optdtype.BASE + ["--num-experts", "4", "--moe-router-topk", "2", "--use-distributed-optimizer",
                        "--no-bias-gelu-fusion", "--recompute-granularity", "selective"]
MLA = ["--multi-latent-attention", "--q-lora-rank", "32", "--kv-lora-rank", "16", "--qk-head-dim", "16",
       "--qk-pos-emb-head-dim", "8", "--v-head-dim", "16", "--position-embedding-type", "rope"]
MODULES = [["core_attn"], ["moe_act"], ["layernorm"], ["mla_up_proj"], ["mlp"], ["moe"], ["shared_experts"],
           ["core_attn", "mlp", "moe"]]


def cases():
    """name -> (the case's settings, argv)."""
    out = {}
    for modules, mla, fp8 in itertools.product(MODULES, (False, True), (False, True)):
        case = {"recompute_modules": modules, "multi_latent_attention": mla, "fp8": "hybrid" if fp8 else ""}
        a = list(BASE) + ["--recompute-modules"] + modules
        if mla:
            a += MLA
        if fp8:
            a += ["--fp8-format", "hybrid"]
        name = "-".join(["+".join(modules), "mla" if mla else "mha", "fp8" if fp8 else "bf16"])
        out[name] = (case, a)
    return out


def one_case(root, name, stubs):
    _, a = cases()[name]
    capacity.run_transformer_config(root, a, stubs, ("recompute_granularity", "recompute_modules", "moe_grouped_gemm",
                                                     "fp8_recipe", "multi_latent_attention"))


def fields(case):
    settings, a = case
    return {"case": settings, "argv": a}


if __name__ == "__main__":
    upstream_stub.case_main(__file__, COMMIT, mimovpp.MIRROR, mimovpp.extract,
                            "internal/model/testdata/recompute-modules-megatron.json", cases, fields, one_case)
