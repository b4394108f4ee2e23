#!/usr/bin/env bash
# Round trip of diagnose's printed-text reader through kubectl's own
# printers: kubectl describe pod and kubectl events print pods and events
# (k8s.io/kubectl), kubectl get pods and get events print the API server's
# tables (k8s.io/kubernetes pkg/printers/internalversion, through
# k8s.io/cli-runtime's table printer), and backfire must read back what
# they printed. It is a separate module (test/kubectl) so that
# k8s.io/kubectl and k8s.io/kubernetes never reach backfire's go.mod; a
# cold build takes many minutes.
set -euo pipefail
cd "$(dirname "$0")/../test/kubectl"
go test ./...
