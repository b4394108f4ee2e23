#!/usr/bin/env bash
# The real-world evaluation (docs/evaluation.md); not run in CI.
#
#   hack/eval/checkout.sh GITDIRS CHECKOUTS   # once: extract the pinned sources
#   hack/eval/run.sh CHECKOUTS OUT            # build backfire, scan them all
#
# OUT receives scans/<source>.json (backfire's JSON report per source),
# summary.json (objects, errors and findings by rule per source),
# findings.tsv (every finding, one a line) and table.md (the table of
# docs/evaluation.md) and judged.md (every finding with its verdict from
# hack/eval/judgements.tsv, and what no verdict covers). Set ONLY=word to scan
# only the sources named with it, SOURCES=file and JUDGEMENTS=file for another
# set (the third round: hack/eval/sources-round3.txt, judgements-round3.tsv).
# positions.tsv checks that each chart finding's values source names a line
# that holds its key, and, with HELM=path/to/helm, that its line is the field
# in `helm template` output;
# arithmetic.tsv recomputes the numbers of BF101, BF102, BF201 and BF202
# findings from the objects (charts: from helm's output, so with HELM only).
set -euo pipefail
checkouts="$(cd "${1:?usage: run.sh CHECKOUTS OUT}" && pwd)"
out="${2:?usage: run.sh CHECKOUTS OUT}"
cd "$(dirname "$0")/../.."
mkdir -p "$out"
out="$(cd "$out" && pwd)"
go build -o "$out/backfire" ./cmd/backfire
go run ./hack/eval -checkouts "$checkouts" -backfire "$out/backfire" -out "$out" -only "${ONLY:-}" \
	-sources "${SOURCES:-hack/eval/sources.txt}" -judgements "${JUDGEMENTS:-hack/eval/judgements.tsv}" -helm "${HELM:-}"
echo "results in $out" >&2
