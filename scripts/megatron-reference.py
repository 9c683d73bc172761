#!/usr/bin/env python3
"""The reference of docs/performance.md: Megatron-LM's own HyperCommGrid
enumerates every group of a layout and json.dump writes them to stdout, in
the document `mimoplan render --format json` writes (same keys, same order,
compact separators), so that the two outputs can be compared byte for byte.

Upstream's code is never committed: megatron/core/hyper_comm_grid.py is
extracted from the Megatron-LM mirror at run time into a temporary
directory and imported from there. torch is only imported by that file,
never used by the enumeration (get_rank_enum is numpy), so torch and
torch.distributed are stubbed; WORLD_SIZE is set as its mock tests do.

stdout is Python's default: with PYTHONUNBUFFERED unset, a file or
/dev/null gets an 8 KiB block buffer, and json.dump writes its chunks
into it. (With PYTHONUNBUFFERED=1 every chunk is a write(2) and the run is
about 3x slower: keep it unset when timing.)

Usage:
  scripts/megatron-reference.py [--megatron GITDIR] --name NAME --world N \\
      --module NAME:OFFSET:NUM_RANKS:TP:CP:PP:EP [--module ...]
gtp_remat, expt_tp and expt_gtp_remat are 1, as in the scale layouts.
Needs numpy (Debian: python3-numpy; run with /usr/bin/python3).
"""

import argparse
import ast
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import types

MIRROR = "/work/.mirror/NVIDIA+Megatron-LM/repo"

# ProcessGroupCollection's groups in mimoplan's order: name, dims, view.
KINDS = [
    ("tp", ["tp"], None),
    ("cp", ["cp"], None),
    ("pp", ["pp"], None),
    ("dp", ["dp"], None),
    ("dp_cp", ["dp", "cp"], None),
    ("dp_cp_gtp_remat", ["gtp_remat", "dp", "cp"], None),
    ("gtp_remat", ["gtp_remat"], None),
    ("tp_cp", ["tp", "cp"], None),
    ("tp_dp", ["tp", "gtp_remat", "dp"], None),
    ("tp_dp_cp", ["tp", "gtp_remat", "dp", "cp"], None),
    ("mp", ["tp", "gtp_remat", "pp"], None),
    ("intra_dist_opt", ["tp", "gtp_remat", "cp", "dp", "pp"], None),
    ("ep", ["ep"], "expert"),
    ("expt_tp", ["expt_tp"], "expert"),
    ("expt_gtp_remat", ["expt_gtp_remat"], "expert"),
    ("expt_dp", ["expt_dp"], "expert"),
    ("expt_dp_gtp_remat", ["expt_gtp_remat", "expt_dp"], "expert"),
    ("tp_ep", ["expt_tp", "ep"], "expert"),
    ("tp_ep_pp", ["expt_tp", "ep", "pp"], "expert"),
    ("tp_ep_pp_with_egtp_remat", ["expt_tp", "ep", "expt_gtp_remat", "pp"], "expert"),
]


def stub_torch():
    """A torch package whose distributed module has what the file imports."""
    torch = types.ModuleType("torch")
    dist = types.ModuleType("torch.distributed")
    dist.is_initialized = lambda: False
    dist.ProcessGroup = object
    torch.distributed = dist
    sys.modules["torch"] = torch
    sys.modules["torch.distributed"] = dist


def show(mirror, path):
    return subprocess.run(["git", "-C", mirror, "show", "HEAD:" + path],
                          check=True, capture_output=True).stdout


def embedding_functions(mirror):
    """default_embedding_ranks and default_position_embedding_ranks, taken
    out of parallel_state.py by its syntax tree (the file imports most of
    Megatron and torch)."""
    tree = ast.parse(show(mirror, "megatron/core/parallel_state.py"))
    want = {"default_embedding_ranks", "default_position_embedding_ranks"}
    body = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in want]
    ns = {}
    exec(compile(ast.Module(body=body, type_ignores=[]), "parallel_state.py", "exec"), ns)
    return ns["default_embedding_ranks"], ns["default_position_embedding_ranks"]


def load_grid(mirror):
    src = show(mirror, "megatron/core/hyper_comm_grid.py")
    commit = subprocess.run(["git", "-C", mirror, "rev-parse", "HEAD"],
                            check=True, capture_output=True, text=True).stdout.strip()
    tmp = tempfile.mkdtemp(prefix="megatron-ref-")
    path = os.path.join(tmp, "hyper_comm_grid.py")
    with open(path, "wb") as f:
        f.write(src)
    stub_torch()
    spec = importlib.util.spec_from_file_location("hyper_comm_grid", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.HyperCommGrid, commit


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--megatron", default=MIRROR)
    ap.add_argument("--name", required=True)
    ap.add_argument("--world", type=int, required=True)
    ap.add_argument("--mode", default="non_colocated")
    ap.add_argument("--module", action="append", required=True)
    a = ap.parse_args()
    os.environ["WORLD_SIZE"] = str(a.world)
    import warnings
    warnings.simplefilter("ignore")  # absl is not installed: the file warns
    HyperCommGrid, commit = load_grid(a.megatron)
    embd_ranks, pos_embd_ranks = embedding_functions(a.megatron)
    print(f"megatron-reference: hyper_comm_grid.py at {commit}", file=sys.stderr)

    modules = []
    for spec in a.module:
        name, offset, num, tp, cp, pp, ep = spec.split(":")
        offset, num, tp, cp, pp, ep = map(int, (offset, num, tp, cp, pp, ep))
        gtp = etp = egtp = 1
        dp, edp = num // (tp * gtp * cp * pp), num // (etp * ep * egtp * pp)
        grid = HyperCommGrid([tp, gtp, cp, dp, pp], ["tp", "gtp_remat", "cp", "dp", "pp"], rank_offset=offset)
        grid.register_view("expert", [etp, ep, egtp, edp, pp],
                           ["expt_tp", "ep", "expt_gtp_remat", "expt_dp", "pp"], shared_dims=["pp"])
        groups = {}
        for kind, dims, view in KINDS:
            groups[kind] = grid.get_rank_enum(dims, view=view)
        if name == "language":
            pp_groups = groups["pp"]
            groups["embd"] = [embd_ranks(g) for g in pp_groups]
            groups["pos_embd"] = [pos_embd_ranks(g) for g in pp_groups]
        modules.append({
            "name": name, "rank_offset": offset, "num_ranks": num,
            "tp": tp, "gtp_remat": gtp, "cp": cp, "pp": pp, "dp": dp,
            "ep": ep, "expt_tp": etp, "expt_gtp_remat": egtp, "expt_dp": edp,
            "groups": groups,
        })
    doc = {"version": 1, "name": a.name, "world_size": a.world, "mode": a.mode, "modules": modules}
    json.dump(doc, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
