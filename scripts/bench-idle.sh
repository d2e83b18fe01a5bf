#!/usr/bin/env bash
# bench-idle.sh: what `agentmap run` costs while thousands of sessions sit
# idle, and how soon an append is committed.
#
# Builds the binary, creates N idle Claude session files (written here,
# synthetic) in a temporary HOME, starts the daemon, lets it catch up, then
# measures over DURATION seconds of idleness: CPU time (utime+stime from
# /proc/<pid>/stat) and memory (VmHWM, VmRSS). Then appends one line at a
# time to a session file and measures the delay until the daemon logs the
# commit of that offset (debug log line "committed … offset=<size>").
# Linux only (/proc).
#
# usage: scripts/bench-idle.sh [N=5000] [DURATION=60] [APPENDS=20] [RESCAN=1m]
# (a short RESCAN, e.g. 5s, puts many rescans in DURATION: the CPU per
# rescan is then printed too)
#   BASE=REV also measures the code of git revision REV (built from
#   `git archive`, outside the repository) on the same HOME, one after the
#   other, and prints the ratio of CPU per rescan.
set -euo pipefail
N=${1:-5000}
DURATION=${2:-60}
APPENDS=${3:-20}
RESCAN=${4:-1m}
cd "$(dirname "$0")/.."
work=$(mktemp -d)
pid=
trap 'kill "${pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/agentmap" ./cmd/agentmap
if [ -n "${BASE:-}" ]; then
  mkdir "$work/base"
  git archive "$BASE" | tar -x -C "$work/base"
  (cd "$work/base" && go build -o "$work/agentmap-base" ./cmd/agentmap)
fi
home="$work/home"
proj="$home/.claude/projects"
echo "creating $N idle session files…"
python3 - "$proj" "$N" <<'PY'
import os, sys, uuid
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, "-w-app%d" % (i // 100))
    os.makedirs(d, exist_ok=True)
    sid = str(uuid.UUID(int=i + 1))
    with open(os.path.join(d, sid + ".jsonl"), "w") as f:
        for j in range(3):
            f.write('{"type":"user","sessionId":"%s","uuid":"u%d","timestamp":"2026-01-01T00:00:%02d.000Z",'
                    '"cwd":"/tmp/bench","version":"2.1.0","message":{"role":"user","content":"hello %d"}}\n' % (sid, j, j, j))
    os.utime(os.path.join(d, sid + ".jsonl"), (1767225600, 1767225600))
PY
hz=$(getconf CLK_TCK)
cpu() { awk '{print $14+$15}' "/proc/$pid/stat"; }
rescans=$(python3 -c "
import re,sys
m=re.fullmatch(r'(\d+(?:\.\d+)?)(ms|s|m|h)', '$RESCAN')
print(int($DURATION / (float(m[1]) * {'ms': .001, 's': 1, 'm': 60, 'h': 3600}[m[2]])) if m else 0)")
# measure BIN LABEL: a daemon from an empty data directory over the HOME;
# sets per_rescan (ms of CPU per rescan, or empty).
measure() {
  local bin=$1 label=$2 log="$work/daemon-$2.log"
  echo "== $label"
  rm -rf "$work/data"
  HOME="$home" CLAUDE_CONFIG_DIR= CODEX_HOME= XDG_CONFIG_HOME= XDG_DATA_HOME= \
    "$bin" run --data-dir "$work/data" --log-level debug --rescan "$RESCAN" >"$log" 2>&1 &
  pid=$!
  local start end c0 c1 idle_cpu
  start=$(date +%s.%N)
  # Catch-up: every session is old, so every map is written at once.
  while [ "$(grep -c 'msg="map written"' "$log" || true)" -lt "$N" ]; do
    sleep 0.5
    kill -0 "$pid" 2>/dev/null || { echo "daemon died"; tail "$log"; exit 1; }
  done
  end=$(date +%s.%N)
  echo "catch-up of $N sessions: $(echo "$end - $start" | bc) s wall, $(echo "scale=2; $(cpu) / $hz" | bc) s CPU"
  sleep 2
  c0=$(cpu)
  sleep "$DURATION"
  c1=$(cpu)
  idle_cpu=$(echo "scale=3; ($c1 - $c0) / $hz" | bc)
  echo "idle over ${DURATION}s with $N sessions, rescan every $RESCAN: CPU $idle_cpu s ($(echo "scale=3; 100 * $idle_cpu / $DURATION" | bc)% of one core)"
  per_rescan=
  if [ "$rescans" -gt 0 ]; then
    per_rescan=$(echo "scale=1; 1000 * $idle_cpu / $rescans" | bc)
    echo "CPU per rescan (all idle work over $rescans rescans): $per_rescan ms"
  fi
  grep -E 'VmHWM|VmRSS' "/proc/$pid/status" | tr -s ' \t' ' '
  # Append latency: append a line, wait for the commit of the new size.
  local f i t0 t1 size sorted lat=()
  for f in "$proj"/-w-app7/*.jsonl; do break; done
  for i in $(seq "$APPENDS"); do
    printf '{"type":"user","sessionId":"x","uuid":"%s-a%d","timestamp":"2026-01-01T00:01:00.000Z","message":{"role":"user","content":"more"}}\n' "$label" "$i" >>"$f"
    t0=$(date +%s%N)
    size=$(stat -c %s "$f")
    until grep -q "msg=committed .*path=$f .*offset=$size " "$log"; do sleep 0.005; done
    t1=$(date +%s%N)
    lat+=($(( (t1 - t0) / 1000000 )))
    sleep 0.3
  done
  sorted=$(printf '%s\n' "${lat[@]}" | sort -n)
  echo "append → committed cursor latency over $APPENDS appends (ms): min $(echo "$sorted" | head -1)," \
    "median $(echo "$sorted" | sed -n "$(( (APPENDS + 1) / 2 ))p"), max $(echo "$sorted" | tail -1)"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  pid=
  touch -d @1767225600 "$f" # idle again, so that the next daemon's catch-up writes every map at once
}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
measure "$work/agentmap" current
current=$per_rescan
if [ -n "${BASE:-}" ]; then
  measure "$work/agentmap-base" "base-$BASE"
  if [ -n "$current" ] && [ -n "$per_rescan" ]; then
    echo "CPU per rescan: current $current ms, $BASE $per_rescan ms ($(echo "scale=1; $per_rescan / $current" | bc)× less now)"
  fi
fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
