#!/usr/bin/env python3
"""Runs Megatron-LM's own memory and FLOPs functions and writes the fixtures
internal/model's tests compare against.

Upstream's code is never committed: the files needed are extracted from the
Megatron-LM mirror at its commit into a temporary directory and run there.
torch and the rest of Megatron are only imported by those files, never used
by the arithmetic, so they are stubbed:

  megatron/training/theoretical_memory_usage.py  run as a module (its
      `from .utils import is_hybrid_model, print_rank_0` is served by a stub
      package whose is_hybrid_model is upstream's own, taken from
      megatron/training/utils/common_utils.py)
  megatron/training/training.py                  num_floating_point_operations
      taken out by its syntax tree (the file imports most of Megatron) and
      run with upstream's is_hybrid_model / is_linear_attention_variant
  megatron/training/vocab_utils.py               calculate_padded_vocab_size

The parameter counts are locals of compute_weight_and_optimizer_memory; they
are read from its frame when it returns (sys.settrace), so they are upstream's
numbers, not a re-derivation.

Usage: scripts/gen-model-fixtures.py [--megatron DIR] [--cases N]
       scripts/gen-model-fixtures.py --layouts layouts/*.yaml [--mimoplan bin/mimoplan]
The first writes internal/model/testdata/megatron.json. The second asks
`mimoplan estimate --format json` for each layout module's Megatron arguments
(megatron_args), runs Megatron's report on them, writes
internal/model/testdata/layouts-megatron.json and the table between the
layouts markers of docs/estimate.md: Megatron's printed report beside
mimoplan's figures.
"""

import argparse
import ast
import contextlib
import io
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import types
import typing

import upstream_stub

FILES = [
    "megatron/training/theoretical_memory_usage.py",
    "megatron/training/training.py",
    "megatron/training/vocab_utils.py",
    "megatron/training/utils/common_utils.py",
    "megatron/core/models/gpt/experimental_attention_variant_module_specs.py",
]


def extract(mirror, dest):
    commit = upstream_stub.head(mirror)
    upstream_stub.extract(mirror, commit, FILES, dest)
    return commit


def take(path, names):
    """Compiles the named top-level functions and assignments of a file,
    leaving its imports out."""
    src = open(path).read()
    tree = ast.parse(src)
    keep = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in names:
            keep.append(node)
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id in names for t in node.targets
        ):
            keep.append(node)
    found = {n.name if hasattr(n, "name") else n.targets[0].id for n in keep}
    missing = set(names) - found
    if missing:
        sys.exit(f"{path}: upstream no longer defines {sorted(missing)}")
    return compile(ast.Module(body=keep, type_ignores=[]), path, "exec")


def load(root):
    """Returns upstream's functions, run from the extracted copy."""
    ns = {}
    exec(take(os.path.join(root, FILES[3]), {"is_hybrid_model"}), ns)
    is_hybrid_model = ns["is_hybrid_model"]

    # Stub packages: only the names the files import.
    for name in ["megatron", "megatron.training"]:
        mod = types.ModuleType(name)
        mod.__path__ = []
        sys.modules[name] = mod
    utils = types.ModuleType("megatron.training.utils")
    utils.is_hybrid_model = is_hybrid_model
    utils.print_rank_0 = lambda *a, **k: print(*a, **k)
    sys.modules["megatron.training.utils"] = utils

    mods = {}
    for short, path in [("tmu", FILES[0]), ("vocab", FILES[2])]:
        name = "megatron.training." + os.path.basename(path)[:-3]
        mod = types.ModuleType(name)
        mod.__package__ = "megatron.training"
        mod.__file__ = os.path.join(root, path)
        sys.modules[name] = mod
        exec(compile(open(mod.__file__).read(), mod.__file__, "exec"), mod.__dict__)
        mods[short] = mod

    fl = {"is_hybrid_model": is_hybrid_model, "math": math, "Optional": typing.Optional, "List": typing.List}
    exec(
        take(
            os.path.join(root, FILES[4]),
            {"GDN_ATTENTION_VARIANTS", "_DEPRECATED_ATTENTION_VARIANT_ALIASES",
             "is_gated_delta_net_variant", "is_linear_attention_variant"},
        ),
        fl,
    )
    exec(take(os.path.join(root, FILES[1]), {"num_floating_point_operations"}), fl)
    return mods["tmu"], mods["vocab"], fl["num_floating_point_operations"]


