#!/usr/bin/env bash
# One call of the device tool on a 2-GPU machine: scripts/device-preflight.sh's 2-GPU suite (when
# DEV/mimoplan exists and PREFLIGHT is not 0), then scripts/measure-memory.sh over the named
# configurations (all when none is named), ending within CALL_BUDGET_S seconds (default 470) plus
# one configuration's CONFIG_TIMEOUT_S (default 100). Run from the repository root:
#
#   OUT=DIR scripts/measure-on-device.sh [CONFIG...]
#
# DEV (default .dev, ignored by git and carried) holds megatron/ (see measure-memory.sh),
# scripts/ (copies of measure-memory.{py,sh} and measure_*.py, so a run does not depend on what
# the checkout holds) and the linux/amd64 mimoplan binary for the preflight suite.
set -u
OUT=${OUT:?set OUT}
DEV=${DEV:-.dev}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
t0=$SECONDS
nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.max.sm --format=csv
nvidia-smi topo -m
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())'
if [ "${PREFLIGHT:-1}" != 0 ] && [ -x "$DEV/mimoplan" ]; then
	BIN=$DEV/mimoplan OUT=$OUT/preflight BUDGET=${PREFLIGHT_BUDGET:-90} STEP_LIMIT=60 \
		bash scripts/device-preflight.sh
	echo "device-preflight.sh: exit $?, $((SECONDS - t0))s"
fi
BUDGET_S=$((${CALL_BUDGET_S:-470} - (SECONDS - t0))) CONFIG_TIMEOUT_S=${CONFIG_TIMEOUT_S:-100} \
	bash "$DEV/scripts/measure-memory.sh" "$DEV/megatron" "$OUT" "$@"
echo "measure-on-device.sh: $((SECONDS - t0))s in all"
