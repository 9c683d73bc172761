#!/usr/bin/env python3
"""Runs Megatron-LM's own argument validation and optimizer checks on the
precision-aware optimizer's arguments as mimoplan writes them, over a grid
of training settings, and writes
internal/model/testdata/optimizer-dtype-megatron.json, which
internal/model's TestOptimizerDtypesMatchMegatron compares with the rules
precision-aware-optimizer-needs, optimizer-dtype-needs-precision-aware and
main-grads-dtype-needs-bf16-reduce.

What runs, at COMMIT, for each case (one process each):

  megatron/training/arguments.py  parse_args() and validate_args(args) on a
                                  one-rank bf16 launch plus the case's flags
  megatron/training/training.py   get_megatron_optimizer_config(args): the
                                  OptimizerConfig every target builds, whose
                                  __post_init__ checks the dtypes
                                  (optimizer_config.py:433-480)
  megatron/core/optimizer/__init__.py
                                  get_megatron_optimizer's check of the
                                  distributed optimizer (:1054-1060), taken
                                  out of the function by its syntax tree
                                  and run on the config (is_mfsdp_v2 False)

The flags are the ones launch-plan writes for the case's training keys
(internal/megatron TrainingFlags): --use-distributed-optimizer,
--grad-reduce-in-bf16 for grad_reduce_in_fp32 false,
--use-precision-aware-optimizer, --main-grads-dtype, --main-params-dtype,
--exp-avg-dtype, --exp-avg-sq-dtype.

Upstream's code is never committed: megatron/ is extracted from the
Megatron-LM mirror at COMMIT into a scratch folder (--extract) and run there
(--run) on CPU (the committed fixture by pyenv's Python 3.12.1, without
numpy, /root/.pyenv/versions/3.12.1/bin/python3). Packages missing from the
machine are stubbed as scripts/gen-mimo-vpp-fixtures.py does, except torch's
dtypes, which here are fixed objects (torch.float32 is torch.float32, unlike
another stub's attribute) so that validate_args' and OptimizerConfig's dtype
comparisons compare; torch.float and torch.half are float32 and float16 as
in torch. Transformer Engine is either present, as a stand-in whose
FusedAdam takes the keyword arguments OptimizerConfig looks for
(TransformerEngine@d0067d0
transformer_engine/pytorch/optimizers/fused_adam.py:118-131 declares them),
or absent (ModuleNotFoundError), as mimoplan takes transformer_impl local to
be.

Usage:
  scripts/gen-optimizer-dtype-fixtures.py --extract DIR [--mirror MIRROR]
  scripts/gen-optimizer-dtype-fixtures.py --run DIR [--out FILE]
"""

import ast
import importlib.abc
import importlib.machinery
import itertools
import json
import os
import sys

import upstream_stub

mimovpp = upstream_stub.script("mimovpp", "gen-mimo-vpp-fixtures.py")

COMMIT = mimovpp.COMMIT

BASE = [
    "--micro-batch-size", "1", "--global-batch-size", "8",
    "--seq-length", "64", "--max-position-embeddings", "64",
    "--num-layers", "2", "--hidden-size", "64", "--num-attention-heads", "4",
    "--vocab-size", "128", "--bf16", "--train-iters", "1", "--mock-data",
]

DTYPES = ["torch.float32", "torch.bfloat16", "torch.float16", "torch.uint8"]
ALIASES = {"float": "float32", "half": "float16"}


def cases():
    """name -> (training keys as a layout states them, te present, argv)."""
    out = {}
    states = [
        {},
        {"main_params_dtype": "fp16"},
        {"exp_avg_dtype": "bf16", "exp_avg_sq_dtype": "bf16"},
        {"exp_avg_dtype": "fp8", "exp_avg_sq_dtype": "fp16"},
    ]
    for dist, pao, grads, fp32_reduce, state in itertools.product(
            (True, False), (True, False), ("fp32", "bf16"), (True, False), range(len(states))):
        training = {"use_distributed_optimizer": dist, "grad_reduce_in_fp32": fp32_reduce,
                    "use_precision_aware_optimizer": pao}
        if grads != "fp32":
            training["main_grads_dtype"] = grads
        training.update(states[state])
        name = "-".join([
            "dist" if dist else "nodist", "pao" if pao else "nopao", "grads-" + grads,
            "reduce-fp32" if fp32_reduce else "reduce-bf16", "state%d" % state])
        out[name] = (training, True)
    # Without Transformer Engine.
    for pao in (True, False):
        training = {"use_distributed_optimizer": True, "grad_reduce_in_fp32": True,
                    "use_precision_aware_optimizer": pao}
        out["no-te-" + ("pao" if pao else "nopao")] = (training, False)
    return {n: (t, te, argv(t)) for n, (t, te) in out.items()}


