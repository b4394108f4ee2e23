#!/usr/bin/env bash
# The project's test command (the README's second command; .ci/run runs it too).
# It does its own set-up, so it works on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/.."
# Headless Chromium (Debian's package) for the tests that check pages and
# charts as a person sees them; xmllint (libxml2-utils) for the test that
# checks the Go validator of the JUnit report's XML schema agrees with it.
if ! command -v chromium >/dev/null || ! command -v xmllint >/dev/null; then
  sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q chromium libxml2-utils
fi
# The live-cluster tests (internal/cluster, cmd/backfire) run against a real
# kube-apiserver and etcd; the script builds them once and caches them.
KUBEBUILDER_ASSETS=$(hack/test-assets.sh)
export KUBEBUILDER_ASSETS
# Those tests, and the page tests, run only with this switch on: a plain
# `go test ./...` skips them and takes a couple of minutes.
export BACKFIRE_HEAVY_TESTS=1
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
# The probe simulator against the kubelet's own probe worker and restart
# back-off (v1.34.5 and v1.37.2), probe by probe, in their own modules;
# cached, a cold run compiles the kubelet's prober for minutes per release.
hack/test-prober.sh
# diagnose's reader of kubectl's printed output against kubectl's own
# describe and events printers, in its own module (k8s.io/kubectl).
hack/test-kubectl.sh
# The server lab: PostgreSQL, Redis, MariaDB, etcd, ZooKeeper and RabbitMQ
# from Debian's packages, killed under a write load and probed while they
# recover, against the server tables of internal/classify; it installs
# the packages and runs the servers one at a time (a few minutes).
hack/test-serverlab.sh
# What users install: the release snapshot, the krew manifest, the image
# and the Action's download; installs and caches GoReleaser, krew and podman.
hack/test-release.sh
# The Argo Rollouts controller twin against the real controller (v1.8.2, v1.9.0
# and v1.10.2), reconcile by reconcile; cached, a cold run compiles for minutes.
hack/test-controller.sh
