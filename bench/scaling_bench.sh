#!/usr/bin/env bash
# How alloctapd's cost grows with the traced program's threads (needs root): bench/pairloop with
# 1, 2, 4, ... threads up to the machine's cores (and 16 where it has them), glibc, each way:
#   bare      untraced;
#   floor     alloctapd --floor: the same probes at the same sites, programs that return at once;
#   discard   alloctapd --discard: the programs record every call into the rings, which the
#             daemon gives back unread: what the programs and rings cost without the daemon's
#             reading and writing (its events are the records discarded);
#   binary    alloctapd -f binary, to a file;
#   text      alloctapd writing text, to a file;
#   stacks    alloctapd --stacks -f binary, to a file.
# alloctapd attaches (--pid) to the loop, which waits until it records, so that the daemon's
# own figures are its alone: its CPU time per event from the moment it records to its end (the
# loading of its programs left out), its peak RSS (wait4), and the kernel memory of its BPF maps
# (the memlock of each map descriptor it holds, /proc/PID/fdinfo). Per thread count, the median
# over ROUNDS rounds, each round running every mode once in turn (so the machine's drift moves
# them together): ns per pair, the ratio to the floor, events per second (events written over
# the loop's wall time), events lost (the largest of the rounds), the daemon's CPU ns per event
# (its CPU time less the floor's of the same round, which has the same fixed costs of detaching
# the probes and ending, over the events written).
# Each thread count's rows print as soon as it is done.
# Settings (environment): ROUNDS (default 5), PAIRS per thread (default 50000), THREADS (a list,
# default "1 2 4 ... nproc", with 16 where nproc >= 16), MODES (default all six), BUDGET_S (stop
# before a thread count that would likely end past this many seconds from the start).
set -u
. "$(dirname "$0")/lib.sh"
pairloop_setup scaling
ROUNDS=${ROUNDS:-5}
PAIRS=${PAIRS:-50000}
MODES=${MODES:-bare floor discard binary text stacks}
need_built "scaling bench" "$PL" build/bench/rusage_of "$D"
if [ -z "${THREADS:-}" ]; then
	THREADS=""
	for ((t = 1; t <= $(nproc); t *= 2)); do THREADS="$THREADS $t"; done
	[ "$(nproc)" -ge 16 ] && [[ " $THREADS " != *" 16 "* ]] && THREADS="$THREADS 16"
fi

# Whatever this script started ends with it (a timeout's TERM included).
cleanup() {
	local p
	for p in $(jobs -p); do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

# mode_args MODE: alloctapd's arguments for a traced mode.
mode_args() {
	case $1 in
	floor) echo "--floor -o /dev/null" ;;
	discard) echo "--discard -o /dev/null" ;;
	binary) echo "-f binary -o $T/trace.atz" ;;
	text) echo "-o $T/trace.txt" ;;
	stacks) echo "--stacks -f binary -o $T/trace.atz" ;;
	esac
}

# one_run MODE THREADS ROUND: one run, its figures in $T/MODE.ROUND.res ("ns N" alone when bare).
one_run() {
	local res=$T/$1.$3
	if [ "$1" = bare ]; then
		echo "ns $("$PL" "$PAIRS" "$2" | ns_of)" >"$res".res
	else
		# shellcheck disable=SC2046
		attach_run "$res" "$PAIRS" "$2" $(mode_args "$1") ||
			echo "scaling bench: $1, $2 threads: alloctapd did not record" >&2
		rm -f "$T"/trace.*
	fi
}

# field MODE NAME: the figure NAME of every round of MODE, one a line.
field() {
	cat "$T/$1".*.res 2>/dev/null |
		awk -v n="$2" '{for (i = 1; i < NF; i += 2) if ($i == n) print $(i + 1)}'
}

# row THREADS MODE FLOOR_NS: one line of the table, from the rounds' files.
row() {
	local t=$1 m=$2 ns eps lost cpu rss mem
	ns=$(field "$m" ns | median)
	if [ "$m" = bare ]; then
		printf '%7s %-7s %10s\n' "$t" "$m" "$ns"
		return
	fi
	# events per second and CPU per event, each round's own, then their medians
	eps=$(cat "$T/$m".*.res | awk -v p="$PAIRS" \
		'{ if ($2 > 0 && $4 > 0) printf "%.0f\n", $4 / ($2 * p / 1e9) }' | median)
	cpu=$(for r in $(seq "$ROUNDS"); do
		echo "$(cat "$T/$m.$r.res") floor_cpu_ns $(awk '{print $8}' "$T/floor.$r.res" 2>/dev/null)"
	done | awk '{ if ($4 > 0 && $14 != "") printf "%.0f\n", ($8 - $14) / $4 }' | median)
	lost=$(field "$m" lost | sort -g | tail -n 1)
	rss=$(field "$m" maxrss_kb | median)
	mem=$(field "$m" memlock | median)
	awk -v t="$t" -v m="$m" -v ns="$ns" -v fl="$3" -v eps="${eps:-0}" -v lost="$lost" \
		-v cpu="${cpu:-}" -v rss="$rss" -v mem="$mem" 'BEGIN {
		printf "%7s %-7s %10s %7s %12s %9s %9s %9.1f %9.1f\n", t, m, ns,
			(fl > 0 ? sprintf("%.2f", ns / fl) : "-"), (eps > 0 ? eps : "-"), lost,
			(cpu != "" ? cpu : "-"), rss / 1024, mem / 1048576 }'
}

echo "scaling: ns per malloc+free pair (bench/pairloop, glibc), $PAIRS pairs per thread," \
	"median of" \
	"$ROUNDS rounds; alloctapd attached (--pid), output to a file; $(nproc) cores"
printf '%7s %-7s %10s %7s %12s %9s %9s %9s %9s\n' threads mode "ns/pair" /floor "events/s" lost \
	"dCPU/ev" "dRSS MB" "maps MB"
start=$SECONDS
other_tracers
for t in $THREADS; do
	took=$((SECONDS - start))
	if [ -n "${BUDGET_S:-}" ] && [ -n "${last:-}" ] && [ $((took + 2 * last)) -gt "$BUDGET_S" ]; then
		echo "(stopped before $t threads: ${took} s spent, the last thread count took ${last} s," \
			"the budget is $BUDGET_S s)"
		break
	fi
	rm -f "$T"/*.res
	for r in $(seq "$ROUNDS"); do
		for m in $MODES; do one_run "$m" "$t" "$r"; done
	done
	floor_ns=$(field floor ns | median)
	for m in $MODES; do row "$t" "$m" "${floor_ns:-0}"; done
	other_tracers
	last=$((SECONDS - start - took))
done
echo "(ns/pair: the loop's wall time over one thread's pairs; events/s: events written over"
echo " the loop's wall time; lost: the most of any round; dCPU/ev: the daemon's CPU ns per event"
echo " written, from when it records to its end, less the floor's; dRSS: its peak resident set;"
echo " maps: the memlock of its BPF maps)"
