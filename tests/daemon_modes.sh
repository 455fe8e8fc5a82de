#!/usr/bin/env bash
# alloctapd with the real BPF program in each mode (launch, attach, --all, four threads, a
# static executable, a preloaded jemalloc): the fixtures' own expected lines must appear exactly;
# and --pid alone does not make the target wait for the daemon.
source "$(dirname "$0")/lib.sh"
D=$ROOT/build/alloctapd
FX=$ROOT/build/fixtures
need_bpf "$D"

# 1. launch mode: the whole sequence, nothing missing, extra or nested.
"$D" -o "$T/launch.log" -- "$FX/alloc_sequence" "$T/launch.exp" 2>"$T/launch.err"
rc=$?
check "launch mode: exit status 0" test $rc -eq 0
check "launch mode: the bracketed sequence matches exactly (25 lines)" \
	bash -c "$(declare -f compare_bracketed); T=$T; compare_bracketed $T/launch.exp $T/launch.log && test \$(wc -l < $T/launch.exp) -eq 25"
check "launch mode: summary line on stderr" \
	grep -qE '^alloctapd: [0-9]+ events written, 0 events lost, 1 processes seen$' "$T/launch.err"

# launch mode passes the command's exit status through.
"$D" -q -o "$T/false.log" -- /bin/sh -c 'exit 7'
check "launch mode: the command's exit status (7)" test $? -eq 7

# 2. attach mode: the fixture waits for SIGUSR1; the daemon attaches in between.
"$FX/alloc_sequence" "$T/attach.exp" --wait "$T/attach.ready" &
fx=$!
if wait_for "$T/attach.ready" . 10; then
	"$D" -v --pid "$fx" -o "$T/attach.log" 2>"$T/attach.err" &
	dm=$!
	wait_for "$T/attach.err" "recording" 10
	kill -USR1 "$fx"
	wait "$fx"
	wait "$dm"
	rc=$?
	check "attach mode: daemon ends with its target, status 0" test $rc -eq 0
	check "attach mode: the lines after the signal match exactly" \
		bash -c "$(declare -f compare_bracketed); T=$T; compare_bracketed $T/attach.exp $T/attach.log"
	check "attach mode: nothing before the signal was recorded" \
		bash -c "test \"\$(head -n1 $T/attach.log)\" = \"\$(head -n1 $T/attach.exp)\""
else
	kill "$fx" 2>/dev/null
	fail "attach mode: fixture ready" "no ready file after 10 s"
fi

# 3. system-wide: the fixture's lines with its pid; none with the daemon's pid.
"$D" -v --all -o "$T/all.log" 2>"$T/all.err" &
dm=$!
if wait_for "$T/all.err" "alloctapd: recording" 20; then
	"$FX/alloc_sequence" "$T/all.exp"
	sleep 0.5
	kill -INT "$dm"
	wait "$dm"
	rc=$?
	check "--all: SIGINT ends with status 0" test $rc -eq 0
	check "--all: the fixture's sequence appears exactly with its pid" \
		bash -c "$(declare -f compare_bracketed); T=$T; compare_bracketed $T/all.exp $T/all.log"
	check "--all: no line of the daemon's own pid" bash -c "! grep -q '^$dm ' $T/all.log"
	check "--all: warns that every process pays" grep -q "pays the probe cost" "$T/all.err"
else
	kill "$dm" 2>/dev/null
	wait "$dm"
	fail "--all: attached" "$(cat "$T/all.err")"
fi

# 4. four threads: every thread's sequence with its own tid.
"$D" -q -o "$T/threads.log" -- "$FX/alloc_sequence" "$T/threads.exp" --threads 4
check "4 threads: 4 distinct tids expected" test "$(awk '{print $2}' "$T/threads.exp" | sort -u | wc -l)" -eq 4
check "4 threads: every thread's lines match exactly" \
	bash -c "$(declare -f compare_bracketed); T=$T; compare_bracketed $T/threads.exp $T/threads.log"

# 5a. static executable with its own allocator: the executable is probed.
"$D" -v -o "$T/static.log" -- "$FX/alloc_static" "$T/static.exp" 2>"$T/static.err"
check "static fixture: its executable is the probed object" \
	grep -q "probing $FX/alloc_static\$" "$T/static.err"
check "static fixture: the sequence matches exactly (aligned_alloc is its own function)" \
	bash -c "$(declare -f compare_bracketed); T=$T; compare_bracketed $T/static.exp $T/static.log && grep -q aligned_alloc $T/static.exp"

# 5c. A stripped static program without its own allocator's symbols: no object of its process
# defines malloc; launched, attached, and picked up late (held by strace, no ptrace), it is
# said with its path and why, and counted, never given the host's C library.
SS=$T/static_stripped
cp "$FX/proc_tree_static" "$SS" && strip -s "$SS"
mkdir -p "$T/ss"
nomalloc="$SS is statically linked and has no symbol for malloc (stripped?): its allocator cannot be found"
"$D" -o "$T/ss.log" -- "$SS" "$T/ss" 2>"$T/ss.err"
rc=$?
check "stripped static, launched: status 0, said with its path and why" \
	bash -c "test $rc -eq 0 && grep -qF ': $nomalloc: its calls are not recorded' $T/ss.err"
check "stripped static, launched: counted in the summary, nothing recorded" \
	bash -c "grep -q '^alloctapd: 1 programs whose allocator could not be probed\$' $T/ss.err && grep -q '^alloctapd: 0 events written' $T/ss.err"