def megatron_args(model, par, train):
    """The args namespace Megatron would hold after validate_args for these
    (already resolved) values. A missing attribute raises, so any argument
    upstream starts to read shows up here."""
    m = dict(model)
    a = types.SimpleNamespace(
        num_layers=m["num_layers"],
        hidden_size=m["hidden_size"],
        ffn_hidden_size=m["ffn_hidden_size"],
        num_attention_heads=m["num_attention_heads"],
        group_query_attention=m.get("num_query_groups") is not None,
        num_query_groups=m.get("num_query_groups"),
        kv_channels=m["kv_channels"],
        seq_length=m["seq_length"],
        padded_vocab_size=m["padded_vocab_size"],
        swiglu=m.get("swiglu", False),
        normalization=m.get("normalization", "LayerNorm"),
        untie_embeddings_and_output_weights=m.get("untie_embeddings_and_output_weights", False),
        add_bias_linear=m.get("add_bias_linear", True),
        attention_output_gate=m.get("attention_output_gate", False),
        num_experts=m.get("num_experts"),
        moe_ffn_hidden_size=m.get("moe_ffn_hidden_size"),
        moe_router_topk=m.get("moe_router_topk", 2),
        moe_layer_freq=m.get("moe_layer_freq", 1),
        moe_shared_expert_intermediate_size=m.get("moe_shared_expert_intermediate_size"),
        moe_shared_expert_gate=m.get("moe_shared_expert_gate", False),
        moe_latent_size=m.get("moe_latent_size"),
        mtp_num_layers=m.get("mtp_num_layers"),
        multi_latent_attention=m.get("multi_latent_attention", False),
        q_lora_rank=m.get("q_lora_rank"),
        kv_lora_rank=m.get("kv_lora_rank", 32),
        qk_head_dim=m.get("qk_head_dim", 128),
        qk_pos_emb_head_dim=m.get("qk_pos_emb_head_dim", 64),
        v_head_dim=m.get("v_head_dim", 128),
        hybrid_layer_pattern=None,
        experimental_attention_variant=None,
        world_size=par["world_size"],
        tensor_model_parallel_size=par["tensor_model_parallel_size"],
        pipeline_model_parallel_size=par["pipeline_model_parallel_size"],
        virtual_pipeline_model_parallel_size=par.get("virtual_pipeline_model_parallel_size"),
        data_parallel_size=par["data_parallel_size"],
        expert_model_parallel_size=par.get("expert_model_parallel_size", 1),
        expert_tensor_parallel_size=par.get(
            "expert_tensor_parallel_size", par["tensor_model_parallel_size"]
        ),
        use_distributed_optimizer=train.get("use_distributed_optimizer", False),
        sequence_parallel=train.get("sequence_parallel", False),
        recompute_granularity=train.get("recompute_granularity"),
        micro_batch_size=train.get("micro_batch_size", 1),
    )
    return a


