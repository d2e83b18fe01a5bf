#!/usr/bin/env bash
# The version of a build from this checkout: the tag (without its v) when
# HEAD is tagged, else 0.0.0~git<commit time>.<short sha> (Debian sorts it
# before any release), with +dirty for uncommitted changes. The commit time,
# YYYYMMDDHHMMSS in UTC, orders two builds of one day (the sha alone sorted
# by its hex, making the newer one a downgrade to dpkg); as one number it
# has no leading zero, so the version stays semver-like.
set -euo pipefail
cd "$(dirname "$0")/.."
if tag=$(git describe --tags --exact-match --match 'v[0-9]*' 2>/dev/null); then
  v=${tag#v}
elif rev=$(git rev-parse --short=12 HEAD 2>/dev/null); then
  v="0.0.0~git$(TZ=UTC0 git log -1 --format=%cd --date=format-local:%Y%m%d%H%M%S HEAD).$rev"
else
  v=0.0.0~dev
fi
if ! git diff --quiet HEAD 2>/dev/null; then
  v="$v+dirty"
fi
echo "$v"
