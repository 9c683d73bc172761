#!/usr/bin/env python3
"""Runs Megatron-core's own colocated-MIMO checks on layouts whose modules
share their ranks, and writes the fixture internal/validate's
TestColocatedFixture compares colocated-pp-cp-unsupported against.

MimoModel builds a ColocatedBridgeCommunicator per encoder only when it is
given a module_to_grid_map whose grids share their ranks
(megatron/core/models/mimo/model/base.py:66-71); the communicator then
refuses pp or cp above 1 on either grid (comm/colocated_communicator.py:
134-147) and dp sizes that do not divide one another (:149-154). Without a
grid map every module runs on the global parallel state (config/
base_configs.py:30), as Megatron-LM's MIMO functional test does
(examples/mimo/train.py with model_providers/llava_vlm.py:123-132, no
module_to_grid_map): no communicator, every module on the same groups, and
RankRole._colocated makes every module its own first and last stage, "PP=1"
(config/role.py:92-101).

For every case the script builds each module's HyperCommGrid as
create_topology does (examples/mimo/training/topology.py:137-142: base
dims [tp, gtp_remat, cp, dp, pp]), then runs upstream's own statements of
MimoModel.__init__ that decide on the communicators (the four at
base.py:64-71, taken out of the file by its syntax tree) and
_build_colocated_communicators (:755-777), and records whether that grid-map
path accepts the layout and, if not, upstream's message. It also records
RankRole.build(names, None) for the path without a grid map (no
communicator; the stages it gives every module: first and last, so pp 1)
and whether that path describes the layout at all (global_groups, which is
mimoplan's reading, not upstream code: every module on the language's
groups, an encoder at the language's cp or at cp 1, replicated over the cp
group since encoders see whole samples there, base.py:812, :848; expert
sizes, where an encoder has them, the language's).

Upstream's code is never committed: hyper_comm_grid.py, role.py,
colocated_communicator.py and base.py are extracted from the Megatron-LM
mirror at its commit into a temporary directory; torch and
torch.distributed are stubs (the checks are arithmetic on grid shapes; the
communicator's NCCL subgroups are never created). WORLD_SIZE is set as
upstream's mock tests do. Needs numpy (Debian: python3-numpy; run with
/usr/bin/python3).

Usage: scripts/gen-colocated-fixtures.py [--megatron DIR]
Writes internal/validate/testdata/colocated/communicator.json.
"""

import argparse
import ast
import json
import logging
import os
import tempfile
import types
import warnings

import upstream_stub
from upstream_stub import extract, module

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "internal", "validate", "testdata", "colocated", "communicator.json")
GRID = "megatron/core/hyper_comm_grid.py"
ROLE = "megatron/core/models/mimo/config/role.py"
COMM = "megatron/core/models/mimo/comm/colocated_communicator.py"
BASE = "megatron/core/models/mimo/model/base.py"

# name -> (world size, [(module, sizes)]); every module spans [0, world).
CASES = {
    "functional test: encoder cp 1 dp 8, language cp 2 dp 4": (8, [("vision", {}), ("language", {"cp": 2})]),
    "one grid, cp 2": (8, [("vision", {"cp": 2}), ("language", {"cp": 2})]),
    "one grid, tp 2 cp 2": (16, [("vision", {"tp": 2, "cp": 2}), ("language", {"tp": 2, "cp": 2})]),
    "three modules, encoders cp 1 and 4, language cp 4": (16, [("vision", {"cp": 4}), ("audio", {}), ("language", {"cp": 4})]),
    "one grid, pp 2": (8, [("vision", {"pp": 2}), ("language", {"pp": 2})]),
    "one grid, cp 2 pp 2": (8, [("vision", {"cp": 2, "pp": 2}), ("language", {"cp": 2, "pp": 2})]),
    "one grid, gtp_remat 2 cp 2": (8, [("vision", {"gtp_remat": 2, "cp": 2}), ("language", {"gtp_remat": 2, "cp": 2})]),
    "encoder cp 2, language cp 1": (8, [("vision", {"cp": 2}), ("language", {})]),
    "encoder cp 2, language cp 4": (16, [("vision", {"cp": 2}), ("language", {"cp": 4})]),
    "encoder tp 2 cp 1, language cp 2": (8, [("vision", {"tp": 2}), ("language", {"cp": 2})]),
    "both cp 2, tp differs": (8, [("vision", {"cp": 2}), ("language", {"tp": 2, "cp": 2})]),
    "three modules, one differs, cp 2": (16, [("vision", {"cp": 2}), ("audio", {"cp": 2, "tp": 2}), ("language", {"cp": 2})]),
    "docs example: language pp 2, vision tp 2": (8, [("vision", {"tp": 2}), ("language", {"pp": 2})]),
    "tp differs, cp 1": (8, [("vision", {"tp": 2}), ("language", {"tp": 4})]),
    "one grid, cp 1": (8, [("vision", {"tp": 2}), ("language", {"tp": 2})]),
}


