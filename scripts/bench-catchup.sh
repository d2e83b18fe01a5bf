#!/usr/bin/env bash
# bench-catchup.sh: what catching up on existing history costs, agentmap
# beside ccusage (a peer that reads the same logs, but only totals tokens: a
# lower bound on the work, not a like-for-like peer), on the same HOMEs:
#
#   1x, 10x, 50x   copies of ../shared/corpus (Claude, Codex and Cursor JSONL
#                  logs; every UUID of a copy replaced, so that each copy is
#                  new sessions), laid out where the agents keep them;
#   N synthetic    small Claude sessions (default 100,000).
#
# For each corpus HOME: `agentmap scan` and `ccusage session --json`, ROUNDS
# paired runs, medians of wall time, CPU time and peak RSS, maps written, and
# the ratios; for the 10x and 50x HOMEs the same again on each agent's logs
# alone (a HOME holding only its .claude, then only its .codex, hard-linked),
# where the two programs read the same bytes (ccusage reads Claude Code's and
# Codex's logs, not Cursor's), so that the ratio of each agent shows. For
# the synthetic HOME: `agentmap scan` once, then `agentmap run` from an
# empty data directory until it has written every map (wall, CPU, peak
# RSS), then that daemon idle with a rescan every 5 s (CPU per rescan, RSS). ccusage is installed from npm (pinned) into a cache under the
# work directory. The HOMEs are made in the work directory, never in the
# repository. Linux only (/proc, GNU time). The machine's load average is
# printed: wall times on a shared machine are only as good as it is idle.
#
# usage: scripts/bench-catchup.sh [ROUNDS=3] [SESSIONS=100000]
#   BENCH_DIR=DIR keeps the work directory (and the npm cache) between runs.
#   BASE=REV also runs `agentmap scan` as built from git revision REV (with
#   git archive, in the work directory) in the same rounds on the corpus
#   HOMEs, and prints its row and the ratio of the current code to it.
set -euo pipefail
ROUNDS=${1:-3}
SESSIONS=${2:-100000}
CCUSAGE_VERSION=20.0.24
cd "$(dirname "$0")/.."
corpus=../shared/corpus
[ -d "$corpus" ] || { echo "no corpus at $corpus"; exit 1; }
command -v /usr/bin/time >/dev/null || { echo "needs GNU time (/usr/bin/time)"; exit 1; }
if [ -n "${BENCH_DIR:-}" ]; then work=$BENCH_DIR; mkdir -p "$work"; else work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; fi
pid=
# Each run of agentmap writes into a data directory of its own, and all of
# them are removed at the end, not one before each run: on ext4 without a
# journal, a new file skips the inodes freed in the last minutes (the
# kernel's recently_deleted check reads each one's table block), which
# cost the run right after a removal of thousands of map files some 7% of
# its CPU (perf, 50x HOME). A user's first catch-up follows no such
# removal. A run started minutes after another one's end still pays some
# of it; the leftovers of an interrupted run are removed here.
rm -rf "$work"/data.*
trap 'if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi; rm -rf "$work"/data.*; if [ -z "${BENCH_DIR:-}" ]; then rm -rf "$work"; fi' EXIT
runs=0
# new_data: sets data to a new, empty data directory.
new_data() { runs=$((runs + 1)); data="$work/data.$runs"; }

go build -o "$work/agentmap" ./cmd/agentmap
if [ -n "${BASE:-}" ]; then
  rm -rf "$work/base-src"; mkdir -p "$work/base-src"
  git archive "$BASE" | tar -x -C "$work/base-src"
  (cd "$work/base-src" && go build -o "$work/agentmap-base" ./cmd/agentmap)
fi
cache="$work/cache/npm"
ccbin="$cache/node_modules/@ccusage/ccusage-linux-$(uname -m | sed 's/x86_64/x64/; s/aarch64/arm64/')/bin/ccusage"
if [ ! -f "$ccbin" ]; then
  npm install --silent --no-audit --no-fund --prefix "$cache" "ccusage@$CCUSAGE_VERSION" >/dev/null
fi
[ -f "$ccbin" ] || { echo "ccusage $CCUSAGE_VERSION: no native binary for this machine"; exit 1; }
chmod u+x "$ccbin" # npm leaves it to ccusage's launcher, which is bypassed to time the native binary alone

clean_env=(env -u CLAUDE_CONFIG_DIR -u CODEX_HOME -u XDG_CONFIG_HOME -u XDG_DATA_HOME -u AGENTMAP_CONFIG)

