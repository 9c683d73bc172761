#!/usr/bin/env python3
"""Runs Megatron-core's own ModelParallelConfig checks on the output
layer's deferred weight gradient over a grid of cases and writes
internal/model/testdata/defer-wgrad-megatron.json, which internal/model's
TestDeferWgradMatchesMegatron compares with the rules
defer-embedding-wgrad-needs and wgrad-deferral-limit-negative.

What runs is ModelParallelConfig(...) of
megatron/core/model_parallel_config.py at COMMIT, whose __post_init__
raises ValueError when deferring (defer_embedding_wgrad_compute) with
pipeline_model_parallel_size 1, without gradient_accumulation_fusion, or
with a negative wgrad_deferral_limit (:545-558). Every TransformerConfig is
one (TransformerConfig(ModelParallelConfig) calls its __post_init__), and
Megatron-LM builds the language model's from its arguments
(argument_utils.py:277-303, core_transformer_config_from_args): the
checks of every target. The grid: pp 1, 2, 4 x gradient_accumulation_fusion
x defer_embedding_wgrad_compute x wgrad_deferral_limit -1, 0, 22, each
config with pipeline_dtype set (pp > 1 needs one, :527-531) and the rest
at ModelParallelConfig's defaults.

Upstream's code is never committed: the file is read from the Megatron-LM
mirror at COMMIT and run from memory, on CPU, with torch stubbed (the
module imports it for dtypes alone). The fixture records the commit and the
Python that ran (pyenv's 3.12.1 made the committed one).

Usage: scripts/gen-defer-wgrad-fixtures.py [--mirror MIRROR] [--out FILE]
"""

import argparse
import os
import sys

import upstream_stub

COMMIT = "d98e8a64ddf34856e74b24714e3bedb2f5a39553"
MIRROR = "/work/.mirror/NVIDIA+Megatron-LM/repo"
PATH = "megatron/core/model_parallel_config.py"
MODULE = "megatron.core.model_parallel_config"  # also the file name tracebacks give
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "internal", "model", "testdata", "defer-wgrad-megatron.json")


def cases():
    """name -> the ModelParallelConfig keyword arguments the case varies."""
    out = {}
    for pp in (1, 2, 4):
        for fusion in (True, False):
            for defer in (True, False):
                for limit in (-1, 0, 22):
                    name = f"pp{pp}-{'fusion' if fusion else 'no-fusion'}-{'defer' if defer else 'no-defer'}-limit{limit}"
                    out[name] = {"pipeline_model_parallel_size": pp, "gradient_accumulation_fusion": fusion,
                                 "defer_embedding_wgrad_compute": defer, "wgrad_deferral_limit": limit}
    return out


def run(mpc, kw):
    try:
        cfg = mpc.ModelParallelConfig(pipeline_dtype=sys.modules["torch"].bfloat16, **kw)
    except ValueError as e:
        return {"outcome": "raises", "exception": "ValueError", "line": upstream_stub.raised_at(e, MODULE), "message": str(e)}
    return {"outcome": "ok", "result": {k: getattr(cfg, k) for k in kw}}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirror", default=MIRROR)
    ap.add_argument("--out", default=OUT)
    a = ap.parse_args()
    upstream_stub.stub("torch")
    mpc = upstream_stub.module(MODULE, src=upstream_stub.show(a.mirror, COMMIT, PATH))
    results = {}
    for name, kw in cases().items():
        results[name] = {**kw, **run(mpc, kw)}
        print(name, results[name]["outcome"], results[name].get("line", ""))
    upstream_stub.write_fixture(a.out, __file__, megatron_commit=COMMIT, file=PATH, stubbed=["torch"], cases=results)


if __name__ == "__main__":
    main()
