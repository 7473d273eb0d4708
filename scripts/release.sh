#!/usr/bin/env bash
# Builds cordon's release binaries, reproducibly, and their checksums:
#
#   scripts/release.sh v1.2.3 [OUTDIR]      (OUTDIR: dist/v1.2.3)
#
# For linux/amd64, linux/arm64, darwin/amd64 and darwin/arm64: a static
# binary (CGO_ENABLED=0), -trimpath (no path of this machine inside), no
# build ID, the version stamped into internal/buildinfo.Version and the
# commit's revision and time from the VCS, named cordon-VERSION-OS-ARCH;
# then SHA256SUMS. Every binary is built twice, into two directories, and
# the two must be identical byte for byte, or the release stops: anyone
# with the same Go and the same commit gets the same files.
#
# Check a download with:  sha256sum --check --ignore-missing SHA256SUMS
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:?usage: scripts/release.sh VERSION [OUTDIR] (VERSION like v1.2.3)}
[[ $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] ||
  { echo "release: version $version: want vMAJOR.MINOR.PATCH (e.g. v1.2.3 or v1.2.3-rc.1)" >&2; exit 2; }
out=${2:-dist/$version}
targets=(linux/amd64 linux/arm64 darwin/amd64 darwin/arm64)
# The revision stamped too (scripts/ldflags.sh): the go tool records none
# in a git worktree.
ldflags="-s -w -buildid= -X github.com/cordon-sandbox/cordon/internal/buildinfo.Version=$version $(scripts/ldflags.sh)"
if [[ -n $(git status --porcelain 2>/dev/null) ]]; then
  echo "release: note: the tree has changes not committed; the binaries will say modified" >&2
fi

build() { # build DIR OS ARCH
  CGO_ENABLED=0 GOOS=$2 GOARCH=$3 GOFLAGS= go build -trimpath -buildvcs=auto -ldflags "$ldflags" \
    -o "$1/cordon-$version-$2-$3" ./cmd/cordon
}

again=$(mktemp -d)
trap 'rm -rf "$again"' EXIT
rm -rf "$out"
mkdir -p "$out"
for t in "${targets[@]}"; do
  os=${t%/*} arch=${t#*/}
  echo "== $os/$arch"
  build "$out" "$os" "$arch"
  build "$again" "$os" "$arch"
  if ! cmp -s "$out/cordon-$version-$os-$arch" "$again/cordon-$version-$os-$arch"; then
    echo "release: cordon-$version-$os-$arch: two builds differ; the build is not reproducible" >&2
    exit 1
  fi
done
(cd "$out" && sha256sum cordon-"$version"-* >SHA256SUMS)
cat "$out/SHA256SUMS"
echo "release: $version in $out: ${#targets[@]} binaries, each built twice and identical; SHA256SUMS written"
