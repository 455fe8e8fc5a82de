#!/usr/bin/env bash
# alloctapd's command line, errors, signals and output handling.
source "$(dirname "$0")/lib.sh"
D=$ROOT/build/alloctapd
FX=$ROOT/build/fixtures
need_bpf "$D"

check "--help exits 0 and documents exit codes" bash -c "'$D' --help | grep -q 'Exit status: 0 ok, 1 runtime error'"
check_err_match "bad --format: usage error" 2 "--format must be text or binary, not 'xml'" "$D" -f xml -- /bin/true
check_err_match "no mode: usage error" 2 "give --pid PID, --all or -- COMMAND" "$D"
check_err_match "two modes: usage error" 2 "only one of" "$D" --all --pid 1
check_err_match "unknown option: usage error" 2 "unknown option '--bogus'" "$D" --bogus
check_err_match "bad pid list: usage error" 2 "bad pid list 'x1'" "$D" --pid x1
check_err_match "ring size not a power of two: usage error" 2 "power of two" "$D" --ringbuf-size 5000 --all
check_err_match "--nice out of range: usage error" 2 "--nice must be a whole number from -20 to 19, not '20'" "$D" --nice 20 -- /bin/true
for other in --floor --stacks --watch "--min-size 64" "--sample-bytes 4096"; do
	# shellcheck disable=SC2086 # the option and its value, two words
	check_err_match "--discard with $other: usage error" 2 \
		"--discard gives the records back unread: ${other%% *} does not go with it" \
		"$D" --discard -f binary $other -o /dev/null -- /bin/true
done
# The loop and the writing thread run at --nice's priority (-10 by default); the command, and
# the threads that close links, keep the priority the daemon was started with. Each line: the
# command's nice, then each distinct name:nice of the daemon's threads, the closers' apart.
own_nice=$(awk '{print $19}' /proc/$$/stat)
nice_of() { # ALLOCTAPD-ARGS...: what the command says
	ALLOCTAP_WRITER_THREAD=1 "$D" -q -o /dev/null "$@" -- sh -c \
		'for t in /proc/$PPID/task/*; do echo "$(cat $t/comm):$(cut -d" " -f19 $t/stat)"; done >/tmp/alloctap-nice.$$
		echo $(cut -d" " -f19 /proc/$$/stat) $(sort -u /tmp/alloctap-nice.$$ | grep -v "^link-closer:") \
			$(grep "^link-closer:" /tmp/alloctap-nice.$$ | grep -vc ":$(cut -d" " -f19 /proc/$$/stat)\$")
		rm -f /tmp/alloctap-nice.$$'
}
check_eq "--nice -7: the daemon's threads at -7, the command at the caller's $own_nice" \
	"$(nice_of --nice -7)" "$own_nice alloctapd:-7 sink-writer:-7 0"
check_eq "no --nice: the daemon's threads at -10, the command at the caller's $own_nice" \
	"$(nice_of)" "$own_nice alloctapd:-10 sink-writer:-10 0"
check_eq "--nice 5: the daemon's threads at 5" "$(nice_of --nice 5)" "$own_nice alloctapd:5 sink-writer:5 0"
# Without CAP_SYS_NICE no priority above the caller's can be had: asked for with --nice, the
# daemon says so and records all the same at the caller's; by default it says so under -v only.
nonice() { setpriv --bounding-set=-sys_nice "$@"; }
run_cmd nonice "$D" --nice -7 -o "$T/nonice.log" -- "$FX/alloc_sequence" "$T/nonice.exp" --threads 0
check_err_lines "--nice -7 without CAP_SYS_NICE: said, the loop at the caller's $own_nice" \
	"alloctapd: cannot set the priority to -7 (Permission denied): the loop runs at $own_nice"
check "--nice -7 without CAP_SYS_NICE: the command traced exactly" cmp "$T/nonice.log" "$T/nonice.exp"
run_cmd nonice "$D" -o "$T/nonice.log" -- /bin/true
check "no --nice without CAP_SYS_NICE: exit 0, nothing said of the priority" \
	bash -c "[ $rc -eq 0 ] && ! grep -q priority '$T/err'"
