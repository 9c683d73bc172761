#!/usr/bin/env bash
# compare-outputs.sh: build mimoplan at two git revisions and diff what
# every command prints for every layout the repository holds, to show that
# a refactoring changed no output.
#
#   scripts/compare-outputs.sh [BEFORE [AFTER]]
#
# BEFORE defaults to HEAD^ and AFTER to the working tree ("." builds the
# files as they are now, committed or not). Always compare a change with
# its own parent: others change outputs on main at the same time.
#
# Inputs come from the working tree, the same files for both builds:
# layouts/, testdata/ (golden layouts included), internal/*/testdata and
# ../shared/golden/layouts. For each layout it runs validate (every format,
# --strict), render (every format, --by rank, --rank, --full, --module and
# --group), launch-plan (every format, with and without hosts, the topology
# file it writes), diff against layouts/nemotron-vlm-8gpu.yaml, suggest (the
# specs in testdata/suggest) and preflight --emit (the lines and the
# emitted files), and every command's --help,
# and records stdout, stderr and the exit status. Outputs over 1 MiB are
# kept as their sha256 and size. Every output is compared byte for byte
# but render --rank's json and yaml (first, middle and last ranks), which
# must hold the same data (scripts/samedata: the same keys in the same
# order, the same values; whitespace and quoting may differ: issue 9 moved
# them to encoding/json and yaml.v3). Exit status 0: identical; 1: a
# difference (the first lines of each are printed); 2: a build or usage
# failure.
# KEEP=1 keeps the scratch directory with both sets of outputs.
set -euo pipefail
# go-nvml's deprecated-declaration warnings, as the Makefile silences them.
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g -Wno-deprecated-declarations}"

before=${1:-HEAD^}
after=${2:-.}
root=$(git rev-parse --show-toplevel)
cd "$root"
work=$(mktemp -d "${TMPDIR:-/tmp}/mimoplan-compare.XXXXXX")
if [ -z "${KEEP:-}" ]; then trap 'rm -rf "$work"' EXIT; else echo "compare-outputs: keeping $work" >&2; fi

build() { # build REV DIR
	local rev=$1 dir=$2
	mkdir -p "$dir/src"
	if [ "$rev" = . ]; then
		git ls-files -co --exclude-standard | while read -r f; do
			if [ -e "$f" ]; then cp --parents "$f" "$dir/src/"; fi
		done
	else
		git archive "$rev" | tar -x -C "$dir/src"
	fi
	(cd "$dir/src" && go build -o "$dir/mimoplan" ./cmd/mimoplan) || { echo "compare-outputs: cannot build $rev" >&2; exit 2; }
}

