#!/usr/bin/env python3
"""Runs the code that Megatron-LM's MIMO example and Megatron-Bridge's MIMO
training reach with a virtual pipeline on the language module, and writes
internal/validate/testdata/mimo-vpp-megatron.json, which internal/validate's
TestMIMOVPPMatchesMegatron compares with the rule mimo-vpp-unsupported.

Upstream's code is never committed: megatron/ and examples/mimo are
extracted from the Megatron-LM mirror at COMMIT (--extract, here) into an
ignored folder that the device tool carries, and run there with real torch
(--run; no GPU is used: what runs is argument validation and arithmetic).
Nothing is stubbed unless it is missing from the machine: a case that fails
to import retries with the missing package stubbed, and the fixture lists
what was stubbed.

Cases:

  lm-*     examples/mimo/pretrain_mimo.py's _parse_and_validate (its own
           parser, Megatron-LM's parse_args and validate_args, the grid
           check of examples/mimo/training/args.py) on the argv a 2-rank
           language-only launch gives (--llm-only --llm-pp 2), with the
           language model's --hybrid-layer-pattern (the example's only
           model provider, nemotron-moe-vlm, builds a HybridModel from it)
           and with the virtual pipeline mimoplan writes
           (--num-virtual-stages-per-pipeline-rank,
           --pipeline-model-parallel-layout) or the one the pattern's '|'
           segments give. Result: "ok" with the virtual pipeline size
           validate_args derives, or the raise (exception, upstream
           path:line, message).
  core-*   what a language TransformerBlock built without a vp_stage (as
           MimoModelBuilder.build_model, examples/mimo/training/builder.py,
           and Bridge's MegatronMIMOProvider.provide leave it) computes with
           a TransformerConfig of pp 2 and vpp 2: get_num_layers_to_build
           and get_transformer_layer_offset for pp rank 0.
  schedule get_forward_backward_func at pp 2, vpp 2, with and without the
           MultiModuleProcessGroupCollection that MIMO training passes.

Usage:
  scripts/gen-mimo-vpp-fixtures.py --extract DIR [--mirror MIRROR]
  scripts/gen-mimo-vpp-fixtures.py --run DIR --out FILE      (on the device)
  scripts/gen-mimo-vpp-fixtures.py --run DIR --only CASE,...  (merges those)

The split cases (lm-layout-pp-stages, lm-account-*, lm-first-last,
lm-layout-no-pattern) ran on CPU with --only under Python 3.12 without
torch: torch, numpy, packaging, triton and typing_extensions are stubbed
(listed per case), which the argument code these cases reach never
computes with; lm-no-vpp and lm-layout, rerun that way, gave the device's
results.
"""

import argparse
import importlib.abc
import importlib.machinery
import json
import os
import subprocess
import sys
import traceback
import types

COMMIT = "d98e8a64ddf34856e74b24714e3bedb2f5a39553"
MIRROR = "/work/.mirror/NVIDIA+Megatron-LM/repo"

# A 2-rank language-only launch of the example: its grid and the stock
# arguments validate_args and the example's checks need.
BASE = [
    "--llm-only", "--llm-offset", "0", "--llm-tp", "1", "--llm-pp", "2", "--llm-dp", "1",
    "--use-distributed-optimizer", "--calculate-per-token-loss",
    "--micro-batch-size", "1", "--global-batch-size", "8",
    "--seq-length", "64", "--max-position-embeddings", "64",
    "--hidden-size", "64", "--num-attention-heads", "4", "--vocab-size", "128",
    "--bf16", "--train-iters", "1",
]
PATTERN = ["--hybrid-layer-pattern", "M*M*M*M*"]

