#!/usr/bin/env bash
# bench-sink.sh: the team sink under load. Starts a real PostgreSQL server
# (the postgresql package's initdb/pg_ctl, in a temporary directory, as an
# unprivileged user), then N simulated devices, each with its own state
# database, outbox and map store, push their sessions at once through the
# daemon's own sender; then each flushes new versions at a steady rate;
# then the team report's queries run over everything. A single device
# pushing alone is the peer the throughput is compared with.
#
# usage: scripts/bench-sink.sh [DEVICES=100] [SESSIONS=1000]
set -euo pipefail
DEVICES=${1:-100}
SESSIONS=${2:-1000}
cd "$(dirname "$0")/.."
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
go run ./scripts/benchsink -devices "$DEVICES" -sessions "$SESSIONS"
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