def global_groups(shapes):
    """mimoplan's reading of which layouts the path without a grid map
    runs: every encoder on the language module's groups, with its tp and
    gtp_remat and its dp*cp ranks, at the language's cp or at cp 1
    (replicated over the language's cp group, as encoders run there: on
    whole samples, base.py:812, before the merged embeddings are split by
    cp at :848); an encoder with expert sizes has the language's (one
    expert grid). The cases here are dense."""
    ltp, lgtp, lcp, ldp, lpp = shapes["language"]
    for tp, gtp, cp, dp, pp in shapes.values():
        if tp != ltp or gtp != lgtp or dp * cp != ldp * lcp or cp not in (1, lcp):
            return False
    return True


def stub_torch():
    torch = module("torch")
    dist = module("torch.distributed")
    torch.distributed = dist
    torch.Tensor = type("Tensor", (), {})
    torch.autograd = types.SimpleNamespace(Function=type("Function", (), {}))
    dist.ProcessGroup = type("ProcessGroup", (), {})
    dist.is_initialized = lambda: False
    dist.get_rank = lambda group=None: 0
    dist.new_subgroups_by_enumeration = lambda ranks, backend=None: (None, None)
    dist.destroy_process_group = lambda pg=None: None


def mimo_decision(base_path):
    """MimoModel.__init__'s statements that build the colocated
    communicators, and _build_colocated_communicators, as a class."""
    tree = ast.parse(open(base_path).read())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "MimoModel")
    methods = {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef)}
    init = methods["__init__"]
    keep = []
    for stmt in init.body:
        src = ast.unparse(stmt)
        if src.startswith(("self.mimo_config =", "self.colocated_comms =", "self.role = RankRole.build")) or (
            isinstance(stmt, ast.If) and "_build_colocated_communicators" in src):
            keep.append(stmt)
    assert len(keep) == 4, [ast.unparse(s) for s in keep]
    first = [s for s in init.body if isinstance(s, ast.Assign) and ast.unparse(s).startswith("modality_names =")]
    decide = ast.FunctionDef(name="decide", args=ast.arguments(
        posonlyargs=[], args=[ast.arg(arg="self"), ast.arg(arg="mimo_config")], kwonlyargs=[],
        kw_defaults=[], defaults=[]), body=first + keep, decorator_list=[], returns=None, type_params=[])
    body = [decide, methods["_build_colocated_communicators"]]
    klass = ast.ClassDef(name="Decision", bases=[], keywords=[], body=body, decorator_list=[], type_params=[])
    mod = ast.Module(body=[klass], type_ignores=[])
    ast.fix_missing_locations(mod)
    lines = sorted({s.lineno for s in keep + first} | {methods["_build_colocated_communicators"].lineno})
    return mod, lines


