#!/usr/bin/env bash
# The project's test command (the README's second command; .ci/run runs it too).
# It does its own set-up, so it works on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/.."
# Headless Chromium (Debian's package) for the tests that check pages and
# charts as a person sees them.
if ! command -v chromium >/dev/null; then
  sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q chromium
fi
# The live-cluster tests (internal/cluster, cmd/backfire) run against a real
# kube-apiserver and etcd; the script builds them once and caches them.
KUBEBUILDER_ASSETS=$(hack/test-assets.sh)
export KUBEBUILDER_ASSETS
# Every package's tests, the hostile-input suite among them (cmd/backfire,
# TestHostile*: inputs made to break a scan, tried from the command line in
# every format, each case bounded to a minute).
go test ./...
# A benchmark smoke run: every benchmark of the scan once, so that they
# keep compiling and running (about 15 s; timings are not asserted).
go test ./internal/scan -run '^$' -bench . -benchtime 1x
# The Argo Rollouts replica arithmetic against the controller's own code, in
# its own module (it needs k8s.io/kubernetes, which the binary must not).
hack/test-upstream.sh
# The Argo Rollouts controller twin against the real controller (v1.8.2 and
# v1.9.0), reconcile by reconcile; cached, a cold run compiles for minutes.
hack/test-controller.sh
