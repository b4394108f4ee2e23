#!/usr/bin/env bash
# What users install, tested: the GoReleaser config (`goreleaser check`), a release
# snapshot of this machine's own target (archive, checksums.txt, krew manifest), the
# binary's version, the krew manifest through krew's own validate-krew-manifest, the
# image built by podman from image/Containerfile and run from its saved filesystem,
# and the GitHub Action's download (test/release).
#
# GoReleaser, krew and validate-krew-manifest are built from the Go module proxy once
# (no prebuilt binaries can be downloaded here) and cached; podman comes from Debian.
# Cold, this costs the tools' builds and one cross-flag build of backfire
# (CGO_ENABLED=0 -trimpath, which shares nothing with the test builds); warm, about a
# minute. BACKFIRE_CACHE moves the cache (default ~/.cache/backfire).
#
# The full matrix (linux, darwin, windows on amd64 and arm64) is what a release builds
# (.github/workflows/release.yml); locally: goreleaser release --snapshot --clean
# --skip=docker (six builds; docs/release.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${BACKFIRE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/backfire}/release
GORELEASER_VERSION=v2.15.1   # the newest that builds with Go 1.26
KREW_VERSION=v0.4.3
tools=$cache/tools-goreleaser-$GORELEASER_VERSION-krew-$KREW_VERSION
log() { echo "test-release: $*" >&2; }

mkdir -p "$tools"
exec 9>"$tools/.lock" && flock 9   # concurrent callers wait for one build
# build MODULE@VERSION PACKAGE...: go install them into $tools, atomically.
build() {
  local start=$SECONDS tmp; tmp=$(mktemp -d)
  log "building $* (minutes, once)"
  (cd "$tmp" && GOBIN=$tmp/bin GOFLAGS=-mod=mod CGO_ENABLED=0 go install "$@") || { rm -rf "$tmp"; return 1; }
  mv -f "$tmp"/bin/* "$tools/" && rm -rf "$tmp"
  log "built in $((SECONDS - start))s"
}
[ -x "$tools/goreleaser" ] && "$tools/goreleaser" --version >/dev/null 2>&1 ||
  build "github.com/goreleaser/goreleaser/v2@$GORELEASER_VERSION"
[ -x "$tools/krew" ] && [ -x "$tools/validate-krew-manifest" ] ||
  build "sigs.k8s.io/krew/cmd/krew@$KREW_VERSION" "sigs.k8s.io/krew/cmd/validate-krew-manifest@$KREW_VERSION"
flock -u 9

if ! command -v podman >/dev/null; then
  sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q podman
fi

cd "$root"
echo "== goreleaser check"
"$tools/goreleaser" check

# A snapshot of one target: the release's own config with its targets line
# replaced by this machine's (a release builds all six).
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
target="$(go env GOOS)_$(go env GOARCH)"
sed "s/^    targets: \[.*\]$/    targets: [$target]/" .goreleaser.yaml >"$out/goreleaser.yaml"
grep -q "^    targets: \[$target\]$" "$out/goreleaser.yaml" || { log "no targets line to replace in .goreleaser.yaml"; exit 1; }
echo "dist: $out/dist" >>"$out/goreleaser.yaml"
echo "== goreleaser release --snapshot ($target)"
# GoReleaser reads the commit and its date only from a repository with a
# remote; a clone made for CI may have none, so one is named for it.
GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0=https://github.com/backfire-dev/backfire.git \
  "$tools/goreleaser" release --snapshot --clean --skip=docker -f "$out/goreleaser.yaml" >"$out/goreleaser.log" 2>&1 ||
  { cat "$out/goreleaser.log" >&2; exit 1; }
grep -E "took:|succeeded" "$out/goreleaser.log" || true

echo "== test/release on the snapshot"
BACKFIRE_DIST=$out/dist BACKFIRE_TOOLS=$tools go test -count=1 ./test/release/
