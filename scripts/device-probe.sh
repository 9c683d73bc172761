#!/usr/bin/env bash
# device-probe.sh: run mimoplan's GPU probe on a real GPU machine and keep
# what it says next to what nvidia-smi says, for docs/probe.md ("Real
# hardware run").
#
# Run from the repository root, with a linux/amd64 binary built beforehand
# (CGO_ENABLED=1 go build -o .bin/mimoplan ./cmd/mimoplan; .bin/ is ignored
# by git, so carry it to the GPU machine) and $OUT set to an empty
# directory. BIN overrides the binary; LAYOUT is a layout that asks for more
# GPUs than the machine has (gpu-count-short expected), FIT one that fits
# it exactly (world_size = its GPU count, no cluster: nonco-2gpu.yaml or
# nonco-4gpu.yaml), NODES one with cluster.gpus_per_node 2. Writes at most 8 flat files into "$OUT/":
#
#   nvidia-smi.txt          nvidia-smi and nvidia-smi -L
#   nvidia-smi-topo.txt     nvidia-smi topo -m
#   probe.txt               mimoplan probe
#   probe.json              mimoplan probe --format json
#   validate-probe.txt      validate --probe (LAYOUT, FIT, NODES; text and
#                           json) and launch-plan --probe
#   visible-devices.txt     validate FIT --probe under several CUDA_VISIBLE_DEVICES
#   no-nvml.txt             probe with MIMOPLAN_NVML_LIBRARY pointing nowhere
#   exit-codes.txt          every command above with its exit status
#
# No step stops the script: a failing command is recorded with its status.
set -u

BIN=${BIN:-.bin/mimoplan}
LAYOUT=${LAYOUT:-layouts/nemotron-vlm-8gpu.yaml}
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
FIT=${FIT:-internal/preflight/testdata/nonco-$((NGPU >= 4 ? 4 : 2))gpu.yaml}
NODES=${NODES:-internal/preflight/testdata/two-nodes-2x2.yaml}
OUT=${OUT:?set OUT to the directory for the results}
mkdir -p "$OUT"
CODES="$OUT/exit-codes.txt"
: >"$CODES"
# Start every result file afresh: run() appends, and a warm machine keeps
# the files of an earlier call.
for f in nvidia-smi.txt nvidia-smi-topo.txt probe.txt validate-probe.txt visible-devices.txt no-nvml.txt; do
	: >"$OUT/$f"
done

# run FILE CMD...: append the command line and its combined output to
# $OUT/FILE and record the exit status.
run() {
	local file=$1
	shift
	local line rc
	line=$(printf ' %q' "$@")
	{
		printf '$%s\n' "$line"
		"$@" 2>&1
		rc=$?
		printf '[exit %d]\n\n' "$rc"
		printf '%-4s%s\n' "$rc" "$line" >>"$CODES"
	} >>"$OUT/$file"
}

# visible VALUE: validate --probe with CUDA_VISIBLE_DEVICES=VALUE.
visible() {
	run visible-devices.txt env CUDA_VISIBLE_DEVICES="$1" "$BIN" validate "$FIT" --probe
}

if [ ! -x "$BIN" ]; then
	echo "device-probe.sh: $BIN is missing; build it with CGO_ENABLED=1 go build -o $BIN ./cmd/mimoplan" >&2
	exit 2
fi

run nvidia-smi.txt nvidia-smi
run nvidia-smi.txt nvidia-smi -L
run nvidia-smi-topo.txt nvidia-smi topo -m

run probe.txt "$BIN" --version
run probe.txt "$BIN" probe
# probe.json must stay plain JSON: no command lines in it.
"$BIN" probe --format json >"$OUT/probe.json" 2>&1
printf '%-4s %s\n' "$?" "$BIN probe --format json" >>"$CODES"

# LAYOUT asks for 8 GPUs per node: on a machine with fewer,
# gpu-count-short (exit 1) is the expected answer. FIT and NODES fit
# (exit 0).
run validate-probe.txt "$BIN" validate "$LAYOUT" --probe
run validate-probe.txt "$BIN" validate "$LAYOUT" --probe --format json
run validate-probe.txt "$BIN" validate "$FIT" "$NODES" --probe
run validate-probe.txt "$BIN" launch-plan "$FIT" --probe --format json --topology-out /tmp/fit.topology.json -- train.py
run validate-probe.txt "$BIN" launch-plan "$LAYOUT" --probe -- train.py

# CUDA_VISIBLE_DEVICES cases: a bogus UUID after a good index, a prefix of
# the first GPU's real UUID, a repeated index, an empty value, -1.
first_uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader 2>/dev/null | head -n 1)
visible "0,GPU-bogus"
if [ -n "$first_uuid" ]; then
	visible "${first_uuid:0:12}"
	visible "$first_uuid"
fi
visible "0,0"
visible "0,1"
visible ""
visible "-1"
run visible-devices.txt env CUDA_VISIBLE_DEVICES="0,GPU-bogus" "$BIN" probe

# What a machine without the library sees (one line, exit 3).
run no-nvml.txt env MIMOPLAN_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 "$BIN" probe

echo "device-probe.sh: results in $OUT" >&2
ls -l "$OUT" >&2
