#!/usr/bin/env bash
# Concurrency with the real BPF program: 8 threads passing blocks to each other, then exiting;
# the log, thread exits included, must be causally valid per address (log_checker) with exact
# counts, with the default ring buffer (nothing lost) and with a 4096-byte one (written + lost
# == calls). Rounds of threads that allocate and exit: exactly their calls, thread by thread
# (the C library's own frees at a thread's exit are not the program's). Then a process
# SIGKILLed inside a long realloc: no stall, the unfinished call counted.
# ITERATIONS (default 5000) sets the work per thread.
source "$(dirname "$0")/lib.sh"
D=$ROOT/build/alloctapd
FX=$ROOT/build/fixtures
need_bpf "$D"
ITER=${ITERATIONS:-5000}

# thread_state_tids DAEMON_PID: the keys (tids) of the daemon's per-thread state map (the LRU
# hash, map_type 9, with 65536 entries), found through the daemon's fdinfo.
thread_state_tids() {
	local f id=""
	for f in /proc/"$1"/fdinfo/*; do
		if grep -q '^map_type:[[:space:]]*9$' "$f" 2>/dev/null &&
			grep -q '^max_entries:[[:space:]]*65536$' "$f"; then
			id=$(sed -n 's/^map_id:[[:space:]]*//p' "$f")
		fi
	done
	[ -n "$id" ] || return 1
	bpftool -j map dump id "$id" | python3 -c '
import json, sys
for e in json.load(sys.stdin):
    k = e.get("key")
    if isinstance(k, list):
        k = int.from_bytes(bytes(int(b, 16) for b in k), "little")
    print(k)'
}


# stress NAME DAEMON_ARGS...: runs alloc_stress under alloctapd --pid; sets $pid, $lost, $drc.
stress() {
	local name=$1
	shift
	rm -f "$T/$name".*
	"$FX/alloc_stress" "$T/$name.counts" "$T/$name.ready" --threads 8 --iterations "$ITER" &
	local fx=$!
	wait_for "$T/$name.ready" . 10 || { kill $fx; return 1; }
	pid=$fx
	"$D" -v "$@" --pid "$pid" -o "$T/$name.log" 2>"$T/$name.err" &
	local dm=$!
	wait_for "$T/$name.err" recording 10 || { kill $fx $dm; return 1; }
	kill -USR1 $fx
	wait_for "$T/$name.counts" total 120 || { kill $fx $dm; return 1; }
	kill -INT $dm
	wait $dm
	drc=$?
	kill -USR1 $fx
	wait $fx
	lost=$(sed -n 's/^alloctapd: [0-9]* events written, \([0-9]*\) events lost.*/\1/p' "$T/$name.err")
}

if stress big; then
	check "stress, default ring buffer: daemon exit status 0" test "$drc" -eq 0
	check "stress, default ring buffer: nothing lost" test "$lost" = 0
	check "stress, default ring buffer: causally valid, counts per function exact" \
		"$FX/log_checker" "$T/big.log" "$pid" "$T/big.counts" 0
	# how many free(0x0) each thread exit makes, seen with nothing lost (the lossy run below
	# may lose some or all of them, so its log cannot tell)
	exit_null_frees=$(sed -n 's/^free(0x0) from [0-9]* threads, \([0-9]*\) each$/\1/p' "$T/check.out")
else
	fail "stress, default ring buffer: ran" "$(cat "$T/big.err" 2>/dev/null)"
fi

if stress tiny --ringbuf-size 4096; then
	check "stress, 4096-byte ring buffer: daemon exit status 0" test "$drc" -eq 0
	check "stress, 4096-byte ring buffer: events were lost and counted ($lost)" test "${lost:-0}" -gt 0
	if [ -n "${exit_null_frees:-}" ]; then
		check "stress, 4096-byte ring buffer: written + lost == calls, log valid but for the lost" \
			"$FX/log_checker" "$T/tiny.log" "$pid" "$T/tiny.counts" "$lost" "$exit_null_frees"
	else
		fail "stress, 4096-byte ring buffer: written + lost == calls" \
			"the lossless run did not say how many free(0x0) a thread exit makes"
	fi
	check "stress, 4096-byte ring buffer: munge accepts the log" \
		bash -c "'$ROOT/build/alloctap-munge' -qq '$T/tiny.log' >/dev/null"
else
	fail "stress, 4096-byte ring buffer: ran" "$(cat "$T/tiny.err" 2>/dev/null)"
