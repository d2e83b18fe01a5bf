#!/usr/bin/env bash
# bench-memory.sh: how the memory of `agentmap scan` and `agentmap build`
# grows with the number of sessions. For each size it makes a synthetic HOME
# of that many small Claude sessions (scripts/benchhome), then runs `scan`
# from an empty data directory, `scan` again over the data directory it left
# (nothing new to read: what a state database of that many sessions costs
# to open and check), and `build -o DIR` over every log, under GNU
# time: wall, CPU, peak RSS (the kernel's high-water mark, which counts
# the state database's pages mapped into the process as well as the heap
# and the collector's headroom above it) and the largest heap a collection
# found live (from GODEBUG=gctrace=1: what the program holds).
# build is given the logs twice: as arguments on one command line (as long
# as the OS takes it: about 75,000 of these paths), and as a list read with
# --inputs (by an agentmap that has it), which has no such limit. The
# summary is the growth between the smallest and the largest size, per
# session.
#
# With BASE=<git revision>, the same runs are made with agentmap built from
# that revision too (exported with git archive into the work directory), so
# that before and after come from one run on the same machine and HOMEs.
#
# usage: scripts/bench-memory.sh [SIZES="10000 50000 100000"]
#   BASE=REV         also measure agentmap as of REV
#   BENCH_DIR=DIR    keep the work directory (the HOMEs) between runs
# Linux only (GNU time). The load average is printed: wall times on a
# shared machine are only as good as it is idle; RSS does not depend on it.
set -euo pipefail
SIZES=${1:-10000 50000 100000}
cd "$(dirname "$0")/.."
command -v /usr/bin/time >/dev/null || { echo "needs GNU time (/usr/bin/time)"; exit 1; }
if [ -n "${BENCH_DIR:-}" ]; then work=$BENCH_DIR; mkdir -p "$work"; else work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; fi

go build -o "$work/agentmap-head" ./cmd/agentmap
bins=(head)
if [ -n "${BASE:-}" ]; then
  rm -rf "$work/base-src"; mkdir -p "$work/base-src"
  git archive "$BASE" | tar -x -C "$work/base-src"
  (cd "$work/base-src" && go build -o "$work/agentmap-base" ./cmd/agentmap)
  bins=(base head)
fi
# Each run writes into directories of its own, all removed at the end, not
# one before each run: on ext4 without a journal a new file skips the
# inodes freed in the last minutes, which costs the run after a removal of
# thousands of files CPU that a user's run does not pay (bench-catchup.sh).
rm -rf "$work"/data.* "$work"/built.*
trap 'rm -rf "$work"/data.* "$work"/built.*; if [ -z "${BENCH_DIR:-}" ]; then rm -rf "$work"; fi' EXIT
runs=0
# new_dir NAME: sets dir to a new, empty directory path $work/NAME.N.
new_dir() { runs=$((runs + 1)); dir="$work/$1.$runs"; }
clean_env=(env -u CLAUDE_CONFIG_DIR -u CODEX_HOME -u XDG_CONFIG_HOME -u XDG_DATA_HOME -u AGENTMAP_CONFIG)
# 100,000 paths on one command line: more room for the arguments.
ulimit -s 262144 2>/dev/null || ulimit -s unlimited 2>/dev/null || true

