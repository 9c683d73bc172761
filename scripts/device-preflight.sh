#!/usr/bin/env bash
# device-preflight.sh: run mimoplan preflight on this machine's GPUs, for
# docs/preflight.md ("Results on H200 machines").
#
# Needs torch with NCCL and a linux/amd64 mimoplan built beforehand
# (CGO_ENABLED=1 go build -o .bin/mimoplan ./cmd/mimoplan; .bin/ is ignored
# by git, so carry it to the GPU machine). Installs nothing, needs no
# network. Run from the repository root with $OUT set:
#
#   OUT=/some/dir scripts/device-preflight.sh
#
# On a machine with 4 GPUs or more it runs the 2-GPU suite on GPUs 0,1
# (CUDA_VISIBLE_DEVICES=0,1) and then the 4-GPU suite on GPUs 0-3; with 2
# or 3 GPUs only the first. (A CUDA_VISIBLE_DEVICES set by the caller is
# kept: the suites use its first 2 and 4 entries.) Each suite, from
# internal/preflight/testdata:
#
#   nonco-Ggpu.yaml        encoder and language model on separate ranks  must pass
#   coloc-Ggpu.yaml        both on every rank                            must pass
#   lm-pp-2gpu.yaml /      language model with pp (2 GPUs: an ep 2 and   must pass
#   moe-ep-pp-4gpu.yaml    pp 2 language model needs 4)
#   corrupt-coloc-Ggpu     coloc's emitted line on a corrupted plan       must fail (1)
#
# then, on 4 GPUs, while the time budget lasts:
#
#   --inject stall:1       rank 1 never reaches a collective             must time out, naming rank 1
#   --inject reorder:1     rank 1 creates two groups swapped             must fail (1) on the sums
#   two-nodes-2x2.yaml     two torchrun nodes of 2 GPUs on this host,    must pass
#                          from the per-node lines --emit prints
#   coloc-4gpu --lazy-init communicators made at first use               must pass
#
# Every step has a time limit (STEP_LIMIT, default 90 s, then SIGKILL 20 s
# later) and the payload's own --timeout is 30 s, so a hang is reported
# well inside it; no step starts once BUDGET seconds (default 240) have
# gone, so the script ends within BUDGET + STEP_LIMIT + 20 s at worst.
# It writes four files into "$OUT/" (flat):
#   env.txt            GPUs, links, driver, torch, NCCL, the binary
#   preflight-2gpu.txt every command of the 2-GPU suite and all it printed
#   preflight-4gpu.txt the same for 4 GPUs
#   summary.txt        one line per step: GPUs, exit status, wall time,
#                      whether the result was the expected one, the step
# and exits 0 only when every step ran and gave its expected result.
#
# Dry run without GPUs (stand-ins for torchrun and nvidia-smi over a fake
# torch; checks the script's plumbing and verdicts, not NCCL):
#   PATH=$PWD/internal/preflight/payload/fake_torch/bin:$PATH BYTES=4KiB OUT=/tmp/dry scripts/device-preflight.sh
set -u

BIN=${BIN:-.bin/mimoplan}
OUT=${OUT:?set OUT to the directory for the results}
BUDGET=${BUDGET:-240}
STEP_LIMIT=${STEP_LIMIT:-90}
BYTES=${BYTES:-64MiB} # of the timed all-reduce; a dry run with a stand-in torch wants less
TD=internal/preflight/testdata
mkdir -p "$OUT"
SUMMARY="$OUT/summary.txt"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
T0=$(date +%s)

# Multicast stays off on shared machines (NVLS can take a host's GPUs down).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1

if [ ! -x "$BIN" ]; then
	echo "device-preflight.sh: $BIN is missing; build it with CGO_ENABLED=1 go build -o $BIN ./cmd/mimoplan" >&2
	exit 2
fi
VIS=${CUDA_VISIBLE_DEVICES:-$(seq -s, 0 $(($(nvidia-smi -L 2>/dev/null | grep -c '^GPU') - 1)))}
NGPU=$(printf '%s' "$VIS" | tr ',' '\n' | grep -c .)
# gpus FIRST LAST: those entries of VIS (1-based), comma-separated.
gpus() { printf '%s' "$VIS" | cut -d, -f"$1-$2"; }
if command -v torchrun >/dev/null; then EP=torchrun; else EP="python3 -m torch.distributed.run"; fi
HOST=$(hostname)

{
	date -u '+%Y-%m-%d %H:%M:%S UTC'
	echo "host $HOST, kernel $(uname -r)"
	nvidia-smi -L
	nvidia-smi --query-gpu=index,name,driver_version,memory.total,pci.bus_id --format=csv
	nvidia-smi topo -m
	python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", ".".join(map(str, torch.cuda.nccl.version())), "devices", torch.cuda.device_count())'
	echo "launcher: $EP"
	"$BIN" --version
	env | grep -E '^(NCCL|TORCH|CUDA)_' | sort
} >"$OUT/env.txt" 2>&1
printf '%-5s %-5s %-6s %-10s %s\n' GPUS EXIT WALL RESULT STEP >"$SUMMARY"

