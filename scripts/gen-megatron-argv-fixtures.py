#!/usr/bin/env python3
"""Runs Megatron-LM's own argument parsing on the argv mimoplan emits and
writes the fixture internal/launch's tests compare against.

For every case (a layout, a target version, optional program arguments) the
script asks mimoplan for the plan (launch-plan --format json), takes the
program's arguments, and parses them with the parser of that version of
Megatron-LM's examples/mimo/training/args.py:

  add_hetero_grid_args(parser)                  the grid arguments
  build_module_grid_specs(args, world, encoder) the ModuleGridSpecs

beside Megatron's own --micro-batch-size, --global-batch-size,
--num-experts, --tensor-parallel-num-weight-shards and
--expert-tensor-parallel-num-weight-shards (declared here as
megatron/training/arguments.py declares them: int, default None) and every
other option string of that version's Megatron-LM (megatron_options: the
model arguments launch-plan writes for a layout with a model), with
parse_args, so that an argument the version does not know fails the case.

Upstream's code is never committed: args.py, topology.py (ModuleGridSpec),
model_parallel_config.py (resolve_tensor_parallel_weight_shards) and
role.py (MIMO_LANGUAGE_MODULE_KEY) are extracted from the Megatron-LM mirror
at each version's commit and imported from a temporary directory; torch,
torch.distributed and the Megatron modules they import but these functions
never call are stubs.

Versions and where their argument names come from:

  5375        args.py at b1884d11b450 (PR #5375, 2026-06-23)
  2026-07-24  args.py at 2d754e65bfe6 (PR #5979)
  6570        args.py at cfb8e46ffe08 (PR #6570, 2026-08-18)
  2026-08-22  args.py at d98e8a64ddf3 (the mirror's HEAD)
  newest      PR #6894 (2026-08-26) is after the mirror's HEAD and its
              args.py is not available here. Its parser is derived from
              HEAD's args.py by the rename PR #6894 made, --encoder-* /
              --llm-* to --mimo-encoder-* / --mimo-llm-* and args.X to
              args.mimo_X; the derived parser is then checked against
              PR #6894's own test (tests/unit_tests/models/mimo/
              test_mimo_hetero_grid_args.py): its destinations are exactly
              the mimo_* ones that test lists, and each old flag is an
              error.

Usage: scripts/gen-megatron-argv-fixtures.py [--megatron DIR] [--mimoplan BIN]
Writes internal/launch/testdata/megatron-lm/argv.json.
"""

import argparse
import ast
import dataclasses
import importlib.util
import inspect
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import types

import upstream_stub

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "internal", "launch", "testdata", "megatron-lm", "argv.json")

FILES = [
    "megatron/training/arguments.py",
    "megatron/core/transformer/transformer_config.py",
    "examples/mimo/training/args.py",
    "examples/mimo/training/topology.py",
    "megatron/core/model_parallel_config.py",
    "megatron/core/models/mimo/config/role.py",
]

# version as mimoplan takes it -> (commit, rename to --mimo-*)
VERSIONS = {
    "5375": ("b1884d11b4507d8a26d8d66d0f01892284213892", False),
    "2026-07-24": ("2d754e65bfe619ffd4fb3a1a87cb1416a4d155d5", False),
    "6570": ("cfb8e46ffe08fa027c38ffbe3898e7d8937bd019", False),
    "2026-08-22": ("d98e8a64ddf34856e74b24714e3bedb2f5a39553", False),
    "": ("d98e8a64ddf34856e74b24714e3bedb2f5a39553", True),
}

# PR #6894's test_parser_uses_mimo_prefixed_destinations lists these.
MIMO_DESTS = [
    "mimo_encoder_tp", "mimo_encoder_dp", "mimo_llm_offset", "mimo_llm_tp", "mimo_llm_cp",
    "mimo_llm_pp", "mimo_llm_dp", "mimo_llm_ep", "mimo_llm_expt_tp", "mimo_llm_only",
    "mimo_encoder_ddp_overlap",
]
# and test_parser_rejects_unprefixed_grid_flags these.
OLD_FLAGS = [
    "--encoder-tp", "--encoder-dp", "--encoder-ddp-overlap", "--llm-offset", "--llm-tp",
    "--llm-cp", "--llm-pp", "--llm-dp", "--llm-ep", "--llm-expt-tp", "--llm-only",
]

