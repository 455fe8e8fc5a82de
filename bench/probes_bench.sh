#!/usr/bin/env bash
# What tracing costs the traced program, side by side in one run (needs root).
#  1. ns per malloc+free pair in bench/pairloop (sizes 16 B..4 KiB), 1 and 2 threads:
#     untraced; alloctapd writing text; alloctapd writing binary; bpftrace recording the same
#     fields the usual way (uprobe + uretprobe at every function entry, printf through its perf
#     buffer: demo/record-bpftrace.bt); and the floor: alloctapd --floor, the same probes at
#     exactly the same sites with programs that return at once. Each traced row also as a ratio
#     to bpftrace and to the floor. Also the floor with --probe-at-entry: what placement saves.
#  2. alloctapd's own CPU time per event, text, binary (times to the microsecond), binary with
#     times to the nanosecond (ALLOCTAP_TIMES=ns) and without (ALLOCTAP_TIMES=none, as binary
#     traces taken without --stacks were): what times cost the daemon (attach mode, so only the
#     daemon's time is counted: the probes' time is the traced program's).
# Median of RUNS (default 3) runs of PAIRS (default 100000) pairs per thread.
set -u
. "$(dirname "$0")/lib.sh"
pairloop_setup probes

# one_run MODE THREADS: prints the ns per pair of one run.
one_run() {
	local mode=$1 t=$2
	case $mode in
	untraced) "$PL" "$PAIRS" "$t" ;;
	text) "$D" -q -o /dev/null -- "$PL" "$PAIRS" "$t" ;;
	binary) "$D" -q -f binary -o /dev/null -- "$PL" "$PAIRS" "$t" ;;
	floor) "$D" -q --floor -o /dev/null -- "$PL" "$PAIRS" "$t" ;;
	floor-at-entry) "$D" -q --floor --probe-at-entry -o /dev/null -- "$PL" "$PAIRS" "$t" ;;
	text-at-entry) "$D" -q --probe-at-entry -o /dev/null -- "$PL" "$PAIRS" "$t" ;;
	bpftrace) BPFTRACE_PERF_RB_PAGES=4096 bpftrace demo/record-bpftrace.bt \
		-c "$PL $PAIRS $t" 2>/dev/null ;;
	esac | ns_of
}

measure() { # MODE THREADS -> median ns
	for _ in $(seq "$RUNS"); do one_run "$1" "$2"; done | median
}

echo "probes: ns per malloc+free pair, $PAIRS pairs per thread, median of $RUNS runs"
printf '%-34s %12s %12s %12s %12s\n' "" "1 thread" "2 threads" "/bpftrace" "/floor"
declare -A ns
modes=(untraced text binary bpftrace floor text-at-entry floor-at-entry)
for m in "${modes[@]}"; do
	for t in 1 2; do ns[$m,$t]=$(measure "$m" "$t"); done
done
label() {
	case $1 in
	untraced) echo "untraced" ;;
	text) echo "alloctapd, text" ;;
	binary) echo "alloctapd, binary" ;;
	bpftrace) echo "bpftrace (entry uprobes+uretprobes)" ;;
	floor) echo "floor: empty programs, same sites" ;;
	text-at-entry) echo "alloctapd text, --probe-at-entry" ;;
	floor-at-entry) echo "floor, --probe-at-entry" ;;
	esac
}
for m in "${modes[@]}"; do
	r1=$(awk -v a="${ns[$m,1]}" -v b="${ns[bpftrace,1]}" 'BEGIN {if (b > 0) printf "%.2f", a / b}')
	r2=$(awk -v a="${ns[$m,1]}" -v b="${ns[floor,1]}" 'BEGIN {if (b > 0) printf "%.2f", a / b}')
	[ "$m" = untraced ] && r1="" && r2=""
	printf '%-34s %12s %12s %12s %12s\n' "$(label "$m")" "${ns[$m,1]}" "${ns[$m,2]}" "$r1" "$r2"
done
echo "(ratios on the 1-thread column; goals: text <= 0.5 x bpftrace and <= 1.15 x floor)"

echo
# The daemon's fixed cost (loading the BPF program, attaching) is taken out by measuring two
# runs, of PAIRS and of 10 x PAIRS pairs, and dividing the difference in CPU time by the
# difference in events.
daemon_cpu() { # MODE (text, binary, binary-ns-times, binary-no-times) PAIRS -> "events cpu_s"
	local fmt=${1%%-*} n=$2 times=default pl dm ev u s
	[ "$1" = binary-no-times ] && times=none
	[ "$1" = binary-ns-times ] && times=ns
	rm -f "$T/go"
	mkfifo "$T/go"
	PAIRLOOP_WAIT=1 "$PL" "$n" 1 <"$T/go" >/dev/null &
	pl=$!
	exec 3>"$T/go"
	(
		TIMEFORMAT='%3U %3S'
		time env ALLOCTAP_TIMES=$times "$D" -v --pid "$pl" -f "$fmt" -o /dev/null \
			2>"$T/err"
	) 2>"$T/time" &
	dm=$!
	for _ in $(seq 100); do grep -q "alloctapd: recording" "$T/err" 2>/dev/null && break; sleep 0.1; done
	echo >&3
	exec 3>&-
	wait "$pl"
	wait "$dm"
	ev=$(sed -n 's/^alloctapd: \([0-9]*\) events written.*/\1/p' "$T/err")
	read -r u s <"$T/time"
	echo "$ev $(awk -v u="$u" -v s="$s" 'BEGIN {print u + s}')"
}
echo "probes: alloctapd's own CPU time per event (attach mode, 1 thread; marginal cost between"
echo "runs of $PAIRS and $((10 * PAIRS)) pairs)"
printf '%-16s %12s %12s %14s\n' format events "cpu ms" "ns per event"
for fmt in text binary binary-ns-times binary-no-times; do
	read -r e1 c1 <<<"$(daemon_cpu "$fmt" "$PAIRS")"
	read -r e2 c2 <<<"$(daemon_cpu "$fmt" $((10 * PAIRS)))"
	awk -v f="$fmt" -v e1="$e1" -v e2="$e2" -v c1="$c1" -v c2="$c2" 'BEGIN {
		printf "%-16s %12d %12.0f %14.0f\n", f, e2 - e1, (c2 - c1) * 1000,
			(e2 > e1 ? (c2 - c1) * 1e9 / (e2 - e1) : 0) }'
done
echo "(goal: text under 150 ns per event; binary: times to the microsecond; binary-ns-times:"
echo " ALLOCTAP_TIMES=ns, to the nanosecond; binary-no-times: ALLOCTAP_TIMES=none, none, as"
echo " alloctapd wrote binary traces without --stacks before)"
