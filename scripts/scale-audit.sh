#!/usr/bin/env bash
# scripts/scale-audit.sh: issue 25's four scale cases, each under
# /usr/bin/time, output to /dev/null: wall time and peak RSS, and exit 1
# when a case passes MAX_RSS_KB (64 MB). docs/performance.md has the
# figures.
#
#   render --rank 5 --full on one 16,777,216-rank module (table, markdown)
#   diff of two 16,777,216-rank layouts
#   preflight --out DIR --format slurm at 2,097,152 ranks
#   import bridge-env --from-script on a 175 MB script
#
# Usage: scripts/scale-audit.sh   (about a minute on 2 idle cores)
set -euo pipefail
cd "$(dirname "$0")/.."
MAX_RSS_KB=${MAX_RSS_KB:-65536}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/mimoplan" ./cmd/mimoplan
bin=$tmp/mimoplan

module() { # a one-module layout of n ranks, tp and pp
  printf 'version: 1\nworld_size: %d\nmodules:\n  - {name: language, num_ranks: %d, tp: %d, pp: %d}\n' "$1" "$1" "$2" "$3" >"$4"
}
module 16777216 8 4 "$tmp/a16m.yaml"
module 16777216 4 8 "$tmp/b16m.yaml"
module 2097152 8 4 "$tmp/a2m.yaml"
{
  printf '#!/bin/bash\nexport MIMO_VISION_TP=2 MIMO_VISION_PP=1 MIMO_VISION_DP=2 MIMO_VISION_OFFSET=0\n'
  printf 'export MIMO_LANGUAGE_TP=2 MIMO_LANGUAGE_PP=1 MIMO_LANGUAGE_DP=2 MIMO_LANGUAGE_OFFSET=4\n'
  awk 'BEGIN { x = sprintf("%40s", ""); gsub(/ /, "x", x); for (i = 0; i < 3500000; i++) printf "export VAR_%d=%s\n", i, x }'
} >"$tmp/script.sh"

failed=0
run() { # name, command...
  local name=$1; shift
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" || true
  read -r wall rss < <(tail -n 1 "$tmp/time") # after "Command exited ..." when it is not 0 (diff: 1)
  printf '%-52s %8.2f s %8d KB\n' "$name" "$wall" "$rss"
  if [ "$rss" -gt "$MAX_RSS_KB" ]; then failed=1; fi
}
run "render --rank 5 --full (16,777,216 ranks)" "$bin" render "$tmp/a16m.yaml" --rank 5 --full
run "render --rank 5 --full --format markdown" "$bin" render "$tmp/a16m.yaml" --rank 5 --full --format markdown
run "diff (two 16,777,216-rank layouts)" "$bin" diff "$tmp/a16m.yaml" "$tmp/b16m.yaml"
run "preflight --out --format slurm (2,097,152 ranks)" "$bin" preflight "$tmp/a2m.yaml" --out "$tmp/pf" --format slurm
run "import bridge-env --from-script ($(($(stat -c %s "$tmp/script.sh") / 1000000)) MB)" "$bin" import bridge-env --from-script "$tmp/script.sh"
exit $failed
