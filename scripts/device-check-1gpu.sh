#!/usr/bin/env bash
# Usage: build .bin/mimoplan with CGO_ENABLED=1 GOARCH=amd64, carry .bin, run with OUT set.
# One call on a 1-GPU machine: the real NVML path (probe, validate --probe, suggest --probe) and a
# 1-rank NCCL preflight with the current binary. ONLY=suggest runs the suggest --probe steps alone.
set -u
B=.bin/mimoplan
{
echo "## env"; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
if [ "${ONLY:-}" != suggest ]; then # ONLY=suggest runs the suggest --probe steps alone
python3 -c 'import torch;print("torch",torch.__version__,"nccl",torch.cuda.nccl.version())'; which torchrun
echo "## mimoplan probe"; $B probe; echo "exit $?"
echo "## mimoplan probe --format json"; $B probe --format json; echo "exit $?"
for L in testdata/measured/dense-medium-full.yaml testdata/gpu/llama8b-1gpu.yaml layouts/nemotron-vlm-8gpu.yaml; do
  echo "## mimoplan validate --probe $L"; $B validate --probe "$L"; echo "exit $?"
done
echo "## mimoplan estimate testdata/measured/dense-medium-full.yaml"; $B estimate testdata/measured/dense-medium-full.yaml; echo "exit $?"
echo "## mimoplan preflight testdata/measured/dense-medium-full.yaml --run --bytes 16MiB"
timeout 180 $B preflight testdata/measured/dense-medium-full.yaml --run --bytes 16MiB; echo "exit $?"
fi
echo "## mimoplan suggest testdata/suggest/vlm-probe.yaml --probe --format json --top 3 --out \$OUT/probed.yaml"
$B suggest testdata/suggest/vlm-probe.yaml --probe --format json --top 3 --out "$OUT/probed.yaml"; echo "exit $?"
echo "## the written layout"; cat "$OUT/probed.yaml"
echo "## mimoplan validate --probe \$OUT/probed.yaml"; $B validate --probe "$OUT/probed.yaml"; echo "exit $?"
echo "## mimoplan suggest testdata/suggest/three-8gpu.yaml --probe --top 1 (a spec for 8 GPUs: the notes)"
$B suggest testdata/suggest/three-8gpu.yaml --probe --top 1; echo "exit $?"
echo "## CUDA_VISIBLE_DEVICES=-1 mimoplan suggest --probe (no GPU visible: exit 3)"
CUDA_VISIBLE_DEVICES=-1 $B suggest testdata/suggest/vlm-probe.yaml --probe; echo "exit $?"
} 2>&1 | tee "$OUT/gpucheck.txt"
