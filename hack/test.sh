#!/usr/bin/env bash
# The project's test command (the README's second command; .ci/run runs it too).
# It does its own set-up, so it works on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/.."
go test ./...