def run_case(tmu, vocab, flops, case):
    m, par, tr = dict(case["model"]), case["parallel"], case["training"]
    if m.get("vocab_size"):
        m["padded_vocab_size"] = vocab.calculate_padded_vocab_size(
            m["vocab_size"], m.get("make_vocab_size_divisible_by", 128),
            par["tensor_model_parallel_size"], logging_enabled=False,
        )
    else:
        m["padded_vocab_size"] = 0  # an encoder: no vocabulary

    seen = {}

    def tracer(frame, event, arg):
        if frame.f_code is tmu.compute_weight_and_optimizer_memory.__code__:
            def local(fr, ev, a):
                if ev == "return":
                    seen.update(fr.f_locals)
                return local
            return local
        return None

    out = io.StringIO()
    sys.settrace(tracer)
    try:
        with contextlib.redirect_stdout(out):
            w_mb, a_mb, t_mb = tmu.report_theoretical_memory(
                megatron_args(m, par, tr), num_microbatches=tr.get("num_microbatches")
            )
    finally:
        sys.settrace(None)
    mb = tmu.NUM_BYTES_IN_MEGABYTE
    case["expect"] = {
        "padded_vocab_size": m["padded_vocab_size"],
        "parameters": seen["num_total_parameters"],
        "active_parameters": seen["num_active_parameters"],
        "shard_parameters": seen["num_parameters_on_most_loaded_model_shard"],
        "weight_and_optimizer_bytes": w_mb * mb,
        "activation_bytes": a_mb * mb,
        "total_bytes": t_mb * mb,
        "activation_formula": out.getvalue().split()[0],
        "flops_per_sample": flops(megatron_args(m, par, tr), 1),
        "report": out.getvalue().strip().splitlines()[-1],
    }
    return case


