#!/usr/bin/env bash
# Differential test of backfire's Argo Rollouts replica arithmetic against the
# controller's own utils/replicaset. It is a separate module (test/upstream)
# because that package imports k8s.io/kubernetes; a cold build takes minutes.
set -euo pipefail
cd "$(dirname "$0")/../test/upstream"
go test ./...
