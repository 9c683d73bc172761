#!/usr/bin/env python3
"""Runs Megatron-LM's own checks of a pipeline split and its per-stage layer
counts, and writes internal/model/testdata/pipeline-megatron.json, which
internal/model's TestPipelineSplitMatchesMegatron compares with mimoplan.

Upstream's code is never committed: the files below are read from the
Megatron-LM mirror at its commit and the pieces that decide a split are run,
each with its own line numbers (so a failing check names upstream's line):

  megatron/training/arguments.py           validate_args' "Uneven virtual
      pipeline parallelism" statements (from the assert that at most one of
      the virtual-pipeline arguments is set to the check of pp > 1 under the
      interleaved schedule)
  megatron/core/transformer/transformer_config.py   __post_init__'s two
      statements on the split (first/last stage vs account_for_*, then the
      layout / uneven / account_for_* chain)
  megatron/core/transformer/pipeline_parallel_layer_layout.py   whole, with
      parallel_state stubbed (the pipeline rank is set per call)
  megatron/core/transformer/transformer_block.py    get_num_layers_to_build
  megatron/core/pipeline_parallel/utils.py          is_vp_first_stage,
      is_vp_last_stage
  megatron/core/transformer/enums.py                LayerType

torch is never imported: none of this code touches a tensor.

A case is (num_layers, mtp_num_layers, pp, vpp, first, last,
account_for_embedding, account_for_loss, layout); its result is either the
upstream line of the first check that fails ("error": "path:line") or the
decoder layers every (pp rank, virtual stage) builds ("chunks").

Usage: scripts/gen-pipeline-fixtures.py [--megatron DIR] [--cases N] [--seed S]
"""

import argparse
import ast
import json
import os
import random
import sys
import tempfile
import traceback
import types

import upstream_stub
from upstream_stub import function

ARGS = "megatron/training/arguments.py"
CONFIG = "megatron/core/transformer/transformer_config.py"
LAYOUT = "megatron/core/transformer/pipeline_parallel_layer_layout.py"
BLOCK = "megatron/core/transformer/transformer_block.py"
PPUTILS = "megatron/core/pipeline_parallel/utils.py"
ENUMS = "megatron/core/transformer/enums.py"
FILES = [ARGS, CONFIG, LAYOUT, BLOCK, PPUTILS, ENUMS]


def extract(mirror, dest):
    commit = upstream_stub.head(mirror)
    upstream_stub.extract(mirror, commit, FILES, dest)
    return commit


def src(node, text):
    return ast.get_source_segment(text, node) or ""


def statements(path, func, first, last):
    """Compiles the run of func's top-level statements from the first one
    whose source contains `first` to the first one after it containing
    `last`, keeping upstream's line numbers."""
    text = open(path).read()
    body = func(ast.parse(text)).body
    start = next((i for i, n in enumerate(body) if first in src(n, text)), None)
    if start is None:
        sys.exit(f"{path}: no statement with {first!r}")
    end = next((i for i in range(start, len(body)) if last in src(body[i], text)), None)
    if end is None:
        sys.exit(f"{path}: no statement with {last!r} after {first!r}")
    return compile(ast.Module(body=body[start : end + 1], type_ignores=[]), path, "exec")


