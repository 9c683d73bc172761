#!/usr/bin/env python3
"""Runs Megatron-Bridge's own parallelism config finalize() AS IT WAS AT
the commits of internal/upstream's Bridge changes (PR #2869, #4071, #4485)
on layouts pinned to those versions, and records whether Bridge accepted
each; for an accepted one also the Python `mimoplan launch-plan --format
bridge` printed (the one finalize() ran). internal/launch's
TestBridgeVersionFixture checks that mimoplan's validate accepts exactly
the layouts Bridge accepted at each version.

Upstream's code is never committed: the config module is extracted from
the Megatron-Bridge mirror at each commit (src/megatron/bridge/models/mimo/
mimo_config.py with class MimoParallelismConfig before PR #3340 renamed it
megatron_mimo/megatron_mimo_config.py, MegatronMIMOParallelismConfig), its
one import, MIMO_LANGUAGE_MODULE_KEY, from Megatron-LM's role.py at the
Megatron-LM mirror's HEAD; torch is a stub. For a layout mimoplan refuses,
the config is built from the layout's sizes the way --format bridge writes
it (every size as a keyword, expert_model_parallel_size only where ep is
above 1) so that Bridge's own refusal is on record.

Usage: scripts/gen-bridge-version-fixtures.py [--bridge DIR] [--megatron DIR] [--mimoplan BIN]
Writes internal/launch/testdata/megatron-bridge/versions.json.
"""

import argparse
import json
import os
import subprocess
import tempfile

import upstream_stub
from upstream_stub import extract, module

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "internal", "launch", "testdata", "megatron-bridge", "versions.json")
ROLE = "megatron/core/models/mimo/config/role.py"
NEW = ("src/megatron/bridge/models/megatron_mimo/megatron_mimo_config.py", "MegatronMIMOParallelismConfig")
OLD = ("src/megatron/bridge/models/mimo/mimo_config.py", "MimoParallelismConfig")

# PR -> (merge commit in the Bridge mirror, config file and class there).
VERSIONS = {
    "2869": ("0bf1333ce040e29da983bfa7dfe15ac59a5e0c30", OLD),
    "4071": ("4b68d3e5928e5a14bc705e267a08c4cc000894b7", NEW),
    "4485": ("fc35d9b08a6c04a2f269038da4633e2cc9a1ae26", NEW),
}

# name -> (world size, [(module, num_ranks, sizes)]), each checked at every version.
LAYOUTS = {
    "encoder dp below language dp": (8, [("vision", 4, {"tp": 2}), ("language", 4, {})]),
    "encoder dp above language dp": (8, [("vision", 4, {}), ("language", 4, {"tp": 2})]),
    "equal dp, three modules": (12, [("vision", 4, {"tp": 2}), ("audio", 2, {}), ("language", 6, {"tp": 2, "pp": 3})]),
    "tp not a power of two": (12, [("vision", 6, {"tp": 3}), ("language", 6, {"tp": 3})]),
    "language ep": (8, [("vision", 4, {}), ("language", 4, {"ep": 2})]),
    "language expt_tp": (8, [("vision", 4, {}), ("language", 4, {"tp": 2, "expt_tp": 2})]),
    "language ep and expt_tp": (24, [("vision", 8, {"tp": 2}), ("language", 16, {"tp": 2, "ep": 4, "expt_tp": 2})]),
    "encoder ep": (8, [("vision", 4, {"ep": 2}), ("language", 4, {})]),
}


def layout_text(pr, world, mods):
    out = ["version: 1", "target: megatron-bridge", f"target_version: {pr}", f"world_size: {world}", "modules:"]
    off = 0
    for name, n, sizes in mods:
        extra = "".join(f", {k}: {v}" for k, v in sizes.items())
        out.append(f"  - {{name: {name}, num_ranks: {n}, rank_offset: {off}{extra}}}")
        off += n
    return "\n".join(out) + "\n"


