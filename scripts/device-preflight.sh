#!/usr/bin/env bash
# device-preflight.sh: run mimoplan preflight on this machine's GPUs, for
# docs/preflight.md ("Results on H200 machines").
#
# Run from the repository root with a linux/amd64 binary built beforehand
# (go build -o .bin/mimoplan ./cmd/mimoplan; .bin/ is ignored by git, so
# carry it to the GPU machine) and $OUT set to an empty directory. BIN
# overrides the binary, GPUS the GPU count (default: what nvidia-smi
# lists). For G GPUs it runs, from internal/preflight/testdata:
#
#   every *-Ggpu.yaml layout          mimoplan preflight LAYOUT --run      (must pass)
#   the colocated one, --lazy-init    communicators made at first use     (must pass)
#   corrupt-coloc-Ggpu.plan.json      the emitted line on a corrupted plan (must fail, 1)
#   --inject stall:1                  rank 1 never reaches a collective    (timeout report)
#   --inject reorder:1                rank 1 creates two groups swapped    (must fail)
#   two-nodes-2x2.yaml (4 GPUs only)  two torchrun nodes on this host, each
#                                     on 2 GPUs, from the per-node lines   (must pass)
#
# and writes into "$OUT/": env-Ggpu.txt (GPUs, links, torch and NCCL),
# preflight-Ggpu.txt (every command and its output) and
# exit-codes-Ggpu.txt. No step stops the script.
set -u

BIN=${BIN:-.bin/mimoplan}
OUT=${OUT:?set OUT to the directory for the results}
TD=internal/preflight/testdata
mkdir -p "$OUT"

# Multicast stays off on shared machines (NVLS can take a host's GPUs down).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1

if [ ! -x "$BIN" ]; then
	echo "device-preflight.sh: $BIN is missing; build it with go build -o $BIN ./cmd/mimoplan" >&2
	exit 2
fi
G=${GPUS:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')}
if command -v torchrun >/dev/null; then EP=torchrun; else EP="python3 -m torch.distributed.run"; fi
LOG="$OUT/preflight-${G}gpu.txt"
CODES="$OUT/exit-codes-${G}gpu.txt"
ENV="$OUT/env-${G}gpu.txt"
W=$(mktemp -d)
: >"$LOG"
: >"$CODES"

# run NAME CMD...: log the command and its output, record the status.
run() {
	local name=$1 rc start
	shift
	start=$(date +%s)
	{
		printf '$ %s\n' "$*"
		timeout 300 "$@" 2>&1
		rc=$?
		printf '[exit %d, %ds]\n\n' "$rc" "$(($(date +%s) - start))"
	} >>"$LOG"
	printf '%-4s %s\n' "$rc" "$name" >>"$CODES"
}

# emitted LAYOUT DIR FLAGS...: the torchrun line preflight --emit prints.
emitted() {
	local layout=$1 dir=$2
	shift 2
	"$BIN" preflight "$layout" --emit "$dir" --entrypoint "$EP" "$@" 2>>"$LOG"
}

{
	nvidia-smi -L
	nvidia-smi --query-gpu=index,name,driver_version,memory.total,pci.bus_id --format=csv
	nvidia-smi topo -m
	python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version(), "devices", torch.cuda.device_count())'
	echo "launcher: $EP"
	"$BIN" --version
} >"$ENV" 2>&1

for layout in "$TD"/*-"${G}"gpu.yaml; do
	run "preflight $(basename "$layout")" "$BIN" preflight "$layout" --run --entrypoint "$EP"
done

coloc="$TD/coloc-${G}gpu.yaml"
run "preflight $(basename "$coloc") --lazy-init" "$BIN" preflight "$coloc" --run --lazy-init --entrypoint "$EP"

# The corrupted plan replaces the emitted one; the line stays as printed.
line=$(emitted "$coloc" "$W/corrupt")
cp "$TD/corrupt-coloc-${G}gpu.plan.json" "$W/corrupt/plan.json"
run "corrupt-coloc-${G}gpu.plan.json (must fail)" sh -c "$line"

line=$(emitted "$coloc" "$W/stall" --timeout 10s --bytes 0)
run "--inject stall:1 (must time out)" sh -c "$line --inject stall:1"

line=$(emitted "$coloc" "$W/reorder" --timeout 20s --bytes 0)
run "--inject reorder:1 (must fail)" sh -c "$line --inject reorder:1"

# Two torchrun nodes on this one host, each on half of the GPUs, started
# with the per-node lines preflight --emit prints (static rendezvous).
nodes="$TD/two-nodes-2x2.yaml"
if [ "$G" = 4 ]; then
	lines=$(emitted "$nodes" "$W/nodes" --master-addr "$(hostname)" --master-port 29600)
	n0=$(printf '%s\n' "$lines" | sed -n 2p)
	n1=$(printf '%s\n' "$lines" | sed -n 4p)
	run "two-nodes-2x2.yaml as 2 torchrun nodes of 2 GPUs" sh -c "
		CUDA_VISIBLE_DEVICES=2,3 $n1 >$W/node1.log 2>&1 &
		CUDA_VISIBLE_DEVICES=0,1 $n0; rc=\$?; wait
		echo '--- node 1 said:'; cat $W/node1.log; exit \$rc"
fi

echo "device-preflight.sh: results in $OUT" >&2
cat "$CODES" >&2