# step G NAME EXPECT CMD...: run CMD under the step limit with the GPUs of
# suite G visible, log it and all it printed, and judge the result. EXPECT
# is pass (0 and "ok: all"), fail (1 and "FAILED"), timeout (not 0 and
# "did not answer"), or reorder (1 and a sum of rank 0 alone).
step() {
	local g=$1 name=$2 expect=$3 rc start wall ok out=$W/out
	shift 3
	if [ $(($(date +%s) - T0)) -ge "$BUDGET" ]; then
		printf '%-5s %-5s %-6s %-10s %s\n' "$g" - - skipped "$name (time budget spent)" >>"$SUMMARY"
		return
	fi
	start=$(date +%s)
	CUDA_VISIBLE_DEVICES=$(gpus 1 "$g") timeout -k 20 "$STEP_LIMIT" "$@" >"$out" 2>&1
	rc=$?
	wall=$(($(date +%s) - start))
	case $expect in
	pass) [ "$rc" = 0 ] && grep -q '^ok: all' "$out" ;;
	fail) [ "$rc" = 1 ] && grep -q '^FAILED: ' "$out" ;;
	timeout) [ "$rc" != 0 ] && grep -q 'did not answer' "$out" ;;
	reorder) [ "$rc" = 1 ] && grep -q 'the all-reduce summed ranks \[0\], the plan predicts \[0, 1\]' "$out" ;;
	esac
	if [ $? = 0 ]; then ok=expected; else ok=UNEXPECTED; fi
	{
		printf '$ %s\n' "$*"
		cat "$out"
		printf '[exit %d, %ds, %s: %s]\n\n' "$rc" "$wall" "$ok" "$expect"
	} >>"$OUT/preflight-${g}gpu.txt"
	printf '%-5s %-5s %-6s %-10s %s\n' "$g" "$rc" "${wall}s" "$ok" "$name" >>"$SUMMARY"
}

# emitted G LAYOUT DIR FLAGS...: write DIR, print the line(s) --emit prints.
emitted() {
	local g=$1 layout=$2 dir=$3
	shift 3
	"$BIN" preflight "$layout" --out "$dir" --entrypoint "$EP" --timeout 30s --bytes "$BYTES" "$@" 2>>"$OUT/preflight-${g}gpu.txt"
}

suite() {
	local g=$1 lm=$2 line
	: >"$OUT/preflight-${g}gpu.txt"
	for l in nonco coloc "$lm"; do
		step "$g" "$l-${g}gpu.yaml" pass "$BIN" preflight "$TD/$l-${g}gpu.yaml" --run --entrypoint "$EP" --timeout 30s --bytes "$BYTES"
	done
	# The corrupted plan replaces the emitted one; the line stays as printed.
	line=$(emitted "$g" "$TD/coloc-${g}gpu.yaml" "$W/corrupt$g")
	cp "$TD/corrupt-coloc-${g}gpu.plan.json" "$W/corrupt$g/plan.json"
	step "$g" "corrupt-coloc-${g}gpu.plan.json" fail sh -c "$line"
}

if [ "$NGPU" -lt 2 ]; then
	echo "device-preflight.sh: $NGPU GPUs here, 2 or more needed" >&2
	exit 2
fi
suite 2 lm-pp
if [ "$NGPU" -ge 4 ]; then
	suite 4 moe-ep-pp

	line=$(emitted 4 "$TD/coloc-4gpu.yaml" "$W/stall" --timeout 5s --bytes 0)
	step 4 "--inject stall:1 --timeout 5s" timeout sh -c "$line --inject stall:1"

	line=$(emitted 4 "$TD/coloc-4gpu.yaml" "$W/reorder" --bytes 0)
	step 4 "--inject reorder:1" reorder sh -c "$line --inject reorder:1"

	# Two torchrun nodes on this one host, each on half of the GPUs, started
	# with the per-node lines preflight --emit prints (static rendezvous).
	lines=$(emitted 4 "$TD/two-nodes-2x2.yaml" "$W/nodes" --master-addr "$HOST" --master-port 29600)
	n0=$(printf '%s\n' "$lines" | sed -n 2p)
	n1=$(printf '%s\n' "$lines" | sed -n 4p)
	step 4 "two-nodes-2x2.yaml as 2 torchrun nodes of 2 GPUs" pass sh -c "
		CUDA_VISIBLE_DEVICES=$(gpus 3 4) $n1 >$W/node1.log 2>&1 &
		CUDA_VISIBLE_DEVICES=$(gpus 1 2) $n0; rc=\$?; wait \$!; rc1=\$?
		echo '--- node 1 said:'; cat $W/node1.log; echo \"--- node 1 exit \$rc1\"
		[ \$rc = 0 ] && exit \$rc1; exit \$rc"

	step 4 "coloc-4gpu.yaml --lazy-init" pass "$BIN" preflight "$TD/coloc-4gpu.yaml" --run --lazy-init --entrypoint "$EP" --timeout 30s --bytes "$BYTES"
fi

echo "device-preflight.sh: results in $OUT, $(($(date +%s) - T0))s in all" >&2
cat "$SUMMARY" >&2
! grep -qE "UNEXPECTED|skipped" "$SUMMARY"
