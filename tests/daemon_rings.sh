#!/usr/bin/env bash
# The event rings, one per CPU, with the real BPF program: two malloc+free loops pinned to two
# CPUs (the same one on a machine with one), so that each fills its own ring. Run as is, the
# trace is causally valid per process and nothing is lost. Run with the daemon stopped (SIGSTOP)
# for a while after the loops start, so that both rings back up (and may fill): no record that
# reached a ring is given up on by the merge (0 late records: the daemon reads every ring in
# place and merges them by time), and every event lost is a record a ring had no room for
# (lost == failed reservations).
# PAIRS (default 300000) sets each loop's pairs; STOP_S (default 0.6) how long the daemon stops.
source "$(dirname "$0")/lib.sh"
D=$ROOT/build/alloctapd
FX=$ROOT/build/fixtures
need_bpf "$D"
# the output written by a thread of its own, as on a machine of 2 CPUs or more (the default
# there; on one the loop writes it)
export ALLOCTAP_WRITER_THREAD=1
PAIRS=${PAIRS:-300000}
STOP_S=${STOP_S:-0.6}

# The first two CPUs this script may run on (the first twice when it has one).
allowed_cpus() {
	local list part
	list=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
	for part in ${list//,/ }; do
		if [[ $part == *-* ]]; then
			seq "${part%-*}" "${part#*-}"
		else
			echo "$part"
		fi
	done | head -n 2
}
mapfile -t CPUS < <(allowed_cpus)
CPU_A=${CPUS[0]:-0}
CPU_B=${CPUS[1]:-$CPU_A}

# pinned NAME STOP: alloctapd -v launching both loops, stopped for STOP seconds 0.4 s after it
# starts (0: never); its log in $T/NAME.log, its messages in $T/NAME.err, its status in $drc.
pinned() {
	local name=$1 stop=$2 dm
	"$D" -v -o "$T/$name.log" -- bash -c "taskset -c $CPU_A '$FX/alloc_loop' $PAIRS & \
		taskset -c $CPU_B '$FX/alloc_loop' $PAIRS & wait" >/dev/null 2>"$T/$name.err" &
	dm=$!
	if [ "$stop" != 0 ]; then
		sleep 0.4
		kill -STOP $dm
		sleep "$stop"
		kill -CONT $dm
	fi
	wait $dm
	drc=$?
}

# summary NAME FIELD: a figure of the daemon's summary (written, lost, missing, late, failed).
summary() {
	local e=$T/$1.err
	case $2 in
	written) sed -n 's/^alloctapd: \([0-9]*\) events written, .*/\1/p' "$e" ;;
	lost) sed -n 's/^alloctapd: [0-9]* events written, \([0-9]*\) events lost.*/\1/p' "$e" ;;
	late) sed -n 's/^alloctapd: .* reallocs given up, \([0-9]*\) late records.*/\1/p' "$e" ;;
	failed) sed -n 's/.* late records, \([0-9]*\) ring reservations failed.*/\1/p' "$e" ;;
	esac
}

pinned calm 0
check "loops on CPUs $CPU_A and $CPU_B: daemon exit status 0, nothing lost" \
	bash -c "[ $drc -eq 0 ] && [ '$(summary calm lost)' = 0 ] || { cat '$T/calm.err'; exit 1; }"
# A ring wakes the daemon when it holds a wakeup's bytes, once for each position of its
# consumer or each wakeup's bytes more: a daemon that keeps up is woken at most once for each
# wakeup's bytes of records (a record is at_record's 64 bytes, a slot),
# and a ring's last bytes may wake it once more (a record with no event, a thread's end, takes
# room too: one a ring).
# (Woken again at every 32nd record until it had read, it was asked for several times that.)
wakeups=$(sed -n 's/^alloctapd: \([0-9]*\) ring wakeups (a CPU.s ring holding \([0-9]*\) bytes)$/\1 \2/p' \
	"$T/calm.err")
nrings=$(($(sed 's/.*-//' /sys/devices/system/cpu/possible) + 1))
check "loops on CPUs $CPU_A and $CPU_B: at most a wakeup a ring's wakeup bytes ($wakeups; $nrings rings)" \
	bash -c "set -- $wakeups; written=\$(sed -n 's/^alloctapd: \([0-9]*\) events written, .*/\1/p' '$T/calm.err');
		[ -n \"\$2\" ] && [ \$1 -gt 0 ] &&
		[ \$1 -le \$(( (written + 2 * $nrings) * 64 / \$2 + 2 * $nrings )) ] ||
		{ grep -E 'written|wakeups' '$T/calm.err'; exit 1; }"
# each process (the shell, the two loops): its events causally valid; a loop's process starts
# with the shell's heap (fork), whose blocks it may release once (log_checker --window)
for p in $(cut -d' ' -f1 "$T/calm.log" | sort -u); do
	check "loops on CPUs $CPU_A and $CPU_B: process $p's events causally valid" \
		"$FX/log_checker" "$T/calm.log" "$p" --window 1000
done

pinned stopped "$STOP_S"
late=$(summary stopped late)
lost=$(summary stopped lost)
failed=$(summary stopped failed)
check "rings backed up (daemon stopped ${STOP_S} s): daemon exit status 0" test "$drc" -eq 0
check "rings backed up: no record that reached a ring given up on (late records: $late)" \
	test "${late:-x}" = 0
check "rings backed up: events lost = ring reservations failed ($lost, $failed)" \
	bash -c "[ -n '$lost' ] && [ '$lost' = '$failed' ] || { cat '$T/stopped.err'; exit 1; }"
finish