# layouts lists the inputs, each content once (../shared/golden mostly
# repeats testdata/golden).
layouts() {
	{
		ls layouts/*.yaml
		find testdata internal -path '*/testdata/*' -name '*.yaml' -not -path '*/fuzz/*' | sort
		find testdata -name '*.yaml' -not -path '*/fuzz/*' | sort
		ls ../shared/golden/layouts/*.yaml 2>/dev/null || true
	} | awk '!seen[$0]++' | while read -r f; do
		echo "$(sha256sum <"$f" | cut -c1-64) $f"
	done | awk '!seen[$1]++ { print $2 }'
}

# record NAME CMD...: runs CMD in the scratch directory, keeping stdout,
# stderr and the exit status under $out/NAME.
record() {
	local name=$1
	shift
	local o="$out/$name"
	mkdir -p "$(dirname "$o")"
	set +e
	(cd "$scratch" && "$@") >"$o.stdout" 2>"$o.stderr"
	echo $? >"$o.rc"
	set -e
	for s in stdout stderr; do
		if [ "$(stat -c %s "$o.$s")" -gt 1048576 ]; then
			echo "$(sha256sum <"$o.$s" | cut -d' ' -f1) $(stat -c %s "$o.$s") bytes" >"$o.$s.sum"
			rm "$o.$s"
		fi
	done
	# Files the command wrote (topology, plan, preflight's payload).
	if [ -n "$(ls -A "$scratch")" ]; then
		mkdir -p "$o.files"
		cp -r "$scratch/." "$o.files/"
		rm -rf "${scratch:?}"/*
	fi
}

run_suite() { # run_suite BIN OUT
	local bin=$1
	out=$2
	scratch="$work/scratch" # the same path for both builds: it shows in outputs
	mkdir -p "$scratch"
	local rformats lformats
	# "text (or table)": table, text's old name, which both revisions take.
	rformats=$("$bin" render --help | sed -n 's/.*--format string *output format: \(.*\) (default.*/\1/p' | sed 's/text (or table)/table/' | tr -d ,)
	lformats=$("$bin" launch-plan --help | sed -n 's/.*--format string *plan format: \(.*\) (default.*/\1/p' | tr -d ,)
	local f id nodes hosts big ranks world r
	while read -r f; do
		id=${f//\//_}
		a="$root/$f"
		nodes=$(sed -n 's/^ *nodes: *\([0-9]*\).*/\1/p' "$f" | head -1)
		nodes=${nodes:-1}
		hosts=$(seq -f 'h%g' 0 $((nodes > 64 ? 0 : nodes - 1)) | paste -sd, -)
		# The largest rank count the file names decides how much to run.
		ranks=$({ grep -oE '(world_size|num_ranks|gpus_per_node|nodes): *[0-9]+' "$f" || true; } | grep -oE '[0-9]+' | sort -n | tail -1 || true)
		ranks=$((${ranks:-1} > nodes ? ${ranks:-1} : nodes))
		big=$((nodes > 64 || ranks > 4096))
		for fm in text json github sarif; do
			record "$id/validate-$fm" "$bin" validate --format "$fm" "$a"
		done
		record "$id/validate-strict" "$bin" validate --strict "$a"
		if [ "$ranks" -gt 131072 ]; then
			# The scale cases (up to 2^24 ranks): the folded table and the
			# streamed machine formats; --full and per-rank lists would be
			# gigabytes.
			for fm in table json csv; do
				record "$id/render-$fm" "$bin" render --format "$fm" "$a"
			done
			for fm in json slurm k8s; do
				record "$id/launch-$fm" "$bin" launch-plan --format "$fm" --image img:1 --topology-out topo.json "$a" -- train.py
			done
			continue
		fi
		for fm in $rformats; do
			record "$id/render-$fm" "$bin" render --format "$fm" "$a"
			record "$id/render-rank0-$fm" "$bin" render --rank 0 --format "$fm" "$a"
			[ $big = 1 ] || record "$id/render-byrank-$fm" "$bin" render --by rank --format "$fm" "$a"
		done
		# A spread of ranks (the world from the table's first line).
		world=$("$bin" render "$a" 2>/dev/null | head -1 | grep -oE '[0-9]+ ranks' | grep -oE '[0-9]+' || true)
		if [ -n "$world" ]; then
			for r in $((world / 3)) $((world / 2)) $((world - 1)); do
				for fm in json yaml; do
					record "$id/render-rank$r-$fm" "$bin" render --rank "$r" --format "$fm" "$a"
					record "$id/render-rank$r-group-$fm" "$bin" render --rank "$r" --group tp,dp,embd --format "$fm" "$a"
				done
			done
		fi
		record "$id/render-rank-last" "$bin" render --rank 7 "$a"
		record "$id/render-full" "$bin" render --full "$a"
		record "$id/render-select" "$bin" render --module language --group tp,pp,dp,ep "$a"
		for fm in $lformats; do
			record "$id/launch-$fm" "$bin" launch-plan --format "$fm" --image img:1 "$a" -- train.py --lr 1
			record "$id/launch-hosts-$fm" "$bin" launch-plan --format "$fm" --hosts "$hosts" "$a" -- train.py
			record "$id/launch-out-$fm" "$bin" launch-plan --format "$fm" --hosts "$hosts" --image img:1 --out plan.txt --topology-out topo.json "$a"
		done
		record "$id/launch-mimo-args" "$bin" launch-plan --mimo-arg-names --hosts "$hosts" "$a"
		for fm in text json; do
			record "$id/diff-$fm" "$bin" diff --format "$fm" "$a" "$root/layouts/nemotron-vlm-8gpu.yaml"
		done
		# suggest searches every layout of a spec: the small specs only (a
		# 1,024-GPU one takes minutes).
		case $ranks,$f in [0-9],testdata/suggest/* | [0-5][0-9],testdata/suggest/* | 6[0-4],testdata/suggest/*)
			for fm in table json yaml; do
				record "$id/suggest-$fm" "$bin" suggest --format "$fm" "$a"
			done
			record "$id/suggest-out" "$bin" suggest --out best.yaml "$a"
			;;
		esac
		record "$id/preflight-emit" "$bin" preflight --emit pf "$a"
		record "$id/preflight-emit-hosts" "$bin" preflight --emit pf --hosts "$hosts" --bytes 1MiB "$a"
	done <"$work/layouts"
	record "usage/no-args" "$bin"
	record "usage/help" "$bin" --help
	for c in $("$bin" --help | sed -n '/^Available Commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }'); do
		record "usage/help-$c" "$bin" "$c" --help
	done
}

build "$before" "$work/a"
build "$after" "$work/b"
# The inputs are listed once, so that both builds read the same files even
# when the working tree changes while the script runs.
layouts >"$work/layouts"
n=$(wc -l <"$work/layouts")
run_suite "$work/a/mimoplan" "$work/out-a"
run_suite "$work/b/mimoplan" "$work/out-b"
cases=$(find "$work/out-a" -name '*.rc' | wc -l)
(cd "$root" && go build -o "$work/samedata" ./scripts/samedata) || { echo "compare-outputs: cannot build scripts/samedata" >&2; exit 2; }
# Byte differences, less the --rank json and yaml that hold the same data.
same=0
: >"$work/diff"
diff -rq "$work/out-a" "$work/out-b" >"$work/files" 2>&1 || true
while read -r line; do
	if [[ $line =~ ^Files\ (.*)\ and\ (.*)\ differ$ ]]; then
		a=${BASH_REMATCH[1]} b=${BASH_REMATCH[2]}
		if [[ $a =~ /render-rank[0-9]+(-group)?-(json|yaml)\.stdout$ ]] && "$work/samedata" "${BASH_REMATCH[2]}" "$a" "$b" >>"$work/diff"; then
			same=$((same + 1))
			continue
		fi
		diff "$a" "$b" | head -20 >>"$work/diff" || true
	fi
	echo "$line" >>"$work/diff"
done <"$work/files"
if [ ! -s "$work/diff" ]; then
	echo "compare-outputs: $before and $after agree on $cases runs over $n layouts ($same --rank json/yaml outputs the same data, not the same bytes)"
	exit 0
fi
echo "compare-outputs: $before and $after differ ($cases runs over $n layouts):"
sed "s|$work/||g" "$work/diff" | head -60
exit 1
