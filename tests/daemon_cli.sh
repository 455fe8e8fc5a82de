#!/usr/bin/env bash
# alloctapd's command line, errors, signals and output handling (issue 3).
source "$(dirname "$0")/data/daemon/lib.sh"
require_bpf

expect_fail() { # NAME STATUS PATTERN ARGS...: exits STATUS with one stderr line matching PATTERN
	local name=$1 status=$2 pattern=$3
	shift 3
	"$D" "$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	if [ $rc -eq "$status" ] && grep -q -- "$pattern" "$TMP/err"; then
		ok "$name"
	else
		not_ok "$name" "status $rc (want $status)" "$(head -c 500 "$TMP/err")"
	fi
}

check "--help exits 0 and documents exit codes" bash -c "'$D' --help | grep -q 'Exit status: 0 ok, 1 runtime error'"
expect_fail "bad --format: usage error" 2 "--format must be text or binary, not 'xml'" -f xml -- /bin/true
expect_fail "no mode: usage error" 2 "give --pid PID, --all or -- COMMAND"
expect_fail "two modes: usage error" 2 "only one of" --all --pid 1
expect_fail "unknown option: usage error" 2 "unknown option '--bogus'" --bogus
expect_fail "bad pid list: usage error" 2 "bad pid list 'x1'" --pid x1
expect_fail "ring size not a power of two: usage error" 2 "power of two" --ringbuf-size 5000 --all
expect_fail "nonexistent pid: runtime error" 1 "no process 999999999" --pid 999999999 2>/dev/null
expect_fail "pid 2^30-1 that does not exist" 1 "no process" --pid 1073741823
expect_fail "library without malloc" 1 "defines no malloc" --lib /bin/true -- /bin/true
expect_fail "unwritable output" 1 "cannot open output /nonexistent/dir/log" -o /nonexistent/dir/log -- /bin/true
expect_fail "output fd not open" 1 "cannot write to fd 77: it is not open" -o 77 -- /bin/true
expect_fail "command not found" 1 "cannot find command" -- /nonexistent/command

# --format binary: an .atz trace (one lz4 frame) that decodes to exactly the text lines.
make -s -C "$ROOT" build/bench/atz_tool >/dev/null 2>&1
"$D" -q -f binary -o "$TMP/bin.atz" -- "$FX/alloc_sequence" "$TMP/bin.exp" --threads 0
check "--format binary: lz4 -t accepts the trace" lz4 -qt "$TMP/bin.atz"
check "--format binary: decodes to exactly the fixture's lines" \
	bash -c "'$ROOT/build/bench/atz_tool' decode '$TMP/bin.atz' - | cmp - '$TMP/bin.exp'"
"$D" -f binary --ringbuf-size 4096 -o "$TMP/lossy.atz" -- "$FX/alloc_loop" 20000 >/dev/null 2>"$TMP/lossy.err"
written=$(sed -n 's/^alloctapd: \([0-9]*\) events written, \([0-9]*\) events lost.*/\1/p' "$TMP/lossy.err")
check "--format binary with losses: the trace decodes to the $written events written" \
	bash -c "test \"\$('$ROOT/build/bench/atz_tool' decode '$TMP/lossy.atz' - | wc -l)\" = '$written'"

# Without privileges: one line saying what is missing.
if command -v setpriv >/dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$D" -- /bin/true \
		>/dev/null 2>"$TMP/priv.err"
	rc=$?
	check "unprivileged: status 1, says CAP_BPF is needed" \
		bash -c "test $rc -eq 1 && grep -q 'Operation not permitted (run as root, or with CAP_BPF' $TMP/priv.err"
else
	not_ok "unprivileged run" "setpriv (util-linux) is missing"
fi

# An fd below 10000 is a descriptor (MALLOC_LOG's rule); 10000 is a file name.
"$D" -q -o 5 -- "$FX/alloc_sequence" "$TMP/fd.exp" --threads 0 5>"$TMP/fd.log"
check "-o 5 writes to descriptor 5" cmp "$TMP/fd.exp" "$TMP/fd.log"
(cd "$TMP" && "$D" -q -o 10000 -- "$FX/alloc_sequence" "$TMP/n.exp" --threads 0)
check "-o 10000 is a path (appended to)" cmp "$TMP/n.exp" "$TMP/10000"
(cd "$TMP" && "$D" -q -o 10000 -- "$FX/alloc_sequence" "$TMP/n2.exp" --threads 0)
check "-o PATH appends" bash -c "cat $TMP/n.exp $TMP/n2.exp | cmp - $TMP/10000"

# Signals on a process attached with --pid: SIGUSR1 writes the marker, SIGHUP reopens the
# file after rotation, SIGTERM ends with status 0.
sleep 30 &
sl=$!
"$D" -v --pid "$sl" -o "$TMP/sig.log" 2>"$TMP/sig.err" &
dm=$!
if wait_for "$TMP/sig.err" probing 10; then
	kill -USR1 $dm
	wait_for "$TMP/sig.log" "jemalloc_stats" 3
	mv "$TMP/sig.log" "$TMP/sig.log.1"
	kill -HUP $dm
	wait_for "$TMP/sig.err" "reopened" 3
	kill -USR1 $dm
	wait_for "$TMP/sig.log" "jemalloc_stats" 3
	kill -TERM $dm
	wait $dm
	rc=$?
	check "SIGTERM: exit status 0" test $rc -eq 0
	check "SIGUSR1: 'PID PID jemalloc_stats()' in the first file" \
		test "$(cat "$TMP/sig.log.1")" = "$sl $sl jemalloc_stats()"
	check "SIGHUP: the path is reopened, the next marker is in the new file" \
		test "$(cat "$TMP/sig.log")" = "$sl $sl jemalloc_stats()"
	check "summary line after SIGTERM" grep -q "2 events written, 0 events lost, 1 processes seen" "$TMP/sig.err"
else
	kill $dm 2>/dev/null
	not_ok "signals: attached" "$(cat "$TMP/sig.err")"
fi
kill $sl 2>/dev/null
wait $sl 2>/dev/null

# -v: a progress line every 2 s while running.
sleep 30 &
sl=$!
"$D" -v --pid $sl --duration 2.5 -o "$TMP/prog.log" 2>"$TMP/prog.err"
check "-v: a progress line (events/s, lost so far, ring buffer fill) after 2 s" \
	grep -qE '^alloctapd: [0-9]+ events/s, [0-9]+ written, 0 lost so far, ring buffer [0-9]+% full, [0-9]+ in the reorder window$' "$TMP/prog.err"
kill $sl
wait $sl 2>/dev/null

# --duration ends the trace.
sleep 30 &
sl=$!
start=$(date +%s%N)
"$D" -q --pid $sl --duration 0.5 -o "$TMP/dur.log"
rc=$?
el=$((($(date +%s%N) - start) / 1000000))
check "--duration 0.5: status 0, ended in under 5 s (took ${el} ms)" test $rc -eq 0 -a $el -lt 5000
kill $sl
wait $sl 2>/dev/null

# A closed output pipe: a clear message and status 1, no crash.
"$D" -o 1 -- bash -c 'for i in $(seq 1 30000); do x="$x$i"; done' 2>"$TMP/pipe.err" | head -c 10 >/dev/null
rc=${PIPESTATUS[0]}
check "closed output pipe: status 1 and a message" \
	bash -c "test $rc -eq 1 && grep -q 'the reader closed the output' $TMP/pipe.err"
finish