GTP = """version: 1
name: gtp-vlm
target: megatron-lm
training: {use_distributed_optimizer: true}
world_size: 16
batch: {micro_batch_size: 2, global_batch_size: 24}
modules:
  - {name: vision, num_ranks: 4, tp: 2}
  - {name: language, num_ranks: 12, tp: 2, gtp_remat: 2, ep: 3, expt_tp: 2, expt_gtp_remat: 2, num_experts: 6}
"""
PIPELINE = """version: 1
name: pp-moe-vlm
target: megatron-lm
training: {use_distributed_optimizer: true}
world_size: 10
batch: {micro_batch_size: 1}
modules:
  - {name: vision, num_ranks: 2}
  - {name: language, num_ranks: 8, tp: 2, pp: 2, ep: 2, expt_tp: 2, num_experts: 8}
"""
# Every megatron-lm layout states the distributed optimizer, without which
# the MIMO example does not start (pretrain_mimo.py:66).
# Every training key away from Megatron's default, in two layouts (the
# launch writes only the keys that differ), both valid for mimoplan's
# start-up rules (overlap_moe_expert_parallel_comm excludes full recompute
# and wants vpp with pp > 1, so it goes in the second).
TRAINING_ALL = """version: 1
name: training-all
target: megatron-lm
world_size: 10
batch: {micro_batch_size: 1}
training:
  use_distributed_optimizer: true
  sequence_parallel: true
  recompute_granularity: full
  recompute_method: uniform
  recompute_num_layers: 1
  overlap_grad_reduce: true
  overlap_param_gather: true
  tp_comm_overlap: true
  grad_reduce_in_fp32: false
  moe_token_dispatcher_type: alltoall
  moe_expert_capacity_factor: 1.5
  moe_pad_expert_input_to_capacity: true
  attention_backend: flash
  fp8: hybrid
  overlap_p2p_comm: false
  use_precision_aware_optimizer: true
  main_grads_dtype: bf16
  main_params_dtype: fp16
  exp_avg_dtype: bf16
  exp_avg_sq_dtype: fp8
  defer_embedding_wgrad_compute: true
  wgrad_deferral_limit: 22
  cross_entropy_loss_fusion: true
modules:
  - {name: vision, num_ranks: 2}
  - name: language
    num_ranks: 8
    tp: 2
    pp: 2
    ep: 2
    expt_tp: 2
    num_experts: 8
    model: {num_layers: 4, hidden_size: 512, num_attention_heads: 8, seq_length: 1024, vocab_size: 32000,
            moe_router_topk: 2, moe_router_pre_softmax: true, moe_router_score_function: sigmoid,
            add_bias_linear: false}
"""
TRAINING_LOCAL = """version: 1
name: training-local
target: megatron-lm
world_size: 8
batch: {micro_batch_size: 2, global_batch_size: 16}
training:
  use_distributed_optimizer: true
  recompute_granularity: selective
  recompute_modules: [core_attn, mlp, moe]
  moe_token_dispatcher_type: flex
  overlap_moe_expert_parallel_comm: true
  transformer_impl: local
  attention_backend: local
  fp8: e4m3
  gradient_accumulation_fusion: false
  cross_entropy_fusion_impl: te
modules:
  - {name: language, num_ranks: 8, tp: 1, pp: 1, ep: 4, num_experts: 8}
"""
NO_BATCH = "testdata/launch/vlm-no-batch.yaml"
OLD = ["5375", "2026-07-24", "6570", "2026-08-22"]
ALL = OLD + [""]

# (name, layout path or text, versions, program arguments after the program)
CASES = [
    ("nemotron", "layouts/nemotron-vlm-8gpu.yaml", ALL, []),
    ("llm-only", "layouts/llm-only-moe-16gpu.yaml", ALL, []),
    ("pipeline and experts", PIPELINE, ALL, []),
    ("gtp", GTP, ["6570", "2026-08-22", ""], []),
    ("micro-batch from the program", NO_BATCH, ALL, ["--micro-batch-size", "4"]),
    ("training", TRAINING_ALL, ALL, []),
    ("training, local layers", TRAINING_LOCAL, ALL, []),
]
# Plans mimoplan refuses (micro-batch-required): the argv it would have
# written, run through upstream to show that upstream stops too.
REFUSED = [
    ("no micro-batch", NO_BATCH, ALL, None),
    ("micro-batch fails the fan-out check", NO_BATCH, ALL, "1"),
]


