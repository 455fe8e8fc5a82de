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
PY=$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')

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

python_s() { # MODE -> median wall seconds of the python3 workload
	for _ in $(seq "$RUNS"); do
		local t0 t1
		t0=$(date +%s%N)
		PYTHONMALLOC=malloc $(tracer "$1") "$PY" demo/workload.py >/dev/null 2>&1
		t1=$(date +%s%N)
		awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", (b - a) / 1e9}'
	done | median
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
declare -A pl py
for m in "${modes[@]}"; do
	pl[$m]=$(pair_ns "$m")
	py[$m]=$(python_s "$m")
done
echo "stacks: malloc+free pair, loop $DEPTH frames deep (ns, median of $RUNS runs of $PAIRS" \
	"pairs), and python3 demo/workload.py (wall s)"
printf '%-34s %12s %12s\n' "" "pair ns" "python3 s"
for m in "${modes[@]}"; do
	printf '%-34s %12s %12s\n' "$(label "$m")" "${pl[$m]}" "${py[$m]}"
done
awk -v a="${pl[stacks]}" -v b="${pl[binary]}" -v c="${py[stacks]}" -v d="${py[binary]}" \
	'BEGIN {printf "--stacks / binary: %.2f (pairs), %.2f (python3); goal <= 2\n", a / b, c / d}'

echo
echo "stacks: BPF run time per invocation (bpf_stats), pairloop $DEPTH frames deep"
printf '%-16s %16s %16s\n' program "binary ns" "--stacks ns"
# BPF run time per invocation, from the kernel's own counters
for m in binary stacks; do
	# shellcheck disable=SC2046
	prog_stats "$T/stats.$m" $(tracer "$m") "$PL" $((50 * PAIRS)) 1 "$DEPTH"
done
for name in alloc_entry alloc_return free_entry; do
	# "-": no count (the kernel collected none: another program may have turned the stats off)
	printf '%-16s %16s %16s\n' "$name" "$(prog_ns "$T/stats.binary" "$name")" \
		"$(prog_ns "$T/stats.stacks" "$name")"
done
