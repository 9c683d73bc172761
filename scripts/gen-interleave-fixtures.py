#!/usr/bin/env python3
"""Runs Megatron-LM's own choice of pipeline schedule and the interleaved
schedule's check of the number of micro-batches, and writes
internal/validate/testdata/interleave-megatron.json, which internal/validate's
TestInterleavedMicrobatchesMatchesMegatron compares with mimoplan.

Upstream's code is never committed: these pieces are read from the
Megatron-LM mirror at COMMIT and run with their own line numbers (so a
failing check names upstream's line):

  megatron/core/pipeline_parallel/schedules.py   get_forward_backward_func
      (which schedule a pp and virtual pipeline size run) and
      forward_backward_pipelining_with_interleaving, run up to the call
      that follows its micro-batch checks (get_pp_rank_microbatches, stubbed
      to stop there)
  megatron/core/model_parallel_config.py         ModelParallelConfig.__post_init__'s
      default of microbatch_group_size_per_vp_stage (the pipeline size)

torch, the process groups and the model are stubs: the checks read only
sizes.

A case is (pp, vpp, M, N): the pipeline size, the virtual pipeline size (1:
none, as Megatron-LM's validate_args reads it), the micro-batches of a step
and microbatch_group_size_per_vp_stage (0: not set, the default). Its
result is the schedule get_forward_backward_func picks and, for the
interleaved one, "" when it passes its checks or the upstream path:line of
the raise that fires.

Usage: scripts/gen-interleave-fixtures.py [--megatron DIR] [--out FILE]
"""

import argparse
import ast
import contextlib
import json
import os
import sys
import traceback
import types
import typing

from upstream_stub import function, show

COMMIT = "d98e8a64ddf34856e74b24714e3bedb2f5a39553"
SCHEDULES = "megatron/core/pipeline_parallel/schedules.py"
CONFIG = "megatron/core/model_parallel_config.py"


class Stop(Exception):
    """Raised where the stubbed get_pp_rank_microbatches is called: the
    micro-batch checks have passed."""


class Module(types.SimpleNamespace):
    """A model chunk: torch.nn.Module's stand-in."""


class Group:
    def __init__(self, size):
        self._size = size

    def size(self):
        return self._size

    def rank(self):
        return 0


