#!/usr/bin/env bash
# bench-restart.sh: what `agentmap run` costs when it starts again over a
# data directory that has caught up before (a reboot, an upgrade): the peak
# RSS while it loads the records and takes its first look at the logs, the
# RSS once settled, and the CPU until then.
#
# Makes a home of SESSIONS small synthetic Claude sessions (scripts/benchhome)
# in a work directory, catches it up once with `agentmap scan`, then, ROUNDS
# times, starts `agentmap run --rescan 5s` on a fresh copy of that data
# directory, waits WAIT seconds and reads the process's VmHWM (the peak),
# VmRSS and CPU time (/proc), and how many sessions it let go of as it
# loaded them (its "started" log line). With BASE=REV the code of git
# revision REV (built with `git archive` in the work directory) is run in
# the same rounds, alternated, on copies of the same data directory. The
# home's logs have an old modification time (benchhome): every session is
# past the 30 minutes a following daemon waits before it lets go of a
# quiet one. With DELETED=PCT, PCT in a hundred of the home's logs are
# deleted after the catch-up and a second `scan` records them gone, as
# agents delete old transcripts (a long history is mostly such sessions).
# Linux only (/proc).
#
# usage: scripts/bench-restart.sh [ROUNDS=2] [SESSIONS=100000] [WAIT=60]
#   BENCH_DIR=DIR keeps the work directory (home and data) between runs;
#   DELETED=PCT (0 to 100) deletes that share of the logs first.
set -euo pipefail
ROUNDS=${1:-2}
SESSIONS=${2:-100000}
WAIT=${3:-60}
cd "$(dirname "$0")/.."
if [ -n "${BENCH_DIR:-}" ]; then work=$BENCH_DIR; mkdir -p "$work"; else work=$(mktemp -d); fi
pid=
trap 'if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi; if [ -z "${BENCH_DIR:-}" ]; then rm -rf "$work"; fi' EXIT

go build -o "$work/agentmap" ./cmd/agentmap
bins=("$work/agentmap")
if [ -n "${BASE:-}" ]; then
  rm -rf "$work/base-src"; mkdir -p "$work/base-src"
  git archive "$BASE" | tar -x -C "$work/base-src"
  (cd "$work/base-src" && go build -o "$work/agentmap-base" ./cmd/agentmap)
  bins+=("$work/agentmap-base")
fi
clean_env=(env -u CLAUDE_CONFIG_DIR -u CODEX_HOME -u XDG_CONFIG_HOME -u XDG_DATA_HOME -u AGENTMAP_CONFIG)

DELETED=${DELETED:-0}
suffix=$SESSIONS
[ "$DELETED" -gt 0 ] && suffix="$SESSIONS-deleted-$DELETED"
home="$work/home-synthetic-$suffix"
caught="$work/caught-up-$suffix"
if [ ! -f "$caught/state.db" ] || [ ! -d "$home" ]; then
  rm -rf "$home" "$caught"
  go run ./scripts/benchhome -sessions "$SESSIONS" -o "$home" >"$home.size"
  "${clean_env[@]}" HOME="$home" "$work/agentmap" scan --data-dir "$caught" >/dev/null 2>&1
  if [ "$DELETED" -gt 0 ]; then
    find "$home" -name '*.jsonl' | sort | awk -v pct="$DELETED" '(NR - 1) % 100 < pct' | xargs -r rm -f
    "${clean_env[@]}" HOME="$home" "$work/agentmap" scan --data-dir "$caught" >/dev/null 2>&1
  fi
fi

hz=$(getconf CLK_TCK)
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); $SESSIONS sessions caught up, $DELETED% of their logs deleted since; ${WAIT} s after the start"
printf '\n| agentmap | round | peak RSS | RSS at %s s | CPU until then | sessions let go of on load |\n|---|---|---|---|---|---|\n' "$WAIT"
for r in $(seq "$ROUNDS"); do
  for b in "${bins[@]}"; do
    rm -rf "$work/data"; cp -a "$caught" "$work/data"
    "${clean_env[@]}" HOME="$home" "$b" run --data-dir "$work/data" --rescan 5s >"$work/run.log" 2>&1 &
    pid=$!
    sleep "$WAIT"
    kill -0 "$pid" 2>/dev/null || { echo "the daemon died:"; tail "$work/run.log"; exit 1; }
    hwm=$(awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$pid/status")
    rss=$(awk '/VmRSS/ {print int($2 / 1024)}' "/proc/$pid/status")
    cpu=$(awk -v hz="$hz" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$pid/stat")
    quiet=$(grep -o 'quiet=[0-9]*' "$work/run.log" | head -1 | cut -d= -f2)
    kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
    label=$([ "$b" = "$work/agentmap" ] && echo "this tree" || echo "$BASE")
    echo "| $label | $r | $hwm MiB | $rss MiB | $cpu s | ${quiet:-?} |"
  done
done
