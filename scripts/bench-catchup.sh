#!/usr/bin/env bash
# bench-catchup.sh: catch-up throughput of `agentmap scan` (run --once)
# over the real-world corpus in ../shared/corpus, laid out in a temporary
# HOME the way the agents keep their logs (copies in a temp dir, never in
# the repository). Prints MB/s of log read, wall and CPU.
#
# usage: scripts/bench-catchup.sh [ROUNDS=3]
set -euo pipefail
ROUNDS=${1:-3}
cd "$(dirname "$0")/.."
corpus=../shared/corpus
[ -d "$corpus" ] || { echo "no corpus at $corpus"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/agentmap" ./cmd/agentmap
home="$work/home"
mkdir -p "$home/.claude/projects/-w-app" "$home/.codex/sessions/2026/01/02" "$home/.cursor/projects/w-app/agent-transcripts"
i=0
for f in "$corpus"/claude/*.jsonl; do
  i=$((i + 1))
  case "$f" in
  *__subagents__agent-*) ;; # lanes of absent parents would only be skipped
  *) cp "$f" "$home/.claude/projects/-w-app/f$i.jsonl" ;;
  esac
done
i=0
for f in "$corpus"/codex/*.jsonl; do
  i=$((i + 1))
  cp "$f" "$home/.codex/sessions/2026/01/02/rollout-2026-01-02T00-00-00-$(printf %08d $i)-0000-4000-8000-000000000000.jsonl"
done
i=0
for f in "$corpus"/cursor/*.jsonl; do
  i=$((i + 1)); u=$(printf %08d $i)-1111-4111-8111-111111111111
  mkdir -p "$home/.cursor/projects/w-app/agent-transcripts/$u"
  cp "$f" "$home/.cursor/projects/w-app/agent-transcripts/$u/$u.jsonl"
done
bytes=$(find "$home" -type f -name '*.jsonl' -printf '%s\n' | awk '{s+=$1} END {print s}')
files=$(find "$home" -type f -name '*.jsonl' | wc -l)
echo "corpus: $files logs, $(echo "scale=1; $bytes / 1000000" | bc) MB"
for r in $(seq "$ROUNDS"); do
  rm -rf "$work/data"
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" env HOME="$home" CLAUDE_CONFIG_DIR= CODEX_HOME= XDG_CONFIG_HOME= XDG_DATA_HOME= \
    "$work/agentmap" scan --data-dir "$work/data" >/dev/null 2>"$work/log" || { cat "$work/log"; exit 1; }
  read -r wall user sys rss <"$work/time"
  maps=$(find "$work/data/maps" -name '*.json.gz' | wc -l)
  echo "round $r: $maps maps, wall ${wall}s, CPU $(echo "$user + $sys" | bc)s, max RSS $((rss / 1024)) MB," \
    "$(echo "scale=1; $bytes / 1000000 / $wall" | bc) MB/s (wall), $(echo "scale=1; $bytes / 1000000 / ($user + $sys)" | bc) MB/s (CPU)"
done