def extract(mirror, commit, dest):
    # The config dataclasses ArgumentGroupFactory turns into flags, as far
    # as the commit has them.
    extra = upstream_stub.python_files(mirror, commit, "megatron/training/config")
    upstream_stub.extract(mirror, commit, FILES + extra, dest)


def mimo_rename(src):
    """PR #6894's rename applied to an args.py before it."""
    src = re.sub(r"--(encoder|llm)-", r"--mimo-\1-", src)
    src = re.sub(r"\bargs\.(encoder|llm)_", r"args.mimo_\1_", src)
    src = re.sub(r'"(encoder_ddp_overlap)"', r'"mimo_\1"', src)
    return src


def load_module(name, path, src=None):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    if src is None:
        spec.loader.exec_module(mod)
    else:
        exec(compile(src, path, "exec"), mod.__dict__)
    return mod


def load(root, rename):
    """Imports one version's files from root with everything else stubbed."""
    for k in list(sys.modules):
        if k.split(".")[0] in ("torch", "megatron", "examples"):
            del sys.modules[k]
    upstream_stub.stub("torch", "torch.distributed", "torch.nn",
                       "megatron.core.hyper_comm_grid", "megatron.core.parallel_state",
                       "megatron.core.process_groups_config")
    for pkg in ["megatron", "megatron.core", "megatron.core.models", "megatron.core.models.mimo",
                "megatron.core.models.mimo.config", "examples", "examples.mimo", "examples.mimo.training"]:
        m = types.ModuleType(pkg)
        m.__path__ = [os.path.join(root, *pkg.split("."))]
        sys.modules[pkg] = m
    load_module("megatron.core.models.mimo.config.role", os.path.join(root, "megatron/core/models/mimo/config/role.py"))
    if os.path.exists(os.path.join(root, "megatron/core/model_parallel_config.py")):
        load_module("megatron.core.model_parallel_config", os.path.join(root, "megatron/core/model_parallel_config.py"))
    load_module("examples.mimo.training.topology", os.path.join(root, "examples/mimo/training/topology.py"))
    path = os.path.join(root, "examples/mimo/training/args.py")
    src = open(path).read()
    return load_module("examples.mimo.training.args", path, mimo_rename(src) if rename else src)


def literal(node):
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):
        return None


def enum_members(root):
    """The members of megatron/core/transformer/enums.py's enums, by class
    name: ArgumentGroupFactory takes an Enum field as a member's name."""
    out = {}
    path = os.path.join(root, "megatron/core/transformer/enums.py")
    if not os.path.exists(path):
        return out
    for cls in ast.parse(open(path).read()).body:
        if isinstance(cls, ast.ClassDef):
            out[cls.name] = [t.targets[0].id for t in cls.body
                             if isinstance(t, ast.Assign) and isinstance(t.targets[0], ast.Name)]
    return out


def field_type(ann, enums):
    """(type name, choices) of a dataclass annotation as
    ArgumentGroupFactory._extract_type reads it: Optional unwrapped,
    Literal's values as choices, an Enum's member names."""
    if isinstance(ann, ast.Subscript):
        base = getattr(ann.value, "id", getattr(ann.value, "attr", ""))
        if base == "Optional":
            return field_type(ann.slice, enums)
        if base == "Literal":
            vals = literal(ann.slice)
            vals = list(vals) if isinstance(vals, tuple) else [vals]
            return type(vals[0]).__name__, vals
        return None, None
    if isinstance(ann, ast.BinOp):  # X | None
        return field_type(ann.left, enums)
    name = getattr(ann, "id", None)
    if name in enums:
        return "enum", enums[name]
    return name, None


def is_list(ann):
    """Whether a dataclass annotation is a list (Optional unwrapped), which
    ArgumentGroupFactory._extract_type gives nargs "+"
    (argument_utils.py:143-147 at d98e8a6)."""
    if isinstance(ann, ast.Subscript):
        base = getattr(ann.value, "id", getattr(ann.value, "attr", ""))
        if base == "Optional":
            return is_list(ann.slice)
        return base in ("List", "list")
    if isinstance(ann, ast.BinOp):  # X | None
        return is_list(ann.left)
    return False


