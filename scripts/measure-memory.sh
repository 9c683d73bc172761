#!/usr/bin/env bash
# Run scripts/measure-memory.py for each configuration on this machine's GPUs and merge the
# results into OUT_DIR/results.json (log: OUT_DIR/measure.log).
#
#   scripts/measure-memory.sh MEGATRON_DIR OUT_DIR [CONFIG...]
#
# MEGATRON_DIR holds an extracted Megatron-LM tree (megatron/core and
# megatron/training/theoretical_memory_usage.py are what is used), e.g.
#   git -C MIRROR archive COMMIT megatron/core megatron/training/theoretical_memory_usage.py | tar -x -C DIR
#   echo COMMIT > DIR/COMMIT
# Without CONFIG names it runs every configuration that fits the GPUs it sees, smallest first,
# and skips the rest once BUDGET_S seconds (default 480) have passed.
set -u
if [ $# -lt 2 ]; then
	echo "usage: $0 MEGATRON_DIR OUT_DIR [CONFIG...]" >&2
	exit 2
fi
megatron=$(cd "$1" && pwd) || exit 2
out=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
script=$here/measure-memory.py
mkdir -p "$out" || exit 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Never NVLink multicast on shared hosts; one connection for tp/sp overlap ordering.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export CUDA_DEVICE_MAX_CONNECTIONS=1 PYTHONUNBUFFERED=1
MEGATRON_COMMIT=$(cat "$megatron/COMMIT" 2>/dev/null || echo unknown)
export MEGATRON_COMMIT

gpus=$(nvidia-smi -L | grep -c '^GPU')
log=$out/measure.log
{
	date -u
	nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv
	python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
	echo "megatron $MEGATRON_COMMIT, $gpus GPU(s)"
} >"$log" 2>&1

if [ $# -eq 0 ]; then
	mapfile -t configs < <(python3 "$script" --megatron "$megatron" --list |
		python3 -c 'import json,sys; [print(n) for n,c in json.load(sys.stdin).items() if c["gpus"] <= '"$gpus"']')
else
	configs=("$@")
fi

start=$SECONDS
budget=${BUDGET_S:-480}
port=29511
for c in "${configs[@]}"; do
	if ((SECONDS - start > budget)); then
		echo "== $c: skipped, ${budget}s budget spent" | tee -a "$log"
		continue
	fi
	n=$(python3 "$script" --megatron "$megatron" --list |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["'"$c"'"]["gpus"])') || continue
	if ((n > gpus)); then
		echo "== $c: needs $n GPUs, $gpus here; not run" | tee -a "$log"
		continue
	fi
	echo "== $c ($n GPU)" >>"$log"
	port=$((port + 1))
	timeout "${CONFIG_TIMEOUT_S:-150}" python3 -m torch.distributed.run --nproc_per_node "$n" \
		--master_addr 127.0.0.1 --master_port "$port" \
		"$script" --megatron "$megatron" --config "$c" --out "$work/$c.json" >>"$log" 2>&1
	rc=$?
	echo "== $c: exit $rc" | tee -a "$log"
	grep -h "^$c: max_allocated" "$log" | tail -1
done

python3 - "$work" "$out/results.json" <<'EOF'
import glob, json, os, subprocess, sys
work, dest = sys.argv[1], sys.argv[2]
smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                      "--format=csv,noheader"], capture_output=True, text=True).stdout.splitlines()
res = {"nvidia_smi": smi, "configs": {}}
for f in sorted(glob.glob(os.path.join(work, "*.json"))):
    with open(f) as fh:
        d = json.load(fh)
    res["configs"][d["config"]] = d
with open(dest, "w") as fh:
    json.dump(res, fh, indent=1)
print(f"{len(res['configs'])} configuration(s) in {dest}")
EOF
