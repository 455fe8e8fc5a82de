#!/usr/bin/env bash
# What tracing costs the traced program under each allocator, side by side in one run (needs
# root): ns per malloc+free pair in bench/pairloop with glibc, jemalloc, tcmalloc and mimalloc
# (preloaded), 1, 2 and 8 threads: bare; alloctapd writing binary; the floor (alloctapd --floor:
# the same probes at the same sites, programs that return at once); alloctapd's ratio to the
# floor (what its BPF programs and daemon add to the traps) and each traced pair's ratio to
# glibc's traced pair (what the allocator's first instructions cost the traps: one the kernel
# must single-step instead of emulate costs microseconds).
# Median of RUNS (default 5) rounds of PAIRS (default 100000) pairs per thread; each round runs
# bare, alloctapd and the floor one after the other.
set -u
. "$(dirname "$0")/lib.sh"
RUNS=${RUNS:-5}
pairloop_setup allocators
need_built "allocators bench" "$PL"

# one_run ALLOCATOR MODE THREADS: the ns per pair of one run.
one_run() {
	local pre
	pre=$(preload_of "$1")
	case $2 in
	bare) env ${pre:+LD_PRELOAD=$pre} "$PL" "$PAIRS" "$3" ;;
	alloctapd) env ${pre:+LD_PRELOAD=$pre} "$D" -q -f binary -o /dev/null -- "$PL" "$PAIRS" "$3" ;;
	floor) env ${pre:+LD_PRELOAD=$pre} "$D" -q --floor -o /dev/null -- "$PL" "$PAIRS" "$3" ;;
	esac | ns_of
}

# measure_all ALLOCATOR THREADS: "bare alloctapd floor", each the median of RUNS runs, the three
# modes taken in turn in every round so that the machine's drift moves them together.
measure_all() {
	local r
	for r in $(seq "$RUNS"); do
		echo "$(one_run "$1" bare "$2") $(one_run "$1" alloctapd "$2") $(one_run "$1" floor "$2")"
	done >"$T/rounds"
	echo "$(cut -d' ' -f1 "$T/rounds" | median) $(cut -d' ' -f2 "$T/rounds" | median)" \
		"$(cut -d' ' -f3 "$T/rounds" | median)"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a > 0 && b > 0) printf "%.2f", a / b}'; }

echo "allocators: ns per malloc+free pair, $PAIRS pairs per thread, median of $RUNS rounds"
printf '%-10s %8s %10s %12s %10s %10s %12s\n' allocator threads bare alloctapd floor "/floor" "/glibc's"
declare -A traced
for a in glibc jemalloc tcmalloc mimalloc; do
	if [ "$a" != glibc ] && [ ! -e "$(preload_of "$a")" ]; then
		echo "allocators bench: $(preload_of "$a") is missing (make deps installs it)"
		exit 1
	fi
	for t in 1 2 8; do
		read -r bare ad fl < <(measure_all "$a" "$t")
		traced[$a,$t]=$ad
		printf '%-10s %8s %10s %12s %10s %10s %12s\n' "$a" "$t" "$bare" "$ad" "$fl" \
			"$(ratio "$ad" "$fl")" "$(ratio "$ad" "${traced[glibc,$t]}")"
	done
done
echo "(goals: /floor <= 1.10 with glibc, <= 1.15 with the others; jemalloc /glibc's <= 1.3)"

# What the BPF programs themselves cost, from the kernel's counters, next to the floor's empty
# programs: the part of alloctapd's added cost that is not the daemon's.
echo
echo "allocators: BPF run time per invocation (bpf_stats), ns, glibc, 1 thread"
printf '%-16s %10s %10s\n' program alloctapd floor
prog_stats "$T/stats.alloctapd" "$D" -q -f binary -o /dev/null -- "$PL" $((30 * PAIRS)) 1
prog_stats "$T/stats.floor" "$D" -q --floor -o /dev/null -- "$PL" $((30 * PAIRS)) 1
for name in malloc_entry alloc_return free_entry; do
	printf '%-16s %10s %10s\n' "$name" "$(prog_ns "$T/stats.alloctapd" "$name")" \
		"$(prog_ns "$T/stats.floor" "$name")"
done
