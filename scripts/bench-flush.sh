#!/usr/bin/env bash
# bench-flush.sh: the cost of building and writing maps (builder.Build then
# Gzip, what a scan's flush does per session) over the sessions of
# ../shared/corpus, this tree against a peer revision, side by side in one
# run: BenchmarkCorpusFlush of package builder (go test -bench, wall) and its
# CPU time per map (user+sys of N iterations less that of one, the figure to
# compare on a shared machine), allocations per flush of the corpus, and the
# ratios. ROUNDS rounds alternate the two; medians are printed.
# With a HOME of agent logs as fourth argument it also times
# `agentmap scan` of both revisions on it (wall, user, sys, peak RSS) and
# checks that both wrote byte-identical maps. Linux (GNU time).
#
# usage: scripts/bench-flush.sh [REV=main] [ROUNDS=5] [N=20] [HOME_DIR]
set -euo pipefail
REV=${1:-main}
ROUNDS=${2:-5}
N=${3:-20}
BENCH_HOME=${4:-}
cd "$(dirname "$0")/.."
command -v /usr/bin/time >/dev/null || { echo "needs GNU time (/usr/bin/time)"; exit 1; }
[ -d ../shared/corpus ] || { echo "needs ../shared/corpus"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# The peer is built from an export of REV beside a link to ../shared, so
# that its tests find the corpus the same way; the benchmark file is this
# tree's when REV predates it.
mkdir -p "$work/peer/src"
git archive "$REV" | tar -x -C "$work/peer/src"
ln -s "$(cd ../shared && pwd)" "$work/peer/shared"
[ -f "$work/peer/src/builder/corpus_bench_test.go" ] || cp builder/corpus_bench_test.go "$work/peer/src/builder/"
(cd "$work/peer/src" && go test -c -o "$work/peer.test" ./builder)
go test -c -o "$work/this.test" ./builder

# run NAME ITERATIONS: sets cpu (s) and ns, bytes, allocs (per flush of the corpus).
run() {
  (cd builder && /usr/bin/time -f "%U %S" -o "$work/time" "$work/$1.test" -test.run '^$' \
    -test.bench '^BenchmarkCorpusFlush$' -test.benchmem -test.benchtime "${2}x" >"$work/out")
  read -r u s <"$work/time"
  cpu=$(echo "$u + $s" | bc)
  read -r ns bytes allocs maps < <(awk '/^BenchmarkCorpusFlush/ {for (i = 1; i < NF; i++) {
      if ($(i+1) == "ns/op") ns = $i; if ($(i+1) == "B/op") b = $i; if ($(i+1) == "allocs/op") a = $i; if ($(i+1) == "maps/s") m = $i }
    print ns, b, a, m}' "$work/out")
}

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); peer: $REV ($(git rev-parse --short "$REV"))"
for v in peer this; do : >"$work/$v.ms" ; : >"$work/$v.cpu"; done
for r in $(seq "$ROUNDS"); do
  for v in peer this; do
    run "$v" 1; c1=$cpu
    run "$v" "$N"
    echo "scale=3; $ns / 1000000" | bc >>"$work/$v.ms"
    echo "scale=3; ($cpu - $c1) * 1000 / ($N - 1)" | bc >>"$work/$v.cpu"
    echo "$bytes $allocs" >"$work/$v.mem"
  done
done
printf '\nBuild + Gzip of every corpus session (one flush of the corpus), medians of %s rounds:\n\n' "$ROUNDS"
printf '| | %s | this tree | ratio |\n|---|---|---|---|\n' "$REV"
row() { # label peer this
  printf '| %s | %s | %s | %s× |\n' "$1" "$2" "$3" "$(echo "scale=2; $2 / $3" | bc)"
}
row "wall ms per flush (go test -bench)" "$(median <"$work/peer.ms")" "$(median <"$work/this.ms")"
row "CPU ms per flush" "$(median <"$work/peer.cpu")" "$(median <"$work/this.cpu")"
read -r pb pa <"$work/peer.mem"; read -r tb ta <"$work/this.mem"
row "bytes allocated per flush" "$pb" "$tb"
row "allocations per flush" "$pa" "$ta"