class Upstream:
    def __init__(self, root):
        self.root = root
        self.pp_rank = 0
        self.vpp_world = None
        for name in ["megatron", "megatron.core", "megatron.core.transformer"]:
            mod = types.ModuleType(name)
            mod.__path__ = []
            sys.modules[name] = mod
        enums = self.module("megatron.core.transformer.enums", ENUMS)
        ps = types.ModuleType("megatron.core.parallel_state")
        ps.get_pipeline_model_parallel_rank = lambda: self.pp_rank
        ps.get_virtual_pipeline_model_parallel_world_size = lambda: self.vpp_world
        sys.modules["megatron.core.parallel_state"] = ps
        sys.modules["megatron.core"].parallel_state = ps
        ru = types.ModuleType("megatron.core._rank_utils")
        ru.safe_get_rank = lambda: 0
        sys.modules["megatron.core._rank_utils"] = ru
        self.PPL = self.module("megatron.core.transformer.pipeline_parallel_layer_layout", LAYOUT).PipelineParallelLayerLayout
        self.LayerType = enums.LayerType

        self.glob = {"PipelineParallelLayerLayout": self.PPL, "LayerType": self.LayerType, "parallel_state": ps}
        text = open(self.path(PPUTILS)).read()
        tree = ast.parse(text)
        keep = [function(tree, "is_vp_first_stage"), function(tree, "is_vp_last_stage")]
        exec(compile(ast.Module(body=keep, type_ignores=[]), self.path(PPUTILS), "exec"), self.glob)
        tree = ast.parse(open(self.path(BLOCK)).read())
        keep = [function(tree, "get_num_layers_to_build")]
        for a in keep[0].args.args + keep[0].args.kwonlyargs:
            a.annotation = None
        keep[0].returns = None
        exec(compile(ast.Module(body=keep, type_ignores=[]), self.path(BLOCK), "exec"), self.glob)

        self.args_code = statements(
            self.path(ARGS),
            lambda t: function(t, "validate_args"),
            "int(args.num_virtual_stages_per_pipeline_rank is not None)",
            "args.overlap_p2p_comm = False",
        )
        self.config_code = statements(
            self.path(CONFIG),
            lambda t: function(t, "__post_init__", cls="TransformerConfig"),
            "self.account_for_embedding_in_pipeline_split or self.account_for_loss_in_pipeline_split\n        ):\n            raise",
            "number of layers on each pipeline rank",
        )

    def path(self, rel):
        return os.path.join(self.root, rel)

    def module(self, name, rel):
        mod = types.ModuleType(name)
        mod.__file__ = self.path(rel)
        sys.modules[name] = mod
        exec(compile(open(mod.__file__).read(), mod.__file__, "exec"), mod.__dict__)
        return mod

    def run(self, case):
        args = types.SimpleNamespace(
            num_layers=case["num_layers"],
            decoder_num_layers=None,
            hybrid_layer_pattern=None,
            num_layers_per_virtual_pipeline_stage=None,
            num_virtual_stages_per_pipeline_rank=case["vpp"],
            pipeline_model_parallel_layout=case["layout"],
            pipeline_model_parallel_size=case["pp"],
            transformer_pipeline_model_parallel_size=case["pp"],
            virtual_pipeline_model_parallel_size=None,
            decoder_first_pipeline_num_layers=case["first"],
            decoder_last_pipeline_num_layers=case["last"],
            account_for_embedding_in_pipeline_split=case["account_for_embedding"],
            account_for_loss_in_pipeline_split=case["account_for_loss"],
            overlap_p2p_comm=True,  # --no-overlap-p2p-communication not given
            rank=1,  # not 0: keeps upstream's warning print quiet
        )
        g = dict(self.glob, args=args)
        exec(self.args_code, g)
        cfg = types.SimpleNamespace(
            num_layers=case["num_layers"],
            mtp_num_layers=case["mtp_num_layers"],
            pipeline_model_parallel_size=case["pp"],
            virtual_pipeline_model_parallel_size=args.virtual_pipeline_model_parallel_size,
            num_layers_in_first_pipeline_stage=case["first"],
            num_layers_in_last_pipeline_stage=case["last"],
            account_for_embedding_in_pipeline_split=case["account_for_embedding"],
            account_for_loss_in_pipeline_split=case["account_for_loss"],
            pipeline_model_parallel_layout=args.pipeline_model_parallel_layout,
        )
        exec(self.config_code, dict(self.glob, self=cfg))
        vpp = cfg.virtual_pipeline_model_parallel_size
        self.vpp_world = vpp
        chunks = []
        for r in range(case["pp"]):
            self.pp_rank = r
            row = []
            for v in range(vpp or 1):
                row.append(self.glob["get_num_layers_to_build"](cfg, vp_stage=v if vpp else None, pp_rank=r))
            chunks.append(row)
        return chunks