def named_cases():
    """Hand-picked cases: one per feature the issue names."""
    def c(name, model, par, tr):
        par = dict(par)
        tp, pp = par.setdefault("tensor_model_parallel_size", 1), par.setdefault("pipeline_model_parallel_size", 1)
        par.setdefault("data_parallel_size", 1)
        par.setdefault("world_size", tp * pp * par["data_parallel_size"] * par.pop("cp", 1))
        return {"name": name, "model": model, "parallel": par, "training": tr}

    gpt = dict(num_layers=24, hidden_size=2048, ffn_hidden_size=8192, num_attention_heads=16,
               kv_channels=128, seq_length=2048, vocab_size=50257)
    llama8b = dict(num_layers=32, hidden_size=4096, ffn_hidden_size=14336, num_attention_heads=32,
                   num_query_groups=8, kv_channels=128, seq_length=8192, vocab_size=128256,
                   swiglu=True, normalization="RMSNorm", untie_embeddings_and_output_weights=True,
                   add_bias_linear=False)
    mixtral = dict(llama8b, seq_length=4096, vocab_size=32000, ffn_hidden_size=14336,
                   num_experts=8, moe_ffn_hidden_size=14336, moe_router_topk=2)
    qwen_moe = dict(num_layers=24, hidden_size=2048, ffn_hidden_size=5632, num_attention_heads=16,
                    num_query_groups=16, kv_channels=128, seq_length=8192, vocab_size=151936,
                    swiglu=True, normalization="RMSNorm", untie_embeddings_and_output_weights=True,
                    add_bias_linear=False, num_experts=60, moe_ffn_hidden_size=1408,
                    moe_router_topk=4, moe_shared_expert_intermediate_size=5632,
                    moe_shared_expert_gate=True)
    dsv3 = dict(num_layers=61, hidden_size=7168, ffn_hidden_size=18432, num_attention_heads=128,
                kv_channels=128, seq_length=4096, vocab_size=129280, swiglu=True,
                normalization="RMSNorm", untie_embeddings_and_output_weights=True,
                add_bias_linear=False, num_experts=256, moe_ffn_hidden_size=2048,
                moe_router_topk=8, moe_shared_expert_intermediate_size=2048,
                moe_layer_freq=[0] * 3 + [1] * 58, mtp_num_layers=1,
                multi_latent_attention=True, q_lora_rank=1536, kv_lora_rank=512,
                qk_head_dim=128, qk_pos_emb_head_dim=64, v_head_dim=128)
    vit = dict(num_layers=24, hidden_size=1024, ffn_hidden_size=4096, num_attention_heads=16,
               kv_channels=64, seq_length=577, vocab_size=0)
    sp = {"sequence_parallel": True, "recompute_granularity": "selective"}
    return [
        c("dense-gpt", gpt, {}, {}),
        c("dense-gpt-tp2-dist", gpt, {"tensor_model_parallel_size": 2, "data_parallel_size": 4}, {"use_distributed_optimizer": True}),
        c("dense-gpt-pp4-nmb2", gpt, {"pipeline_model_parallel_size": 4, "data_parallel_size": 2}, {"num_microbatches": 2}),
        c("dense-gpt-pp4-nmb8", gpt, {"pipeline_model_parallel_size": 4, "data_parallel_size": 2}, {"num_microbatches": 8, "micro_batch_size": 2}),
        c("llama8b-gqa-swiglu-untied", llama8b, {"tensor_model_parallel_size": 4, "data_parallel_size": 2}, {}),
        c("llama8b-sp-selective", llama8b, {"tensor_model_parallel_size": 4, "pipeline_model_parallel_size": 2, "data_parallel_size": 8}, dict(sp, use_distributed_optimizer=True)),
        c("llama8b-sp-full", llama8b, {"tensor_model_parallel_size": 4, "pipeline_model_parallel_size": 2, "data_parallel_size": 8}, {"sequence_parallel": True, "recompute_granularity": "full"}),
        c("llama8b-vpp", llama8b, {"tensor_model_parallel_size": 2, "pipeline_model_parallel_size": 4, "virtual_pipeline_model_parallel_size": 2, "data_parallel_size": 4}, dict(sp, num_microbatches=16)),
        c("llama8b-vpp-nosp", llama8b, {"tensor_model_parallel_size": 2, "pipeline_model_parallel_size": 4, "virtual_pipeline_model_parallel_size": 4, "data_parallel_size": 4}, {"use_distributed_optimizer": True}),
        c("mixtral-ep8", mixtral, {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 4, "data_parallel_size": 16, "expert_model_parallel_size": 8}, dict(sp, use_distributed_optimizer=True)),
        c("mixtral-etp2", mixtral, {"tensor_model_parallel_size": 2, "pipeline_model_parallel_size": 2, "data_parallel_size": 8, "expert_model_parallel_size": 4, "expert_tensor_parallel_size": 2}, {}),
        c("qwen-moe-shared-gate", qwen_moe, {"tensor_model_parallel_size": 2, "data_parallel_size": 8, "expert_model_parallel_size": 4, "expert_tensor_parallel_size": 1}, dict(sp, use_distributed_optimizer=True)),
        c("qwen-moe-bias-freq2", dict(qwen_moe, add_bias_linear=True, moe_layer_freq=2, moe_shared_expert_gate=False), {"data_parallel_size": 4, "expert_model_parallel_size": 4}, {}),
        c("deepseek-v3-mla-mtp", dsv3, {"tensor_model_parallel_size": 2, "pipeline_model_parallel_size": 16, "data_parallel_size": 32, "expert_model_parallel_size": 64, "expert_tensor_parallel_size": 1}, dict(sp, use_distributed_optimizer=True, num_microbatches=32)),
        c("deepseek-v3-no-qlora", dict(dsv3, q_lora_rank=None, moe_latent_size=1024), {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1, "data_parallel_size": 64, "expert_model_parallel_size": 64, "expert_tensor_parallel_size": 1}, {}),
        c("vit-encoder-no-vocab", vit, {"tensor_model_parallel_size": 2, "data_parallel_size": 4}, {}),
        c("vit-encoder-sp", vit, {"tensor_model_parallel_size": 2, "data_parallel_size": 4}, dict(sp, micro_batch_size=8)),
        c("gated-attention", dict(llama8b, attention_output_gate=True), {"tensor_model_parallel_size": 8}, {}),
    ]


