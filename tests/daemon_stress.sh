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

# stress NAME DAEMON_ARGS...: runs alloc_stress (with $STRESS_ARGS) under alloctapd --pid; sets
# $pid, $lost, $drc.
stress() {
	local name=$1
	shift
	rm -f "$T/$name".*
	# shellcheck disable=SC2086
	"$FX/alloc_stress" "$T/$name.counts" "$T/$name.ready" --threads 8 --iterations "$ITER" \
		${STRESS_ARGS:-} &
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

# the threads spread over the CPUs, so that each CPU's ring fills (the scheduler may otherwise
# keep them all on one CPU of a busy machine)
if STRESS_ARGS="--spread 1" stress tiny --ringbuf-size 4096; then
	check "stress, 4096-byte ring buffer: daemon exit status 0" test "$drc" -eq 0
	check "stress, 4096-byte ring buffer: events were lost and counted ($lost)" test "${lost:-0}" -gt 0
	if [ -n "${exit_null_frees:-}" ]; then
		check "stress, 4096-byte ring buffer: written + lost == calls, log valid but for the lost" \
			"$FX/log_checker" "$T/tiny.log" "$pid" "$T/tiny.counts" "$lost" "$exit_null_frees"
	else
		fail "stress, 4096-byte ring buffer: written + lost == calls" \
			"the lossless run did not say how many free(0x0) a thread exit makes"
	fi
	# the losses ring by ring (a ring per CPU): each ring's count, summing to the failed
	# reservations, from the rings of at least two CPUs where the machine has them
	failed=$(sed -n 's/.* late records, \([0-9]*\) ring reservations failed.*/\1/p' "$T/tiny.err")
	byring=$(sed -n 's/^alloctapd: ring reservations failed, by ring (CPU:count)://p' "$T/tiny.err")
	rings_want=$(( $(nproc) >= 2 ? 2 : 1 ))
	check "stress, 4096-byte ring buffer: failed reservations ring by ring ($byring) sum to $failed" \
		bash -c "s=0; n=0; for x in $byring; do s=\$((s + \${x#*:})); n=\$((n + 1)); done
			[ -n '$failed' ] && [ \$s -eq '$failed' ] && [ \$s -gt 0 ] && [ \$n -ge $rings_want ]"
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
JEMALLOC=$(ls /usr/lib/$MULTIARCH/libjemalloc.so.2 2>/dev/null)
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

# Threads that die inside allocator calls: alloc_thread_exit's four threads loop on malloc/free
# and are ended by a raw exit in a signal handler (most likely inside a call) while the process
# lives on. Their state goes with them (task storage), and the exit tracepoint takes their calls
# out of flight: stopping the daemon then waits for nothing and loses nothing (without the
# tracepoint it waits a second for each such call and counts it lost).
"$FX/alloc_thread_exit" "$T/te.tids" "$T/te.ready" 4 &
fx=$!
if wait_for "$T/te.ready" . 10; then
	"$D" -v --pid $fx -o "$T/te.log" 2>"$T/te.err" &
	dm=$!
	wait_for "$T/te.err" recording 10
	kill -USR1 $fx
	if wait_for "$T/te.tids" . 10; then
		kill -INT $dm
		wait $dm
		check "threads dead inside allocator calls: daemon exit status 0" test $? -eq 0
		check "threads dead inside allocator calls: 4 died, none of their calls lost" \
			bash -c "[ \$(wc -l <'$T/te.tids') -eq 4 ] && grep -qE '^alloctapd: [0-9]+ events written, 0 events lost' '$T/te.err'"
	else
		fail "alloc_thread_exit's threads ended" "no tids file after 10 s"
		kill $dm
		wait $dm
	fi
	kill $fx
	wait $fx 2>/dev/null
else
	kill $fx 2>/dev/null
	fail "alloc_thread_exit ready" "no ready file after 10 s"
fi
finish