# The map files: durable.WriteFiles (BenchmarkWriteFiles: batches of 128
# new files, then the same again over them), CPU per file, on a tmpfs when
# there is one so that the figure is the writer's own (a syncfs on a shared
# disk does every writer's pending writeback).
bench_tmp=$work
[ -d /dev/shm ] && bench_tmp=$(mktemp -d /dev/shm/bench-flush.XXXXXX) && trap 'rm -rf "$work" "$bench_tmp"' EXIT
for f in bench_test.go cputime_unix_test.go cputime_windows_test.go; do
  [ -f "$work/peer/src/state/durable/$f" ] || cp "state/durable/$f" "$work/peer/src/state/durable/"
done
grep -q Replaces "$work/peer/src/state/durable/batch.go" || sed -i '/batch\[i\].Replaces = replace/d' "$work/peer/src/state/durable/bench_test.go"
(cd "$work/peer/src" && go test -c -o "$work/peer-durable.test" ./state/durable)
go test -c -o "$work/this-durable.test" ./state/durable
for v in peer this; do : >"$work/$v.wf"; done
for r in $(seq "$ROUNDS"); do
  for v in peer this; do
    TMPDIR=$bench_tmp "$work/$v-durable.test" -test.run '^$' -test.bench '^BenchmarkWriteFiles$' -test.benchtime 100x |
      awk '/^BenchmarkWriteFiles\/new/ {n = $(NF-1)} /^BenchmarkWriteFiles\/replace/ {r = $(NF-1)} END {print n, r}' >>"$work/$v.wf"
  done
done
wf() { awk -v c="$2" '{print $c}' "$work/$1.wf" | median; }
printf '\nMap files written by durable.WriteFiles (batches of 128 files of 1 KiB, in %s), medians of %s rounds:\n\n' "$bench_tmp" "$ROUNDS"
printf '| | %s | this tree | ratio |\n|---|---|---|---|\n' "$REV"
row "CPU µs per new file" "$(wf peer 1)" "$(wf this 1)"
row "CPU µs per replaced file" "$(wf peer 2)" "$(wf this 2)"

[ -n "$BENCH_HOME" ] || exit 0
(cd "$work/peer/src" && go build -o "$work/peer-am" ./cmd/agentmap)
go build -o "$work/this-am" ./cmd/agentmap
for v in peer this; do : >"$work/$v.scan"; done
for r in $(seq "$ROUNDS"); do
  for v in peer this; do
    rm -rf "$work/$v-data"
    HOME=$BENCH_HOME /usr/bin/time -f '%e %U %S %M' -o "$work/stime" "$work/$v-am" scan --data-dir "$work/$v-data" >/dev/null 2>&1
    cat "$work/stime" >>"$work/$v.scan"
  done
done
col() { awk -v c="$2" '{print $c}' "$work/$1.scan" | median; }
printf '\n`agentmap scan` of %s, medians of %s rounds:\n\n' "$BENCH_HOME" "$ROUNDS"
printf '| | %s | this tree | ratio |\n|---|---|---|---|\n' "$REV"
row "wall s" "$(col peer 1)" "$(col this 1)"
row "user s" "$(col peer 2)" "$(col this 2)"
row "sys s" "$(col peer 3)" "$(col this 3)"
row "peak RSS KiB" "$(col peer 4)" "$(col this 4)"
sums() { (cd "$work/$1-data" && find . -name '*.json.gz' -type f | sort | xargs -r sha256sum); }
if cmp -s <(sums peer) <(sums this); then
  echo; echo "maps: $(sums this | wc -l) files, byte-identical between $REV and this tree"
else
  echo; echo "maps DIFFER between $REV and this tree"; exit 1
fi
