#!/usr/bin/env bash
# Whole-process benchmark: backfire beside the parse floor (hack/bench/floor),
# backfire's own parse alone (hack/bench/parse) and, when their binaries are given, kube-linter and kube-score, on the
# shared corpus at 10k objects, 100k (10 copies in subdirectories), 300k
# (30 copies), a million (100 copies) and one 100 MB file (the 10k files concatenated 7 times), and
# on a richer corpus
# of our own (hack/bench/rich: Rollouts, analysis templates, autoscalers,
# Helm charts and Kustomize overlays).
#
#   hack/bench/run.sh [OUTDIR]
#
# Environment:
#   KUBE_LINTER, KUBE_SCORE  paths of the peers' binaries (skipped when unset)
#   BEFORE                   a git revision: backfire built from it is measured
#                            beside this one as "backfire-before"
#   BACKFIRE_BEFORE          or an existing binary to measure as "backfire-before"
#   GEN_CORPUS               the corpus generator (default ../shared/bench/gen_corpus.py)
#   RUNS, WARMUP             hyperfine runs and warm-ups (default 5 and 1)
#   INPUTS                   the inputs to run (default "10k 100k 100mb rich";
#                            add 300k for the scale figures: it takes a
#                            minute of CPU per run and 430 MB of disk; and
#                            1m for a million objects: four minutes of CPU
#                            per run and 1.5 GB of disk; RUNS=1 WARMUP=0
#                            keep it to one run)
#   PEERS_AT                 inputs the peers run on (default "10k"; they take
#                            minutes at 100k)
#
# OUTDIR (default: a new temporary directory) receives the corpora, one
# hyperfine JSON and markdown export per input, peak RSS per tool and input
# (rss.tsv), the load average before each input (load.tsv), the JSON
# reports compared byte for byte (reports/, same.tsv: backfire on all cores
# against one core and against backfire-before) and the table (table.md),
# which is printed at the end with the comparison and the load under it;
# html.tsv has the 10k report's size and write time as JSON and as HTML.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)
out=${1:-$(mktemp -d -t backfire-bench-XXXXXX)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
runs=${RUNS:-5}
warmup=${WARMUP:-1}
peers_at=${PEERS_AT:-10k}
gen=${GEN_CORPUS:-$repo/../shared/bench/gen_corpus.py}

need() { command -v "$1" >/dev/null || { echo "run.sh: $1 is needed ($2)" >&2; exit 2; }; }
need hyperfine "apt-get install hyperfine"
need python3 "to generate the corpus"
if [ ! -x /usr/bin/time ]; then
	echo "run.sh: installing Debian's time package for peak RSS" >&2
	sudo apt-get install -y time >/dev/null 2>&1 || apt-get install -y time >/dev/null
fi
[ -f "$gen" ] || { echo "run.sh: corpus generator $gen not found (set GEN_CORPUS)" >&2; exit 2; }

echo "== building into $out/bin" >&2
mkdir -p "$out/bin"
go build -o "$out/bin/backfire" ./cmd/backfire
go build -o "$out/bin/floor" ./hack/bench/floor
go build -o "$out/bin/parse" ./hack/bench/parse
before=${BACKFIRE_BEFORE:-}
if [ -z "$before" ] && [ -n "${BEFORE:-}" ]; then
	echo "== building backfire-before from $BEFORE" >&2
	rm -rf "$out/before-src"
	mkdir -p "$out/before-src"
	git archive "$BEFORE" | tar -x -C "$out/before-src"
	(cd "$out/before-src" && go build -o "$out/bin/backfire-before" ./cmd/backfire)
	before=$out/bin/backfire-before
fi

echo "== generating the corpora" >&2
if [ ! -d "$out/10k" ]; then
	python3 "$gen" "$out/10k" >/dev/null
fi
# The copies are generated only for the inputs asked for.
inputs=${INPUTS:-10k 100k 100mb rich}
copies() { # copies NAME N: N copies of the 10k corpus in subdirectories
	case " $inputs " in *" $1 "*) ;; *) return ;; esac
	if [ ! -d "$out/$1" ]; then
		mkdir -p "$out/$1.tmp"
		for i in $(seq -w 0 $(($2 - 1))); do cp -r "$out/10k" "$out/$1.tmp/copy-$i"; done
		mv "$out/$1.tmp" "$out/$1"
	fi
}
copies 100k 10
copies 300k 30
copies 1m 100
if [ ! -d "$out/rich" ]; then
	# Rollouts with their templates, autoscalers and Services, and copies of
	# the test corpus's Helm chart and Kustomize overlays (rendered and
	# built in-process; the floor only parses what is plain YAML there).
	go run ./hack/bench/rich "$out/rich"