"$SS" "$T/ss" --wait "$T/ss.ready" &
fx=$!
wait_for "$T/ss.ready" . 10
"$D" --pid "$fx" -o "$T/sspid.log" 2>"$T/sspid.err"
rc=$?
kill -USR1 "$fx"
wait "$fx"
check "stripped static, --pid: status 1, said with its path and why" \
	bash -c "test $rc -eq 1 && grep -qE '^alloctapd: /proc/$fx/exe|^alloctapd: $SS' $T/sspid.err && grep -q 'is statically linked and has no symbol for malloc (stripped?)' $T/sspid.err"
if command -v strace >/dev/null; then
	strace -f -o /dev/null sh -c "echo \$\$ > '$T/sslate.sh'; while [ ! -e '$T/sslate.go' ]; do
		sleep 0.05; done; exec '$SS' '$T/ss' --wait '$T/sslate.ready'" &
	st=$!
	wait_for "$T/sslate.sh" . 10
	"$D" -v --pid "$(cat "$T/sslate.sh")" --follow -o "$T/sslate.log" 2>"$T/sslate.err" &
	dm=$!
	wait_for "$T/sslate.err" "alloctapd: recording" 10
	touch "$T/sslate.go"
	wait_for "$T/sslate.ready" . 10
	sleep 0.5
	kill -USR1 "$(cat "$T/sslate.ready")"
	wait "$st"
	wait "$dm"
	rc=$?
	check "stripped static, picked up late: said with its path and why, counted, no C library" \
		bash -c "test $rc -eq 0 && grep -qF ': $nomalloc: its calls are not recorded' $T/sslate.err && grep -q '^alloctapd: 1 programs whose allocator could not be probed\$' $T/sslate.err && ! grep -q 'executed a new program: probing' $T/sslate.err"
else
	fail "stripped static, picked up late" "strace is missing"
fi

# 5b. LD_PRELOAD=libjemalloc.so.2: jemalloc is probed, not libc.
if [ -e /usr/lib/$MULTIARCH/libjemalloc.so.2 ]; then
	LD_PRELOAD=libjemalloc.so.2 "$D" -v -o "$T/je.log" -- "$FX/alloc_sequence" \
		"$T/je.exp" --no-extras 2>"$T/je.err"
	check "jemalloc preload: libjemalloc.so.2 is the probed object" \
		grep -q "probing .*libjemalloc.so.2\$" "$T/je.err"
	check "jemalloc preload: the sequence matches exactly" \
		bash -c "$(declare -f compare_bracketed); T=$T; compare_bracketed $T/je.exp $T/je.log"
else
	fail "jemalloc preload" "libjemalloc2 is not installed (make deps)"
fi
# 6. --pid alone stops nothing it does not need: with the daemon stopped (SIGSTOP, as Ctrl-Z
# would), the target's thread creation does not wait for it; every thread's calls are still
# recorded once it goes on.
"$FX/thread_create_timer" "$T/tc.ready" "$T/tc.go" 2 >"$T/tc.out" &
fx=$!
if wait_for "$T/tc.ready" . 10; then
	"$D" -v --pid "$fx" -o "$T/tc.log" 2>"$T/tc.err" &
	dm=$!
	wait_for "$T/tc.err" "recording" 10
	kill -STOP "$dm"
	touch "$T/tc.go"
	sleep 1.5
	kill -CONT "$dm"
	wait "$fx"
	wait "$dm"
	rc=$?
	read -r _ threads _ longest <"$T/tc.out"
	check "--pid, daemon stopped for 1.5 s: pthread_create never waited for it (longest ${longest} ms)" \
		test "$rc" -eq 0 -a "${longest:-9999}" -lt 500
	check "--pid, daemon stopped: each of the $threads threads' malloc(64) recorded" \
		test "$(grep -c "^$fx [0-9]* malloc(64)=" "$T/tc.log")" -eq "${threads:-0}"
else
	kill "$fx" 2>/dev/null
	fail "--pid, daemon stopped: fixture ready" "no ready file after 10 s"
fi
# 7. --pid of a process caught in the middle of an exec (stopped before its dynamic loader ran:
# its executable and loader mapped, no library yet): it is held at its loader like an exec
# stop, not refused, and its calls are recorded from its first.
"$FX/exec_stopped" "$T/es.pid" "$FX/alloc_sequence" "$T/es.exp" --threads 0 --no-extras &
launcher=$!
if wait_for "$T/es.pid" . 10; then
	es=$(cat "$T/es.pid")
	"$D" -v --pid "$es" -o "$T/es.log" 2>"$T/es.err" &
	dm=$!
	wait_for "$T/es.err" "recording" 10
	kill -CONT "$es"
	wait "$launcher"
	lrc=$?
	wait "$dm"
	rc=$?
	check "--pid in the middle of an exec: status 0 (program $lrc), held at its loader, libc probed" \
		bash -c "test $rc -eq 0 -a $lrc -eq 0 && grep -q 'pid $es: .*held at its dynamic loader' $T/es.err && grep -q 'pid $es executed a new program: probing .*libc.so.6\$' $T/es.err"
	check "--pid in the middle of an exec: the sequence exactly" \
		bash -c "$(declare -f compare_bracketed); T=$T; compare_bracketed $T/es.exp $T/es.log"
else
	kill "$launcher" 2>/dev/null
	fail "--pid in the middle of an exec: fixture ready" "no pid file after 10 s"
fi
finish