def random_case(rng, i):
    heads = rng.choice([4, 8, 12, 16, 24, 32, 40, 48, 64, 96, 128])
    kv = rng.choice([32, 64, 80, 96, 128, 256])
    hidden = heads * kv if rng.random() < 0.8 else rng.choice([1024, 2048, 3072, 4096, 5120, 8192])
    tp = rng.choice([1, 1, 2, 4, 8])
    pp = rng.choice([1, 1, 2, 3, 4, 8, 16])
    layers = pp * rng.randint(1, 12)
    m = dict(
        num_layers=layers, hidden_size=hidden, num_attention_heads=heads, kv_channels=kv,
        ffn_hidden_size=rng.choice([2, 3, 4, 8]) * hidden // 2 + rng.choice([0, 64, 128]),
        seq_length=rng.choice([512, 1024, 2048, 4096, 8192, 16384, 32768]),
        vocab_size=rng.choice([0, 32000, 50257, 128256, 151936, 256000]),
        make_vocab_size_divisible_by=rng.choice([64, 128, 256]),
        swiglu=rng.random() < 0.5,
        normalization=rng.choice(["LayerNorm", "RMSNorm"]),
        untie_embeddings_and_output_weights=rng.random() < 0.5,
        add_bias_linear=rng.random() < 0.5,
    )
    if rng.random() < 0.5:
        m["num_query_groups"] = rng.choice([g for g in [1, 2, 4, 8, 16] if heads % g == 0])
    ep, etp = 1, tp
    if rng.random() < 0.4:
        m["num_experts"] = rng.choice([4, 8, 16, 32, 64, 128, 256])
        m["moe_ffn_hidden_size"] = rng.choice([256, 512, 1024, 1408, 2048, 4096])
        m["moe_router_topk"] = rng.randint(1, min(8, m["num_experts"]))
        if rng.random() < 0.3:
            m["moe_layer_freq"] = rng.choice([1, 2, 3])
        elif rng.random() < 0.3:
            m["moe_layer_freq"] = [rng.randint(0, 1) for _ in range(layers)]
        if rng.random() < 0.5:
            m["moe_shared_expert_intermediate_size"] = rng.choice([512, 1024, 2048, 4096])
            m["moe_shared_expert_gate"] = rng.random() < 0.5
        if rng.random() < 0.15:
            m["moe_latent_size"] = rng.choice([256, 512, 1024])
        ep = rng.choice([e for e in [1, 2, 4, 8, 16, 32] if m["num_experts"] % e == 0])
        etp = rng.choice([1, tp])
    if rng.random() < 0.15:
        m["mtp_num_layers"] = rng.randint(1, 2)
    if rng.random() < 0.1 and "num_query_groups" not in m:
        m.update(multi_latent_attention=True, q_lora_rank=rng.choice([None, 512, 1536]),
                 kv_lora_rank=rng.choice([256, 512]), qk_head_dim=128,
                 qk_pos_emb_head_dim=64, v_head_dim=128)
    if rng.random() < 0.1:
        m["attention_output_gate"] = True
    dp = rng.choice([1, 2, 4, 8, 16, 64, 256])
    cp = 1
    world = tp * pp * cp * dp
    while world % (etp * ep * pp):
        ep = 1
    par = dict(world_size=world, tensor_model_parallel_size=tp, pipeline_model_parallel_size=pp,
               data_parallel_size=dp, expert_model_parallel_size=ep, expert_tensor_parallel_size=etp)
    if pp > 1 and rng.random() < 0.3:
        par["virtual_pipeline_model_parallel_size"] = rng.choice(
            [v for v in [1, 2, 3, 4] if (layers // pp) % v == 0])
    tr = dict(
        use_distributed_optimizer=rng.random() < 0.5,
        sequence_parallel=tp > 1 and rng.random() < 0.6,
        recompute_granularity=rng.choice([None, "selective", "full"]),
        micro_batch_size=rng.choice([1, 1, 2, 4]),
    )
    if rng.random() < 0.5:
        tr["num_microbatches"] = rng.choice([1, 2, 4, 8, 32])
    return {"name": f"random-{i:03d}", "model": m, "parallel": par, "training": tr}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--megatron", default="/work/.mirror/NVIDIA+Megatron-LM/repo")
    ap.add_argument("--cases", type=int, default=400)
    ap.add_argument("--seed", type=int, default=10)
    ap.add_argument("--out", default="internal/model/testdata/megatron.json")
    ap.add_argument("--layouts", nargs="*", help="layout files whose modules to run Megatron's report on")
    ap.add_argument("--mimoplan", default="bin/mimoplan")
    ap.add_argument("--layouts-out", default="internal/model/testdata/layouts-megatron.json")
    ap.add_argument("--doc", default="docs/estimate.md")
    opts = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        commit = extract(opts.megatron, tmp)
        tmu, vocab, flops = load(tmp)
        if opts.layouts:
            layouts(opts, commit, tmu, vocab, flops)
            return
        rng = random.Random(opts.seed)
        cases = named_cases() + [random_case(rng, i) for i in range(opts.cases)]
        cases = [run_case(tmu, vocab, flops, c) for c in cases]
        write(opts.out, {"megatron_lm_commit": commit, "files": FILES[:3], "cases": cases})


def layouts(opts, commit, tmu, vocab, flops):
    cases, rows = [], []
    for path in opts.layouts:
        run = subprocess.run([opts.mimoplan, "estimate", "--format", "json", path],
                             capture_output=True, text=True)
        if run.returncode not in (0, 1) or not run.stdout:
            sys.exit(f"{path}: mimoplan estimate failed: {run.stderr}")
        doc = json.loads(run.stdout)
        for m in doc["modules"]:
            case = dict(m["megatron_args"], name=f"{path}:{m['name']}", layout=path, module=m["name"])
            case = run_case(tmu, vocab, flops, case)
            cases.append(case)
            mb = 1024 * 1024
            terms = ", ".join(f"{t['name']} {t['bytes'] / mb:+,.0f}" for t in m["terms"]) or "none"
            rows.append(
                f"| `{path}` | {m['name']} | {case['expect']['report'].removeprefix('Theoretical memory footprints: ')} "
                f"| {m['megatron']['weight_and_optimizer_bytes'] / mb:,.2f} / {m['megatron']['activation_bytes'] / mb:,.2f} "
                f"| {terms} | {m['total_bytes'] / mb:,.0f} |"
            )
    write(opts.layouts_out, {"megatron_lm_commit": commit, "files": FILES[:3], "cases": cases})
    table = "\n".join([
        f"Generated by `scripts/gen-model-fixtures.py --layouts` at Megatron-LM {commit[:12]}. MB = MiB, as Megatron's report prints them.",
        "",
        "| layout | module | Megatron's report prints | mimoplan: Megatron's weights+optimizer / activations | mimoplan's terms (MB) | mimoplan total (MB) |",
        "| --- | --- | --- | --- | --- | ---: |",
        *rows,
    ])
    with open(opts.doc) as f:
        text = f.read()
    begin, end = "<!-- layouts:begin -->\n", "<!-- layouts:end -->"
    i, j = text.index(begin) + len(begin), text.index(end)
    tmp = opts.doc + ".tmp"
    with open(tmp, "w") as f:
        f.write(text[:i] + table + "\n" + text[j:])
    os.replace(tmp, opts.doc)
    print(f"wrote {opts.doc}: {len(rows)} modules")


def write(path, doc):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    cases = doc.pop("cases")
    with open(tmp, "w") as f:
        # One case a line: small diffs when upstream changes a figure.
        head = json.dumps(doc, sort_keys=True)[:-1]
        f.write(head + ', "cases": [\n')
        f.write(",\n".join(json.dumps(c, sort_keys=True) for c in cases))
        f.write("\n]}\n")
    doc["cases"] = cases
    os.replace(tmp, path)
    print(f"wrote {path}: {len(doc['cases'])} cases at Megatron-LM {doc['megatron_lm_commit'][:12]}")


if __name__ == "__main__":
    main()
