#!/usr/bin/env bash
# Issue 4 with the real BPF program: 8 threads passing blocks to each other; the log must be
# causally valid per address (log_checker) with exact counts, with the default ring buffer
# (nothing lost) and with a 4096-byte one (written + lost == calls). Then a process SIGKILLed
# inside a long realloc: no stall, the unfinished call counted.
# ITERATIONS (default 5000) sets the work per thread.
source "$(dirname "$0")/data/daemon/lib.sh"
require_bpf
ITER=${ITERATIONS:-5000}

# stress NAME DAEMON_ARGS...: runs alloc_stress under alloctapd --pid; sets $pid, $lost, $drc.
stress() {
	local name=$1
	shift
	rm -f "$TMP/$name".*
	"$FX/alloc_stress" "$TMP/$name.counts" "$TMP/$name.ready" --threads 8 --iterations "$ITER" &
	local fx=$!
	wait_for "$TMP/$name.ready" . 10 || { kill $fx; return 1; }
	pid=$fx
	"$D" -v "$@" --pid "$pid" -o "$TMP/$name.log" 2>"$TMP/$name.err" &
	local dm=$!
	wait_for "$TMP/$name.err" probing 10 || { kill $fx $dm; return 1; }
	kill -USR1 $fx
	wait_for "$TMP/$name.counts" total 120 || { kill $fx $dm; return 1; }
	kill -INT $dm
	wait $dm
	drc=$?
	kill -USR1 $fx
	wait $fx
	lost=$(sed -n 's/^alloctapd: [0-9]* events written, \([0-9]*\) events lost.*/\1/p' "$TMP/$name.err")
}

if stress big; then
	check "stress, default ring buffer: daemon exit status 0" test "$drc" -eq 0
	check "stress, default ring buffer: nothing lost" test "$lost" = 0
	check "stress, default ring buffer: causally valid, counts per function exact" \
		"$FX/log_checker" "$TMP/big.log" "$pid" "$TMP/big.counts" 0
else
	not_ok "stress, default ring buffer: ran" "$(cat "$TMP/big.err" 2>/dev/null)"
fi

if stress tiny --ringbuf-size 4096; then
	check "stress, 4096-byte ring buffer: daemon exit status 0" test "$drc" -eq 0
	check "stress, 4096-byte ring buffer: events were lost and counted ($lost)" test "${lost:-0}" -gt 0
	check "stress, 4096-byte ring buffer: written + lost == calls, log valid but for the lost" \
		"$FX/log_checker" "$TMP/tiny.log" "$pid" "$TMP/tiny.counts" "$lost"
	check "stress, 4096-byte ring buffer: munge accepts the log" \
		bash -c "'$ROOT/build/alloctap-munge' -qq '$TMP/tiny.log' >/dev/null"
else
	not_ok "stress, 4096-byte ring buffer: ran" "$(cat "$TMP/tiny.err" 2>/dev/null)"
fi

# SIGKILL while the main thread is in a long realloc and two threads are in malloc/free loops:
# no stall; the realloc numbered at entry that never returned is the one lost event (the
# fixture's shared counters say whether the kill landed inside a realloc: almost always).
start=$(date +%s%N)
"$D" -o "$TMP/killed.log" -- "$FX/alloc_killed" 300 "$TMP/killed.state" 2>"$TMP/killed.err"
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
read -r started finished < <(od -An -tu8 -w16 "$TMP/killed.state")
inside=$((started - finished))
check "killed inside realloc: status 137 (SIGKILL) passed through" test $rc -eq 137
check "killed inside realloc: the daemon ended in ${ms} ms (< 10 s)" test $ms -lt 10000
# The fixture counts a realloc as started just before the call and finished just after it, so
# a kill between the counter and the call (or the return and the counter) leaves one realloc
# "unfinished" that the probes saw complete or never saw: only the main thread reallocs, so
# the lost count is the unfinished count or one less, never anything else.
lost=$(sed -n 's/^alloctapd: [0-9]* events written, \([0-9]*\) events lost, 1 processes seen$/\1/p' \
	"$TMP/killed.err")
check "killed inside realloc: lost events = reallocs left unfinished, or one less ($lost, $inside of $started)" \
	bash -c "[ -n '$lost' ] && { [ '$lost' -eq '$inside' ] || [ '$lost' -eq $((inside - 1)) ]; } || { cat '$TMP/killed.err'; exit 1; }"
kpid=$(head -n1 "$TMP/killed.log" | cut -d' ' -f1)
check "killed inside realloc: the log is causally valid" "$FX/log_checker" "$TMP/killed.log" "$kpid"

# Threads that die inside allocator calls leave no per-thread state behind: alloc_thread_exit's
# four threads loop on malloc/free and are ended by a raw exit in a signal handler (most likely
# inside a call) while the process lives on; none of their tids may remain in the daemon's
# thread-state map (without the exit tracepoint all four do).
"$FX/alloc_thread_exit" "$TMP/te.tids" "$TMP/te.ready" 4 &
fx=$!
if wait_for "$TMP/te.ready" . 10; then
	"$D" -v --pid $fx -o /dev/null 2>"$TMP/te.err" &
	dm=$!
	wait_for "$TMP/te.err" probing 10
	kill -USR1 $fx
	if wait_for "$TMP/te.tids" . 10 && thread_state_tids $dm >"$TMP/te.keys"; then
		left=$(grep -cxFf "$TMP/te.tids" "$TMP/te.keys")
		check "threads dead inside allocator calls leave no per-thread state ($(wc -l <"$TMP/te.tids") died, $left entries left)" \
			test "$left" -eq 0 -a "$(wc -l <"$TMP/te.tids")" -eq 4
	else
		not_ok "per-thread state map readable" "cannot find or dump the daemon's thread map"
	fi
	kill $fx
	wait $fx 2>/dev/null
	wait $dm
else
	kill $fx 2>/dev/null
	not_ok "alloc_thread_exit ready" "no ready file after 10 s"
fi
finish
