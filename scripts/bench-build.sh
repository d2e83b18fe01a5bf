#!/usr/bin/env bash
# One-shot build benchmarks:
#  1. throughput of `agentmap build` over the Claude, Codex and Cursor corpus
#     (single process, MB of log per second of wall time), and
#  2. peak memory (max RSS) of `agentmap build` on a synthetic 500 MB Claude
#     transcript: memory must stay bounded by the session's events, not
#     the file's size.
# Usage: scripts/bench-build.sh [MB]   (default 500)
set -euo pipefail
cd "$(dirname "$0")/.."
mb=${1:-500}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/agentmap" ./cmd/agentmap
go run ./scripts/synthclaude -mb "$mb" -o "$work/synthetic.jsonl" >/dev/null

measure() { # label, files...
  local label=$1; shift
  local bytes; bytes=$(cat "$@" | wc -c)
  local out="$work/out-$label"; mkdir -p "$out"
  /usr/bin/time -f '%e %M' -o "$work/time" "$work/agentmap" build -o "$out" "$@" 2>/dev/null || true
  read -r secs kb < "$work/time"
  awk -v l="$label" -v b="$bytes" -v s="$secs" -v k="$kb" \
    'BEGIN { printf "%-22s %8.1f MB  %6.2f s  %7.1f MB/s  max RSS %6.1f MB\n", l, b/1048576, s, (s>0 ? b/1048576/s : 0), k/1024 }'
}

corpus=../shared/corpus
if [ -d "$corpus" ]; then
  measure claude-corpus "$corpus"/claude/*.jsonl
  measure codex-corpus "$corpus"/codex/*.jsonl
  measure cursor-transcripts "$corpus"/cursor/*.jsonl
else
  echo "corpus absent: skipping the corpus figures"
fi
measure "synthetic-${mb}MB" "$work/synthetic.jsonl"
