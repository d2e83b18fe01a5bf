#!/usr/bin/env bash
# Release archives: dist/release/agentmap_<version>_<os>_<arch>.tar.gz (zip
# for Windows) for linux, darwin and windows on amd64 and arm64, each with
# the binary, LICENSE, THIRD_PARTY_LICENSES, README.md, CHANGELOG.md, the man pages, the
# completions and, in docs/, the documents agentmap's messages name
# (docs.Shipped); and SHA256SUMS over them. CI runs it.
#
#   scripts/release.sh            all six
#   scripts/release.sh linux/amd64 ...
set -euo pipefail
cd "$(dirname "$0")/.."
# TRIMPATH= (empty) builds without -trimpath, reusing the compile cache of
# ordinary builds (CI does, to stay quick).
version=${AGENTMAP_VERSION:-$(scripts/version.sh)}
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64)
fi
out=dist/release
rm -rf "$out" && mkdir -p "$out"
files=$(mktemp -d)
trap 'rm -rf "$files"' EXIT
go run -ldflags "-X main.version=$version" ./cmd/agentmap package-files "$files" >/dev/null
for t in "${targets[@]}"; do
  os=${t%/*} arch=${t#*/}
  name=agentmap_${version}_${os}_${arch}
  stage=$files/stage/$name
  mkdir -p "$stage"
  exe=agentmap
  [ "$os" = windows ] && exe=agentmap.exe
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build ${TRIMPATH--trimpath} \
    -ldflags "-s -w -X main.version=$version" -o "$stage/$exe" ./cmd/agentmap
  cp LICENSE README.md CHANGELOG.md "$stage/"
  # The licenses of the code the binary links (this platform's build).
  go run ./scripts/notices -os "$os" -arch "$arch" -o "$stage/THIRD_PARTY_LICENSES"
  # Beside the binary, where its messages look for them (docs.Path).
  mkdir -p "$stage/docs"
  cp docs/team-database.md docs/team-database-grants.sql "$stage/docs/"
  cp -r "$files/man" "$files/completions" "$stage/"
  if [ "$os" != windows ]; then
    # Every file the Homebrew formula installs is in the archive (brew
    # install would stop at the first missing one).
    sed -n 's/=> "[^"]*"//; /\.install /p' packaging/homebrew/agentmap.rb.tmpl | grep -oE '"[^"]+"' | tr -d '"' |
      while read -r f; do
        compgen -G "$stage/$f" >/dev/null || { echo "release: the formula installs $f, which $name lacks" >&2; exit 1; }
      done
  fi
  if [ "$os" = windows ]; then
    (cd "$files/stage" && zip -qr "$OLDPWD/$out/$name.zip" "$name")
  else
    tar -C "$files/stage" --owner=0 --group=0 -czf "$out/$name.tar.gz" "$name"
  fi
done
(cd "$out" && sha256sum agentmap_* > SHA256SUMS && sha256sum -c --quiet SHA256SUMS)
ls "$out"

# The Homebrew formula, with this release's checksums (needs the four
# macOS and Linux archives).
formula=packaging/homebrew/agentmap.rb.tmpl
sed_args=(-e "s/@VERSION@/$version/g")
complete=1
for t in darwin_arm64 darwin_amd64 linux_arm64 linux_amd64; do
  sum=$(awk -v f="agentmap_${version}_${t}.tar.gz" '$2 == f { print $1 }' "$out/SHA256SUMS")
  [ -n "$sum" ] || complete=0
  sed_args+=(-e "s/@SHA_${t}@/$sum/g")
done
if [ $complete = 1 ]; then
  sed "${sed_args[@]}" "$formula" > "$out/agentmap.rb"
  if grep -n '@[A-Za-z_0-9]*@' "$out/agentmap.rb"; then
    echo "release: the formula still has placeholders" >&2
    exit 1
  fi
  # Ruby's own syntax check of the formula (the Homebrew DSL itself is
  # checked by brew audit where Homebrew is installed).
  if command -v ruby >/dev/null 2>&1; then
    ruby -c "$out/agentmap.rb" >/dev/null
    echo "ruby -c $out/agentmap.rb: ok"
  else
    echo "NOTE: no ruby here: the formula's syntax is not checked"
  fi
  if command -v brew >/dev/null 2>&1; then
    brew style --formula "$out/agentmap.rb" || echo "NOTE: brew style found problems in the formula"
  fi
  echo "$out/agentmap.rb"
fi
