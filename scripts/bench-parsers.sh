#!/usr/bin/env bash
# bench-parsers.sh: throughput of the Claude Code, Codex and Cursor
# transcript parsers over ../shared/corpus (each package's BenchmarkParse,
# the lines already in memory), as go test -bench reports it (MB/s of wall
# time) and per CPU second (bytes parsed / user+sys time of N iterations,
# less the time of one): on a shared machine the second is the figure to
# compare. ROUNDS runs each; the medians are printed. Linux (GNU time).
#
# usage: scripts/bench-parsers.sh [ROUNDS=3] [N=11]
set -euo pipefail
ROUNDS=${1:-3}
N=${2:-11}
cd "$(dirname "$0")/.."
command -v /usr/bin/time >/dev/null || { echo "needs GNU time (/usr/bin/time)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# run PKG ITERATIONS: sets cpu (s), mbs (wall MB/s) and bytes (per iteration).
run() {
  (cd "watchers/$1" && /usr/bin/time -f "%U %S" -o "$work/time" "$work/$1.test" -test.run '^$' \
    -test.bench '^BenchmarkParse$' -test.benchtime "${2}x" >"$work/out")
  read -r u s <"$work/time"
  cpu=$(echo "$u + $s" | bc)
  read -r mbs bytes < <(awk '/^BenchmarkParse/ {for (i = 1; i < NF; i++) { if ($(i+1) == "MB/s") m = $i; if ($(i+1) == "ns/op") ns = $i }
    printf "%s %.0f\n", m, m * ns / 1000}' "$work/out")
}

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '\n| parser | MB/s (go test -bench, wall) | MB/s per CPU second |\n|---|---|---|\n'
for p in claude codex cursor; do
  go test -c -o "$work/$p.test" "./watchers/$p"
  : >"$work/wall"; : >"$work/cpu"
  for r in $(seq "$ROUNDS"); do
    run "$p" 1; c1=$cpu
    run "$p" "$N"
    echo "$mbs" >>"$work/wall"
    echo "scale=1; $bytes * ($N - 1) / (($cpu - $c1) * 1000000)" | bc >>"$work/cpu"
  done
  echo "| $p | $(median <"$work/wall") | $(median <"$work/cpu") |"
done
