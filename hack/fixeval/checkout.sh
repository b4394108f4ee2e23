#!/usr/bin/env bash
# Extracts every pinned (repository, commit, path) of hack/fixeval/sources.txt
# from local git copies of the repositories into a checkout tree:
#
#   hack/fixeval/checkout.sh GITDIRS CHECKOUTS
#
# GITDIRS holds one git copy per repository, named owner+name (a clone, e.g.
# `git clone https://github.com/bitnami/charts GITDIRS/bitnami+charts`, or a
# bare repository; owner+name/repo is accepted too). Each needs the pinned
# commits. CHECKOUTS receives owner+name@commit/path for every source and
# dependency, as hack/eval/checkout.sh lays them out.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
gitdirs="${1:?usage: checkout.sh GITDIRS CHECKOUTS}"
out="${2:?usage: checkout.sh GITDIRS CHECKOUTS}"
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
	if [[ "$3" == "." ]]; then
		git --git-dir="$(gitdir "$1")" archive "$2" | tar -x -C "$dest"
	else
		git --git-dir="$(gitdir "$1")" archive "$2" "$3" | tar -x -C "$dest"
	fi
}

grep -v '^[[:space:]]*\(#\|$\)' "$here/sources.txt" | while read -r _ kind repo commit path deps; do
	# An overlay comes with its parent folder, for the ../crd it names.
	if [[ "$kind" == kustomize ]]; then path="$(dirname "$path")"; fi
	extract "$repo" "$commit" "$path"
	for dep in $deps; do # name=owner/repo@commit:path, or set:key=value
		if [[ "$dep" == set:* ]]; then continue; fi
		spec="${dep#*=}"
		extract "${spec%%@*}" "$(sed 's/.*@\(.*\):.*/\1/' <<<"$spec")" "${spec#*:}"
	done
done
