#!/usr/bin/env bash
# Installs backfire for the GitHub Action (action.yml). When the version is a release
# tag (vX.Y.Z, or vX.Y.Z-PRERELEASE) it downloads that release's archive for the
# runner's OS and architecture and its checksums.txt, checks the archive's SHA-256
# against it, and unpacks the binary; otherwise (a branch or a commit: no release
# binary exists) it says so and the Action builds from its own checkout instead.
#
# Environment:
#   BACKFIRE_VERSION      the version to install: the `version` input, else the
#                         Action's ref
#   BACKFIRE_REPOSITORY   owner/name of the release (the Action's repository)
#   BACKFIRE_RELEASE_URL  where the release's files are (default
#                         https://github.com/$BACKFIRE_REPOSITORY/releases/download/$BACKFIRE_VERSION)
#   RUNNER_OS, RUNNER_ARCH, RUNNER_TEMP, GITHUB_OUTPUT   set by the runner
# Outputs (in $GITHUB_OUTPUT): from=release and path=<binary>, or from=source.
set -euo pipefail

out() { echo "$1" >>"${GITHUB_OUTPUT:?}"; }
fail() { echo "::error title=backfire install::$*" >&2; exit 1; }

version=${BACKFIRE_VERSION:-}
if ! [[ $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "backfire: ref '${version}' is not a release tag: building from source"
  out from=source
  exit 0
fi

case ${RUNNER_OS:-} in
  Linux) os=linux ;;
  macOS) os=darwin ;;
  Windows) os=windows ;;
  *) fail "no release binary for runner OS '${RUNNER_OS:-}'" ;;
esac
case ${RUNNER_ARCH:-} in
  X64) arch=amd64 ;;
  ARM64) arch=arm64 ;;
  *) fail "no release binary for runner architecture '${RUNNER_ARCH:-}' (amd64 and arm64 are released)" ;;
esac
ext=tar.gz; exe=backfire
if [ "$os" = windows ]; then ext=zip; exe=backfire.exe; fi

# The archive name of .goreleaser.yaml: backfire_<version without v>_<os>_<arch>.
archive=backfire_${version#v}_${os}_${arch}.$ext
base=${BACKFIRE_RELEASE_URL:-https://github.com/${BACKFIRE_REPOSITORY:?}/releases/download/$version}
dir=${RUNNER_TEMP:?}/backfire-$version
rm -rf "$dir"; mkdir -p "$dir"

fetch() { curl -fsSL --retry 3 --proto '=https,http' -o "$dir/$2" "$base/$1" || fail "cannot download $base/$1"; }
fetch checksums.txt checksums.txt
fetch "$archive" "$archive"

# checksums.txt lines are "<sha256>  <file name>".
want=$(awk -v f="$archive" '$2 == f { print $1 }' "$dir/checksums.txt")
[ -n "$want" ] || fail "checksums.txt of $version lists no $archive"
if command -v sha256sum >/dev/null; then
  got=$(sha256sum "$dir/$archive" | awk '{print $1}')
else
  got=$(shasum -a 256 "$dir/$archive" | awk '{print $1}')   # macOS
fi
[ "$got" = "$want" ] || fail "$archive: SHA-256 $got, but checksums.txt says $want: not installed"

if [ "$ext" = zip ]; then
  # Windows runners' Git Bash: unzip, else 7-Zip (not tried on Windows here).
  if command -v unzip >/dev/null; then
    (cd "$dir" && unzip -q "$archive" "$exe") || fail "cannot unpack $archive"
  else
    (cd "$dir" && 7z x -y "$archive" "$exe" >/dev/null) || fail "cannot unpack $archive"
  fi
else
  tar -xzf "$dir/$archive" -C "$dir" "$exe" || fail "cannot unpack $archive"
fi
chmod +x "$dir/$exe"
echo "backfire: installed release $version ($os/$arch, SHA-256 $got checked against checksums.txt)"
out from=release
out "path=$dir/$exe"
