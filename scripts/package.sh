#!/usr/bin/env bash
# Builds colocd's .deb and .rpm into dist/ (make package) with nfpm from
# packaging/nfpm.yaml: a static colocd (CGO_ENABLED=0), its version from
# the commit (0.0~git<date>.<commit>, or PKG_VERSION), and the Debian
# changelog the .deb carries. NFPM names the nfpm binary (make tools
# installs it into the tools cache).
set -euo pipefail
cd "$(dirname "$0")/.."
NFPM=${NFPM:-${COLOCD_TOOLS:-$HOME/.cache/colocd/tools}/bin/nfpm}
OUT=${1:-dist}
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
date=$(git log -1 --format=%cd --date=format:%Y%m%d 2>/dev/null || date -u +%Y%m%d)
export PKG_VERSION=${PKG_VERSION:-0.0~git${date}.${commit}}
export PKG_ARCH=${PKG_ARCH:-$(go env GOARCH)}
PKG_BUILD=$(mktemp -d)
export PKG_BUILD
trap 'rm -rf "$PKG_BUILD"' EXIT

CGO_ENABLED=0 GOARCH=$PKG_ARCH go build -trimpath \
  -ldflags "-s -w -X main.version=$PKG_VERSION -X main.commit=$(git rev-parse HEAD 2>/dev/null)" \
  -o "$PKG_BUILD/colocd" ./cmd/colocd

when=$(git log -1 --format=%cD 2>/dev/null || date -R)
printf 'colocd (%s-1) unstable; urgency=medium\n\n  * Built from commit %s.\n\n -- colocd maintainers <colocd@users.noreply.github.com>  %s\n' \
  "$PKG_VERSION" "$commit" "$when" | gzip -9n >"$PKG_BUILD/changelog.Debian.gz"

# nfpm expands the environment in the version and arch, not in a file's
# source path: the built files' directory is written into a copy.
sed "s|\${PKG_BUILD}|$PKG_BUILD|g" packaging/nfpm.yaml >"$PKG_BUILD/nfpm.yaml"
mkdir -p "$OUT"
for p in deb rpm; do
  "$NFPM" package --config "$PKG_BUILD/nfpm.yaml" --packager "$p" --target "$OUT/" >&2
done
ls "$OUT"/colocd*"$PKG_VERSION"* 2>/dev/null || ls "$OUT"
