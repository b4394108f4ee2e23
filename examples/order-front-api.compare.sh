#!/usr/bin/env sh
# Seed 000's Rollout rolled back within its window six ways, on the default
# controller release (v1.10.2): as written; BF401's fix (drop the last
# setWeight); the last setWeight lowered to the share the step-0 pods carry;
# dynamicStableScale; no rollbackWindow with a revision-aware analysis; an undo
# followed by promote --full. Each run lasts until it settles; the remedies are
# compared over the same time, at the inputs below (those of
# order-front-api.simulate.sh, with a 50% error rate) and over a sweep of what
# the manifest cannot know: the broken version's error rate, the pods' start-up
# times and the load. order-front-api.compare.txt beside this file is its output,
# order-front-api-compare.svg its --format svg output.
set -eu
cd "$(dirname "$0")/.."
exec go run ./cmd/backfire simulate rollout -f examples/order-front-api.yaml \
  --replicas 20 --rps 96 --pod-capacity 15 --pod-start 20s..240s \
  --broken-not-ready 1 --broken-error-rate 0.5 --compare "$@"