def failing_line(exc, root):
    """The upstream path:line of the assert or raise statement that fired."""
    for frame, lineno in reversed(list(traceback.walk_tb(exc.__traceback__))):
        path = frame.f_code.co_filename
        if path.startswith(root):
            rel = os.path.relpath(path, root)
            tree = ast.parse(open(path).read())
            best = None
            for n in ast.walk(tree):
                if isinstance(n, (ast.Assert, ast.Raise)) and n.lineno <= lineno <= n.end_lineno:
                    if best is None or n.lineno > best.lineno:
                        best = n
            return f"{rel}:{best.lineno if best else lineno}"
    raise exc


def layout_string(rng, num_layers, mtp, pp, vpp):
    """A layout near a valid one: layers spread over pp*vpp stages, E first,
    L last, MTP before L; sometimes broken one way."""
    n = pp * vpp
    stages = [[] for _ in range(n)]
    for _ in range(num_layers):
        stages[rng.randrange(n)].append("t")
    stages.sort(key=len, reverse=rng.random() < 0.1)
    stages[0].insert(0, "E")
    stages[-1].extend(["m"] * mtp + ["L"])
    break_it = rng.random()
    if break_it < 0.05:
        stages[-1].append("t")
    elif break_it < 0.1:
        stages.append(["t"])
    elif break_it < 0.13 and mtp:
        stages[0].append("m")
    elif break_it < 0.16:
        stages[0] = stages[0][1:]
    parts = []
    for st in stages:
        s = "".join(st)
        if len(s) > 3 and rng.random() < 0.5 and len(set(s[1:])) == 1:
            s = s[0] + f"{s[1]}*{len(s) - 1}"
        parts.append(s)
    out = "|".join(parts)
    if rng.random() < 0.1:
        out = out.replace("|", ",|", 1)
    if rng.random() < 0.03:
        out += "x"
    return out


