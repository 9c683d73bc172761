#!/usr/bin/env python3
"""Runs Megatron-core's own ModelParallelConfig on the loss's fusion keys
at the three points of its history that mimoplan tells apart, and writes
internal/validate/testdata/te-cross-entropy-megatron.json, which
internal/validate's TestTECrossEntropyMatchesMegatron compares with the
rules te-cross-entropy-fusion-disabled and te-cross-entropy-fusion-unstable
(targets core and megatron-bridge, which build ModelParallelConfig without
Megatron-LM's validate_args).

The commits: 168cb15d70's parent (before PR #5115), 168cb15d70 (PR #5115,
2026-06-03: __post_init__ asserts against cross_entropy_loss_fusion with
cross_entropy_fusion_impl 'te') and d98e8a64ddf3 (the mirror's HEAD, after
PR #5162 of 2026-06-05, b57449928a: a UserWarning instead). The grid:
cross_entropy_loss_fusion x cross_entropy_fusion_impl native, te, the rest
at ModelParallelConfig's defaults. Megatron-LM's own validate_args assert
(megatron/training/arguments.py:1697-1702 at d98e8a6, target megatron-lm)
is run by scripts/gen-te-cross-entropy-args-fixtures.py.

Upstream's code is never committed: the file is read from the Megatron-LM
mirror at each commit and run from memory, on CPU, with torch stubbed (the
module imports it for dtypes alone).

Usage: scripts/gen-te-cross-entropy-fixtures.py [--mirror MIRROR] [--out FILE]
"""

import argparse
import os
import subprocess
import sys
import warnings

import upstream_stub

HEAD = "d98e8a64ddf34856e74b24714e3bedb2f5a39553"
PR5115 = "168cb15d70ad4a3ca9e3b3e396adc6201a6f50ff"
BEFORE = PR5115 + "^"
MIRROR = "/work/.mirror/NVIDIA+Megatron-LM/repo"
PATH = "megatron/core/model_parallel_config.py"
MODULE = "megatron.core.model_parallel_config"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "internal", "validate", "testdata", "te-cross-entropy-megatron.json")

# mimoplan's name of each point -> the commit.
POINTS = {"before-5115": BEFORE, "5115": PR5115, "5162": HEAD}


def warn_line(src, message):
    """The line of the warnings.warn call whose message starts so: its
    stacklevel 2 points the warning at the dataclass's generated __init__."""
    lines = src.split("\n")
    at = next(i for i, l in enumerate(lines) if message[:40] in l)
    return next(i for i in range(at, -1, -1) if "warnings.warn(" in lines[i]) + 1


def run(mpc, kw, src):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            mpc.ModelParallelConfig(**kw)
        except AssertionError as e:
            return {"outcome": "raises", "line": upstream_stub.raised_at(e, MODULE), "message": str(e)}
    mine = [w for w in caught if "cross entropy" in str(w.message)]
    if mine:
        return {"outcome": "warns", "line": warn_line(src, str(mine[0].message)), "message": str(mine[0].message)}
    return {"outcome": "ok"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirror", default=MIRROR)
    ap.add_argument("--out", default=OUT)
    a = ap.parse_args()
    upstream_stub.stub("torch")
    results, commits = {}, {}
    for point, rev in POINTS.items():
        commit = subprocess.check_output(["git", "-C", a.mirror, "rev-parse", rev], text=True).strip()
        commits[point] = commit
        sys.modules.pop(MODULE, None)
        src = upstream_stub.show(a.mirror, commit, PATH)
        mpc = upstream_stub.module(MODULE, src=src)
        for fusion in (False, True):
            for impl in ("native", "te"):
                kw = {"cross_entropy_loss_fusion": fusion, "cross_entropy_fusion_impl": impl}
                name = f"{point}-{'fusion' if fusion else 'no-fusion'}-{impl}"
                results[name] = {"point": point, "commit": commit, **kw, **run(mpc, kw, src)}
                print(name, results[name]["outcome"], results[name].get("line", ""))
    upstream_stub.write_fixture(a.out, __file__, megatron_commit=HEAD, commits=commits, file=PATH,
                                stubbed=["torch"], cases=results)


if __name__ == "__main__":
    main()