# timed LABEL CMD...: runs CMD under GNU time; sets wall, cpu, rss_mb.
timed() {
  local label=$1; shift
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" >"$work/out.$label" 2>"$work/err.$label" ||
    { echo "$label failed:"; tail -5 "$work/err.$label"; exit 1; }
  read -r wall u s kb <"$work/time"
  cpu=$(echo "$u + $s" | bc | sed 's/^\./0./')
  rss_mb=$((kb / 1024))
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ratio() { echo "scale=1; $1 / $2" | bc | sed 's/^\./0./'; }

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); ccusage $CCUSAGE_VERSION (native)"
printf '\n| HOME | logs | MB | agentmap scan: wall, CPU, peak RSS, maps | ccusage: wall, CPU, peak RSS | ratio wall, CPU |\n|---|---|---|---|---|---|\n'
# rounds LABEL HOME LOGS BYTES: ROUNDS paired runs of agentmap scan and
# ccusage (and the base) on HOME, and the table's rows for them.
rounds() {
  local label=$1 home=$2 logs=$3 bytes=$4
  : >"$work/a"; : >"$work/c"; : >"$work/b"
  for r in $(seq "$ROUNDS"); do
    new_data
    timed scan "${clean_env[@]}" HOME="$home" "$work/agentmap" scan --data-dir "$data"
    maps=$(find "$data/maps" -name '*.json.gz' | wc -l)
    echo "$wall $cpu $rss_mb $maps" >>"$work/a"
    timed ccusage "${clean_env[@]}" HOME="$home" "$ccbin" session --json --offline
    echo "$wall $cpu $rss_mb" >>"$work/c"
    if [ -n "${BASE:-}" ]; then
      new_data
      timed base "${clean_env[@]}" HOME="$home" "$work/agentmap-base" scan --data-dir "$data"
      echo "$wall $cpu $rss_mb $(find "$data/maps" -name '*.json.gz' | wc -l)" >>"$work/b"
    fi
  done
  aw=$(cut -d' ' -f1 "$work/a" | median); ac=$(cut -d' ' -f2 "$work/a" | median); ar=$(cut -d' ' -f3 "$work/a" | median)
  am=$(cut -d' ' -f4 "$work/a" | median)
  cw=$(cut -d' ' -f1 "$work/c" | median); cc=$(cut -d' ' -f2 "$work/c" | median); cr=$(cut -d' ' -f3 "$work/c" | median)
  echo "| $label | $logs | $(echo "scale=1; $bytes / 1000000" | bc) | ${aw} s, ${ac} s, ${ar} MiB, $am | ${cw} s, ${cc} s, ${cr} MiB | $(ratio "$aw" "$cw")x, $(ratio "$ac" "$cc")x |"
  if [ -n "${BASE:-}" ]; then
    bw=$(cut -d' ' -f1 "$work/b" | median); bc_=$(cut -d' ' -f2 "$work/b" | median); br=$(cut -d' ' -f3 "$work/b" | median)
    bm=$(cut -d' ' -f4 "$work/b" | median)
    echo "| (agentmap $BASE on the same) | | | ${bw} s, ${bc_} s, ${br} MiB, $bm | | now $(ratio "$aw" "$bw")x its wall, $(ratio "$ac" "$bc_")x its CPU |"
  fi
}

# agent_home HOME DIR OUT: OUT is a HOME holding only HOME's DIR (.claude,
# .codex), hard-linked: one agent's share of a corpus HOME, on which both
# programs read the same logs (ccusage reads Claude Code's and Codex's, not
# Cursor's).
agent_home() {
  [ -d "$3" ] || { mkdir -p "$3" && cp -al "$1/$2" "$3/"; }
}
size_of() { echo "$(find "$1" -type f | wc -l) $(find "$1" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')"; }

for k in 1 10 50; do
  home="$work/home-${k}x"
  [ -d "$home" ] || go run ./scripts/benchhome -corpus "$corpus" -copies "$k" -o "$home" >"$work/home-${k}x.size"
  read -r logs bytes <"$work/home-${k}x.size"
  rounds "${k}x corpus" "$home" "$logs" "$bytes"
  if [ "$k" -gt 1 ]; then
    for agent in claude codex; do
      agent_home "$home" ".$agent" "$home-$agent"
      read -r logs bytes < <(size_of "$home-$agent")
      rounds "${k}x, its .$agent alone" "$home-$agent" "$logs" "$bytes"
    done
  fi
done

home="$work/home-synthetic-$SESSIONS"
[ -d "$home" ] || go run ./scripts/benchhome -sessions "$SESSIONS" -o "$home" >"$home.size"
read -r logs bytes <"$home.size"
mb=$(echo "scale=1; $bytes / 1000000" | bc)
new_data
timed scan "${clean_env[@]}" HOME="$home" "$work/agentmap" scan --data-dir "$data"
maps=$(find "$data/maps" -name '*.json.gz' | wc -l)
echo "| $logs synthetic sessions | $logs | $mb | ${wall} s, ${cpu} s, ${rss_mb} MiB, $maps | | |"
timed ccusage "${clean_env[@]}" HOME="$home" "$ccbin" session --json --offline
echo "| (ccusage on the same) | | | | ${wall} s, ${cpu} s, ${rss_mb} MiB | |"

# The daemon: catch-up from an empty data directory, then idle.
new_data
hz=$(getconf CLK_TCK)
"${clean_env[@]}" HOME="$home" "$work/agentmap" run --data-dir "$data" --rescan 5s >"$work/run.log" 2>&1 &
pid=$!
cputime() { awk -v hz="$hz" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$pid/stat"; }
t0=$(date +%s.%N)
until [ "$(find "$data/maps" -name '*.json.gz' 2>/dev/null | wc -l)" -ge "$maps" ]; do
  sleep 1
  kill -0 "$pid" 2>/dev/null || { echo "the daemon died:"; tail "$work/run.log"; exit 1; }
done
t1=$(date +%s.%N)
echo "| \`run\`, $logs synthetic sessions, until every map is written | $logs | $mb | $(printf %.1f "$(echo "$t1 - $t0" | bc)") s, $(cputime) s, $(($(awk '/VmHWM/ {print $2}' "/proc/$pid/status") / 1024)) MiB, $maps | | |"
sleep 12 # the last records committed, the first rescans done
c0=$(cputime); sleep 60; c1=$(cputime)
echo
echo "idle, $logs files followed, rescan every 5 s: $(echo "scale=1; ($c1 - $c0) * 1000 / 12" | bc) ms CPU per rescan" \
  "(60 s: $(echo "$c1 - $c0" | bc) s CPU), RSS $(($(awk '/VmRSS/ {print $2}' "/proc/$pid/status") / 1024)) MiB" \
  "(anonymous $(($(awk '/RssAnon/ {print $2}' "/proc/$pid/status") / 1024)) MiB, state database mapped $(($(awk '/RssFile/ {print $2}' "/proc/$pid/status") / 1024)) MiB)"
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