LM_CASES = {
    "lm-no-vpp": PATTERN,
    "lm-vpp-flag": PATTERN + ["--num-virtual-stages-per-pipeline-rank", "2"],
    "lm-layout": PATTERN + ["--pipeline-model-parallel-layout", "Et*2|t*2|t*2|t*2L"],
    "lm-pipe-segments": ["--hybrid-layer-pattern", "M*|M*|M*|M*"],
    "lm-vpp-flag-no-pattern": ["--num-layers", "8", "--num-virtual-stages-per-pipeline-rank", "2"],
    # The split keys beside the pattern, no virtual pipeline (rule
    # mimo-split-unsupported).
    "lm-layout-pp-stages": PATTERN + ["--pipeline-model-parallel-layout", "Etttt|ttttL"],
    "lm-account-embedding": PATTERN + ["--account-for-embedding-in-pipeline-split"],
    "lm-account-loss": PATTERN + ["--account-for-loss-in-pipeline-split"],
    "lm-first-last": PATTERN + ["--decoder-first-pipeline-num-layers", "3",
                                "--decoder-last-pipeline-num-layers", "5"],
    "lm-layout-no-pattern": ["--num-layers", "8", "--pipeline-model-parallel-layout", "Etttt|ttttL"],
}
CORE_CASES = ["core-vpp", "core-no-vpp"]
CASES = list(LM_CASES) + CORE_CASES + ["schedule"]


STUB_TYPES = {n: type(n, (), {"__init__": lambda self, *a, **k: None})
              for n in ("dtype", "device", "Tensor", "Size")}


class Stub(types.ModuleType):
    """A missing package: every attribute another stub."""

    __path__ = []

    def __getattr__(self, name):
        if name == "__version__":
            return "0.0.0"
        if name.startswith("__"):
            raise AttributeError(name)
        if name in STUB_TYPES:
            # isinstance(x, torch.dtype) and the like need a type.
            return STUB_TYPES[name]
        return Stub(self.__name__ + "." + name)

    def __call__(self, *a, **k):
        return Stub(self.__name__ + "()")

    def __mro_entries__(self, bases):
        return (type(self.__name__.rsplit(".", 1)[-1], (), {}),)

    def __or__(self, other):
        return self

    __ror__ = __or__

    def __iter__(self):
        return iter(())

    def _same(self, *a):
        return self

    __ror__ = __and__ = __rand__ = __mul__ = __rmul__ = __add__ = __radd__ = _same
    __sub__ = __rsub__ = __truediv__ = __floordiv__ = __getitem__ = _same

    def __bool__(self):
        return False

    # A stubbed version compares as the newest one.
    def __ge__(self, other):
        return True

    __gt__ = __ge__

    def __lt__(self, other):
        return False

    __le__ = __lt__


class StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, names):
        self.names = set(names)

    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in self.names:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        return Stub(spec.name)

    def exec_module(self, module):
        pass


def where(tb, root):
    """The innermost frame of the traceback in upstream's tree."""
    last = None
    for f in traceback.extract_tb(tb):
        if os.path.abspath(f.filename).startswith(root + os.sep):
            last = f"{os.path.relpath(f.filename, root)}:{f.lineno}"
    return last


def run_lm(name):
    import examples.mimo.pretrain_mimo as p

    sys.argv = ["pretrain_mimo.py"] + BASE + LM_CASES[name]
    args = p._parse_and_validate()
    return {"virtual_pipeline_model_parallel_size": args.virtual_pipeline_model_parallel_size,
            "pipeline_model_parallel_size": args.pipeline_model_parallel_size,
            "num_layers": args.num_layers}


def core_config(vpp):
    import torch
    from megatron.core.transformer.transformer_config import TransformerConfig

    return TransformerConfig(num_layers=8, hidden_size=64, num_attention_heads=4,
                             pipeline_model_parallel_size=2, virtual_pipeline_model_parallel_size=vpp,
                             pipeline_dtype=torch.bfloat16, bf16=True)


def run_core(name):
    from megatron.core.transformer.transformer_block import get_num_layers_to_build
    from megatron.core.transformer.transformer_layer import get_transformer_layer_offset

    cfg = core_config(2 if name == "core-vpp" else None)
    out = {"num_layers_to_build": get_num_layers_to_build(cfg, vp_stage=None, pp_rank=0)}
    out["layer_offset"] = get_transformer_layer_offset(cfg, vp_stage=None, pp_rank=0)
    return out