class Upstream:
    def __init__(self, mirror, scratch):
        self.scratch = scratch
        text = show(mirror, COMMIT, SCHEDULES)
        self.schedules = self.write(SCHEDULES, text)
        tree = ast.parse(text)
        self.checks = [(n.lineno, n.end_lineno) for n in ast.walk(tree) if isinstance(n, (ast.Raise, ast.Assert))]
        keep = [function(tree, "get_forward_backward_func"), function(tree, "forward_backward_pipelining_with_interleaving")]
        torch = types.SimpleNamespace(
            nn=types.SimpleNamespace(Module=Module), int="int", zeros=lambda *a, **k: 0, Tensor=object, device=object)
        ps = types.SimpleNamespace(get_pipeline_model_parallel_world_size=lambda: self.pp,
                                   get_virtual_pipeline_model_parallel_world_size=lambda: self.vpp)

        def stop(*a, **k):
            raise Stop()

        self.glob = {
            "torch": torch, "contextlib": contextlib, "parallel_state": ps,
            "Union": typing.Union, "Optional": typing.Optional, "Iterator": typing.Iterator, "List": typing.List,
            "Callable": typing.Callable, "Dict": typing.Dict, "Any": typing.Any,
            "P2PCommunicator": object, "ProcessGroupCollection": object,
            "MultiModuleProcessGroupCollection": type("MultiModuleProcessGroupCollection", (), {}),
            "forward_backward_no_pipelining": "forward_backward_no_pipelining",
            "forward_backward_pipelining_without_interleaving": "forward_backward_pipelining_without_interleaving",
            "get_model_config": lambda m: m.config, "get_model_type": lambda m: "encoder_or_decoder",
            "paged_stash_reset": lambda **k: None, "get_pp_rank_microbatches": stop,
        }
        exec(compile(ast.Module(body=keep, type_ignores=[]), self.schedules, "exec"), self.glob)

        text = show(mirror, COMMIT, CONFIG)
        self.config = self.write(CONFIG, text)
        post = function(ast.parse(text), "__post_init__", cls="ModelParallelConfig")
        default = [n for n in post.body if "microbatch_group_size_per_vp_stage is None" in (ast.get_source_segment(text, n) or "")]
        if len(default) != 1:
            sys.exit(f"{CONFIG}: no single default of microbatch_group_size_per_vp_stage")
        self.default = compile(ast.Module(body=default, type_ignores=[]), self.config, "exec")

    def write(self, rel, text):
        path = os.path.join(self.scratch, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        return path

    def run(self, pp, vpp, m, n):
        """The schedule and, for the interleaved one, the failing line."""
        self.pp, self.vpp = pp, (vpp if vpp > 1 else None)
        schedule = self.glob["get_forward_backward_func"]()
        name = schedule if isinstance(schedule, str) else schedule.__name__
        if name != "forward_backward_pipelining_with_interleaving":
            return name, ""
        cfg = types.SimpleNamespace(microbatch_group_size_per_vp_stage=n or None, pipeline_model_parallel_size=pp)
        exec(self.default, {"self": cfg})
        config = types.SimpleNamespace(
            microbatch_group_size_per_vp_stage=cfg.microbatch_group_size_per_vp_stage,
            overlap_p2p_comm=False, batch_p2p_comm=True, finalize_model_grads_func=None, timers=None,
            no_sync_func=None, grad_sync_func=None, param_sync_func=None, moe_paged_stash=False,
            hidden_size=64, sequence_parallel=False, overlap_moe_expert_parallel_comm=False, virtual_pipeline_model_parallel_size=self.vpp)
        chunks = [Module(config=config) for _ in range(vpp)]
        p2p = types.SimpleNamespace(config=config, pp_group=Group(pp))
        pgc = types.SimpleNamespace(tp=Group(1), cp=Group(1))
        try:
            schedule(forward_step_func=None, data_iterator=[None] * vpp, model=chunks, num_microbatches=m,
                     seq_length=8, micro_batch_size=1, p2p_communicator=p2p, pg_collection=pgc)
        except Stop:
            return name, ""
        except Exception as e:  # an upstream check fired: name its line
            return name, self.failing_line(e)
        sys.exit(f"pp {pp} vpp {vpp} M {m} N {n}: the schedule ran past its checks without reaching the stub")

    def failing_line(self, exc):
        """The line of upstream's raise or assert that fired; anything else
        (a stub short of an attribute) is the script's own error."""
        frames = list(traceback.walk_tb(exc.__traceback__))
        frame, lineno = frames[-1]
        if frame.f_code.co_filename == self.schedules:
            for first, last in self.checks:
                if first <= lineno <= last:
                    return f"{SCHEDULES}:{first}"
        raise exc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--megatron", default="/work/.mirror/NVIDIA+Megatron-LM/repo")
    ap.add_argument("--out", default="internal/validate/testdata/interleave-megatron.json")
    opt = ap.parse_args()
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        up = Upstream(opt.megatron, scratch)
        cases = []
        for pp in range(1, 7):
            for vpp in (1, 2, 3):
                for m in range(1, 19):
                    for n in range(0, 9):
                        schedule, error = up.run(pp, vpp, m, n)
                        cases.append({"pp": pp, "vpp": vpp, "m": m, "n": n, "schedule": schedule, "error": error})
    # One case a line: [pp, vpp, M, N, schedule, error].
    cols = ["pp", "vpp", "m", "n", "schedule", "error"]
    with open(opt.out, "w") as f:
        f.write('{"megatron_commit": "%s",\n "generator": "scripts/gen-interleave-fixtures.py",\n' % COMMIT)
        f.write(' "columns": %s,\n "cases": [\n' % json.dumps(cols))
        f.write(",\n".join("  " + json.dumps([c[k] for k in cols]) for c in cases))
        f.write("\n ]}\n")
    errors = {}
    for c in cases:
        errors[c["error"]] = errors.get(c["error"], 0) + 1
    print(f"wrote {opt.out}: {len(cases)} cases {errors}")


if __name__ == "__main__":
    main()