def random_case(rng):
    pp = rng.choice([1, 2, 3, 4, 5, 6, 8, 16])
    num_layers = rng.randint(1, 130)
    vpp = rng.choice([None, None, None, 2, 3, 4])
    mtp = rng.choice([None, None, 1, 2])
    case = dict(num_layers=num_layers, mtp_num_layers=mtp, pp=pp, vpp=vpp, first=None, last=None,
                account_for_embedding=False, account_for_loss=False, layout=None)
    kind = rng.random()
    if kind < 0.3:
        if rng.random() < 0.8:
            case["first"] = rng.randint(1, max(1, num_layers // max(pp - 1, 1) + 2))
        if rng.random() < 0.8:
            case["last"] = rng.randint(1, max(1, num_layers // max(pp - 1, 1) + 2))
        if rng.random() < 0.05:
            case["account_for_loss"] = True
    elif kind < 0.55:
        case["account_for_embedding"] = rng.random() < 0.7
        case["account_for_loss"] = rng.random() < 0.7
    elif kind < 0.8:
        v = vpp or 1
        case["layout"] = layout_string(rng, num_layers, mtp or 0, pp, v)
        case["vpp"] = vpp if rng.random() < 0.05 else None
        if rng.random() < 0.03:
            case["first"] = 1
    return case


# The recipes' settings (testdata/recipes/) and hand-picked edges: pp 1
# with first and last, layouts with MTP, account_for_* with vpp.
FIXED = [
    dict(num_layers=126, mtp_num_layers=None, pp=8, vpp=2, first=None, last=None, account_for_embedding=True, account_for_loss=True, layout=None),
    dict(num_layers=94, mtp_num_layers=None, pp=16, vpp=None, first=None, last=None, account_for_embedding=True, account_for_loss=True, layout=None),
    dict(num_layers=94, mtp_num_layers=None, pp=8, vpp=None, first=None, last=None, account_for_embedding=True, account_for_loss=True, layout=None),
    dict(num_layers=61, mtp_num_layers=1, pp=16, vpp=None, first=None, last=None, account_for_embedding=False, account_for_loss=False, layout="Et*4|(t*4|)*14tmL"),
    dict(num_layers=61, mtp_num_layers=1, pp=8, vpp=None, first=None, last=None, account_for_embedding=False, account_for_loss=False, layout="Et*4|(t*4|)*14tmL"),
    dict(num_layers=61, mtp_num_layers=None, pp=16, vpp=None, first=None, last=None, account_for_embedding=False, account_for_loss=False, layout="Et*4|(t*4|)*14tmL"),
    dict(num_layers=10, mtp_num_layers=None, pp=1, vpp=None, first=3, last=4, account_for_embedding=False, account_for_loss=False, layout=None),
    dict(num_layers=10, mtp_num_layers=None, pp=1, vpp=None, first=10, last=None, account_for_embedding=False, account_for_loss=False, layout=None),
    dict(num_layers=10, mtp_num_layers=None, pp=2, vpp=None, first=4, last=None, account_for_embedding=False, account_for_loss=False, layout=None),
    dict(num_layers=10, mtp_num_layers=None, pp=3, vpp=None, first=2, last=2, account_for_embedding=True, account_for_loss=False, layout=None),
    dict(num_layers=30, mtp_num_layers=None, pp=4, vpp=2, first=6, last=8, account_for_embedding=False, account_for_loss=False, layout=None),
    dict(num_layers=14, mtp_num_layers=None, pp=4, vpp=2, first=None, last=None, account_for_embedding=True, account_for_loss=True, layout=None),
    dict(num_layers=4, mtp_num_layers=None, pp=2, vpp=2, first=None, last=None, account_for_embedding=False, account_for_loss=False, layout="Et|t|t|tL"),
    dict(num_layers=4, mtp_num_layers=None, pp=1, vpp=None, first=None, last=None, account_for_embedding=False, account_for_loss=False, layout="Et|ttL"),
    dict(num_layers=4, mtp_num_layers=None, pp=2, vpp=None, first=None, last=None, account_for_embedding=False, account_for_loss=False, layout="|"),
    dict(num_layers=4, mtp_num_layers=2, pp=2, vpp=None, first=None, last=None, account_for_embedding=False, account_for_loss=False, layout="Ettm|ttmL"),
    dict(num_layers=4, mtp_num_layers=1, pp=2, vpp=None, first=None, last=None, account_for_embedding=False, account_for_loss=False, layout="Ettm|ttL"),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--megatron", default="/work/.mirror/NVIDIA+Megatron-LM/repo")
    ap.add_argument("--cases", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=22)
    ap.add_argument("--out", default="internal/model/testdata/pipeline-megatron.json")
    opt = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        commit = extract(opt.megatron, tmp)
        root = os.path.realpath(tmp)
        up = Upstream(root)
        rng = random.Random(opt.seed)
        cases = list(FIXED) + [random_case(rng) for _ in range(opt.cases)]
        out = []
        for case in cases:
            res = dict(case)
            try:
                res["chunks"] = up.run(case)
            except (AssertionError, ValueError, IndexError, NotImplementedError) as e:
                res["error"] = failing_line(e, root)
            out.append(res)
    errors = sum("error" in r for r in out)
    with open(opt.out, "w") as f:
        json.dump({"megatron_commit": commit, "generator": "scripts/gen-pipeline-fixtures.py",
                   "seed": opt.seed, "cases": out}, f, indent=None, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {opt.out}: {len(out)} cases ({errors} refused) at Megatron-LM {commit[:12]}")


if __name__ == "__main__":
    main()