run_cmd nonice "$D" -v -o "$T/nonice.log" -- /bin/true
check_err_lines "no --nice without CAP_SYS_NICE, -v: said" \
	"alloctapd: cannot set the priority to -10 (Permission denied): the loop runs at $own_nice"
check_err_match "nonexistent pid: runtime error" 1 "no process 999999999" "$D" --pid 999999999
check_err_match "pid 2^30-1 that does not exist" 1 "no process" "$D" --pid 1073741823
check_err_match "library without malloc" 1 "defines no malloc" "$D" --lib /bin/true -- /bin/true
check_err_match "unwritable output" 1 "cannot open output /nonexistent/dir/log" "$D" -o /nonexistent/dir/log -- /bin/true
check_err_match "output fd not open" 1 "cannot write to fd 77: it is not open" "$D" -o 77 -- /bin/true
# A descriptor the caller did not pass is refused before the daemon opens its own (which would
# take those numbers) and before the command runs.
bad_fds=""
for n in $(seq 3 20); do
	rm -f "$T/fdran"
	bash -c "exec $n>&-; '$D' -o $n -- touch '$T/fdran' </dev/null" 2>"$T/fd.err"
	rc=$?
	[ $rc -eq 1 ] && [ ! -e "$T/fdran" ] &&
		[ "$(cat "$T/fd.err")" = "alloctapd: cannot write to fd $n: it is not open" ] ||
		bad_fds="$bad_fds $n(rc $rc: $(head -c 200 "$T/fd.err"))"
done
check "-o N for fds 3 to 20 not passed: status 1, said up front, the command not run" \
	test -z "$bad_fds"
[ -n "$bad_fds" ] && echo "# $bad_fds"
bash -c "exec 3</dev/null; '$D' -o 3 -- /bin/true" 2>"$T/fd.err"
rc=$?
check "-o 3 passed read-only: status 1, said of the caller's descriptor" \
	bash -c "test $rc -eq 1 && test \"\$(cat $T/fd.err)\" = 'alloctapd: cannot write to fd 3: it is open read-only'"
check_err_match "command not found" 1 "cannot find command" "$D" -- /nonexistent/command
check_err_match "a file that is not executable" 1 "cannot run '/etc/passwd': Permission denied" "$D" -- /etc/passwd
check_err_match "a directory as the command" 1 "cannot run '/tmp': Is a directory" "$D" -- /tmp
check_err_match "--lib a directory" 1 "cannot read /tmp: a directory, not a regular file" "$D" --lib /tmp -- /bin/true
check_err_match "--pid of a kernel thread" 1 "process 2 is a kernel thread: it has no user space to trace" "$D" --pid 2
(sleep 0.1 & exec sleep 10) &
zparent=$!
sleep 0.5
zombie=$(ps -o pid= --ppid $zparent | tr -d ' ')
check_err_match "--pid of a zombie" 1 "process $zombie has exited (a zombie its parent has not reaped yet)" "$D" --pid "$zombie"
kill $zparent

# --format binary: an .atz trace (one lz4 frame) that decodes to exactly the text lines.
need_make build/bench/atz_tool
"$D" -q -f binary -o "$T/bin.atz" -- "$FX/alloc_sequence" "$T/bin.exp" --threads 0
check "--format binary: lz4 -t accepts the trace" lz4 -qt "$T/bin.atz"
check "--format binary: decodes to exactly the fixture's lines" \
	bash -c "'$ROOT/build/bench/atz_tool' decode '$T/bin.atz' - | cmp - '$T/bin.exp'"
"$D" -f binary --ringbuf-size 4096 -o "$T/lossy.atz" -- "$FX/alloc_loop" 20000 >/dev/null 2>"$T/lossy.err"
written=$(sed -n 's/^alloctapd: \([0-9]*\) events written, \([0-9]*\) events lost.*/\1/p' "$T/lossy.err")
check "--format binary with losses: the trace decodes to the $written events written" \
	bash -c "test \"\$('$ROOT/build/bench/atz_tool' decode '$T/lossy.atz' - | wc -l)\" = '$written'"