fi
if [ ! -f "$out/100mb/all.yaml" ]; then
	mkdir -p "$out/100mb"
	# Files are joined with a document separator: each ends without one.
	for _ in 1 2 3 4 5 6 7; do
		for f in "$out"/10k/*.yaml; do cat "$f"; printf -- '---\n'; done
	done >"$out/100mb/all.yaml"
fi

# tools prints "name<TAB>command" for the tools that run on input $1.
tools() {
	local in=$1 dir=$out/$1
	printf 'floor\t%s\n' "$out/bin/floor $dir"
	# backfire's own parse and nothing after it: a scan's CPU over it is
	# what the stages after the parse cost.
	printf 'parse\t%s\n' "$out/bin/parse $dir"
	# The 100 MB file is above backfire's default --max-file-size (64 MiB).
	printf 'backfire\t%s\n' "$out/bin/backfire scan --format json --fail-on none --max-file-size 200000000 $dir"
	if [ -n "$before" ]; then
		printf 'backfire-before\t%s\n' "$before scan --format json --fail-on none --max-file-size 200000000 $dir"
	fi
	case " $peers_at " in *" $in "*) ;; *) return ;; esac
	if [ -n "${KUBE_LINTER:-}" ] && [ -x "$KUBE_LINTER" ]; then
		printf 'kube-linter\t%s\n' "$KUBE_LINTER lint --format json $dir"
	fi
	if [ -n "${KUBE_SCORE:-}" ] && [ -x "$KUBE_SCORE" ]; then
		# kube-score takes files, not directories.
		printf 'kube-score\t%s\n' "find $dir -name '*.yaml' -print0 | xargs -0 $KUBE_SCORE score --output-format json"
	fi
}
[ -n "${KUBE_LINTER:-}" ] || echo "run.sh: KUBE_LINTER not set: kube-linter skipped" >&2
[ -n "${KUBE_SCORE:-}" ] || echo "run.sh: KUBE_SCORE not set: kube-score skipped" >&2

# report IN NAME [ENV...] writes backfire's JSON report of input IN to
# reports/IN.NAME.json (the exit status says whether there are findings).
report() {
	local in=$1 name=$2 bin=$out/bin/backfire
	shift 2
	[ "$name" = before ] && bin=$before
	env "$@" "$bin" scan --format json --fail-on none --max-file-size 200000000 "$out/$in" \
		>"$out/reports/$in.$name.json" 2>/dev/null || true
}

# same IN A B appends whether two reports of IN are byte for byte the same.
same() {
	local verdict=different
	cmp -s "$out/reports/$1.$2.json" "$out/reports/$1.$3.json" && verdict=same
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$verdict" >>"$out/same.tsv"
}

mkdir -p "$out/reports"
touch "$out/rss.tsv" "$out/load.tsv" "$out/same.tsv"
for in in $inputs; do
	# A rerun of one input replaces its lines and keeps the others'.
	for f in rss load same; do
		grep -v "^$in	" "$out/$f.tsv" >"$out/$f.tmp" || true
		mv "$out/$f.tmp" "$out/$f.tsv"
	done
	echo "== $in" >&2
	# The machine's load before the input's runs: wall time means
	# something only on an otherwise idle machine.
	printf '%s\t%s\n' "$in" "$(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/load.tsv"
	args=()
	while IFS=$'\t' read -r name cmd; do
		args+=(-n "$name" "$cmd")
		# Peak RSS of one run; the linters exit non-zero on findings.
		/usr/bin/time -f '%M' -o "$out/time.tmp" sh -c "$cmd" >/dev/null 2>&1 || true
		printf '%s\t%s\t%s\n' "$in" "$name" "$(tail -1 "$out/time.tmp")" >>"$out/rss.tsv"
	done < <(tools "$in")
	hyperfine --ignore-failure --output null --warmup "$warmup" --runs "$runs" \
		--export-json "$out/$in.json" --export-markdown "$out/$in.md" "${args[@]}" >&2
	# The reports: on all cores, on one, and of backfire-before.
	report "$in" all
	report "$in" one GOMAXPROCS=1
	same "$in" all one
	if [ -n "$before" ]; then
		report "$in" before
		same "$in" all before
	fi
done
# The HTML report at 10k objects: its size and the time to write it, beside
# the JSON report of the same scan (the difference is the page's own cost).
# The target is a page a browser opens at once: at most 10 MB and 5 s.
case " $inputs " in *" 10k "*)
	for format in json html; do
		/usr/bin/time -f '%e %U' -o "$out/time.tmp" "$out/bin/backfire" scan --format "$format" --fail-on none "$out/10k" \
			>"$out/reports/10k.$format" 2>/dev/null || true
		read -r wall user <"$out/time.tmp"
		printf '10k\t%s\t%s\t%s\t%s\n' "$format" "$(wc -c <"$out/reports/10k.$format")" "$wall" "$user"
	done >"$out/html.tsv"
	echo "== the 10k report as json and html: bytes, wall s, user s" >&2
	cat "$out/html.tsv" >&2
	awk -F'\t' '$2 == "json" { json = $4 } $2 == "html" && ($3 > 10000000 || $4 - json > 5) { print "run.sh: the 10k HTML report is over 10 MB, or took 5 s more than the JSON" > "/dev/stderr"; exit 1 }' "$out/html.tsv"
	;;
esac
rm -f "$out/time.tmp"

go run ./hack/bench/table -svg "$out/benchmarks.svg" "$out" | tee "$out/table.md"
if grep -q '	different$' "$out/same.tsv"; then
	echo "run.sh: some JSON reports differ (same.tsv)" >&2
	exit 1
fi
