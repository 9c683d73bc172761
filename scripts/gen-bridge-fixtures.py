#!/usr/bin/env python3
"""Runs Megatron-Bridge's own MegatronMIMOParallelismConfig.finalize() on
what `mimoplan launch-plan --format bridge` prints, and on the MIMO_*
environment through the llava examples' own _build_parallelism_config,
and writes the fixture internal/launch's tests compare against.

Upstream's code is never committed: megatron_mimo_config.py is extracted
from the Megatron-Bridge mirror at its commit (its one import,
MIMO_LANGUAGE_MODULE_KEY, from Megatron-LM's role.py at the Megatron-LM
mirror's commit), and the llava examples' _build_parallelism_config is
taken out of examples/megatron_mimo/llava/megatron_mimo_training_llava.py
(two modules) and megatron_mimo_training_llava_audio.py (three) by its
syntax tree. torch is a stub (role.py imports torch.distributed; nothing
here calls it).

Usage: scripts/gen-bridge-fixtures.py [--bridge DIR] [--megatron DIR] [--mimoplan BIN]
Writes internal/launch/testdata/megatron-bridge/finalize.json.
"""

import argparse
import ast
import dataclasses
import json
import os
import subprocess
import sys
import tempfile

import upstream_stub
from upstream_stub import module

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "internal", "launch", "testdata", "megatron-bridge", "finalize.json")

CONFIG = "src/megatron/bridge/models/megatron_mimo/megatron_mimo_config.py"
LLAVA = "examples/megatron_mimo/llava/megatron_mimo_training_llava.py"
LLAVA_AUDIO = "examples/megatron_mimo/llava/megatron_mimo_training_llava_audio.py"
ROLE = "megatron/core/models/mimo/config/role.py"

LAYOUTS = {
    "llava 8 GPUs": """version: 1
name: llava-bridge
target: megatron-bridge
world_size: 8
modules:
  - {name: language, num_ranks: 4, tp: 4, rank_offset: 0}
  - {name: vision, num_ranks: 4, tp: 4, rank_offset: 4}
""",
    "vision first, dp fan-in": """version: 1
name: vision-first
target: megatron-bridge
world_size: 16
modules:
  - {name: vision, num_ranks: 4, tp: 1, rank_offset: 0}
  - {name: language, num_ranks: 12, tp: 2, pp: 3, rank_offset: 4}
""",
    "llava audio": """version: 1
name: llava-audio
target: megatron-bridge
world_size: 8
modules:
  - {name: language, num_ranks: 4, tp: 4}
  - {name: vision, num_ranks: 2, tp: 2, rank_offset: 4}
  - {name: audio, num_ranks: 2, tp: 2, rank_offset: 6}
""",
    "MoE language": """version: 1
name: moe-language
target: megatron-bridge
world_size: 24
batch: {micro_batch_size: 8, global_batch_size: 64}
modules:
  - {name: vision, num_ranks: 8, tp: 2}
  - {name: language, num_ranks: 16, tp: 2, ep: 4, expt_tp: 2, rank_offset: 8}
""",
}


def extract(mirror, files, dest):
    commit = upstream_stub.head(mirror)
    upstream_stub.extract(mirror, commit, files, dest)
    return commit


def take(path, name):
    """The source of one top-level function of a file."""
    src = open(path).read()
    for node in ast.parse(src).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return ast.get_source_segment(src, node)
    sys.exit(f"{path}: upstream no longer defines {name}")


def summary(cfg):
    out = {}
    for name, p in cfg.module_parallelisms.items():
        d = dataclasses.asdict(p)
        d["total_ranks"] = p.total_ranks
        d["expert_data_parallel_size"] = p.expert_data_parallel_size
        out[name] = d
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bridge", default="/work/.mirror/NVIDIA-NeMo+Megatron-Bridge/repo")
    ap.add_argument("--megatron", default="/work/.mirror/NVIDIA+Megatron-LM/repo")
    ap.add_argument("--mimoplan", default=None)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="mimoplan-bridge-")
    bridge_commit = extract(a.bridge, [CONFIG, LLAVA, LLAVA_AUDIO], tmp)
    megatron_commit = extract(a.megatron, [ROLE], tmp)
    upstream_stub.stub("torch", "torch.distributed")
    for pkg in ["megatron", "megatron.core", "megatron.core.models", "megatron.core.models.mimo",
                "megatron.core.models.mimo.config", "megatron.bridge", "megatron.bridge.models",
                "megatron.bridge.models.megatron_mimo"]:
        module(pkg).__path__ = []
    module("megatron.core.hyper_comm_grid", src="HyperCommGrid = object\n")
    module("megatron.core.models.mimo.config.role", os.path.join(tmp, ROLE))
    cfg_mod = module("megatron.bridge.models.megatron_mimo.megatron_mimo_config", os.path.join(tmp, CONFIG))

    mimoplan = a.mimoplan
    if mimoplan is None:
        mimoplan = os.path.join(tmp, "mimoplan")
        subprocess.check_call(["go", "build", "-o", mimoplan, "./cmd/mimoplan"], cwd=ROOT)

    build = {}
    for n, f in [(2, LLAVA), (3, LLAVA_AUDIO)]:
        ns = {"os": os, "MegatronMIMOParallelismConfig": cfg_mod.MegatronMIMOParallelismConfig,
              "ModuleParallelismConfig": cfg_mod.ModuleParallelismConfig}
        exec(take(os.path.join(tmp, f), "_build_parallelism_config"), ns)
        build[n] = (f, ns["_build_parallelism_config"])

    cases = []
    for name, text in LAYOUTS.items():
        path = os.path.join(tmp, "layout.yaml")
        with open(path, "w") as f:
            f.write(text)
        r = subprocess.run([mimoplan, "launch-plan", path, "--format", "bridge"], capture_output=True, text=True)
        if r.returncode:
            sys.exit(f"{name}: mimoplan: {r.stderr}")
        ns = {"__name__": "fixture"}
        exec(compile(r.stdout, "bridge.py", "exec"), ns)
        cfg = ns["parallelism_config"]()
        cfg.finalize(ns["WORLD_SIZE"])  # Megatron-Bridge's own checks
        case = {"name": name, "layout_text": text, "python": r.stdout, "world_size": ns["WORLD_SIZE"],
                "finalized": summary(cfg), "env": ns["MIMO_ENV"]}
        # The MIMO_* environment through the llava example's own reader.
        mods = cfg.module_parallelisms
        if set(mods) in ({"language", "vision"}, {"language", "vision", "audio"}):
            f, fn = build[len(mods)]
            saved = dict(os.environ)
            os.environ.update(ns["MIMO_ENV"])
            try:
                env_cfg = fn()
                env_cfg.finalize(ns["WORLD_SIZE"])
                case["llava"] = {"example": f, "finalized": summary(env_cfg)}
            except ValueError as e:
                case["llava"] = {"example": f, "error": str(e)}
            finally:
                os.environ.clear()
                os.environ.update(saved)
        cases.append(case)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump({"generated_by": "scripts/gen-bridge-fixtures.py", "megatron_bridge_mirror": bridge_commit,
                   "megatron_lm_mirror": megatron_commit, "cases": cases}, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(cases)} cases to {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