def layout_text(world, mods):
    out = ["version: 1", f"world_size: {world}", "modules:"]
    for name, sizes in mods:
        extra = "".join(f", {k}: {v}" for k, v in sizes.items())
        out.append(f"  - {{name: {name}, num_ranks: {world}, rank_offset: 0{extra}}}")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--megatron", default="/work/.mirror/NVIDIA+Megatron-LM/repo")
    a = ap.parse_args()
    warnings.simplefilter("ignore")  # absl is not installed: hyper_comm_grid warns
    logging.disable(logging.CRITICAL)
    commit = upstream_stub.head(a.megatron)
    tmp = tempfile.mkdtemp(prefix="mimoplan-colocated-")
    extract(a.megatron, commit, [GRID, ROLE, COMM, BASE], tmp)
    stub_torch()
    for pkg in ["megatron", "megatron.core", "megatron.core.models", "megatron.core.models.mimo",
                "megatron.core.models.mimo.config", "megatron.core.models.mimo.comm"]:
        module(pkg).__path__ = []
    grid_mod = module("megatron.core.hyper_comm_grid", os.path.join(tmp, GRID))
    role = module("megatron.core.models.mimo.config.role", os.path.join(tmp, ROLE))
    comm = module("megatron.core.models.mimo.comm.colocated_communicator", os.path.join(tmp, COMM))
    tree, lines = mimo_decision(os.path.join(tmp, BASE))
    ns = {"RankRole": role.RankRole, "ModuleLayout": role.ModuleLayout,
          "MIMO_LANGUAGE_MODULE_KEY": role.MIMO_LANGUAGE_MODULE_KEY,
          "ColocatedBridgeCommunicator": comm.ColocatedBridgeCommunicator,
          "logger": logging.getLogger("mimo")}
    exec(compile(tree, BASE, "exec"), ns)
    Decision = ns["Decision"]

    cases = []
    for name, (world, mods) in CASES.items():
        os.environ["WORLD_SIZE"] = str(world)
        shapes = {}
        for mod, s in mods:
            tp, gtp, cp, pp = s.get("tp", 1), s.get("gtp_remat", 1), s.get("cp", 1), s.get("pp", 1)
            shapes[mod] = [tp, gtp, cp, world // (tp * gtp * cp * pp), pp]
        grids = {m: grid_mod.HyperCommGrid(shape=sh, dim_names=["tp", "gtp_remat", "cp", "dp", "pp"], rank_offset=0)
                 for m, sh in shapes.items()}
        encoders = {m: None for m in grids if m != role.MIMO_LANGUAGE_MODULE_KEY}
        case = {"name": name, "layout_text": layout_text(world, mods), "shapes": shapes}
        d = Decision()
        try:
            d.decide(types.SimpleNamespace(modality_submodules_spec=encoders, module_to_grid_map=grids))
            case["grid_map_accepts"] = True
            case["grid_map_mode"] = d.role.mode.value
            case["communicators"] = len(d.colocated_comms)
        except ValueError as e:
            case["grid_map_accepts"] = False
            case["grid_map_error"] = str(e)
        legacy = Decision()
        legacy.decide(types.SimpleNamespace(modality_submodules_spec=encoders, module_to_grid_map=None))
        case["no_grid_map_mode"] = legacy.role.mode.value
        case["no_grid_map_communicators"] = len(legacy.colocated_comms)
        case["no_grid_map_single_stage"] = all(
            s.is_first_stage and s.is_last_stage for s in legacy.role.modules.values())
        case["global_groups"] = global_groups(shapes)
        case["no_grid_map_runs"] = case["global_groups"] and case["no_grid_map_single_stage"] and all(
            sh[4] == 1 for sh in shapes.values())
        cases.append(case)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump({"generated_by": "scripts/gen-colocated-fixtures.py", "megatron_lm_commit": commit,
                   "files": [GRID, ROLE, COMM, f"{BASE} (MimoModel.__init__ and _build_colocated_communicators, lines {lines})"],
                   "cases": cases}, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(cases)} cases to {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
