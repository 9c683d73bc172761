#!/usr/bin/env python3
"""Runs Megatron-LM's own argument validation on the language module's
pipeline arguments over a grid of (pp, virtual pipeline, overlap_p2p_comm)
and writes internal/validate/testdata/p2p-overlap-megatron.json, which
internal/validate's TestP2POverlapMatchesMegatron compares with the rules
vpp-needs-pp and vpp-needs-pp-without-p2p-overlap (target megatron-lm).

What runs is examples/mimo/pretrain_mimo.py's _parse_and_validate (its own
parser, Megatron-LM's parse_args and validate_args, the example's grid
check) on the argv of a language-only launch of pp ranks
(--llm-only --llm-pp PP), with --num-layers 72 (a multiple of every
pp x vpp of the grid), the virtual pipeline as mimoplan writes it
(--num-virtual-stages-per-pipeline-rank V, or
--pipeline-model-parallel-layout) and --no-overlap-p2p-communication or
not. The check in question is arguments.py:1000-1008 at COMMIT.

Upstream's code is never committed: megatron/ and examples/mimo are
extracted from the Megatron-LM mirror at COMMIT into a scratch folder
(--extract) and run there (--run) on CPU: no GPU is used, only argument
validation. A package missing from the machine (torch and the rest) is
stubbed, as scripts/gen-mimo-vpp-fixtures.py does (its Stub and
StubFinder are reused); the fixture lists what was stubbed and the Python
that ran (the committed one: /root/.pyenv/versions/3.12.1/bin/python3,
which has no numpy).

Usage:
  scripts/gen-p2p-overlap-fixtures.py --extract DIR [--mirror MIRROR]
  scripts/gen-p2p-overlap-fixtures.py --run DIR [--out FILE]
"""

import json
import os
import sys

import upstream_stub

mimovpp = upstream_stub.script("mimovpp", "gen-mimo-vpp-fixtures.py")

COMMIT = mimovpp.COMMIT
NUM_LAYERS = 72


def base(pp):
    return [
        "--llm-only", "--llm-offset", "0", "--llm-tp", "1", "--llm-pp", str(pp), "--llm-dp", "1",
        "--use-distributed-optimizer", "--calculate-per-token-loss",
        "--micro-batch-size", "1", "--global-batch-size", "8",
        "--seq-length", "64", "--max-position-embeddings", "64",
        "--num-layers", str(NUM_LAYERS), "--hidden-size", "64", "--num-attention-heads", "4",
        "--vocab-size", "128", "--bf16", "--train-iters", "1",
    ]


def pipeline_layout(stages):
    """A pipeline_model_parallel_layout of stages stages over NUM_LAYERS."""
    per = NUM_LAYERS // stages
    parts = [f"t*{per}"] * stages
    parts[0] = "E" + parts[0]
    parts[-1] = parts[-1] + "L"
    return "|".join(parts)


def cases():
    """name -> (pp, vpp as mimoplan states it, how, overlap, argv)."""
    out = {}
    for pp in range(1, 5):
        for vpp in range(1, 4):
            for overlap in (True, False):
                argv = base(pp)
                if vpp > 1:
                    argv += ["--num-virtual-stages-per-pipeline-rank", str(vpp)]
                if not overlap:
                    argv += ["--no-overlap-p2p-communication"]
                out[f"pp{pp}-vpp{vpp}-{'overlap' if overlap else 'no-overlap'}"] = (pp, vpp, "vpp", overlap, argv)
    for pp, stages in ((2, 4), (2, 2), (3, 6)):
        for overlap in (True, False):
            argv = base(pp) + ["--pipeline-model-parallel-layout", pipeline_layout(stages)]
            if not overlap:
                argv += ["--no-overlap-p2p-communication"]
            out[f"pp{pp}-layout{stages}-{'overlap' if overlap else 'no-overlap'}"] = (pp, stages // pp, "layout", overlap, argv)
    return out


def parse_and_validate(root, argv, world, stubs, keys):
    """Runs the MIMO example's _parse_and_validate on argv as rank 0 of
    world ranks from the extracted tree root and prints its RESULT: the
    arguments keys as validate_args leaves them, or where it raised."""
    sys.path.insert(0, root)
    os.environ.update(RANK="0", WORLD_SIZE=str(world), LOCAL_RANK="0")
    if stubs:
        sys.meta_path.append(mimovpp.StubFinder(stubs))
    try:
        import examples.mimo.pretrain_mimo as p

        sys.argv = ["pretrain_mimo.py"] + argv
        args = p._parse_and_validate()
        res = {"outcome": "ok", "result": {k: getattr(args, k) for k in keys}}
    except ModuleNotFoundError as e:
        res = {"outcome": "missing", "module": e.name}
    except BaseException as e:  # AssertionError, SystemExit from argparse
        res = {"outcome": "raises", "exception": type(e).__name__,
               "where": mimovpp.where(e.__traceback__, root),
               "message": " ".join(str(e).split())[:400]}
    print("RESULT " + json.dumps(res))


def one_case(root, name, stubs):
    pp, argv = cases()[name][0], cases()[name][4]
    parse_and_validate(root, argv, pp, stubs, ["pipeline_model_parallel_size",
                                               "virtual_pipeline_model_parallel_size", "overlap_p2p_comm"])


def fields(case):
    pp, vpp, how, overlap, argv = case
    return {"pp": pp, "vpp": vpp, "virtual_pipeline": how, "overlap_p2p_comm": overlap, "argv": argv}


if __name__ == "__main__":
    upstream_stub.case_main(__file__, COMMIT, mimovpp.MIRROR, mimovpp.extract,
                            "internal/validate/testdata/p2p-overlap-megatron.json", cases, fields, one_case,
                            doc={"num_layers": NUM_LAYERS})
