#!/usr/bin/env bash
# bench-report.sh [REV] [BENCHTIME]: the report benchmark (BenchmarkReport:
# 1,000 and 10,000 synthetic sessions and one session of 20,000 events;
# the time and CPU to write the page, its size, and, with a Chromium, the
# time to the rendered overview or timeline and to redraw the timeline) on
# this tree and on REV (default main), one after the other, with the ratios.
# Both sides run this tree's benchmark and synthetic sessions, so they
# measure the same inputs the same way; REV is checked out into a temporary
# directory with git archive.
set -euo pipefail
rev=${1:-main}
benchtime=${2:-2x}
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/peer"
git -C "$root" archive "$rev" | tar -x -C "$tmp/peer"
cp "$root/report/bench_test.go" "$root/report/synth_test.go" "$tmp/peer/report/"

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); peer: $rev ($(git -C "$root" rev-parse --short "$rev"))"
bench() {
	(cd "$1" && go test ./report -run '^$' -bench '^BenchmarkReport$' -benchtime "$benchtime" -benchmem) | grep '^BenchmarkReport/' || true
}
bench "$tmp/peer" >"$tmp/peer.txt"
bench "$root" >"$tmp/this.txt"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

# Lines are "BenchmarkReport/case-2  N  value unit  value unit ...".
awk '
	function metrics(side,   i, name) {
		name = $1; sub(/^BenchmarkReport\//, "", name); sub(/-[0-9]+$/, "", name)
		if (!(name in seen)) { seen[name] = 1; order[++n] = name }
		for (i = 3; i < NF; i += 2) { val[side, name, $(i+1)] = $i; units[$(i+1)] = 1 }
	}
	FNR == NR { metrics("peer"); next }
	{ metrics("this") }
	END {
		split("ns/op MB cpu-s/op render-ms loaded-ms filter-ms open-ms redraw-ms B/op", want, " ")
		printf "%-24s %-10s %14s %14s %8s\n", "case", "metric", "peer", "this", "ratio"
		for (c = 1; c <= n; c++) for (w = 1; w <= 9; w++) {
			u = want[w]; p = val["peer", order[c], u]; t = val["this", order[c], u]
			if (p == "" && t == "") continue
			r = (p != "" && t != "" && p + 0 != 0) ? sprintf("%.2fx", t / p) : "-"
			printf "%-24s %-10s %14s %14s %8s\n", order[c], u, (p == "" ? "-" : p), (t == "" ? "-" : t), r
		}
	}' "$tmp/peer.txt" "$tmp/this.txt"
