#!/usr/bin/env python3
"""Markdown tables of a measured fixture (scripts/measure-merge.py's output), for docs/estimate.md
and docs/suggest.md:

  measure-table.py memory testdata/measured/h200-x2.json
  measure-table.py step   testdata/measured/h200-x2.json

memory: per configuration the busiest rank's nvidia-smi used memory (the process's, after the
last step), the largest max_memory_allocated and max_memory_reserved over ranks, and Megatron's
theoretical figure. step: median step time of the slowest rank over the timed steps, its spread,
tokens/s and model TFLOP/s per GPU (training.py's FLOPs over the median step)."""

import json
import sys

MiB = 1024 * 1024


def layout(c):
    a = c["arguments"]
    if "language" in a:
        n = a["language"]["world_size"]
        return f"both modules on {n} GPUs, dp{n}" if n > 1 else "vision 1 GPU + language 1 GPU"
    parts = [f"{k}{a[f]}" for k, f in (("tp", "tensor_model_parallel_size"),
                                         ("pp", "pipeline_model_parallel_size"),
                                         ("cp", "context_parallel_size"),
                                         ("ep", "expert_model_parallel_size")) if a[f] > 1]
    dp = c["gpus"] // (a["tensor_model_parallel_size"] * a["pipeline_model_parallel_size"]
                       * a["context_parallel_size"])
    if dp > 1:
        parts.append(f"dp{dp}")
    if a["sequence_parallel"]:
        parts.append("sp")
    return " ".join(parts) or "1 GPU"


def stack(c):
    a = c["arguments"].get("language", c["arguments"])
    s = [a.get("attention_backend", "unfused")]
    if a["recompute_granularity"]:
        s.append(a["recompute_granularity"])
    if a["use_distributed_optimizer"]:
        s.append("distopt")
    return ", ".join(s)


def rows(doc):
    for name, c in sorted(doc["configs"].items(), key=lambda x: (x[1]["gpus"], x[0])):
        yield name, c
    for name, c in sorted(doc.get("repeats", {}).items()):
        yield f"{name} (again, {c['run']})", c


def memory(doc):
    print("| configuration | GPUs | layout | attention, recompute, optimizer | mbs/gbs | "
          "nvidia-smi used, busiest rank (MiB) | max allocated (MiB) | max reserved (MiB) | "
          "Megatron's figure (MiB) | run |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, c in rows(doc):
        r = c["ranks"]
        smi = max(x["smi_after_last_step"].get("process_used_mib", 0) for x in r)
        alloc = max(x["max_allocated"] for x in r) / MiB
        res = max(x["max_reserved"] for x in r) / MiB
        t = c.get("megatron_theory")
        a = c["arguments"].get("language", c["arguments"])
        theory = f"{t['total_bytes'] / MiB:,.0f}" if t else "-"
        if "language" in c["arguments"] and c["arguments"]["language"]["world_size"] == 1:
            per = ", ".join(f"{x['module']} {x['smi_after_last_step'].get('process_used_mib')}"
                            for x in r)
            smi = f"{smi:,} ({per})"
        else:
            smi = f"{smi:,}"
        print(f"| {name} | {c['gpus']} | {layout(c)} | {stack(c)} | "
              f"{a['micro_batch_size']}/{a['global_batch_size']} | {smi} | {alloc:,.0f} | "
              f"{res:,.0f} | {theory} (language) | {c['run']} |".replace(
                  " (language) |", " (language) |" if "language" in c["arguments"] else " |"))


def step(doc):
    print("| configuration | GPUs | layout | attention, recompute, optimizer | mbs/gbs | "
          "median step (ms) | min-max (ms) | tokens/s | model TFLOP/s per GPU | run |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, c in rows(doc):
        s = c["step"]
        a = c["arguments"].get("language", c["arguments"])
        print(f"| {name} | {c['gpus']} | {layout(c)} | {stack(c)} | "
              f"{a['micro_batch_size']}/{a['global_batch_size']} | "
              f"{s['median_step_s'] * 1e3:,.1f} | {s['min_step_s'] * 1e3:,.0f}-"
              f"{s['max_step_s'] * 1e3:,.0f} | {s['tokens_per_s']:,.0f} | "
              f"{s['model_tflops_per_s_per_gpu']:.0f} | {c['run']} |")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("memory", "step"):
        raise SystemExit(__doc__)
    with open(sys.argv[2]) as f:
        d = json.load(f)
    {"memory": memory, "step": step}[sys.argv[1]](d)