def factory_calls(tree):
    """(class name, exclude list) of every ArgumentGroupFactory call of
    arguments.py: the dataclasses whose fields become flags."""
    out = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        lists = {}
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                v = literal(node.value)
                if isinstance(v, list):
                    lists[node.targets[0].id] = v
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "ArgumentGroupFactory":
                exclude = []
                for k in node.keywords:
                    if k.arg == "exclude":
                        exclude = lists.get(k.value.id, []) if isinstance(k.value, ast.Name) else (literal(k.value) or [])
                out.append((node.args[0].id, exclude))
    return out


def class_fields(cls, by_name):
    """The annotated fields of a dataclass, its first base's first, as
    dataclasses.fields orders them."""
    out = {}
    for b in cls.bases[:1]:
        if isinstance(b, ast.Name) and b.id in by_name:
            out.update({f.target.id: f for f in class_fields(by_name[b.id], by_name)})
    for f in cls.body:
        if isinstance(f, ast.AnnAssign) and isinstance(f.target, ast.Name):
            out[f.target.id] = f
    return list(out.values())


def megatron_options(root):
    """Megatron-LM's own options at one commit, as {option string: spec}:
    the add_argument calls of megatron/training/arguments.py, and the
    fields of TransformerConfig, ModelParallelConfig and the dataclasses of
    megatron/training/config that its ArgumentGroupFactory
    (megatron/training/argument_utils.py) turns into flags: argparse_meta's
    arg_names, else --<name>, a bool that defaults to True as --no-<name> /
    --disable-<name>, bools taking no value. A spec holds whether the
    option takes a value, its destination, its choices (an add_argument's
    choices, a Literal's values, an Enum's member names), its type and
    default. Read from the syntax trees: the fields of the classes
    arguments.py hands ArgumentGroupFactory (and their bases), less each
    call's exclude list."""
    opts = {}
    enums = enum_members(root)
    tree = ast.parse(open(os.path.join(root, "megatron/training/arguments.py")).read())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument":
            names = [a.value for a in node.args if isinstance(a, ast.Constant) and str(a.value).startswith("--")]
            if not names:
                continue
            kw = {k.arg: k.value for k in node.keywords}
            action = literal(kw["action"]) if "action" in kw else None
            spec = {"takes": action not in ("store_true", "store_false", "store_const", "count"),
                    "dest": literal(kw["dest"]) if "dest" in kw else names[0][2:].replace("-", "_"),
                    "choices": literal(kw["choices"]) if "choices" in kw else None,
                    "type": getattr(kw.get("type"), "id", None),
                    # argparse's own defaults: False for store_true, True
                    # for store_false (--no-overlap-p2p-communication).
                    "default": literal(kw["default"]) if "default" in kw else {"store_true": False, "store_false": True}.get(action),
                    "action": action}
            for n in names:
                opts[n] = spec
    cfg_dir = os.path.join(root, "megatron/training/config")
    extra = [os.path.join("megatron/training/config", f) for f in sorted(os.listdir(cfg_dir))] if os.path.isdir(cfg_dir) else []
    by_name = {}
    for path in ["megatron/core/transformer/transformer_config.py", "megatron/core/model_parallel_config.py",
                 "megatron/core/fault_injector.py", *extra]:
        if not path.endswith(".py") or not os.path.exists(os.path.join(root, path)):
            continue
        for cls in ast.parse(open(os.path.join(root, path)).read()).body:
            if isinstance(cls, ast.ClassDef):
                by_name.setdefault(cls.name, cls)
    for cls_name, exclude in factory_calls(tree):
        if cls_name not in by_name:
            continue
        for f in class_fields(by_name[cls_name], by_name):
            if f.target.id in exclude:
                continue
            name, default, names = f.target.id, f.value, None
            if isinstance(default, ast.Call) and getattr(default.func, "id", "") == "field":
                kw = {k.arg: k.value for k in default.keywords}
                default = kw.get("default")
                try:
                    meta = ast.literal_eval(kw["metadata"]) if "metadata" in kw else {}
                    names = meta.get("argparse_meta", {}).get("arg_names")
                except ValueError:
                    names = None
            is_bool = isinstance(f.annotation, ast.Name) and f.annotation.id == "bool"
            flag = "--" + name.replace("_", "-")
            dflt = default.attr if isinstance(default, ast.Attribute) else literal(default) if default is not None else None
            # ArgumentGroupFactory: a bool is store_false when it
            # defaults to True, else store_true, whatever its names.
            action = ("store_false" if dflt is True else "store_true") if is_bool else None
            if names is None:
                if is_bool and dflt is True:
                    names = ["--no-" + name.replace("_", "-"), "--disable-" + name.replace("_", "-")]
                else:
                    names = [flag]
            typ, choices = (None, None) if is_bool else field_type(f.annotation, enums)
            spec = {"takes": not is_bool, "dest": name, "choices": choices, "type": typ,
                    "default": dflt, "action": action, "nargs": "+" if is_list(f.annotation) else None}
            for n in names:
                opts.setdefault(n, spec)
    return opts