def argv(training):
    """The flags launch-plan writes for these keys."""
    a = list(BASE)
    if training["use_distributed_optimizer"]:
        a.append("--use-distributed-optimizer")
    if not training["grad_reduce_in_fp32"]:
        a.append("--grad-reduce-in-bf16")
    if training["use_precision_aware_optimizer"]:
        a.append("--use-precision-aware-optimizer")
    for key in ("main_grads_dtype", "main_params_dtype", "exp_avg_dtype", "exp_avg_sq_dtype"):
        if key in training:
            a += ["--" + key.replace("_", "-"), training[key]]
    return a


class Dtype:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name

    # torch's dtypes are singletons: a copy is the dtype itself.
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


class Torch(mimovpp.Stub):
    """torch with fixed dtypes; the rest a stub."""

    def __getattr__(self, name):
        if name in ALIASES:
            return getattr(self, ALIASES[name])
        if "torch." + name in DTYPES:
            d = Dtype("torch." + name)
            object.__setattr__(self, name, d)
            return d
        return mimovpp.Stub.__getattr__(self, name)


class FusedAdam:
    """Transformer Engine's FusedAdam as OptimizerConfig inspects it."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, *,
                 bias_correction=True, adam_w_mode=True, capturable=False, master_weights=False,
                 master_weight_dtype=None, exp_avg_dtype=None, exp_avg_sq_dtype=None,
                 use_decoupled_grad=False, store_param_remainders=False, set_grad_none=None):
        pass


class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """torch as Torch, Transformer Engine present or absent, other stubs."""

    def __init__(self, stubs, te):
        self.stubs, self.te = set(stubs), te

    def find_spec(self, name, path, target=None):
        top = name.split(".")[0]
        if top == "transformer_engine" and not self.te:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        if top in self.stubs or top in ("torch", "transformer_engine"):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        if spec.name == "torch":
            return Torch("torch")
        m = mimovpp.Stub(spec.name)
        if spec.name == "transformer_engine.pytorch.optimizers":
            object.__setattr__(m, "FusedAdam", FusedAdam)
        return m

    def exec_module(self, module):
        pass


def optimizer_check(root, config):
    """get_megatron_optimizer's distributed-optimizer check, run as upstream
    writes it (the if/elif at __init__.py:1054-1060)."""
    path = os.path.join(root, "megatron/core/optimizer/__init__.py")
    tree = ast.parse(open(path).read(), path)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_megatron_optimizer")
    node = next(n for n in fn.body if isinstance(n, ast.If) and isinstance(n.test, ast.Name) and n.test.id == "is_mfsdp_v2")
    code = compile(ast.Module(body=[node], type_ignores=[]), path, "exec")
    exec(code, {"is_mfsdp_v2": False, "config": config})


def one_case(root, name, stubs):
    sys.path.insert(0, root)
    os.environ.update(RANK="0", WORLD_SIZE="1", LOCAL_RANK="0")
    training, te, a = cases()[name]
    sys.meta_path.insert(0, Finder(stubs, te))
    res = {}
    try:
        from megatron.training.arguments import parse_args, validate_args

        sys.argv = ["pretrain_gpt.py"] + a
        args = parse_args()
        validate_args(args, {})
        res["validated"] = {
            "accumulate_allreduce_grads_in_fp32": args.accumulate_allreduce_grads_in_fp32,
            "main_grads_dtype": repr(args.main_grads_dtype)}
        from megatron.training.training import get_megatron_optimizer_config

        config, _ = get_megatron_optimizer_config(args)
        res["config"] = {k: repr(getattr(config, k)) if k.endswith("dtype") else getattr(config, k) for k in (
            "use_distributed_optimizer", "use_precision_aware_optimizer", "main_grads_dtype",
            "main_params_dtype", "exp_avg_dtype", "exp_avg_sq_dtype")}
        optimizer_check(root, config)
        res["outcome"] = "ok"
    except ModuleNotFoundError as e:
        if not te and (e.name or "").split(".")[0] == "transformer_engine":
            res.update(outcome="raises", exception=type(e).__name__, where=mimovpp.where(e.__traceback__, root),
                       message=" ".join(str(e).split())[:400])
        else:
            res = {"outcome": "missing", "module": e.name}
    except BaseException as e:  # AssertionError, ValueError, RuntimeError, SystemExit
        res.update(outcome="raises", exception=type(e).__name__, where=mimovpp.where(e.__traceback__, root),
                   message=" ".join(str(e).split())[:400])
    print("RESULT " + json.dumps(res))


def fields(case):
    training, te, a = case
    return {"training": training, "transformer_engine": te, "argv": a}


if __name__ == "__main__":
    upstream_stub.case_main(__file__, COMMIT, mimovpp.MIRROR, mimovpp.extract,
                            "internal/model/testdata/optimizer-dtype-megatron.json", cases, fields, one_case)
