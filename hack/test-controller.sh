#!/usr/bin/env bash
# Differential test of backfire's Argo Rollouts controller twin against the
# real controller. For each pinned release it copies the module source (from
# the Go module proxy) to a writable cache directory, adds our test file
# (test/controller/twin_trace_test.go) to its rollout package, runs the real
# controller over the scenario matrix and records each reconcile's decisions;
# then the twin's test replays the same matrix and requires the same weight,
# desired replicas and step index at every reconcile (and, from v1.10.0, the
# same Progressing and Paused conditions, which that release reads back).
#
# The copies and the Go build cache persist between runs: a cold run compiles
# the controller's test binary (about 5 minutes per release on 2 idle cores),
# a warm one takes about a minute. BACKFIRE_CACHE moves the cache (default
# ~/.cache/backfire). v1.10.x needs a newer Go than the project's: the go1.27.3
# toolchain, which the go command fetches from the module proxy once and keeps
# in the module cache beside the controller sources.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${BACKFIRE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/backfire}/controller
scenarios=$root/internal/model/rollout/twin/testdata/controller/scenarios.json
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# The releases the twin is checked against, and master.
releases=${BACKFIRE_CONTROLLER_RELEASES:-"v1.8.2 v1.9.0 v1.10.2 master"}

# module names the module version of a release. master is pinned to
# 9f8d111d8 (2026-08-17), the newest commit of the default branch the
# twin was checked against (#4900 merged, no release has it), as the Go
# pseudo-version of that commit (its newest reachable tag is v1.10.0-rc1:
# the v1.10.x tags are on the release branch). The module proxy builds a
# pseudo-version from the repository on request; a proxy that serves only
# tagged versions refuses it, and master is then skipped with a note (the
# twin still replays its recorded trace in go test).
module() {
  case $1 in
    master) echo v1.10.0-rc1.0.20260817162111-9f8d111d8f8e ;;
    *) echo "$1" ;;
  esac
}

# toolchain names the Go toolchain a release builds with: v1.10.x declares
# go 1.26.10, newer than the project's Go, so it gets go1.27.3 (the newer
# toolchain the project allows; the go command fetches it from the module
# proxy once).
toolchain() {
  case $1 in
    v1.8.*|v1.9.*|master) echo local ;; # master's go.mod: go 1.26.1
    *) echo go1.27.3 ;;
  esac
}

skipped_master=
for v in $releases; do
  export GOTOOLCHAIN; GOTOOLCHAIN=$(toolchain "$v")
  if [ "$GOTOOLCHAIN" != local ]; then
    # Fetched once (module proxy), then from the module cache.
    (cd "$out" && go version >/dev/null) || { echo "cannot get the $GOTOOLCHAIN toolchain for argo-rollouts $v" >&2; exit 1; }
  fi
  # Outside any module, so that nothing of ours changes.
  dl=$(cd "$out" && go mod download -json "github.com/argoproj/argo-rollouts@$(module "$v")") || true
  src=$(printf '%s\n' "$dl" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  if [ -z "$src" ] && [ "$v" = master ]; then
    # The reason as the go command gives it (a 403 from the proxy, today).
    why=$(printf '%s\n' "$dl" | sed -n 's/^[[:space:]]*"Error": "\(.*\)"$/\1/p' | sed 's/\\n\\t/ /g')
    echo "NOTE: master skipped: go mod download refused argo-rollouts $(module master): ${why:-no reason given}; its recorded trace (traces/master.json) is replayed below instead" >&2
    skipped_master=1
    continue
  fi
  [ -n "$src" ] || { echo "cannot download argo-rollouts $v" >&2; exit 1; }
  dst=$cache/argo-rollouts@$(module "$v")
  if [ ! -f "$dst/.backfire-copied" ]; then
    rm -rf "$dst"; mkdir -p "$dst"
    cp -r "$src/." "$dst/"; chmod -R u+w "$dst"
    touch "$dst/.backfire-copied"
  fi
  cp "$root/test/controller/twin_trace_test.go" "$dst/rollout/backfire_twin_trace_test.go"
  echo "== real controller $v over $(basename "$scenarios")"
  (cd "$dst" && BACKFIRE_SCENARIOS=$scenarios BACKFIRE_TRACE_OUT=$out/$v.json GOFLAGS=-mod=mod \
    go test -vet=off -tags backfiretrace -count=1 -run '^TestBackfireTwinTrace$' ./rollout/ >"$out/$v.log" 2>&1) \
    || { cat "$out/$v.log" >&2; exit 1; }
  [ -s "$out/$v.json" ] || { echo "no trace written for $v" >&2; cat "$out/$v.log" >&2; exit 1; }
  if [ -n "${BACKFIRE_RECORD:-}" ]; then
    mkdir -p "$root/internal/model/rollout/twin/testdata/controller/traces"; cp "$out/$v.json" "$root/internal/model/rollout/twin/testdata/controller/traces/$v.json"
  fi
done

cd "$root"
export GOTOOLCHAIN=local
if compgen -G "$out/*.json" >/dev/null; then
  echo "== twin against the fresh traces"
  BACKFIRE_CONTROLLER_TRACES=$out go test -count=1 -run 'TestTwinMatchesController' ./internal/model/rollout/twin/
fi
if [ -n "$skipped_master" ]; then
  echo "== twin against master's recorded trace"
  go test -count=1 -run 'TestTwinMatchesRecordedController/master/' ./internal/model/rollout/twin/
fi