def parser_for(args_mod):
    p = argparse.ArgumentParser(prog="pretrain_mimo.py", allow_abbrev=False, exit_on_error=False)
    g = p.add_argument_group("megatron")
    for flag in ["--micro-batch-size", "--global-batch-size", "--num-experts",
                 "--tensor-parallel-num-weight-shards", "--expert-tensor-parallel-num-weight-shards"]:
        g.add_argument(flag, type=int, default=None)
    args_mod.add_hetero_grid_args(p)
    for flag, spec in sorted(args_mod.megatron_options.items()):
        kw = {"dest": spec["dest"], "default": spec["default"]}
        if not spec["takes"]:
            kw["action"] = spec["action"] or "store_true"
        else:
            if spec["choices"] is not None:
                kw["choices"] = spec["choices"]
            if spec["type"] in ("int", "float"):
                kw["type"] = {"int": int, "float": float}[spec["type"]]
            if spec.get("nargs"):
                kw["nargs"] = spec["nargs"]
        try:
            g.add_argument(flag, **kw)
        except argparse.ArgumentError:
            pass  # declared above
    return p


# The destinations of the layout's training keys (internal/megatron
# TrainingFlags) whose parsed values the fixture keeps.
TRAINING_DESTS = [
    "use_distributed_optimizer", "sequence_parallel", "recompute_granularity", "recompute_method",
    "recompute_num_layers", "recompute_modules", "overlap_grad_reduce", "overlap_param_gather", "tp_comm_overlap",
    "grad_reduce_in_bf16", "accumulate_allreduce_grads_in_fp32", "moe_token_dispatcher_type",
    "overlap_moe_expert_parallel_comm", "moe_expert_capacity_factor", "moe_pad_expert_input_to_capacity",
    "transformer_impl", "attention_backend", "fp8",
    "fp8_param_gather", "overlap_p2p_comm", "use_precision_aware_optimizer", "main_grads_dtype",
    "main_params_dtype", "exp_avg_dtype", "exp_avg_sq_dtype", "gradient_accumulation_fusion",
    "defer_embedding_wgrad_compute", "wgrad_deferral_limit", "cross_entropy_loss_fusion",
    "cross_entropy_fusion_impl",
]

# The destinations of the model arguments launch-plan writes
# (internal/megatron ModelFlags).
MODEL_DESTS = [
    "num_layers", "hidden_size", "ffn_hidden_size", "num_attention_heads", "group_query_attention",
    "num_query_groups", "kv_channels", "seq_length", "vocab_size", "make_vocab_size_divisible_by", "swiglu",
    "normalization", "untie_embeddings_and_output_weights", "add_bias_linear", "attention_output_gate",
    "moe_ffn_hidden_size", "moe_router_topk", "moe_layer_freq", "moe_shared_expert_intermediate_size",
    "moe_shared_expert_gate", "moe_latent_size", "moe_router_pre_softmax", "moe_router_score_function",
    "mtp_num_layers", "multi_latent_attention", "q_lora_rank", "kv_lora_rank", "qk_head_dim",
    "qk_pos_emb_head_dim", "v_head_dim",
]


