#!/usr/bin/env bash
# scripts/scale.sh: the whole-binary figures of docs/performance.md.
#
# For each world size it runs every machine form of `mimoplan render`
# (json, csv, yaml, and the same --by rank) and the format-and-write limit
# program (scripts/limit: the same integers, strconv.AppendInt, 64 KiB
# writes) under /usr/bin/time -v, output to /dev/null, and prints wall,
# CPU (user+sys) and peak RSS of both and the ratio limit/mimoplan (1.00 is
# the limit). It then runs Megatron-LM's own HyperCommGrid + json.dump
# (scripts/megatron-reference.py, stdout block-buffered: PYTHONUNBUFFERED
# unset) for the json form, checks that its output is byte for byte
# mimoplan's, and times every launch-plan format. Last, the start-up cost
# of a call beside a bare Go binary's.
#
# Usage: scripts/scale.sh            (about 10 minutes on 2 idle cores)
#   SIZES="131072 1048576 16777216"  world sizes for render
#   REF_SIZES="131072 1048576"       world sizes for the Megatron reference
#                                    (2^24 would need ~15 GB of Python lists)
#   LAUNCH_SIZES="131072 1048576 16777216"  world sizes for launch-plan
#   REPS=3                           runs per figure at 2^20 ranks (their
#                                    mean), 4x that at 2^17; 2^24 runs once
#   PYTHON=/usr/bin/python3          a Python with numpy (python3-numpy)
set -euo pipefail
cd "$(dirname "$0")/.."

SIZES=${SIZES:-"131072 1048576 16777216"}
REF_SIZES=${REF_SIZES:-"131072 1048576"}
LAUNCH_SIZES=${LAUNCH_SIZES:-"131072 1048576 16777216"}
REPS=${REPS:-3}
PYTHON=${PYTHON:-/usr/bin/python3}
FORMS=${FORMS:-"json csv yaml by-rank-json by-rank-csv by-rank-yaml"}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

make -s build
go build -o bin/limit ./scripts/limit
bin=./bin/mimoplan

layout() { # render's scale layout of n ranks
	if [ "$1" = 131072 ]; then echo layouts/scale-131072.yaml; else echo "testdata/scale/scale-$1.yaml"; fi
}

# measure N CMD...: run CMD N times in a row, stdout to /dev/null, under
# one /usr/bin/time -v; print "wall cpu rss_kb" per run (wall and cpu in
# seconds, the mean of the N; rss the largest). A loop, since time's
# resolution is 10 ms.
measure() {
	local n=$1
	shift
	/usr/bin/time -v -o "$tmp/time" bash -c 'n=$1; shift; for _ in $(seq "$n"); do "$@" >/dev/null || exit; done' loop "$n" "$@" 2>"$tmp/err" || {
		cat "$tmp/err" >&2
		return 1
	}
	awk -F': ' -v n="$n" '
		/Elapsed \(wall clock\)/ { k = split($2, p, ":"); w = 0; for (i = 1; i <= k; i++) w = w * 60 + p[i] }
		/User time/ { u = $2 } /System time/ { s = $2 } /Maximum resident/ { m = $2 }
		END { printf "%.3f %.3f %d\n", w / n, (u + s) / n, m }' "$tmp/time"
}

# reps N: how many runs make a figure at N ranks.
reps() {
	if [ "$1" -le 131072 ]; then echo $((REPS * 4)); elif [ "$1" -le 1048576 ]; then echo "$REPS"; else echo 1; fi
}

mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

