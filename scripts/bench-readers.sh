#!/usr/bin/env bash
# bench-readers.sh: what the commands that read a whole store cost over a
# large one: `list --json` (without a daemon, then through one, with the
# daemon's RSS before, at its peak and after), `usage`, `usage session
# --json`, `report` and `show ID` (one session, named by its whole id),
# over a home of SESSIONS small synthetic Claude
# sessions (scripts/benchhome) caught up once by `agentmap scan`. Each
# command runs under GNU time: wall, CPU, peak RSS. With BASE=REV the
# agentmap of git revision REV (built with `git archive` in the work
# directory) runs the same commands over the same data directory in the
# same rounds, alternated, and its outputs are compared with this one's
# (a report only by its size: it carries the time it was made). Linux only
# (/proc, GNU time).
#
# usage: scripts/bench-readers.sh [SESSIONS=100000] [ROUNDS=1]
#   BENCH_DIR=DIR keeps the work directory (home and data) between runs.
set -euo pipefail
SESSIONS=${1:-100000}
ROUNDS=${2:-1}
cd "$(dirname "$0")/.."
command -v /usr/bin/time >/dev/null || { echo "needs GNU time (/usr/bin/time)"; exit 1; }
if [ -n "${BENCH_DIR:-}" ]; then work=$BENCH_DIR; mkdir -p "$work"; else work=$(mktemp -d); fi
pid=
trap 'if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi; if [ -z "${BENCH_DIR:-}" ]; then rm -rf "$work"; fi' EXIT

go build -o "$work/agentmap-head" ./cmd/agentmap
bins=(head)
if [ -n "${BASE:-}" ]; then
  rm -rf "$work/base-src"; mkdir -p "$work/base-src"
  git archive "$BASE" | tar -x -C "$work/base-src"
  (cd "$work/base-src" && go build -o "$work/agentmap-base" ./cmd/agentmap)
  bins=(base head)
fi
home="$work/home-$SESSIONS"
[ -d "$home" ] || go run ./scripts/benchhome -sessions "$SESSIONS" -o "$home" >"$home.size"
data="$work/data-$SESSIONS"
clean_env=(env -u CLAUDE_CONFIG_DIR -u CODEX_HOME -u XDG_CONFIG_HOME -u XDG_DATA_HOME -u AGENTMAP_CONFIG HOME="$home")
# The data directory is written by the oldest build compared, which the
# newer reads as it is (a newer state is refused by an older build).
[ -d "$data" ] || "${clean_env[@]}" "$work/agentmap-${bins[0]}" scan --data-dir "$data" >/dev/null 2>&1

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); $SESSIONS sessions; head = $(git rev-parse --short HEAD)$(git diff --quiet || echo ' + changes')${BASE:+, base = $BASE}"
printf '\n| command | agentmap | wall | CPU | peak RSS |\n|---|---|---|---|---|\n'
# timed B LABEL ARGS...: runs agentmap B with ARGS under GNU time, its
# output into $work/out.B.LABEL; prints the row.
timed() {
  local b=$1 label=$2; shift 2
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" "${clean_env[@]}" "$work/agentmap-$b" "$@" --data-dir "$data" \
    >"$work/out.$b.$label" 2>"$work/err.$b.$label" || { echo "$b $label failed:"; tail -3 "$work/err.$b.$label"; exit 1; }
  read -r wall u s kb <"$work/time"
  echo "| \`$label\` | $b | $wall s | $(echo "$u + $s" | bc | sed 's/^\./0./') s | $((kb / 1024)) MiB |"
}
# The session show names: the one in the middle of the listing.
sid=$("${clean_env[@]}" "$work/agentmap-${bins[0]}" list --json --data-dir "$data" | grep -o '"id": *"[^"]*"' |
  sed -n "$((SESSIONS / 2))p" | sed 's/.*: *"//; s/"$//')
for r in $(seq "$ROUNDS"); do
  for b in "${bins[@]}"; do
    timed "$b" "list --json" list --json
    timed "$b" "usage" usage
    timed "$b" "usage session --json" usage session --json
    timed "$b" "report" report -o "$work/report.$b.html"
    timed "$b" "show ID" show "$sid"
  done
done
if [ -n "${BASE:-}" ]; then
  for label in "list --json" "usage" "usage session --json" "show ID"; do
    cmp -s "$work/out.base.$label" "$work/out.head.$label" && echo "$label: the same output" || echo "$label: OUTPUTS DIFFER"
  done
  echo "report: $(stat -c %s "$work/report.base.html") and $(stat -c %s "$work/report.head.html") bytes"
fi

# list through a daemon: its RSS idle, at its peak, and after the listing.
echo
for b in "${bins[@]}"; do
  "${clean_env[@]}" "$work/agentmap-$b" run --data-dir "$data" --rescan 5s >"$work/run.log" 2>&1 &
  pid=$!
  for _ in $(seq 120); do # until the daemon answers and has caught up
    sleep 1
    "${clean_env[@]}" "$work/agentmap-$b" status --no-service --data-dir "$data" 2>/dev/null | grep -q '^catch-up: *done' && break
  done
  sleep 10
  idle=$(($(awk '/VmRSS/ {print $2}' "/proc/$pid/status") / 1024))
  /usr/bin/time -f "%e" -o "$work/time" "${clean_env[@]}" "$work/agentmap-$b" list --json --data-dir "$data" >/dev/null
  after=$(($(awk '/VmRSS/ {print $2}' "/proc/$pid/status") / 1024))
  peak=$(($(awk '/VmHWM/ {print $2}' "/proc/$pid/status") / 1024))
  echo "$b: list --json through the daemon $(cat "$work/time") s; the daemon's RSS $idle MiB idle, $peak MiB at its peak, $after MiB after"
  /usr/bin/time -f "%e" -o "$work/time" "${clean_env[@]}" "$work/agentmap-$b" show "$sid" --data-dir "$data" >/dev/null
  echo "$b: show ID through the daemon $(cat "$work/time") s"
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
done
