#!/usr/bin/env python3
"""Writes internal/megatron/options.json: every option string the parser
of Megatron-LM's examples/mimo/pretrain_mimo.py accepts, and whether it
takes a value, at the mirror's commit. import megatron-lm refuses any
other flag, with the closest of these as a "did you mean".

pretrain_mimo.py parses with megatron/training/arguments.py's parse_args
(argparse, allow_abbrev=False, unknown arguments an error) and its own
extra_args_provider. The options are read from the syntax trees, without
running upstream (it needs torch):

  - every add_argument call of megatron/training/arguments.py and of the
    files extra_args_provider's functions come from
    (examples/mimo/model_providers/nemotron_moe_vlm.py,
    examples/mimo/training/args.py, data.py, encoder_prefetch.py);
  - the fields of every dataclass arguments.py hands to
    ArgumentGroupFactory (megatron/training/argument_utils.py), with the
    exclude list of that call and the classes' bases: argparse_meta's
    arg_names, else --<name>; a bool field takes no value and one that
    defaults to True is --no-<name> / --disable-<name>.

A flag takes no value when its action is store_true, store_false,
store_const or count. Upstream's code is never committed; only the names.

Usage: scripts/gen-megatron-options.py [--megatron DIR] [--commit SHA]
"""

import argparse
import ast
import json
import os

import upstream_stub
from upstream_stub import show

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "internal", "megatron", "options.json")

ARGUMENTS = "megatron/training/arguments.py"
EXTRA = [
    "examples/mimo/model_providers/nemotron_moe_vlm.py",
    "examples/mimo/training/args.py",
    "examples/mimo/training/data.py",
    "examples/mimo/training/encoder_prefetch.py",
]
# Files that define the dataclasses ArgumentGroupFactory reads.
CLASS_FILES = [
    "megatron/core/transformer/transformer_config.py",
    "megatron/core/model_parallel_config.py",
    "megatron/core/fault_injector.py",
]
NO_VALUE = ("store_true", "store_false", "store_const", "count")


def add_argument_options(src, opts):
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument":
            names = [a.value for a in node.args if isinstance(a, ast.Constant) and str(a.value).startswith("--")]
            action = next((k.value.value for k in node.keywords
                           if k.arg == "action" and isinstance(k.value, ast.Constant)), None)
            for n in names:
                opts[n] = action not in NO_VALUE


def classes(mirror, commit):
    files = list(CLASS_FILES)
    files += upstream_stub.python_files(mirror, commit, "megatron/training/config")
    out = {}
    for path in files:
        for cls in ast.parse(show(mirror, commit, path)).body:
            if isinstance(cls, ast.ClassDef):
                out[cls.name] = cls
    return out


def fields(cls, by_name):
    """The annotated fields of cls, its first base's first (as
    dataclasses.fields orders them)."""
    out = {}
    for b in cls.bases[:1]:
        if isinstance(b, ast.Name) and b.id in by_name:
            out.update(fields(by_name[b.id], by_name))
    for f in cls.body:
        if isinstance(f, ast.AnnAssign) and isinstance(f.target, ast.Name):
            out[f.target.id] = f
    return out


def factory_options(src, by_name, opts):
    tree = ast.parse(src)
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        lists = {}
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                try:
                    lists[node.targets[0].id] = ast.literal_eval(node.value)
                except ValueError:
                    pass
        for node in ast.walk(fn):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "ArgumentGroupFactory"):
                continue
            name = node.args[0].id
            exclude = []
            for k in node.keywords:
                if k.arg == "exclude":
                    exclude = lists[k.value.id] if isinstance(k.value, ast.Name) else ast.literal_eval(k.value)
            if name not in by_name:
                raise SystemExit(f"ArgumentGroupFactory({name}): class not found in {CLASS_FILES} or megatron/training/config")
            for fname, f in fields(by_name[name], by_name).items():
                if fname in exclude:
                    continue
                default, meta = f.value, {}
                if isinstance(default, ast.Call) and getattr(default.func, "id", "") == "field":
                    kw = {k.arg: k.value for k in default.keywords}
                    if "init" in kw and isinstance(kw["init"], ast.Constant) and kw["init"].value is False:
                        continue
                    default = kw.get("default")
                    if "metadata" in kw:
                        try:
                            meta = ast.literal_eval(kw["metadata"]).get("argparse_meta", {})
                        except ValueError:
                            meta = {}
                is_bool = isinstance(f.annotation, ast.Name) and f.annotation.id == "bool"
                flag = "--" + fname.replace("_", "-")
                names = meta.get("arg_names")
                if names is None:
                    if is_bool and isinstance(default, ast.Constant) and default.value is True:
                        names = ["--no-" + fname.replace("_", "-"), "--disable-" + fname.replace("_", "-")]
                    else:
                        names = [flag]
                takes = not is_bool
                if "action" in meta:
                    takes = meta["action"] not in NO_VALUE
                for n in names:
                    opts.setdefault(n, takes)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--megatron", default="/work/.mirror/NVIDIA+Megatron-LM/repo")
    ap.add_argument("--commit", default="d98e8a64ddf34856e74b24714e3bedb2f5a39553")
    a = ap.parse_args()
    opts = {}
    src = show(a.megatron, a.commit, ARGUMENTS)
    add_argument_options(src, opts)
    factory_options(src, classes(a.megatron, a.commit), opts)
    grid = {}
    for path in EXTRA:
        add_argument_options(show(a.megatron, a.commit, path), grid if path.endswith("training/args.py") else opts)
    opts.update(grid)
    # The config dataclasses Megatron-Bridge's ConfigContainer holds the
    # training settings in (ddp, optimizer, each module's TransformerConfig):
    # their field names, for launch-plan --format bridge.
    by_name = classes(a.megatron, a.commit)
    for path in ["megatron/core/distributed/distributed_data_parallel_config.py", "megatron/core/optimizer/optimizer_config.py"]:
        for cls in ast.parse(show(a.megatron, a.commit, path)).body:
            if isinstance(cls, ast.ClassDef):
                by_name.setdefault(cls.name, cls)
    config_fields = {c: sorted(fields(by_name[c], by_name))
                     for c in ["DistributedDataParallelConfig", "OptimizerConfig", "TransformerConfig"]}
    with open(OUT, "w") as f:
        json.dump({"generated_by": "scripts/gen-megatron-options.py",
                   "megatron_lm_commit": a.commit,
                   "parser": "examples/mimo/pretrain_mimo.py: parse_args(extra_args_provider)",
                   "grid_options": sorted(grid),
                   "config_fields": config_fields,
                   "options": {k: ("value" if v else "flag") for k, v in sorted(opts.items())}},
                  f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(opts)} options to {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
