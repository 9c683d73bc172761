#!/usr/bin/env python3
"""Runs Megatron-LM's own argument parsing and TransformerConfig checks on
the MoE capacity arguments as mimoplan writes them, over a grid of training
settings, and writes internal/model/testdata/moe-capacity-megatron.json,
which internal/model's TestMoECapacityMatchesMegatron compares with the
rule moe-capacity-unsupported.

What runs, at COMMIT, for each case (one process each), on a one-rank bf16
launch of a small MoE GPT (4 experts, top 2, the bias-GELU fusion off)
plus the case's flags:

  megatron/training/arguments.py      parse_args() and validate_args(args)
  megatron/training/argument_utils.py core_transformer_config_from_args(args):
                                      the TransformerConfig every target
                                      builds, whose __post_init__ checks the
                                      capacity settings
                                      (transformer_config.py:1754-1761,
                                      :1836-1866)

The grid: the token dispatcher (allgather, alltoall, flex) x the capacity
factor (none, 1, 1.5) x padding to capacity (on, off). The flags are the
ones launch-plan writes for those training keys (internal/megatron
TrainingFlags): --moe-token-dispatcher-type, --moe-expert-capacity-factor,
--moe-pad-expert-input-to-capacity.

Upstream's code is never committed: megatron/ is extracted from the
Megatron-LM mirror at COMMIT into a scratch folder (--extract) and run there
(--run) on CPU, torch and the packages missing from the machine stubbed as
scripts/gen-optimizer-dtype-fixtures.py stubs them (Transformer Engine
present).

Usage:
  scripts/gen-moe-capacity-fixtures.py --extract DIR [--mirror MIRROR]
  scripts/gen-moe-capacity-fixtures.py --run DIR [--out FILE]
"""

import itertools
import json
import os
import sys

import upstream_stub

optdtype = upstream_stub.script("optdtype", "gen-optimizer-dtype-fixtures.py")
mimovpp = optdtype.mimovpp

COMMIT = mimovpp.COMMIT

# --no-bias-gelu-fusion: the stubbed torch's gelu is no function the fused
# bias-activation check (transformer_config.py:2420-2425) recognises, and
# that check reads no capacity setting.
BASE = optdtype.BASE + ["--num-experts", "4", "--moe-router-topk", "2", "--use-distributed-optimizer",
                        "--no-bias-gelu-fusion"]


def cases():
    """name -> (training keys as a layout states them, argv)."""
    out = {}
    for dispatcher, factor, pad in itertools.product(("allgather", "alltoall", "flex"), (None, "1", "1.5"),
                                                     (False, True)):
        training = {"moe_token_dispatcher_type": dispatcher, "moe_pad_expert_input_to_capacity": pad}
        if factor is not None:
            training["moe_expert_capacity_factor"] = factor
        name = "-".join([dispatcher, "factor-" + (factor or "none"), "pad" if pad else "nopad"])
        out[name] = (training, argv(training))
    return out


def argv(training):
    """The flags launch-plan writes for these keys."""
    a = list(BASE) + ["--moe-token-dispatcher-type", training["moe_token_dispatcher_type"]]
    if "moe_expert_capacity_factor" in training:
        a += ["--moe-expert-capacity-factor", training["moe_expert_capacity_factor"]]
    if training["moe_pad_expert_input_to_capacity"]:
        a.append("--moe-pad-expert-input-to-capacity")
    return a


def run_transformer_config(root, a, stubs, keys):
    """Runs parse_args, validate_args and core_transformer_config_from_args
    of the tree at root on argv a (torch and stubs stubbed, Transformer
    Engine present) and prints the RESULT line run_cases reads: the
    config's keys, or where it raised."""
    sys.path.insert(0, root)
    os.environ.update(RANK="0", WORLD_SIZE="1", LOCAL_RANK="0")
    sys.meta_path.insert(0, optdtype.Finder(stubs, True))
    res = {}
    try:
        from megatron.training.arguments import parse_args, validate_args

        sys.argv = ["pretrain_gpt.py"] + a
        args = parse_args()
        validate_args(args, {})
        from megatron.training.argument_utils import core_transformer_config_from_args

        config = core_transformer_config_from_args(args)
        res["config"] = {k: getattr(config, k) for k in keys}
        res["outcome"] = "ok"
    except ModuleNotFoundError as e:
        res = {"outcome": "missing", "module": e.name}
    except BaseException as e:  # AssertionError, ValueError, RuntimeError, SystemExit
        res.update(outcome="raises", exception=type(e).__name__, where=mimovpp.where(e.__traceback__, root),
                   message=" ".join(str(e).split())[:400])
    print("RESULT " + json.dumps(res, default=str))


def one_case(root, name, stubs):
    _, a = cases()[name]
    run_transformer_config(root, a, stubs, ("moe_token_dispatcher_type", "moe_expert_capacity_factor",
                                            "moe_pad_expert_input_to_capacity", "moe_flex_dispatcher_backend"))


def fields(case):
    training, a = case
    return {"training": training, "argv": a}


if __name__ == "__main__":
    upstream_stub.case_main(__file__, COMMIT, mimovpp.MIRROR, mimovpp.extract,
                            "internal/model/testdata/moe-capacity-megatron.json", cases, fields, one_case)