# Without privileges: one line saying what is missing.
if command -v setpriv >/dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$D" -- /bin/true \
		>/dev/null 2>"$T/priv.err"
	rc=$?
	check "unprivileged: status 1, says CAP_BPF is needed" \
		bash -c "test $rc -eq 1 && grep -q 'Operation not permitted (this needs CAP_BPF, CAP_PERFMON; this process lacks CAP_BPF, CAP_PERFMON)' $T/priv.err"
	# the capabilities, one step at a time: each missing one is named where it is needed
	caps() { setpriv --inh-caps=-all,$1 --ambient-caps=-all,$1 --bounding-set=-all,$1 "${@:2}"; }
	caps +perfmon "$D" -o - -- /bin/true >/dev/null 2>"$T/priv.err"
	check "CAP_PERFMON alone: the load names the missing CAP_BPF" \
		grep -q "cannot load the BPF program: Operation not permitted (this needs CAP_BPF, CAP_PERFMON; this process lacks CAP_BPF)" "$T/priv.err"
	caps +bpf,+perfmon "$D" -q -o "$T/caps.log" -- "$FX/alloc_sequence" "$T/caps.exp" --threads 0
	check "CAP_BPF and CAP_PERFMON (uprobe_multi links need no CAP_SYS_ADMIN): a launched command is traced exactly" \
		cmp "$T/caps.log" "$T/caps.exp"
	setpriv --reuid=65534 --regid=65534 --clear-groups sleep 30 &
	other=$!
	caps +bpf,+perfmon "$D" --pid $other -o - >/dev/null 2>"$T/priv.err"
	check "--pid of another user's process without CAP_SYS_PTRACE: says so" \
		grep -q "cannot read /proc/$other/exe: Permission denied (this needs CAP_SYS_PTRACE; this process lacks CAP_SYS_PTRACE)" "$T/priv.err"
	caps +bpf,+perfmon,+sys_ptrace timeout --preserve-status -s INT 1 "$D" --pid $other -o - >/dev/null 2>"$T/priv.err"
	check "--pid of another user's process with CAP_SYS_PTRACE too: traced, exit 0" test $? -eq 0
	kill $other
	rm -f "$T/left.log"
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$D" -o "$T/left.log" -- /bin/true 2>/dev/null
	check "unprivileged: no empty output file left behind" test ! -e "$T/left.log"
else
	fail "unprivileged run" "setpriv (util-linux) is missing"
fi

# An fd below 10000 is a descriptor (MALLOC_LOG's rule); 10000 is a file name.
"$D" -q -o 5 -- "$FX/alloc_sequence" "$T/fd.exp" --threads 0 5>"$T/fd.log"
check_file_eq "-o 5 writes to descriptor 5" "$T/fd.exp" "$T/fd.log"
(cd "$T" && "$D" -q -o 10000 -- "$FX/alloc_sequence" "$T/n.exp" --threads 0)
check_file_eq "-o 10000 is a path (appended to)" "$T/n.exp" "$T/10000"
(cd "$T" && "$D" -q -o 10000 -- "$FX/alloc_sequence" "$T/n2.exp" --threads 0)
check "-o PATH appends" bash -c "cat $T/n.exp $T/n2.exp | cmp - $T/10000"

# Signals on a process attached with --pid: SIGUSR1 writes the marker, SIGHUP reopens the
# file after rotation, SIGTERM ends with status 0.
sleep 30 &
sl=$!
"$D" -v --pid "$sl" -o "$T/sig.log" 2>"$T/sig.err" &
dm=$!
if wait_for "$T/sig.err" recording 10; then
	kill -USR1 $dm
	wait_for "$T/sig.log" "jemalloc_stats" 3
	mv "$T/sig.log" "$T/sig.log.1"
	kill -HUP $dm
	wait_for "$T/sig.err" "reopened" 3
	kill -USR1 $dm
	wait_for "$T/sig.log" "jemalloc_stats" 3
	kill -TERM $dm
	wait $dm
	rc=$?
	check "SIGTERM: exit status 0" test $rc -eq 0
	check "SIGUSR1: 'PID PID jemalloc_stats()' in the first file" \
		test "$(cat "$T/sig.log.1")" = "$sl $sl jemalloc_stats()"
	check "SIGHUP: the path is reopened, the next marker is in the new file" \
		test "$(cat "$T/sig.log")" = "$sl $sl jemalloc_stats()"
	check "summary line after SIGTERM" grep -q "2 events written, 0 events lost, 1 processes seen" "$T/sig.err"
