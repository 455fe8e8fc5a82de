#!/usr/bin/env bash
# alloctapd with the real BPF program in each mode: the fixtures' own expected lines must
# appear exactly (issue 3, tests 1 to 5).
source "$(dirname "$0")/data/daemon/lib.sh"
require_bpf

# 1. launch mode: the whole sequence, nothing missing, extra or nested.
"$D" -o "$TMP/launch.log" -- "$FX/alloc_sequence" "$TMP/launch.exp" 2>"$TMP/launch.err"
rc=$?
check "launch mode: exit status 0" test $rc -eq 0
check "launch mode: the bracketed sequence matches exactly (25 lines)" \
	bash -c "$(declare -f compare_bracketed); TMP=$TMP; compare_bracketed $TMP/launch.exp $TMP/launch.log && test \$(wc -l < $TMP/launch.exp) -eq 25"
check "launch mode: summary line on stderr" \
	grep -qE '^alloctapd: [0-9]+ events written, 0 events lost, 1 processes seen$' "$TMP/launch.err"

# launch mode passes the command's exit status through.
"$D" -q -o "$TMP/false.log" -- /bin/sh -c 'exit 7'
check "launch mode: the command's exit status (7)" test $? -eq 7

# 2. attach mode: the fixture waits for SIGUSR1; the daemon attaches in between.
"$FX/alloc_sequence" "$TMP/attach.exp" --wait "$TMP/attach.ready" &
fx=$!
if wait_for "$TMP/attach.ready" . 10; then
	"$D" -v --pid "$fx" -o "$TMP/attach.log" 2>"$TMP/attach.err" &
	dm=$!
	wait_for "$TMP/attach.err" "probing" 10
	kill -USR1 "$fx"
	wait "$fx"
	wait "$dm"
	rc=$?
	check "attach mode: daemon ends with its target, status 0" test $rc -eq 0
	check "attach mode: the lines after the signal match exactly" \
		bash -c "$(declare -f compare_bracketed); TMP=$TMP; compare_bracketed $TMP/attach.exp $TMP/attach.log"
	check "attach mode: nothing before the signal was recorded" \
		bash -c "test \"\$(head -n1 $TMP/attach.log)\" = \"\$(head -n1 $TMP/attach.exp)\""
else
	kill "$fx" 2>/dev/null
	not_ok "attach mode: fixture ready" "no ready file after 10 s"
fi

# 3. system-wide: the fixture's lines with its pid; none with the daemon's pid.
"$D" -v --all -o "$TMP/all.log" 2>"$TMP/all.err" &
dm=$!
if wait_for "$TMP/all.err" "in every process" 20; then
	"$FX/alloc_sequence" "$TMP/all.exp"
	sleep 0.5
	kill -INT "$dm"
	wait "$dm"
	rc=$?
	check "--all: SIGINT ends with status 0" test $rc -eq 0
	check "--all: the fixture's sequence appears exactly with its pid" \
		bash -c "$(declare -f compare_bracketed); TMP=$TMP; compare_bracketed $TMP/all.exp $TMP/all.log"
	check "--all: no line of the daemon's own pid" bash -c "! grep -q '^$dm ' $TMP/all.log"
	check "--all: warns that every process pays" grep -q "pays the probe cost" "$TMP/all.err"
else
	kill "$dm" 2>/dev/null
	wait "$dm"
	not_ok "--all: attached" "$(cat "$TMP/all.err")"
fi

# 4. four threads: every thread's sequence with its own tid.
"$D" -q -o "$TMP/threads.log" -- "$FX/alloc_sequence" "$TMP/threads.exp" --threads 4
check "4 threads: 4 distinct tids expected" test "$(awk '{print $2}' "$TMP/threads.exp" | sort -u | wc -l)" -eq 4
check "4 threads: every thread's lines match exactly" \
	bash -c "$(declare -f compare_bracketed); TMP=$TMP; compare_bracketed $TMP/threads.exp $TMP/threads.log"

# 5a. static executable with its own allocator: the executable is probed.
"$D" -v -o "$TMP/static.log" -- "$FX/alloc_static" "$TMP/static.exp" 2>"$TMP/static.err"
check "static fixture: its executable is the probed object" \
	grep -q "probing $FX/alloc_static\$" "$TMP/static.err"
check "static fixture: the sequence matches exactly (aligned_alloc is its own function)" \
	bash -c "$(declare -f compare_bracketed); TMP=$TMP; compare_bracketed $TMP/static.exp $TMP/static.log && grep -q aligned_alloc $TMP/static.exp"

# 5b. LD_PRELOAD=libjemalloc.so.2: jemalloc is probed, not libc.
if [ -e /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 ]; then
	LD_PRELOAD=libjemalloc.so.2 "$D" -v -o "$TMP/je.log" -- "$FX/alloc_sequence" \
		"$TMP/je.exp" --no-extras 2>"$TMP/je.err"
	check "jemalloc preload: libjemalloc.so.2 is the probed object" \
		grep -q "probing .*libjemalloc.so.2\$" "$TMP/je.err"
	check "jemalloc preload: the sequence matches exactly" \
		bash -c "$(declare -f compare_bracketed); TMP=$TMP; compare_bracketed $TMP/je.exp $TMP/je.log"
else
	not_ok "jemalloc preload" "libjemalloc2 is not installed (make deps)"
fi
finish
