#!/usr/bin/env sh
# Seed 000 replayed: the rollback of order-front-api within its rollback window,
# on the controller release it ran (v1.8.2), and the same rollback with the
# rules' fix (--fix). The manifest gives the steps, minPodsPerReplicaSet, the
# window, the readiness probe and the analysis; the flags give what it cannot:
#   --replicas 20          KEDA's count during the incident (the status says so too)
#   --rps 96               the load the seed measured
#   --pod-capacity 15      two pods served about 27-31 rps together
#   --pod-start 20s..240s  not in the seed: 40 pods on a cluster sized for 20,
#                          so most new pods wait for a node
#   --broken-not-ready 1   not in the seed: one pod of the broken version not Ready,
#                          which makes the stable-only gate hold the weight at 100%
#                          while the canary has no Ready pod
# The chart beside this file is its --format svg output.
set -eu
cd "$(dirname "$0")/.."
exec go run ./cmd/backfire simulate rollout -f examples/order-front-api.yaml \
  --scenario rollback --rollouts-version v1.8.2 --replicas 20 --rps 96 \
  --pod-capacity 15 --pod-start 20s..240s --broken-not-ready 1 --seconds 300 \
  --fix "$@"