else
	kill $dm 2>/dev/null
	fail "signals: attached" "$(cat "$T/sig.err")"
fi
kill $sl 2>/dev/null
wait $sl 2>/dev/null

# -v: a progress line every 2 s while running.
sleep 30 &
sl=$!
"$D" -v --pid $sl --duration 2.5 -o "$T/prog.log" 2>"$T/prog.err"
check "-v: a progress line (events/s, lost so far, ring buffer fill) after 2 s" \
	grep -qE '^alloctapd: [0-9]+ events/s, [0-9]+ written, 0 lost so far, ring buffer [0-9]+% full, [0-9]+ in the reorder window$' "$T/prog.err"
kill $sl
wait $sl 2>/dev/null

# -v with --discard: the line counts records, and the records of the first 2 s are those before
# the pause (the 100 mallocs after it come 3.5 s in, after the first line).
"$D" -v --discard -o "$T/prog_d.log" -- "$FX/alloc_paced" malloc:100:32 sleep:3500 malloc:100:32 \
	2>"$T/prog_d.err"
check "-v --discard: exit status 0" test $? -eq 0
total=$(sed -n 's/^alloctapd: \([0-9]*\) records discarded unread, 0 events lost$/\1/p' "$T/prog_d.err")
check_eq "-v --discard: the first progress line counts every record but the last 100" \
	"$(grep -E '^alloctapd: [0-9]+ records/s, ' "$T/prog_d.err" | head -1 | sed -E 's/^alloctapd: [0-9]+ records\/s, //')" \
	"$((${total:-0} - 100)) discarded unread, 0 lost so far"

# --duration ends the trace (by itself: the target lives on for minutes).
sleep 300 &
sl=$!
start=$(date +%s%N)
"$D" -q --pid $sl --duration 0.5 -o "$T/dur.log"
rc=$?
el=$((($(date +%s%N) - start) / 1000000))
check "--duration 0.5: status 0, ended by itself (took ${el} ms)" test $rc -eq 0 -a $el -lt 60000
# nan and inf are no durations; a huge one saturates instead of wrapping to "stop at once".
for d in nan inf -inf 0 -1 1e-400 ""; do
	check_err_match "--duration '$d': usage error" 2 "bad duration '$d'" "$D" --duration "$d" --pid $sl
done
timeout --preserve-status -s INT 2 "$D" -q --pid $sl --duration 1e19 -o "$T/dur.log"
check "--duration 1e19: still tracing after 2 s (SIGINT ends it, status 0)" test $? -eq 0
kill $sl
wait $sl 2>/dev/null

# A closed output pipe (-o 1 | head): no crash, nothing said, killed by SIGPIPE (141) as cat is
# (daemon_bystanders.sh case 7: detached, no link left behind).
"$D" -o 1 -- bash -c 'for i in $(seq 1 30000); do x="$x$i"; done' 2>"$T/pipe.err" | head -c 10 >/dev/null
rc=${PIPESTATUS[0]}
check_eq "closed output pipe: nothing said, killed by SIGPIPE (141)" "$rc:$(wc -c <"$T/pipe.err")" \
	"141:0" "$(head -n 3 "$T/pipe.err")"
# The writing threads' variables are checked before anything is made: a value they cannot
# take is refused, the variable named with what it may be, status 1, no output file.
for bad in ALLOCTAP_WRITER_THREAD=2 ALLOCTAP_WRITER_THREAD=yes ALLOCTAP_ENCODERS=0 \
	ALLOCTAP_ENCODERS=5 ALLOCTAP_ENCODERS=12 ALLOCTAP_ENCODERS= ALLOCTAP_FRAME_EACH_RUN=on; do
	case $bad in
	ALLOCTAP_ENCODERS=*) want="not a number from 1 to 4" ;;
	*) want="not 0 or 1" ;;
	esac
	rm -f "$T/env.log"
	env "$bad" "$D" -f binary -o "$T/env.log" -- /bin/true 2>"$T/env.err"
	rc=$?
	check_eq "$bad: refused before anything is made (status, message, no file)" \
		"$rc $(head -n 1 "$T/env.err") $([ -e "$T/env.log" ] && echo yes || echo no)" \
		"1 alloctapd: $bad: $want no"
done
finish