def direct(cfg_mod, cls, world, mods):
    """The config --format bridge would write, built from the sizes."""
    ps = {}
    off = 0
    for name, n, s in mods:
        tp, pp, cp = s.get("tp", 1), s.get("pp", 1), s.get("cp", 1)
        kw = dict(tensor_model_parallel_size=tp, pipeline_model_parallel_size=pp, context_parallel_size=cp,
                  expert_tensor_parallel_size=s.get("expt_tp", 1), data_parallel_size=n // (tp * pp * cp), rank_offset=off)
        if s.get("ep", 1) > 1:
            kw["expert_model_parallel_size"] = s["ep"]
        ps[name] = cfg_mod.ModuleParallelismConfig(**kw)
        off += n
    getattr(cfg_mod, cls)(module_parallelisms=ps).finalize(world)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bridge", default="/work/.mirror/NVIDIA-NeMo+Megatron-Bridge/repo")
    ap.add_argument("--megatron", default="/work/.mirror/NVIDIA+Megatron-LM/repo")
    ap.add_argument("--mimoplan", default=None)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="mimoplan-bridge-versions-")
    megatron_commit = upstream_stub.head(a.megatron)
    extract(a.megatron, megatron_commit, [ROLE], tmp)
    upstream_stub.stub("torch", "torch.distributed")
    for pkg in ["megatron", "megatron.core", "megatron.core.models", "megatron.core.models.mimo",
                "megatron.core.models.mimo.config", "megatron.bridge", "megatron.bridge.models",
                "megatron.bridge.models.megatron_mimo", "megatron.bridge.models.mimo"]:
        module(pkg).__path__ = []
    module("megatron.core.hyper_comm_grid", src="HyperCommGrid = object\n")
    module("megatron.core.models.mimo.config.role", os.path.join(tmp, ROLE))
    mimoplan = a.mimoplan
    if mimoplan is None:
        mimoplan = os.path.join(tmp, "mimoplan")
        subprocess.check_call(["go", "build", "-o", mimoplan, "./cmd/mimoplan"], cwd=ROOT)

    cases = []
    for pr, (commit, (path, cls)) in VERSIONS.items():
        d = os.path.join(tmp, pr)
        extract(a.bridge, commit, [path], d)
        cfg_mod = module("bridge_config_" + pr, os.path.join(d, path))
        # --format bridge imports the newest names; at an older commit they
        # are this module under its own class name.
        alias = module("megatron.bridge.models.megatron_mimo.megatron_mimo_config")
        alias.ModuleParallelismConfig = cfg_mod.ModuleParallelismConfig
        alias.MegatronMIMOParallelismConfig = getattr(cfg_mod, cls)
        for name, (world, mods) in LAYOUTS.items():
            text = layout_text(pr, world, mods)
            lp = os.path.join(tmp, "layout.yaml")
            with open(lp, "w") as f:
                f.write(text)
            r = subprocess.run([mimoplan, "launch-plan", lp, "--format", "bridge"], capture_output=True, text=True)
            case = {"name": name, "pr": pr, "bridge_commit": commit, "bridge_file": path, "layout_text": text}
            try:
                if r.returncode == 0:
                    ns = {"__name__": "fixture"}
                    exec(compile(r.stdout, "bridge.py", "exec"), ns)
                    ns["parallelism_config"]().finalize(ns["WORLD_SIZE"])
                    case["python"] = r.stdout
                else:
                    direct(cfg_mod, cls, world, mods)
                case["bridge_accepts"] = True
            except (ValueError, TypeError) as e:
                case["bridge_accepts"] = False
                case["bridge_error"] = f"{type(e).__name__}: {e}"
            cases.append(case)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump({"generated_by": "scripts/gen-bridge-version-fixtures.py", "megatron_lm_mirror": megatron_commit,
                   "cases": cases}, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(cases)} cases to {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