fi

# Threads that allocate and exit, launched: each thread's calls exactly, per function, and no
# release of an address that is not live (glibc's thread exit flushes the thread's cache by
# calling free from inside the C library: about 420 frees per thread the program never made).
# The same with jemalloc preloaded.
churn() { # NAME ENV...
	local name=$1
	shift
	env "$@" "$D" -o "$T/$name.log" -- "$FX/alloc_thread_churn" "$T/$name.counts" 6 4 3000 \
		2>"$T/$name.err"
	local rc=$? cpid
	cpid=$(head -n1 "$T/$name.log" | cut -d' ' -f1)
	check "$name: exit status 0, nothing lost" \
		bash -c "[ $rc -eq 0 ] && grep -q ' 0 events lost' '$T/$name.err' || { cat '$T/$name.err'; exit 1; }"
	check "$name: every exiting thread's calls exactly, no release of an address not live" \
		"$FX/log_checker" "$T/$name.log" "$cpid" --threads "$T/$name.counts"
}
churn "threads exiting"
JEMALLOC=$(ls /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 2>/dev/null)
if [ -n "$JEMALLOC" ]; then
	churn "threads exiting, jemalloc" LD_PRELOAD="$JEMALLOC"
else
	fail "threads exiting, jemalloc: libjemalloc.so.2 installed" "make deps installs it"
fi

# SIGKILL while the main thread is in a long realloc and two threads are in malloc/free loops:
# no stall; the realloc numbered at entry that never returned is the one lost event (the
# fixture's shared counters say whether the kill landed inside a realloc: almost always).
start=$(date +%s%N)
"$D" -o "$T/killed.log" -- "$FX/alloc_killed" 300 "$T/killed.state" 2>"$T/killed.err"
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
read -r started finished < <(od -An -tu8 -w16 "$T/killed.state")
inside=$((started - finished))
check "killed inside realloc: status 137 (SIGKILL) passed through" test $rc -eq 137
check "killed inside realloc: the daemon ended in ${ms} ms (< 10 s)" test $ms -lt 10000
# The fixture counts a realloc as started just before the call and finished just after it, so
# a kill between the counter and the call (or the return and the counter) leaves one realloc
# "unfinished" that the probes saw complete or never saw: only the main thread reallocs, so
# the lost count is the unfinished count or one less, never anything else.
lost=$(sed -n 's/^alloctapd: [0-9]* events written, \([0-9]*\) events lost, 1 processes seen$/\1/p' \
	"$T/killed.err")
check "killed inside realloc: lost events = reallocs left unfinished, or one less ($lost, $inside of $started)" \
	bash -c "[ -n '$lost' ] && { [ '$lost' -eq '$inside' ] || [ '$lost' -eq $((inside - 1)) ]; } || { cat '$T/killed.err'; exit 1; }"
kpid=$(head -n1 "$T/killed.log" | cut -d' ' -f1)
check "killed inside realloc: the log is causally valid" "$FX/log_checker" "$T/killed.log" "$kpid"

# Threads that die inside allocator calls leave no per-thread state behind: alloc_thread_exit's
# four threads loop on malloc/free and are ended by a raw exit in a signal handler (most likely
# inside a call) while the process lives on; none of their tids may remain in the daemon's
# thread-state map (without the exit tracepoint all four do).
"$FX/alloc_thread_exit" "$T/te.tids" "$T/te.ready" 4 &
fx=$!
if wait_for "$T/te.ready" . 10; then
	"$D" -v --pid $fx -o /dev/null 2>"$T/te.err" &
	dm=$!
	wait_for "$T/te.err" recording 10
	kill -USR1 $fx
	if wait_for "$T/te.tids" . 10 && thread_state_tids $dm >"$T/te.keys"; then
		left=$(grep -cxFf "$T/te.tids" "$T/te.keys")
		check "threads dead inside allocator calls leave no per-thread state ($(wc -l <"$T/te.tids") died, $left entries left)" \
			test "$left" -eq 0 -a "$(wc -l <"$T/te.tids")" -eq 4
	else
		fail "per-thread state map readable" "cannot find or dump the daemon's thread map"
	fi
	kill $fx
	wait $fx 2>/dev/null
	wait $dm
else
	kill $fx 2>/dev/null
	fail "alloc_thread_exit ready" "no ready file after 10 s"
fi
finish