def run_schedule(_):
    from megatron.core.pipeline_parallel import schedules
    from megatron.core.process_groups_config import MultiModuleProcessGroupCollection

    multi = object.__new__(MultiModuleProcessGroupCollection)
    return {
        "single_module": schedules.get_forward_backward_func(pp_size=2, vp_size=2).__name__,
        "multi_module": schedules.get_forward_backward_func(
            pp_size=2, vp_size=2, schedule_pg_collection=multi).__name__,
    }


def one_case(root, name, stubs):
    """Runs one case in this (fresh) process; prints its result as JSON."""
    sys.path.insert(0, root)
    os.environ.update(RANK="0", WORLD_SIZE="2", LOCAL_RANK="0")
    if stubs:
        sys.meta_path.append(StubFinder(stubs))
    fn = run_lm if name.startswith("lm-") else run_core if name.startswith("core-") else run_schedule
    try:
        res = {"outcome": "ok", "result": fn(name)}
    except ModuleNotFoundError as e:
        res = {"outcome": "missing", "module": e.name}
    except BaseException as e:  # SystemExit from argparse included
        res = {"outcome": "raises", "exception": type(e).__name__,
               "where": where(e.__traceback__, root),
               "message": " ".join(str(e).split())[:400]}
    print("RESULT " + json.dumps(res))


def run(root, out, only):
    root = os.path.abspath(root)
    results = {}
    for name in only or CASES:
        stubs = []
        while True:
            p = subprocess.run([sys.executable, __file__, "--case", name, "--root", root, "--stubs", ",".join(stubs)],
                               capture_output=True, text=True, timeout=240)
            lines = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
            if not lines:
                res = {"outcome": "crashed", "stderr": p.stderr[-2000:]}
                break
            res = json.loads(lines[-1][len("RESULT "):])
            if res["outcome"] != "missing" or res["module"] is None or len(stubs) > 20:
                break
            stubs.append(res["module"].split(".")[0])
        res["stubbed"] = stubs
        if name in LM_CASES:
            res["argv"] = LM_CASES[name]
        results[name] = res
        print(name, json.dumps(res), flush=True)
    commit = open(os.path.join(root, "COMMIT")).read().strip()
    if only:
        # Merged into the fixture; each case's "stubbed" and "python" say
        # how it ran.
        with open(out) as f:
            doc = json.load(f)
        assert doc["megatron_commit"] == commit and doc["base_argv"] == BASE
        for name in results:
            results[name]["python"] = sys.version.split()[0]
        doc["cases"].update(results)
    else:
        import torch
        doc = {
            "megatron_commit": commit,
            "torch": torch.__version__,
            "base_argv": BASE,
            "cases": results,
        }
    with open(out, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")


def extract(mirror, dest):
    os.makedirs(dest, exist_ok=True)
    data = subprocess.check_output(["git", "-C", mirror, "archive", COMMIT, "megatron", "examples/mimo"])
    subprocess.run(["tar", "-x", "-C", dest], input=data, check=True)
    with open(os.path.join(dest, "examples", "__init__.py"), "a"):
        pass
    with open(os.path.join(dest, "COMMIT"), "w") as f:
        f.write(COMMIT + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--extract")
    ap.add_argument("--mirror", default=MIRROR)
    ap.add_argument("--run")
    ap.add_argument("--out", default="internal/validate/testdata/mimo-vpp-megatron.json")
    ap.add_argument("--case")
    ap.add_argument("--root")
    ap.add_argument("--stubs", default="")
    ap.add_argument("--only", default="", help="comma-separated cases, merged into --out")
    a = ap.parse_args()
    if a.case:
        one_case(a.root, a.case, [s for s in a.stubs.split(",") if s])
    elif a.extract:
        extract(a.mirror, a.extract)
    elif a.run:
        run(a.run, a.out, [c for c in a.only.split(",") if c])
    else:
        ap.error("give --extract DIR or --run DIR")


if __name__ == "__main__":
    main()
