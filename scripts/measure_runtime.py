"""What both runners of scripts/measure-memory.py share on the GPU: nvidia-smi and allocator
counters, the process group, the step timer and the record of the software; and what the kernel
rate scripts (measure-gemm.py, measure-attention.py) share: their command line and timer."""

import argparse
import os
import platform
import statistics
import subprocess
import time

import torch

MiB = 1024 * 1024


def smi(pid):
    """nvidia-smi's used memory, MiB: this process's and each GPU's."""
    out = {}
    try:
        apps = subprocess.run(
            ["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=30).stdout
        for line in apps.splitlines():
            p, used = [x.strip() for x in line.split(",")]
            if p == str(pid):
                out["process_used_mib"] = int(used)
        gpus = subprocess.run(
            ["nvidia-smi", "--query-gpu=index,pci.bus_id,memory.used,memory.total",
             "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=30).stdout
        out["gpus"] = [dict(zip(("index", "bus_id", "used_mib", "total_mib"),
                                [x.strip() for x in line.split(",")]))
                       for line in gpus.splitlines()]
    except (OSError, subprocess.SubprocessError, ValueError) as e:
        out["error"] = repr(e)
    return out


def snapshot():
    torch.cuda.synchronize()
    s = torch.cuda.memory_stats()
    return {
        "allocated": torch.cuda.memory_allocated(),
        "reserved": torch.cuda.memory_reserved(),
        "max_allocated": torch.cuda.max_memory_allocated(),
        "max_reserved": torch.cuda.max_memory_reserved(),
        "num_alloc_retries": s.get("num_alloc_retries", 0),
        "inactive_split_bytes": s.get("inactive_split_bytes.all.current", 0),
    }


def init_process(gpus, name):
    """Rank, world size and the CUDA device; a one-GPU configuration may run without torchrun."""
    if "RANK" not in os.environ:
        os.environ.update(RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1",
                          MASTER_PORT=os.environ.get("MASTER_PORT", "29511"))
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    if world != gpus:
        raise SystemExit(f"{name} needs {gpus} ranks, started with {world}")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    return rank, world


class StepTimer:
    """Wall time of each training step between two torch.cuda.synchronize calls, every rank
    starting together (a barrier first)."""

    def __init__(self):
        self.times = []

    def start(self):
        torch.distributed.barrier()
        torch.cuda.synchronize()
        self._t0 = time.perf_counter()

    def stop(self):
        torch.cuda.synchronize()
        self.times.append(time.perf_counter() - self._t0)


def step_summary(ranks, warmup, tokens_per_step, flops_per_step, gpus):
    """The step of the job is the slowest rank's; median and spread over the timed steps."""
    per_step = [max(r["step_seconds"][i] for r in ranks)
                for i in range(len(ranks[0]["step_seconds"]))]
    timed = per_step[warmup:]
    if not timed:
        return {"warmup_steps": warmup, "timed_steps": 0}
    med = statistics.median(timed)
    out = {
        "warmup_steps": warmup,
        "timed_steps": len(timed),
        "median_step_s": med,
        "min_step_s": min(timed),
        "max_step_s": max(timed),
        "tokens_per_step": tokens_per_step,
        "tokens_per_s": tokens_per_step / med,
        "model_flops_per_step": flops_per_step,
        "model_tflops_per_s_per_gpu": flops_per_step / med / gpus / 1e12,
    }
    if len(timed) > 1:
        out["stdev_step_s"] = statistics.stdev(timed)
    return out


def env_info(optimizer=None):
    info = {
        "torch": torch.__version__, "cuda": torch.version.cuda,
        "nccl": ".".join(map(str, torch.cuda.nccl.version())),
        "gpu": torch.cuda.get_device_name(), "python": platform.python_version(),
        "megatron_commit": os.environ.get("MEGATRON_COMMIT", "unknown"),
        "script_version": os.environ.get("MEASURE_SCRIPT_VERSION", "unknown"),
        # The caching allocator's options (expandable_segments moves its
        # reserve above the peak: docs/estimate.md).
        "pytorch_cuda_alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
    }
    try:
        info["driver"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=30).stdout.split("\n")[0].strip()
    except (OSError, subprocess.SubprocessError) as e:
        info["driver"] = repr(e)
    if optimizer is not None:
        opts = getattr(optimizer, "chained_optimizers", None) or [optimizer]
        inner = [type(getattr(o, "optimizer", None)) for o in opts]
        info["optimizer"] = f"{type(optimizer).__name__}: " + ", ".join(
            f"{type(o).__name__}({t.__module__}.{t.__name__})" for o, t in zip(opts, inner))
    return info


def kernel_options(description):
    """The kernel rate scripts' command line (--out, --warmup, --reps) and a CUDA generator seeded
    with 0, so that every run draws the same operands."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--out", required=True)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--reps", type=int, default=20)
    o = p.parse_args()
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    return o, g


def cuda_median(fn, warmup, reps):
    """fn's GPU time in seconds: the median of reps runs after warmup, each between two CUDA
    events and waited for."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) / 1e3)
    return statistics.median(times)