def check_rename(args_mod):
    """The derived PR #6894 parser against PR #6894's own test."""
    p = argparse.ArgumentParser()
    args_mod.add_hetero_grid_args(p)
    dests = sorted(vars(p.parse_args([])))
    if dests != sorted(MIMO_DESTS):
        sys.exit(f"derived --mimo-* parser has {dests}, PR #6894's test wants {sorted(MIMO_DESTS)}")
    for flag in OLD_FLAGS:
        q = argparse.ArgumentParser(exit_on_error=False)
        args_mod.add_hetero_grid_args(q)
        try:
            with open(os.devnull, "w") as null:
                saved, sys.stderr = sys.stderr, null
                try:
                    q.parse_args([flag])
                finally:
                    sys.stderr = saved
        except (SystemExit, argparse.ArgumentError):
            continue
        sys.exit(f"derived --mimo-* parser accepts {flag}, which PR #6894 rejects")


def upstream(args_mod, argv, world, encoder):
    """Parses argv and builds the specs; returns (specs, error)."""
    p = parser_for(args_mod)
    err = io.StringIO()
    saved, sys.stderr = sys.stderr, err
    try:
        ns = p.parse_args(argv)
    except argparse.ArgumentError as e:
        return None, f"argparse: {e}"
    except SystemExit:
        return None, "argparse: " + err.getvalue().strip().splitlines()[-1]
    finally:
        sys.stderr = saved
    training = {d: getattr(ns, d) for d in TRAINING_DESTS if hasattr(ns, d)}
    model = {d: getattr(ns, d) for d in MODEL_DESTS if hasattr(ns, d)}
    fn = args_mod.build_module_grid_specs
    try:
        if "encoder_module_name" in inspect.signature(fn).parameters:
            specs = fn(ns, world, encoder)
        else:
            specs = fn(ns, world)
    except Exception as e:  # upstream's own ValueError or TypeError
        return None, f"{type(e).__name__}: {e}"
    return {"specs": [dataclasses.asdict(s) for s in specs], "training": training, "model": model}, None


def plan(mimoplan, layout, version, prog):
    cmd = [mimoplan, "launch-plan", layout, "--format", "json"]
    m = re.search(r"\bnodes: (\d+)", open(os.path.join(ROOT, layout)).read())
    if m and int(m.group(1)) > 1:
        cmd += ["--hosts", ",".join(f"node{i}" for i in range(int(m.group(1))))]
    if version:
        cmd += ["--target-version", version]
    if prog is not None:
        cmd += ["--", "examples/mimo/pretrain_mimo.py", *prog]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit {r.returncode}\n{r.stderr}")
    p = json.loads(r.stdout)
    command = p["nodes"][0]["command"]
    i = command.index("examples/mimo/pretrain_mimo.py")
    return command[i + 1:], p["world_size"]


SPECS_OUT = os.path.join(ROOT, "internal", "launch", "testdata", "megatron-lm", "specs.json")

# Layouts whose --format megatron-specs Python is run with each version's
# own ModuleGridSpec (examples/mimo/training/topology.py).
SPEC_LAYOUTS = [
    ("three modules", "layouts/three-module-4node.yaml", ALL),
    ("colocated", "layouts/colocated-vlm-8gpu.yaml", ALL),
    ("nemotron", "layouts/nemotron-vlm-8gpu.yaml", ALL),
    ("gtp", GTP, ["6570", "2026-08-22", ""]),
]


