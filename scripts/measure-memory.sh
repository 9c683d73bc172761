#!/usr/bin/env bash
# Run scripts/measure-memory.py for each configuration on this machine's GPUs and merge the
# results into OUT_DIR/results.json (log: OUT_DIR/measure.log).
#
#   scripts/measure-memory.sh MEGATRON_DIR OUT_DIR [CONFIG...]
#
# MEGATRON_DIR holds an extracted Megatron-LM tree (megatron/core,
# megatron/training/theoretical_memory_usage.py and megatron/training/training.py are used), e.g.
#   git -C MIRROR archive COMMIT megatron/core megatron/training/theoretical_memory_usage.py \
#       megatron/training/training.py | tar -x -C DIR
#   echo COMMIT > DIR/COMMIT
# Without CONFIG names it runs every configuration that fits the GPUs it sees, in the order
# given, and skips the rest once BUDGET_S seconds (default 480) have passed; each has
# CONFIG_TIMEOUT_S (default 150). With two GPUs or more, one-GPU configurations run two at a
# time, one on each of GPUs 0 and 1 (PAIR_1GPU=0 runs them one by one); every step is timed on
# its own GPU, so the pair shares only the host. WARMUP and TIMED (default 3 and 10) steps.
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
MEASURE_SCRIPT_VERSION=$(cat "$here"/measure-memory.py "$here"/measure_*.py | sha256sum | cut -c1-12)
export MEGATRON_COMMIT MEASURE_SCRIPT_VERSION

gpus=$(nvidia-smi -L | grep -c '^GPU')
log=$out/measure.log
{
	date -u
	nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv
	python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
	echo "megatron $MEGATRON_COMMIT, scripts $MEASURE_SCRIPT_VERSION, $gpus GPU(s)"
} >"$log" 2>&1

python3 "$script" --megatron "$megatron" --list >"$work/list.json" || exit 1
need() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]]["gpus"])' "$work/list.json" "$1"; }
if [ $# -eq 0 ]; then
	mapfile -t configs < <(python3 -c 'import json,sys; [print(n) for n in json.load(open(sys.argv[1]))]' "$work/list.json")
else
	configs=("$@")
fi

start=$SECONDS
budget=${BUDGET_S:-480}
port=29511
# Runs CONFIG, its log to $work/CONFIG.log.
# one CONFIG GPUS PORT [VISIBLE]
one() {
	local c=$1 n=$2 port=$3 vis=${4:-}
	(
		[ -n "$vis" ] && export CUDA_VISIBLE_DEVICES=$vis
		timeout -k 10 "${CONFIG_TIMEOUT_S:-150}" python3 -m torch.distributed.run --nproc_per_node "$n" \
			--master_addr 127.0.0.1 --master_port "$port" \
			"$script" --megatron "$megatron" --config "$c" --out "$work/$c.json" \
			--warmup "${WARMUP:-3}" --timed "${TIMED:-10}" >"$work/$c.log" 2>&1
		echo "== $c: exit $?" >>"$work/$c.log"
	)
}
finish() {
	local c=$1
	{ echo "== $c"; cat "$work/$c.log"; } >>"$log"
	grep -h "^$c: smi=\|^== $c: exit" "$work/$c.log"
}
pending=""
for c in "${configs[@]}"; do
	if ((SECONDS - start > budget)); then
		echo "== $c: skipped, ${budget}s budget spent" | tee -a "$log"
		continue
	fi
	n=$(need "$c") || { echo "== $c: unknown" | tee -a "$log"; continue; }
	if ((n > gpus)); then
		echo "== $c: needs $n GPUs, $gpus here; not run" | tee -a "$log"
		continue
	fi
	if ((n == 1 && gpus >= 2)) && [ "${PAIR_1GPU:-1}" = 1 ]; then
		if [ -z "$pending" ]; then
			pending=$c
			continue
		fi
		port=$((port + 2))
		one "$pending" 1 $((port - 1)) 0 &
		one "$c" 1 "$port" 1
		wait
		finish "$pending"
		finish "$c"
		pending=""
		continue
	fi
	one "$c" "$n" $((port += 1))
	finish "$c"
done
if [ -n "$pending" ]; then
	one "$pending" 1 $((port += 1)) 0
	finish "$pending"
fi

python3 - "$work" "$out/results.json" <<'PY'
import glob, json, os, subprocess, sys
work, dest = sys.argv[1], sys.argv[2]
smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                      "--format=csv,noheader"], capture_output=True, text=True).stdout.splitlines()
res = {"nvidia_smi": smi, "megatron_commit": os.environ["MEGATRON_COMMIT"],
       "script_version": os.environ["MEASURE_SCRIPT_VERSION"], "configs": {}}
for f in sorted(glob.glob(os.path.join(work, "*.json"))):
    if f.endswith("list.json"):
        continue
    with open(f) as fh:
        d = json.load(fh)
    res["configs"][d["config"]] = d
with open(dest, "w") as fh:
    json.dump(res, fh, indent=1)
print(f"{len(res['configs'])} configuration(s) in {dest}")
PY
