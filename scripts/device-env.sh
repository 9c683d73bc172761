#!/usr/bin/env bash
# device-env.sh: a layout's env block reaches every rank through a real
# torchrun, and PyTorch's allocator takes it (docs/launch.md,
# "Environment"). Run from the repository root on a machine with 2 GPUs,
# torch and a linux/amd64 mimoplan (BIN, default .bin/mimoplan; see
# device-probe.sh). Prints one line a rank: the two variables as the rank
# sees them, and whether its allocator's segments are expandable
# (torch.cuda.memory._snapshot's is_expandable). Exit status: the plan's.
set -eu
BIN=${BIN:-.bin/mimoplan}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/env-2gpu.yaml" <<'YAML'
version: 1
name: env-2gpu
cluster: {nodes: 1, gpus_per_node: 2}
batch: {micro_batch_size: 1, global_batch_size: 2}
env:
  PYTORCH_CUDA_ALLOC_CONF: expandable_segments:True
  CUDA_DEVICE_MAX_CONNECTIONS: 1
modules:
  - {name: language, num_ranks: 2, tp: 2}
YAML
cat > "$work/envcheck.py" <<'PY'
import os, torch
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
x = torch.empty(64 << 20, dtype=torch.uint8, device="cuda")
segs = torch.cuda.memory._snapshot()["segments"]
print(f"rank {os.environ['RANK']}: PYTORCH_CUDA_ALLOC_CONF={os.environ.get('PYTORCH_CUDA_ALLOC_CONF')} "
      f"CUDA_DEVICE_MAX_CONNECTIONS={os.environ.get('CUDA_DEVICE_MAX_CONNECTIONS')} "
      f"expandable_segments_in_use={any(s.get('is_expandable') for s in segs)}", flush=True)
PY
"$BIN" launch-plan "$work/env-2gpu.yaml" --out "$work/plan.sh" -- "$work/envcheck.py"
bash "$work/plan.sh" 0
