#!/usr/bin/env bash
# The evaluation of backfire fix on public charts (docs/fix.md, "How well
# it works"); not run in CI.
#
#   hack/fixeval/checkout.sh GITDIRS CHECKOUTS   # once: extract the pinned charts
#   hack/fixeval/run.sh CHECKOUTS OUT            # fix them all, rescan, dry-run
#
# For each chart of sources.txt, in a scratch copy with its dependencies in
# charts/: scan, fix in place, rescan, fix again (must change nothing), and
# create every object whose rendering changed with a server-side dry run
# (dryRun=All) against the test kube-apiserver (hack/test-assets.sh), before
# and after; then the same with --values-out. OUT receives table.md (the
# table of docs/fix.md), results.json and left.md (every finding left, with
# its reason), and the table replaces the one of docs/fix.md (between its
# "fixeval table" comments; not with ONLY). ONLY=word limits it to the
# sources named with it.
set -euo pipefail
checkouts="$(cd "${1:?usage: run.sh CHECKOUTS OUT}" && pwd)"
out="${2:?usage: run.sh CHECKOUTS OUT}"
cd "$(dirname "$0")/../.."
mkdir -p "$out"
out="$(cd "$out" && pwd)"
# The dry runs use the test kube-apiserver, which only heavy tests start.
export BACKFIRE_HEAVY_TESTS=1
export KUBEBUILDER_ASSETS="${KUBEBUILDER_ASSETS:-$(hack/test-assets.sh)}"
go test -tags fixeval -count=1 -timeout 3h -run TestFixEvaluation ./hack/fixeval \
	-args -checkouts "$checkouts" -out "$out" -only "${ONLY:-}"
if [[ -z "${ONLY:-}" ]]; then
	awk -v table="$out/table.md" '
		/<!-- end fixeval table -->/ { while ((getline line < table) > 0) print line; skip = 0 }
		!skip { print }
		/<!-- fixeval table:/ { skip = 1 }
	' docs/fix.md >"$out/fix.md" && mv "$out/fix.md" docs/fix.md
	echo "docs/fix.md: table rewritten; check its totals against the prose around it" >&2
fi
echo "results in $out" >&2
