#!/usr/bin/env bash
# Differential test of backfire's probe simulator (internal/simulate/probesim)
# against the kubelet's own prober. For each pinned kubelet release, a small
# module (test/prober/vX.Y.Z) requires k8s.io/kubernetes at that release. The
# module's source is linked (hard links, no copy) into a cache directory,
# where our test file (test/prober/kubelet_trace_test.go) joins the kubelet's
# prober package: it drives the unexported probe worker, the exec prober, the
# results managers and the restart back-off over the scenarios and writes
# what they did. Then the simulator's test replays the same scenarios and
# requires the same probes, results, kills and restart waits.
#
# The linked tree and the Go build cache persist between runs: a cold run
# compiles the kubelet's prober test binary (about 5 to 7 minutes of CPU per
# release); a warm run of both releases takes about 20 s. BACKFIRE_CACHE moves the cache
# (default ~/.cache/backfire). BACKFIRE_RECORD=1 also refreshes the traces
# the simulator's unit tests read.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
testdata=$root/internal/simulate/probesim/testdata/kubelet
scenarios=$testdata/scenarios.json
cache=${BACKFIRE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/backfire}/kubelet
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# The releases the simulator is checked against: the worker changed between
# them (the logger passed down, the kubelet-restart grace, restart rules).
releases=${BACKFIRE_KUBELET_RELEASES:-"v1.34.5 v1.37.2"}
export GOTOOLCHAIN=local

for v in $releases; do
  mod=$root/test/prober/$v
  [ -f "$mod/go.mod" ] || { echo "no module test/prober/$v" >&2; exit 1; }
  # Outside any module, so that nothing of ours changes.
  src=$(cd "$out" && go mod download -json "k8s.io/kubernetes@$v" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -n "$src" ] || { echo "cannot download k8s.io/kubernetes $v" >&2; exit 1; }
  dst=$cache/kubernetes@$v
  if [ ! -f "$dst/.backfire-linked" ]; then
    rm -rf "$dst"; mkdir -p "$cache"
    cp -al "$src" "$dst" 2>/dev/null || cp -r "$src" "$dst"
    chmod u+w "$dst" "$dst/pkg/kubelet/prober"
    touch "$dst/.backfire-linked"
  fi
  cp "$root/test/prober/kubelet_trace_test.go" "$dst/pkg/kubelet/prober/backfire_trace_test.go"
  # The module's go.mod with k8s.io/kubernetes pointed at the linked tree.
  cp "$mod/go.mod" "$cache/$v.mod"; cp "$mod/go.sum" "$cache/$v.sum"
  (cd "$mod" && go mod edit -replace "k8s.io/kubernetes=$dst" "$cache/$v.mod")
  echo "== the kubelet's prober $v over $(basename "$scenarios")"
  (cd "$mod" && BACKFIRE_SCENARIOS=$scenarios BACKFIRE_TRACE_OUT=$out/$v.json \
    go test -modfile "$cache/$v.mod" -mod=mod -vet=off -tags backfiretrace -count=1 \
      -run '^TestBackfireKubeletTrace$' k8s.io/kubernetes/pkg/kubelet/prober >"$out/$v.log" 2>&1) \
    || { cat "$out/$v.log" >&2; exit 1; }
  [ -s "$out/$v.json" ] || { echo "no trace written for $v" >&2; cat "$out/$v.log" >&2; exit 1; }
  if [ -n "${BACKFIRE_RECORD:-}" ]; then
    mkdir -p "$testdata/traces"; cp "$out/$v.json" "$testdata/traces/$v.json"
  fi
done

echo "== the simulator against the fresh traces"
cd "$root"
BACKFIRE_KUBELET_TRACES=$out go test -count=1 -run 'TestSimulatorMatchesKubelet' ./internal/simulate/probesim/
