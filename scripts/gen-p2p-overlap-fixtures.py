#!/usr/bin/env python3
"""Runs Megatron-LM's own argument validation on the language module's
pipeline arguments over a grid of (pp, virtual pipeline, overlap_p2p_comm)
and writes internal/validate/testdata/p2p-overlap-megatron.json, which
internal/validate's TestP2POverlapMatchesMegatron compares with the rules
vpp-needs-pp and vpp-needs-pp-without-p2p-overlap (target megatron-lm).

What runs is examples/mimo/pretrain_mimo.py's _parse_and_validate (its own
parser, Megatron-LM's parse_args and validate_args, the example's grid
check) on the argv of a language-only launch of pp ranks
(--llm-only --llm-pp PP), with --num-layers 72 (a multiple of every
pp x vpp of the grid), the virtual pipeline as mimoplan writes it
(--num-virtual-stages-per-pipeline-rank V, or
--pipeline-model-parallel-layout) and --no-overlap-p2p-communication or
not. The check in question is arguments.py:1000-1008 at COMMIT.

Upstream's code is never committed: megatron/ and examples/mimo are
extracted from the Megatron-LM mirror at COMMIT into a scratch folder
(--extract) and run there (--run) on CPU: no GPU is used, only argument
validation. A package missing from the machine (torch and the rest) is
stubbed, as scripts/gen-mimo-vpp-fixtures.py does (its Stub and
StubFinder are reused); the fixture lists what was stubbed.

Usage:
  scripts/gen-p2p-overlap-fixtures.py --extract DIR [--mirror MIRROR]
  scripts/gen-p2p-overlap-fixtures.py --run DIR [--out FILE]
"""

import argparse
import importlib.util
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("mimovpp", os.path.join(HERE, "gen-mimo-vpp-fixtures.py"))
mimovpp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mimovpp)

COMMIT = mimovpp.COMMIT
NUM_LAYERS = 72


def base(pp):
    return [
        "--llm-only", "--llm-offset", "0", "--llm-tp", "1", "--llm-pp", str(pp), "--llm-dp", "1",
        "--use-distributed-optimizer", "--calculate-per-token-loss",
        "--micro-batch-size", "1", "--global-batch-size", "8",
        "--seq-length", "64", "--max-position-embeddings", "64",
        "--num-layers", str(NUM_LAYERS), "--hidden-size", "64", "--num-attention-heads", "4",
        "--vocab-size", "128", "--bf16", "--train-iters", "1",
    ]


def pipeline_layout(stages):
    """A pipeline_model_parallel_layout of stages stages over NUM_LAYERS."""
    per = NUM_LAYERS // stages
    parts = [f"t*{per}"] * stages
    parts[0] = "E" + parts[0]
    parts[-1] = parts[-1] + "L"
    return "|".join(parts)


def cases():
    """name -> (pp, vpp as mimoplan states it, how, overlap, argv)."""
    out = {}
    for pp in range(1, 5):
        for vpp in range(1, 4):
            for overlap in (True, False):
                argv = base(pp)
                if vpp > 1:
                    argv += ["--num-virtual-stages-per-pipeline-rank", str(vpp)]
                if not overlap:
                    argv += ["--no-overlap-p2p-communication"]
                out[f"pp{pp}-vpp{vpp}-{'overlap' if overlap else 'no-overlap'}"] = (pp, vpp, "vpp", overlap, argv)
    for pp, stages in ((2, 4), (2, 2), (3, 6)):
        for overlap in (True, False):
            argv = base(pp) + ["--pipeline-model-parallel-layout", pipeline_layout(stages)]
            if not overlap:
                argv += ["--no-overlap-p2p-communication"]
            out[f"pp{pp}-layout{stages}-{'overlap' if overlap else 'no-overlap'}"] = (pp, stages // pp, "layout", overlap, argv)
    return out


def one_case(root, name, stubs):
    sys.path.insert(0, root)
    pp = cases()[name][0]
    os.environ.update(RANK="0", WORLD_SIZE=str(pp), LOCAL_RANK="0")
    if stubs:
        sys.meta_path.append(mimovpp.StubFinder(stubs))
    try:
        import examples.mimo.pretrain_mimo as p

        sys.argv = ["pretrain_mimo.py"] + cases()[name][4]
        args = p._parse_and_validate()
        res = {"outcome": "ok", "result": {
            "pipeline_model_parallel_size": args.pipeline_model_parallel_size,
            "virtual_pipeline_model_parallel_size": args.virtual_pipeline_model_parallel_size,
            "overlap_p2p_comm": args.overlap_p2p_comm}}
    except ModuleNotFoundError as e:
        res = {"outcome": "missing", "module": e.name}
    except BaseException as e:  # AssertionError, SystemExit from argparse
        res = {"outcome": "raises", "exception": type(e).__name__,
               "where": mimovpp.where(e.__traceback__, root),
               "message": " ".join(str(e).split())[:400]}
    print("RESULT " + json.dumps(res))


def run(root, out):
    root = os.path.abspath(root)
    results, stubs = {}, []
    for name, (pp, vpp, how, overlap, argv) in cases().items():
        while True:
            p = subprocess.run([sys.executable, __file__, "--case", name, "--root", root, "--stubs", ",".join(stubs)],
                               capture_output=True, text=True, timeout=240)
            lines = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
            if not lines:
                sys.exit(f"{name}: no result\n{p.stderr[-2000:]}")
            res = json.loads(lines[-1][len("RESULT "):])
            if res["outcome"] != "missing" or res["module"] is None or len(stubs) > 20:
                break
            # Stubs found for one case stay for the rest.
            stubs.append(res["module"].split(".")[0])
        res.update(pp=pp, vpp=vpp, virtual_pipeline=how, overlap_p2p_comm=overlap, argv=argv)
        results[name] = res
        print(name, json.dumps({k: res.get(k) for k in ("outcome", "where", "result")}), flush=True)
    commit = open(os.path.join(root, "COMMIT")).read().strip()
    assert commit == COMMIT
    doc = {"generated_by": "scripts/gen-p2p-overlap-fixtures.py", "megatron_commit": commit,
           "python": sys.version.split()[0], "stubbed": stubs, "num_layers": NUM_LAYERS, "cases": results}
    with open(out, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(results)} cases to {out}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--extract")
    ap.add_argument("--mirror", default=mimovpp.MIRROR)
    ap.add_argument("--run")
    ap.add_argument("--out", default="internal/validate/testdata/p2p-overlap-megatron.json")
    ap.add_argument("--case")
    ap.add_argument("--root")
    ap.add_argument("--stubs", default="")
    a = ap.parse_args()
    if a.case:
        one_case(a.root, a.case, [s for s in a.stubs.split(",") if s])
    elif a.extract:
        mimovpp.extract(a.mirror, a.extract)
    elif a.run:
        run(a.run, a.out)
    else:
        ap.error("give --extract DIR or --run DIR")


if __name__ == "__main__":
    main()