# timed CMD...: runs CMD under GNU time, with the Go runtime tracing its
# collections; sets wall, cpu, rss (MiB) and live (MB: the largest heap a
# collection found live, what the program holds, without the collector's
# headroom that the peak RSS counts too).
timed() {
  GODEBUG=gctrace=1 /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" >"$work/out" 2>"$work/err" ||
    { echo "failed: ${*:1:6} …"; tail -5 "$work/err"; exit 1; }
  read -r wall u s kb <"$work/time"
  cpu=$(echo "$u + $s" | bc | sed 's/^\./0./')
  rss=$((kb / 1024))
  # "gc 12 @1.2s 3%: … ms cpu, 40->42->21 MB, …": 21 is live after it.
  live=$(grep -Eo '[0-9]+->[0-9]+->[0-9]+ MB' "$work/err" | sed -E 's/.*->([0-9]+) MB/\1/' | sort -n | tail -1)
  live=${live:-0}
}

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)${BASE:+; base = $BASE ($(git rev-parse --short "$BASE"))}, head = $(git rev-parse --short HEAD)$(git diff --quiet || echo ' + changes')"
printf '\n| sessions | agentmap | scan: wall, CPU, peak RSS, live heap | scan again: wall, CPU, peak RSS, live heap | build FILE...: wall, CPU, peak RSS, live heap | build --inputs LIST: wall, CPU, peak RSS, live heap | maps |\n|---|---|---|---|---|---|---|\n'
declare -A first_scan first_again first_build first_list last_scan last_again last_build last_list last_built last_listed
declare -A first_scan_live first_again_live first_build_live first_list_live last_scan_live last_again_live last_build_live last_list_live
first=; last=
# build_run WHY BIN ARGS...: builds from the projects directory into
# a new directory; sets build (the cell; "not run (WHY)" when it fails), rss
# (MiB, empty when not run), live (MB) and built (maps).
build_run() {
  local why=$1 b=$2; shift 2
  new_dir built; built_dir=$dir; mkdir "$built_dir"
  if (cd "$projects" 2>/dev/null && timed "$work/agentmap-$b" build -o "$built_dir" "$@"
    echo "$wall $cpu $rss $live" >"$work/build.res") >"$work/build.err" 2>&1; then
    read -r wall cpu rss live <"$work/build.res"
    built=$(find "$built_dir" -name '*.json.gz' | wc -l)
    build="$wall s, $cpu s, $rss MiB, $live MB"
  else
    build="not run ($why)"; rss=; live=; built=-
  fi
}
for n in $SIZES; do
  home="$work/home-$n"
  [ -d "$home" ] || go run ./scripts/benchhome -sessions "$n" -o "$home" >"$home.size"
  [ -n "$first" ] || first=$n
  last=$n
  for b in "${bins[@]}"; do
    new_dir data; data=$dir
    timed "${clean_env[@]}" HOME="$home" "$work/agentmap-$b" scan --data-dir "$data"
    scan="$wall s, $cpu s, $rss MiB, $live MB"; scan_rss=$rss scan_live=$live
    maps=$(find "$data/maps" -name '*.json.gz' | wc -l)
    timed "${clean_env[@]}" HOME="$home" "$work/agentmap-$b" scan --data-dir "$data"
    again="$wall s, $cpu s, $rss MiB, $live MB"; again_rss=$rss again_live=$live
    # Every log, as short as the layout allows; Linux caps a command line
    # at 6 MB whatever the stack limit.
    projects="$home/.claude/projects"
    (cd "$projects" && find . -name '*.jsonl' | sort >"$work/inputs") # ./-home-…: not a flag
    build_run "the command line is too long for the OS" "$b" $(cat "$work/inputs")
    args_build=$build args_rss=$rss args_live=$live args_built=$built
    if "$work/agentmap-$b" build -h 2>&1 | grep -q -- '-inputs'; then
      build_run "failed" "$b" --inputs "$work/inputs"
    else
      build="not run (no --inputs)"; rss=; live=; built=-
    fi
    echo "| $n | $b | $scan | $again | $args_build | $build | $maps, $args_built, $built |"
    [ "$n" = "$first" ] && { first_scan[$b]=$scan_rss; first_again[$b]=$again_rss; first_build[$b]=$args_rss; first_list[$b]=$rss
      first_scan_live[$b]=$scan_live; first_again_live[$b]=$again_live; first_build_live[$b]=$args_live; first_list_live[$b]=$live; }
    last_scan[$b]=$scan_rss; last_again[$b]=$again_rss; last_scan_live[$b]=$scan_live; last_again_live[$b]=$again_live
    [ -n "$args_rss" ] && { last_build[$b]=$args_rss; last_build_live[$b]=$args_live; last_built[$b]=$n; }
    [ -n "$rss" ] && { last_list[$b]=$rss; last_list_live[$b]=$live; last_listed[$b]=$n; }
  done
done
if [ "$first" != "$last" ]; then
  echo
  per() { [ -n "$2" ] && [ "${3:-$first}" != "$first" ] && echo "$(echo "($2 - $1) * 1048576 / ($3 - $first)" | bc) bytes a session (to $3)" || echo "-"; }
  for b in "${bins[@]}"; do
    echo "$b: peak RSS growth from $first sessions: scan $(per "${first_scan[$b]}" "${last_scan[$b]}" "$last")," \
      "scan again $(per "${first_again[$b]}" "${last_again[$b]}" "$last")," \
      "build FILE... $(per "${first_build[$b]}" "${last_build[$b]:-}" "${last_built[$b]:-}")," \
      "build --inputs $(per "${first_list[$b]:-}" "${last_list[$b]:-}" "${last_listed[$b]:-}")"
    echo "$b: live heap growth from $first sessions: scan $(per "${first_scan_live[$b]}" "${last_scan_live[$b]}" "$last")," \
      "scan again $(per "${first_again_live[$b]}" "${last_again_live[$b]}" "$last")," \
      "build FILE... $(per "${first_build_live[$b]}" "${last_build_live[$b]:-}" "${last_built[$b]:-}")," \
      "build --inputs $(per "${first_list_live[$b]:-}" "${last_list_live[$b]:-}" "${last_listed[$b]:-}")"
  done
fi
