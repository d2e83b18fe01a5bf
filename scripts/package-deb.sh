#!/usr/bin/env bash
# Builds dist/agentmap_<version>_<arch>.deb: the binary, its man pages,
# completions and the systemd user unit (all made by the binary itself from
# its command definitions), the licenses of the code it links, packaged by
# nfpm. .ci/deb-check installs it and runs lintian over it.
#
#   scripts/package-deb.sh [GOARCH]      (default: the host's)
#
# nfpm is run at a pinned version with `go run`, so it needs no install and
# stays out of the product's go.mod.
set -euo pipefail
cd "$(dirname "$0")/.."
# TRIMPATH= (empty) builds without -trimpath, reusing the compile cache of
# ordinary builds (CI does, to stay quick).
NFPM=github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.45.2
arch=${1:-$(go env GOARCH)}
version=${AGENTMAP_VERSION:-$(scripts/version.sh)}
dist=$PWD/dist/deb-$arch
# The date of the man pages (and of what nfpm stamps) is the last commit's,
# so that two builds of one commit are the same bytes.
if [[ -z ${SOURCE_DATE_EPOCH:-} ]] && epoch=$(git log -1 --format=%ct 2>/dev/null); then
  export SOURCE_DATE_EPOCH=$epoch
fi
rm -rf "$dist" && mkdir -p "$dist"
CGO_ENABLED=0 GOOS=linux GOARCH=$arch go build ${TRIMPATH--trimpath} \
  -ldflags "-s -w -X main.version=$version" -o "$dist/agentmap" ./cmd/agentmap
# The licenses of the code it links, which the BSD and MIT licenses ask to
# go with a binary.
go run ./scripts/notices -os linux -arch "$arch" -o "$dist/third-party-licenses"
# A native package's changelog.gz is in Debian's format: one entry for this
# version, pointing to the project's own CHANGELOG.md, shipped beside it
# (gzip -n: the bytes depend on the text alone).
gzip -9n < CHANGELOG.md > "$dist/CHANGELOG.md.gz"
# On a line of its own, so that a date that fails stops the script.
changed=$(date -u -R -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}")
{
  echo "agentmap ($version) unstable; urgency=medium"
  echo
  echo "  * The changes of this version: /usr/share/doc/agentmap/CHANGELOG.md.gz."
  echo
  echo " -- agentmap maintainers <agentmap@users.noreply.github.com>  $changed"
} | gzip -9n > "$dist/changelog.gz"
# The files are made by a binary of the host (the target may not run here).
go run -ldflags "-X main.version=$version" ./cmd/agentmap package-files --bin /usr/bin/agentmap "$dist/files" >/dev/null
# Debian installs man pages compressed; -n leaves the name and time out, so
# the bytes depend on the page alone.
gzip -9n "$dist"/files/man/man1/*.1
case $arch in
  amd64|arm64) deb_arch=$arch ;;
  arm) deb_arch=armhf ;;
  *) deb_arch=$arch ;;
esac
out=dist/agentmap_${version}_${deb_arch}.deb
# nfpm does not expand variables in file paths: the config is filled in here.
sed -e "s|\${DIST}|$dist|g" -e "s|\${DEB_ARCH}|$deb_arch|g" -e "s|\${AGENTMAP_VERSION}|$version|g" \
  packaging/deb/nfpm.yaml > "$dist/nfpm.yaml"
go run "$NFPM" package --config "$dist/nfpm.yaml" --packager deb --target "$out" >/dev/null
echo "$out"
