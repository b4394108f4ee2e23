#!/usr/bin/env bash
# Round trip of diagnose's printed-text reader through kubectl's own
# printers: kubectl describe pod and kubectl events print pods and events
# (k8s.io/kubectl), and backfire must read back what they printed. It is a
# separate module (test/kubectl) so that k8s.io/kubectl never reaches
# backfire's go.mod; a cold build takes a few minutes.
set -euo pipefail
cd "$(dirname "$0")/../test/kubectl"
go test ./...
