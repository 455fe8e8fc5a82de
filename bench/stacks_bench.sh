#!/usr/bin/env bash
# What --stacks costs the traced program, side by side in one run (needs root).
#  1. ns per malloc+free pair in bench/pairloop with its loop 16 frames below main (DEPTH 16,
#     -O2, no frame pointers), 1 thread: untraced; alloctapd --floor (the traps alone);
#     alloctapd binary; alloctapd binary --stacks. Ratio of --stacks to binary (goal: <= 2).
#  2. python3 (PYTHONMALLOC=malloc, demo/workload.py): wall seconds, the same four ways.
#  3. BPF run time per program invocation (kernel.bpf_stats_enabled, `bpftool prog show`:
#     run_time_ns / run_cnt) of the allocations' entry program and the return program, with and
#     without --stacks, on the pairloop run.
# Median of RUNS (default 3) runs of PAIRS (default 100000) pairs.
set -u
. "$(dirname "$0")/lib.sh"
pairloop_setup stacks
DEPTH=16
# the interpreter itself, not a wrapper that executes it (pyenv's shims are shell scripts)
PY=$(bench_python)

# tracer MODE: the alloctapd command line of a mode (nothing when untraced).
tracer() {
	case $1 in
	untraced) ;;
	floor) echo "$D -q --floor -o /dev/null --" ;;
	binary) echo "$D -q -f binary -o $T/trace.atz --" ;;
	stacks) echo "$D -q -f binary --stacks -o $T/trace.atz --" ;;
	esac
}

pair_ns() { # MODE -> median ns per pair
	for _ in $(seq "$RUNS"); do $(tracer "$1") "$PL" "$PAIRS" 1 "$DEPTH" | ns_of; done | median
}

# python_s MODE DOCS -> median wall seconds of the python3 workload with DOCS documents
python_s() {
	for _ in $(seq "$RUNS"); do
		local t0 t1
		t0=$(date +%s%N)
		PYTHONMALLOC=malloc $(tracer "$1") "$PY" demo/workload.py "$2" >/dev/null 2>&1
		t1=$(date +%s%N)
		awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", (b - a) / 1e9}'
	done | median
}

# python_events DOCS -> the events alloctapd records of the workload with DOCS documents
python_events() {
	PYTHONMALLOC=malloc "$D" -f binary -o "$T/count.atz" -- "$PY" demo/workload.py "$1" 2>&1 \
		>/dev/null | sed -n 's/^alloctapd: \([0-9]*\) events written.*/\1/p'
}

modes=(untraced floor binary stacks)
label() {
	case $1 in
	untraced) echo "untraced" ;;
	floor) echo "floor: empty programs, same sites" ;;
	binary) echo "alloctapd, binary" ;;
	stacks) echo "alloctapd, binary --stacks" ;;
	esac
}
# The demo's python3 run (200 documents) is mostly the interpreter's start; with 5000 documents
# the difference between the two runs, per event, is the cost of a call apart from what a trace
# costs once (loading the BPF program, building the unwind tables).
SMALL=200
LARGE=5000
declare -A pl py pyl
for m in "${modes[@]}"; do
	pl[$m]=$(pair_ns "$m")
	py[$m]=$(python_s "$m" $SMALL)
	pyl[$m]=$(python_s "$m" $LARGE)
done
ev_small=$(python_events $SMALL)
ev_large=$(python_events $LARGE)
per_event() { awk -v a="$1" -v b="$2" -v n=$((ev_large - ev_small)) 'BEGIN {printf "%.0f", (b - a) * 1e9 / n}'; }
echo "stacks: malloc+free pair, loop $DEPTH frames deep (ns, median of $RUNS runs of $PAIRS" \
	"pairs); python3 demo/workload.py, $SMALL and $LARGE documents ($ev_small and $ev_large" \
	"events; wall s), and the ns per event between the two"
printf '%-34s %10s %12s %12s %12s\n' "" "pair ns" "python3 s" "$LARGE docs s" "ns/event"
for m in "${modes[@]}"; do
	printf '%-34s %10s %12s %12s %12s\n' "$(label "$m")" "${pl[$m]}" "${py[$m]}" "${pyl[$m]}" \
		"$(per_event "${py[$m]}" "${pyl[$m]}")"
done
awk -v a="${pl[stacks]}" -v b="${pl[binary]}" -v c="${py[stacks]}" -v d="${py[binary]}" \
	-v e="$(per_event "${py[stacks]}" "${pyl[stacks]}")" -v f="$(per_event "${py[binary]}" "${pyl[binary]}")" \
	'BEGIN {printf "--stacks / binary: %.2f (pairs), %.2f (python3 per event), %.2f (the demo'"'"'s whole run); goal <= 2\n", a / b, e / f, c / d}'

echo
echo "stacks: BPF run time per invocation (bpf_stats), pairloop $DEPTH frames deep"
printf '%-16s %16s %16s\n' program "binary ns" "--stacks ns"
# BPF run time per invocation, from the kernel's own counters
for m in binary stacks; do
	# shellcheck disable=SC2046
	prog_stats "$T/stats.$m" $(tracer "$m") "$PL" $((50 * PAIRS)) 1 "$DEPTH"
done
# malloc's entry: its own program without stacks, alloc_entry (every function's) with them
printf '%-16s %16s %16s\n' "malloc's entry" "$(prog_ns "$T/stats.binary" malloc_entry)" \
	"$(prog_ns "$T/stats.stacks" alloc_entry)"
for name in alloc_return free_entry; do
	# "-": no count (the kernel collected none: another program may have turned the stats off)
	printf '%-16s %16s %16s\n' "$name" "$(prog_ns "$T/stats.binary" "$name")" \
		"$(prog_ns "$T/stats.stacks" "$name")"
done
