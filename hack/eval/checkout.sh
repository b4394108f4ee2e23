#!/usr/bin/env bash
# Extracts every pinned (repository, commit, path) of hack/eval/sources.txt from
# local git copies of the repositories into a checkout tree that run.sh reads:
#
#   hack/eval/checkout.sh GITDIRS CHECKOUTS [SOURCES]
#
# SOURCES is the sources file (default hack/eval/sources.txt; the third round's
# are sources-round3.txt and sources-round3-holdout.txt).
#
# GITDIRS holds one git copy per repository, named owner+name (a clone, e.g.
# `git clone https://github.com/helm/charts GITDIRS/helm+charts`, or a bare
# repository; owner+name/repo is accepted too). Each needs the pinned commits.
# CHECKOUTS receives owner+name@commit/path for every source and dependency.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
gitdirs="${1:?usage: checkout.sh GITDIRS CHECKOUTS}"
out="${2:?usage: checkout.sh GITDIRS CHECKOUTS}"
sources="${3:-$here/sources.txt}"
mkdir -p "$out"

gitdir() { # owner/name -> its git directory
	local base="$gitdirs/${1/\//+}"
	for d in "$base/.git" "$base/repo" "$base"; do
		if git --git-dir="$d" rev-parse --git-dir >/dev/null 2>&1; then echo "$d"; return; fi
	done
	echo "no git copy of $1 under $gitdirs (expected ${1/\//+})" >&2
	return 1
}

extract() { # repository commit path
	local dest="$out/${1/\//+}@$2"
	if [[ -e "$dest/$3" ]]; then return; fi
	mkdir -p "$dest"
	echo "extract $1@$2 $3" >&2
	git --git-dir="$(gitdir "$1")" archive "$2" "$3" | tar -x -C "$dest"
}

grep -v '^[[:space:]]*\(#\|$\)' "$sources" | while read -r _ _ repo commit path deps; do
	extract "$repo" "$commit" "$path"
	for dep in $deps; do # name=owner/repo@commit:path, or values=FILE of the chart
		[[ "$dep" == values=* ]] && continue
		spec="${dep#*=}"
		extract "${spec%%@*}" "$(sed 's/.*@\(.*\):.*/\1/' <<<"$spec")" "${spec#*:}"
	done
done