def megatron_specs(mimoplan, mods, layout_path):
    """Runs the printed Python with each version's ModuleGridSpec."""
    out = []
    for name, lay, versions in SPEC_LAYOUTS:
        path, file = layout_path("specs " + name, lay)
        for v in versions:
            cmd = [mimoplan, "launch-plan", path, "--format", "megatron-specs"]
            if v:
                cmd += ["--target-version", v]
            r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
            if r.returncode:
                sys.exit(f"{' '.join(cmd)}: {r.stderr}")
            sys.modules["examples.mimo.training.topology"] = types.SimpleNamespace(ModuleGridSpec=mods[v].ModuleGridSpec)
            saved = os.environ.pop("MIMOPLAN_TOPOLOGY", None)
            ns = {"__name__": "specs"}
            exec(compile(r.stdout, "specs.py", "exec"), ns)
            got = [dataclasses.asdict(s) for s in ns["module_grid_specs"]()]
            if saved is not None:
                os.environ["MIMOPLAN_TOPOLOGY"] = saved
            out.append({"name": name, "layout": file, "layout_text": None if file else lay, "target_version": v,
                        "upstream": f"ModuleGridSpec of examples/mimo/training/topology.py at {VERSIONS[v][0]}",
                        "python": r.stdout, "specs": got})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--megatron", default="/work/.mirror/NVIDIA+Megatron-LM/repo")
    ap.add_argument("--mimoplan", default=None, help="mimoplan binary (default: go build one)")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="mimoplan-argv-")
    mimoplan = a.mimoplan
    if mimoplan is None:
        mimoplan = os.path.join(tmp, "mimoplan")
        subprocess.check_call(["go", "build", "-o", mimoplan, "./cmd/mimoplan"], cwd=ROOT)
    layouts = {}

    def layout_path(name, src):
        if not src.startswith("version:"):
            return src, src
        path = os.path.join(tmp, re.sub(r"\W+", "-", name) + ".yaml")
        with open(path, "w") as f:
            f.write(src)
        layouts[name] = src
        return path, None

    mods = {}
    for v, (commit, rename) in VERSIONS.items():
        d = os.path.join(tmp, "v" + (v or "newest"))
        os.makedirs(d)
        extract(a.megatron, commit, d)
        mods[v] = load(d, rename)
        if rename:
            check_rename(mods[v])
        # The module objects stay usable once sys.modules moves on.
        mods[v] = types.SimpleNamespace(
            add_hetero_grid_args=mods[v].add_hetero_grid_args,
            build_module_grid_specs=mods[v].build_module_grid_specs,
            ModuleGridSpec=sys.modules["examples.mimo.training.topology"].ModuleGridSpec,
            megatron_options=megatron_options(d))

    def source(v):
        commit, rename = VERSIONS[v]
        if rename:
            return f"Megatron-LM PR #6894 rename applied to examples/mimo/training/args.py at {commit}"
        return f"Megatron-LM examples/mimo/training/args.py at {commit}"

    cases = []
    for name, lay, versions, prog in CASES:
        path, file = layout_path(name, lay)
        for v in versions:
            argv, world = plan(mimoplan, path, v, prog if prog else None)
            got, err = upstream(mods[v], argv, world, "vision")
            if err:
                sys.exit(f"{name} at {v or 'newest'}: upstream rejects mimoplan's plan {argv}: {err}")
            rejected = {}
            for w in ALL:
                if w == v or VERSIONS[w][1] == VERSIONS[v][1]:
                    continue
                _, e = upstream(mods[w], argv, world, "vision")
                rejected[w or "newest"] = e
            cases.append({"name": name, "layout": file, "layout_text": layouts.get(name),
                          "target_version": v, "program_args": prog, "upstream": source(v),
                          "argv": argv, "world_size": world, "specs": got["specs"],
                          "training_namespace": got["training"],
                          "model_namespace": got["model"],
                          "other_generation_errors": rejected})
    for name, lay, versions, mbs in REFUSED:
        for v in versions:
            argv, world = plan(mimoplan, lay, v, ["--micro-batch-size", "4"])
            i = argv.index("--micro-batch-size")
            if mbs is None:
                argv = argv[:i] + argv[i + 2:]
                prog = []
            else:
                argv = argv[:i + 1] + [mbs] + argv[i + 2:]
                prog = ["--micro-batch-size", mbs]
            _, err = upstream(mods[v], argv, world, "vision")
            if not err:
                sys.exit(f"{name} at {v or 'newest'}: upstream accepts {argv}")
            cases.append({"name": name, "layout": lay, "target_version": v, "program_args": prog,
                          "upstream": source(v), "argv": argv, "world_size": world,
                          "upstream_error": err})
    specs = megatron_specs(mimoplan, mods, layout_path)
    with open(SPECS_OUT, "w") as f:
        json.dump({"generated_by": "scripts/gen-megatron-argv-fixtures.py",
                   "megatron_lm_mirror": subprocess.check_output(
                       ["git", "-C", a.megatron, "rev-parse", "HEAD"], text=True).strip(),
                   "cases": specs}, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(specs)} cases to {os.path.relpath(SPECS_OUT, ROOT)}")
    out = {
        "generated_by": "scripts/gen-megatron-argv-fixtures.py",
        "megatron_lm_mirror": subprocess.check_output(
            ["git", "-C", a.megatron, "rev-parse", "HEAD"], text=True).strip(),
        "cases": cases,
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(cases)} cases to {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