echo "# $(date -u +%FT%TZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(go version | cut -d' ' -f3)"
echo
echo "## render: mimoplan vs the format-and-write limit (output to /dev/null)"
echo
echo "| ranks | form | output | mimoplan wall / cpu / peak RSS | limit wall / cpu / peak RSS | limit/mimoplan wall, cpu |"
echo "|---|---|---|---|---|---|"
for n in $SIZES; do
	l=$(layout "$n")
	reps=$(reps "$n")
	for form in $FORMS; do
		format=${form#by-rank-}
		margs=(render "$l" --format "$format")
		largs=("$l" "$format")
		if [ "$form" != "$format" ]; then
			margs+=(--by rank)
			largs+=(rank)
		fi
		bytes=$($bin "${margs[@]}" 2>/dev/null | wc -c)
		read -r mw mc mr < <(measure "$reps" $bin "${margs[@]}")
		read -r lw lc lr < <(measure "$reps" ./bin/limit "${largs[@]}")
		ratio=$(awk -v a="$lw" -v b="$mw" -v c="$lc" -v d="$mc" 'BEGIN { printf "%.2f, %.2f", (b > 0 ? a / b : 1), (d > 0 ? c / d : 1) }')
		echo "| $n | $form | $(awk -v b="$bytes" 'BEGIN { printf "%.1f MB", b / 1e6 }') | $mw s / $mc s / $(mb "$mr") MB | $lw s / $lc s / $(mb "$lr") MB | $ratio |"
	done
done

echo
echo "## render --format json vs Megatron-LM's HyperCommGrid + json.dump (PYTHONUNBUFFERED unset: stdout block-buffered)"
echo
echo "| ranks | mimoplan wall / cpu / peak RSS | Megatron wall / cpu / peak RSS | Megatron/mimoplan wall | same bytes |"
echo "|---|---|---|---|---|"
unset PYTHONUNBUFFERED
for n in $REF_SIZES; do
	l=$(layout "$n")
	v=$((n / 8))
	ref=("$PYTHON" scripts/megatron-reference.py --name "scale-$n" --world "$n"
		--module "vision:0:$v:4:1:1:1" --module "language:$v:$((n - v)):8:2:14:64")
	same=no
	[ "$($bin render "$l" --format json 2>/dev/null | md5sum)" = "$("${ref[@]}" 2>/dev/null | md5sum)" ] && same=yes
	read -r mw mc mr < <(measure "$(reps "$n")" $bin render "$l" --format json)
	read -r pw pc pr < <(measure 1 "${ref[@]}")
	echo "| $n | $mw s / $mc s / $(mb "$mr") MB | $pw s / $pc s / $(mb "$pr") MB | $(awk -v a="$pw" -v b="$mw" 'BEGIN { printf "%.0fx", a / b }') | $same |"
done

echo
echo "## launch-plan (plan and --topology-out written to a temporary directory; sh, json and slurm with a hostfile of one host per node)"
echo
echo "| ranks | format | plan | wall / cpu / peak RSS |"
echo "|---|---|---|---|"
for n in $LAUNCH_SIZES; do
	l=testdata/scale/launch-$n.yaml
	awk -v n=$((n / 8)) 'BEGIN { for (i = 0; i < n; i++) printf "node-%07d slots=8\n", i }' >"$tmp/hosts"
	for f in sh json slurm k8s pytorchjob; do
		args=(launch-plan "$l" --format "$f" --out "$tmp/plan.$f" --topology-out "$tmp/topology.json")
		case $f in
		sh | json | slurm) args+=(--hostfile "$tmp/hosts") ;;
		k8s | pytorchjob) args+=(--image nvcr.io/nvidia/pytorch:25.01-py3) ;;
		esac
		args+=(-- train.py --data /data)
		read -r w c r < <(measure "$(reps "$n")" $bin "${args[@]}")
		echo "| $n | $f | $(awk -v b="$(wc -c <"$tmp/plan.$f")" 'BEGIN { printf "%.1f MB", b / 1e6 }') | $w s / $c s / $(mb "$r") MB |"
	done
done

echo
echo "## start-up: 200 calls"
echo
printf 'package main\n\nfunc main() {}\n' >"$tmp/bare.go"
go build -o "$tmp/bare" "$tmp/bare.go"
per() { # per CMD...: milliseconds per call over 200 calls
	local s e
	s=$(date +%s%N)
	for _ in $(seq 200); do "$@" >/dev/null 2>&1 || true; done
	e=$(date +%s%N)
	awk -v d=$((e - s)) 'BEGIN { printf "%.1f ms", d / 200 / 1e6 }'
}
echo "| call | per call |"
echo "|---|---|"
echo "| bare Go binary (func main() {}) | $(per "$tmp/bare") |"
echo "| mimoplan --version | $(per $bin --version) |"
echo "| mimoplan validate layouts/nemotron-vlm-8gpu.yaml | $(per $bin validate layouts/nemotron-vlm-8gpu.yaml) |"
echo "| mimoplan render layouts/nemotron-vlm-8gpu.yaml --format json | $(per $bin render layouts/nemotron-vlm-8gpu.yaml --format json) |"
