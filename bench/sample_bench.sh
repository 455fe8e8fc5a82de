#!/usr/bin/env bash
# What --sample-bytes saves on python3 (PYTHONMALLOC=malloc, demo/workload.py), side by side in
# one run (needs root), and what its estimates are worth:
#  1. wall seconds of the workload with SMALL and LARGE documents, and the ns per event between
#     the two (the cost of a call apart from what a trace costs once): untraced; alloctapd
#     --floor (the traps alone); binary --stacks; binary --stacks --sample-bytes N (N: SAMPLE,
#     default 524288). Goals: the sampled trace at most 1.1 times the floor per event, and
#     under 1% of the events written.
#  2. the top 10 sites by bytes live at the heap peak of a full --stacks trace of the LARGE
#     run, each against its estimate from a sampled trace of another run of the same workload.
# Medians of RUNS (default 3) rounds, each running every mode once.
set -u
. "$(dirname "$0")/lib.sh"
pairloop_setup sample
SAMPLE=${SAMPLE:-524288}
PY=$(bench_python)
R=build/alloctap-report
need_built "sample bench" "$D" "$R"

# tracer MODE: the alloctapd command line of a mode (nothing when untraced).
tracer() {
	case $1 in
	untraced) ;;
	floor) echo "$D -q --floor -o /dev/null --" ;;
	stacks) echo "$D -q -f binary --stacks -o $T/trace.atz --" ;;
	sample) echo "$D -q -f binary --stacks --sample-bytes $SAMPLE -o $T/trace.atz --" ;;
	esac
}

# events OUT DOCS ARGS...: the events alloctapd writes of the workload (its trace in OUT)
events() {
	local out=$1 docs=$2
	shift 2
	PYTHONMALLOC=malloc "$D" -f binary "$@" -o "$out" -- "$PY" demo/workload.py "$docs" 2>&1 \
		>/dev/null | sed -n 's/^alloctapd: \([0-9]*\) events written.*/\1/p'
}

modes=(untraced floor stacks sample)
label() {
	case $1 in
	untraced) echo "untraced" ;;
	floor) echo "floor: empty programs, same sites" ;;
	stacks) echo "binary --stacks" ;;
	sample) echo "binary --stacks --sample-bytes $SAMPLE" ;;
	esac
}
SMALL=200
LARGE=5000
# rounds interleaved: each runs every mode once, so the machine's drift moves them together
declare -A py pyl
for _ in $(seq "$RUNS"); do
	for m in "${modes[@]}"; do
		python_once "$m" $SMALL >>"$T/small.$m"
		python_once "$m" $LARGE >>"$T/large.$m"
	done
done
for m in "${modes[@]}"; do
	py[$m]=$(median <"$T/small.$m")
	pyl[$m]=$(median <"$T/large.$m")
done
ev_small=$(events "$T/small.atz" $SMALL)
ev_large=$(events "$T/full.atz" $LARGE --stacks)
ev_sampled=$(events "$T/sampled.atz" $LARGE --stacks --sample-bytes "$SAMPLE")
per_event() { awk -v a="$1" -v b="$2" -v n=$((ev_large - ev_small)) 'BEGIN {printf "%.0f", (b - a) * 1e9 / n}'; }
echo "sample: python3 demo/workload.py, $SMALL and $LARGE documents ($ev_small and $ev_large" \
	"events; wall s, median of $RUNS interleaved rounds), and the ns per event between the two"
printf '%-40s %10s %12s %12s\n' "" "python3 s" "$LARGE docs s" "ns/event"
for m in "${modes[@]}"; do
	printf '%-40s %10s %12s %12s\n' "$(label "$m")" "${py[$m]}" "${pyl[$m]}" \
		"$(per_event "${py[$m]}" "${pyl[$m]}")"
done
f=$(per_event "${py[floor]}" "${pyl[floor]}")
s=$(per_event "${py[sample]}" "${pyl[sample]}")
k=$(per_event "${py[stacks]}" "${pyl[stacks]}")
u=$(per_event "${py[untraced]}" "${pyl[untraced]}")
awk -v f="$f" -v s="$s" -v k="$k" -v u="$u" -v w="$ev_sampled" -v n="$ev_large" 'BEGIN {
	printf "per event over the floor: --stacks %.2f, --sample-bytes %.2f (goal <= 1.1); ", k / f, s / f
	printf "over untraced: floor +%d ns, --stacks +%d, --sample-bytes +%d\n", f - u, k - u, s - u
	printf "events written: %d of %d, %.3f%% (goal < 1%%)\n", w, n, 100 * w / n }'

echo
# the top sites at the peak: full trace against the sampled one's estimates, by site text
"$R" top --by peak-bytes --csv --limit 10 "$T/full.atz" 2>/dev/null >"$T/full.csv"
"$R" top --by peak-bytes --csv --limit 100000 "$T/sampled.atz" 2>/dev/null >"$T/sampled.csv"
echo "sample: the top 10 sites by bytes live at the heap peak, full trace against the estimate" \
	"from a sample of 1 in $SAMPLE bytes (another run of the same workload)"
awk -F, 'NR == FNR { if (FNR > 1) est[$5] = $3; next }
	FNR > 1 {
		e = ($5 in est) ? est[$5] : 0
		split($5, fr, ";")
		printf "%3d %12d %12d %+8.1f%%  %s\n", $2, $3, e, 100 * (e - $3) / $3, fr[2] ";" fr[3]
	}' "$T/sampled.csv" "$T/full.csv" | { printf '%3s %12s %12s %9s  %s\n' rank "full bytes" estimate change "site (first frames)"; cat; }
