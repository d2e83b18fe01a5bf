#!/usr/bin/env bash
# Runs the real-clients suite: installs the pinned Claude Code, Codex,
# Gemini, OpenCode and GitHub Copilot CLIs from the npm registry into a
# cache, then runs the Go test in e2e/.
#
#   e2e/run.sh                             # the pinned versions
#   AGENTMAP_E2E_VERSIONS=latest e2e/run.sh  # today's releases, to catch format drift
#
# AGENTMAP_E2E_CACHE (default e2e/.npm-cache) holds the installs; extra
# arguments go to `go test` (e.g. -run, -timeout). Without npm or the
# registry the suite skips with a message and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."

claude_version=2.1.332
codex_version=0.171.0
opencode_version=1.18.33
copilot_version=1.0.102
if [ "${AGENTMAP_E2E_VERSIONS:-pinned}" = latest ]; then
  claude_version=latest
  codex_version=latest
  opencode_version=latest
  copilot_version=latest
fi

if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  echo "SKIP real-clients suite: npm and node are required"
  exit 0
fi

# The clients write into their HOME even for --version (Gemini its project
# registry, Codex its helper binaries): ask them in a throwaway one.
probe_home=$(mktemp -d)
trap 'rm -rf "$probe_home"' EXIT
version_of() { HOME="$probe_home" "$1" --version 2>/dev/null | head -n1; }

cache=${AGENTMAP_E2E_CACHE:-e2e/.npm-cache}
dir="$cache/claude-code@$claude_version+codex@$codex_version"
bin="$dir/node_modules/.bin"
if [ "$claude_version" = latest ] || [ ! -x "$bin/claude" ] || [ ! -x "$bin/codex" ]; then
  mkdir -p "$dir"
  echo "installing @anthropic-ai/claude-code@$claude_version and @openai/codex@$codex_version into $dir"
  if ! npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
      "@anthropic-ai/claude-code@$claude_version" "@openai/codex@$codex_version"; then
    echo "SKIP real-clients suite: could not install the clients from the npm registry"
    exit 0
  fi
fi
bin=$(cd "$bin" && pwd)
echo "clients: $(version_of "$bin/claude"); $(version_of "$bin/codex")"

# Gemini CLI, in a directory of its own (its dependencies are many).
gemini_version=0.61.0
if [ "${AGENTMAP_E2E_VERSIONS:-pinned}" = latest ]; then
  gemini_version=latest
fi
gdir="$cache/gemini-cli@$gemini_version"
if [ "$gemini_version" = latest ] || [ ! -x "$gdir/node_modules/.bin/gemini" ]; then
  mkdir -p "$gdir"
  echo "installing @google/gemini-cli@$gemini_version into $gdir"
  npm install --prefix "$gdir" --no-audit --no-fund --loglevel=error "@google/gemini-cli@$gemini_version" \
    || echo "NOTE: could not install Gemini CLI from the npm registry; the suite runs without it"
fi
clients=claude,codex
if [ -x "$gdir/node_modules/.bin/gemini" ]; then
  gbin=$(cd "$gdir/node_modules/.bin" && pwd)
  echo "gemini: $(version_of "$gbin/gemini")"
  bin="$bin:$gbin"
  clients="$clients,gemini"
fi

# OpenCode and Copilot CLI: an install of their own, so that a new version
# of one pair does not reinstall the other.
chat_dir="$cache/opencode@$opencode_version+copilot@$copilot_version"
chat_bin="$chat_dir/node_modules/.bin"
if [ "$opencode_version" = latest ] || [ ! -x "$chat_bin/opencode" ] || [ ! -x "$chat_bin/copilot" ]; then
  mkdir -p "$chat_dir"
  echo "installing opencode-ai@$opencode_version and @github/copilot@$copilot_version into $chat_dir"
  if ! npm install --prefix "$chat_dir" --no-audit --no-fund --loglevel=error \
      "opencode-ai@$opencode_version" "@github/copilot@$copilot_version"; then
    echo "NOTE: could not install OpenCode and Copilot CLI from the npm registry; the suite runs without them"
  fi
fi
if [ -x "$chat_bin/opencode" ] && [ -x "$chat_bin/copilot" ]; then
  chat_bin=$(cd "$chat_bin" && pwd)
  # Versions from the packages: running the clients here would write into
  # the real HOME.
  pkgver() { sed -n 's/^  "version": "\(.*\)",$/\1/p' "$chat_dir/node_modules/$1/package.json" | head -n1; }
  echo "clients: opencode $(pkgver opencode-ai); copilot $(pkgver @github/copilot)"
  bin="$bin:$chat_bin"
  clients="$clients,opencode,copilot"
fi
# The clients that could be installed, unless the caller chose a subset.
export AGENTMAP_E2E_CLIENTS=${AGENTMAP_E2E_CLIENTS:-$clients}

start=$(date +%s)
status=0
AGENTMAP_E2E=1 AGENTMAP_E2E_BIN="$bin" go test ./e2e/ -run '^TestClients$' -count=1 -v -timeout 15m "$@" || status=$?
echo "real-clients suite: $(( $(date +%s) - start ))s"
exit $status
