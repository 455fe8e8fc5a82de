#!/usr/bin/env bash
# alloctapd --stacks against an independent unwinder: for each program, the stacks alloctapd's
# BPF program takes (printed from the trace by `atz_tool stacks`, one line per allocation:
# FUNC FLAGS PC0 PC1 ...) and those libdw gives under ptrace (build/oracle/stack_oracle, same
# line shape) must be the same, line for line. Both print every PC as OBJECT+0xOFFSET (the trace
# through its mapping records, the oracle through /proc/PID/maps at the stop): the kernel maps
# its uprobe page (the out-of-line copies of probed instructions) in a traced process at the
# first probe hit, so an object mapped after that (dlopen) lies a page lower under alloctapd
# than under the oracle. ASLR is off all the same (setarch -R). Fixtures (tests/fixtures/unwind_*.c, -O2 -fomit-frame-pointer): a chain
# through a shared library, recursion deeper than 100 frames and deeper than 128 (truncated),
# a static program, threads (their order varies: both sides sorted), a library mapped with
# dlopen after the start, a program linked by gold, an allocation in a signal handler (through
# the signal frame) and in a constructor the dynamic loader runs (complete: the walk reaches
# the loader's entry); the last three also against their known chain of functions. python3 (PYTHONMALLOC=malloc): one thread, identical line for line,
# also encoded by three threads into lz4 frames whose stacks go on from each other, and those
# relayed into one frame by atz_tool encode;
# five threads, complete stacks and stacks among the oracle's, each at least 99.9% (printed).
# Without the oracle: code without a table (tests/fixtures/stacks_jit.c, a JIT's stub in
# anonymous memory) ends its stacks and costs at most one hold; a hold leaves job control alone
# (a blocked SIGTSTP stays pending, kill -STOP stops the program 20 times of 20); two plugins
# opened and closed in turn at one address (tests/fixtures/stacks_plugins.c) each get their
# own allocations. Tables of big objects (libLLVM, tests/fixtures/stacks_big_object.c) are built
# off the daemon's loop: a thread's creation waits milliseconds while one builds, and
# `--all --stacks -d 2` and SIGINT end on time while processes that map them run.
source "$(dirname "$0")/lib.sh"
D=$ROOT/build/alloctapd
FX=$ROOT/build/fixtures
ATZ=$ROOT/build/bench/atz_tool
ORACLE=$ROOT/build/oracle/stack_oracle
need_bpf "$D"
need_built "$ATZ" "$ORACLE" "$FX/unwind_chain" "$FX/unwind_recursion" "$FX/unwind_static" \
	"$FX/unwind_thread" "$FX/unwind_dlopen" "$FX/unwind_gold" "$FX/unwind_signal" \
	"$FX/unwind_ctor" "$ROOT/build/alloctap-report" "$FX/stacks_jit" "$FX/stacks_plugins" \
	"$FX/stacks_big_object"

# Text output has no place for stacks: a usage error that says so.
"$D" --stacks -o "$T/x.log" -- /bin/true 2>"$T/usage.err"
rc=$?
check "--stacks with text output: a usage error naming why" \
	bash -c "test $rc -eq 2 && grep -q -- '--stacks needs --format binary' '$T/usage.err'"

# trace NAME SORT COMMAND...: both stack listings of COMMAND, sorted when SORT is 1, in
# $T/NAME.ours and $T/NAME.oracle; the daemon's messages in $T/NAME.err.
trace() {
	local name=$1 sort=$2
	shift 2
	setarch -R "$D" --stacks ${NATIVE_ONLY:+--no-python} -f binary -o "$T/$name.atz" -- "$@" \
		>/dev/null 2>"$T/$name.err"
	"$ATZ" stacks -O "$T/$name.atz" >"$T/$name.ours" 2>"$T/$name.atz.err"
	setarch -R "$ORACLE" --objects --out "$T/$name.oracle" -- "$@" >/dev/null \
		2>"$T/$name.oracle.err"
	# a uprobe that came while the oracle ran and stayed took calls it never saw: said
	uprobe_holders | sed 's/^/another tracer held uprobes as the oracle ended: pid /' \
		>>"$T/$name.oracle.err"
	if [ "$sort" = 1 ]; then
		sort -o "$T/$name.ours" "$T/$name.ours"
		sort -o "$T/$name.oracle" "$T/$name.oracle"
	fi
}

# match OURS ORACLE prints the first lines of OURS that are not the line of ORACLE at the same
# place, and on stderr "N of M lines identical".
match() {
	python3 - "$1" "$2" <<'PY'
import sys
ours = open(sys.argv[1]).read().splitlines()
oracle = open(sys.argv[2]).read().splitlines()
bad = [i for i in range(max(len(ours), len(oracle)))
       if i >= len(ours) or i >= len(oracle) or ours[i] != oracle[i]]
for i in bad[:4]:
    print("line %d: ours %s" % (i + 1, ours[i] if i < len(ours) else "(none)"))
    print("        oracle %s" % (oracle[i] if i < len(oracle) else "(none)"))
print("%d of %d lines identical" % (max(len(ours), len(oracle)) - len(bad), len(oracle)),
      file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}

# known OURS ORACLE: how many lines of OURS are a line ORACLE has too (anywhere, any number of
# times): threads interleave differently in two runs, and under the oracle's ptrace stops far
# more so, which moves where the interpreter collects garbage and so how often each stack
# comes, not which stacks there are.
known() {
	python3 - "$1" "$2" <<'PY'
import sys
oracle = set(open(sys.argv[2]).read().splitlines())
print(sum(1 for line in open(sys.argv[1]).read().splitlines() if line in oracle))
PY
}

# same NAME WHAT: the two listings are equal (match) and not empty.
same() {
	local n
	n=$(wc -l <"$T/$1.oracle")
	if [ "$n" -eq 0 ]; then
		fail "$2: the same stacks as libdw's" "the oracle printed no stack:" \
			"$(tail -n 5 "$T/$1.oracle.err")"
	elif match "$T/$1.ours" "$T/$1.oracle" >"$T/$1.diff" 2>/dev/null; then
		ok "$2: $n allocations, the same stacks as libdw's"
	else
		fail "$2: the same stacks as libdw's" "ours ($(wc -l <"$T/$1.ours") lines):" \
			"$(cat "$T/$1.diff")" "$(cat "$T/$1.err" "$T/$1.atz.err" | tail -4)" \
			"$(tail -n 5 "$T/$1.oracle.err")"
	fi
}

trace chain 0 "$FX/unwind_chain" 8
same chain "a chain through a shared library"
trace deep 0 "$FX/unwind_recursion" 110
same deep "recursion 110 deep"
check "recursion 110 deep: complete stacks, none truncated" \
	grep -q ' 0 truncated, 0 incomplete' "$T/deep.err"
trace deeper 0 "$FX/unwind_recursion" 200
same deeper "recursion 200 deep (128 frames, truncated)"
check "recursion 200 deep: some stacks truncated" \
	bash -c "grep -q '^[a-z_]* truncated ' '$T/deeper.ours'"
trace static 0 "$FX/unwind_static" 8
same static "a static program"
trace thread 1 "$FX/unwind_thread" 3
same thread "threads"
trace dlopen 0 "$FX/unwind_dlopen" 4
same dlopen "a library mapped with dlopen after the start"

# folded NAME: the trace's stacks, outermost frame first, as alloctap-report names them.
folded() {
	"$ROOT/build/alloctap-report" export --folded "$T/$1.atz" 2>&1
}

# A program linked by GNU gold (.eh_frame of type SHT_X86_64_UNWIND): its own CFI, not the
# frame-pointer rule.
trace gold 0 "$FX/unwind_gold" 4
same gold "a program linked by gold"
check_eq "a program linked by gold: the chain to malloc, complete" "$(folded gold)" \
	"_start;__libc_start_main_impl;__libc_start_call_main;main;c1;c2;c3;malloc 4"

# malloc in a SIGUSR1 handler: through the kernel's signal frame (glibc's __restore_rt, which
# has no symbol) to the interrupted code, raise's, and down to _start (gdb's backtrace there:
# handler, <signal handler called>, __pthread_kill_implementation, raise, trigger, main).
trace signal 0 "$FX/unwind_signal" 4
same signal "an allocation in a signal handler"
check_eq "an allocation in a signal handler: through the signal frame to _start, complete" \
	"$(folded signal | sed 's/libc\.so\.6+0x[0-9a-f]*;handler/SIGFRAME;handler/')" \
	"_start;__libc_start_main_impl;__libc_start_call_main;main;trigger;raise;$(
	)__pthread_kill_implementation;SIGFRAME;handler;malloc 4"

# A library's constructor, run by the dynamic loader before main: the walk ends at the loader's
# entry (_dl_start_user), the outermost frame, so the stacks are complete.
# libdw has no rule there either, and ends those stacks as incomplete after the same frames:
# the oracle's lines are compared frame for frame with its flag taken as complete.
trace ctor 0 "$FX/unwind_ctor"
check_eq "a constructor run by the dynamic loader: libdw stops at the loader's entry" \
	"$(awk '{ print $1, $2, $NF }' "$T/ctor.oracle" | sed 's/+0x[0-9a-f]*$//' | uniq -c)" \
	"      3 malloc incomplete ${LDSO##*/}"
sed -i 's/^malloc incomplete /malloc complete /' "$T/ctor.oracle"
same ctor "allocations in a constructor run by the dynamic loader"
check_eq "a constructor run by the dynamic loader: 3 complete stacks, from the loader's entry" \
	"$(awk '{ print $1, $2, $NF }' "$T/ctor.ours" | sed 's/+0x[0-9a-f]*$//' | uniq -c)" \
	"      3 malloc complete ${LDSO##*/}"
check_eq "a constructor run by the dynamic loader: ctor_init, ctor_allocate, malloc" \
	"$(folded ctor | sed 's/.*;\(ctor_init;\)/\1/')" "ctor_init;ctor_allocate;malloc 3"

# held COUNT_FILE: how many threads the daemon held for new mappings (its -v summary).
held() {
	sed -n 's/.* \([0-9]*\) threads held for new mappings.*/\1/p' "$1"
}

# Code without a table, as a JIT's: 20,000 mallocs through a stub in anonymous executable
# memory. Its stacks end at the stub (no mapping record: [unknown]), and the thread is held at
# most once (the stub's page is new when it is first called), not at every call.
"$D" -v --stacks -f binary -o "$T/jit.atz" -- "$FX/stacks_jit" loop 20000 >"$T/jit.out" \
	2>"$T/jit.err"
check_eq "JIT code: every call through the stub has the stack [incomplete];[unknown];malloc" \
	"$("$ROOT/build/alloctap-report" export --folded "$T/jit.atz" 2>&1 | grep -c '^\[incomplete\];\[unknown\];malloc 20000$')" 1
jit_held=$(held "$T/jit.err")
check "JIT code: at most one hold for 20,000 calls (held: ${jit_held:-none})" \
	test "${jit_held:-99}" -le 1
jit_s=$(sed -n 's/ seconds$//p' "$T/jit.out")
check "JIT code: 20,000 calls in under 5 seconds with --stacks (${jit_s:-none} s)" \
	awk -v s="${jit_s:-99}" 'BEGIN { exit !(s < 5) }'

# Code that keeps appearing (a new stub page every 10 ms for 2 s: 200 pages) is held at the
# holds' rate: at most 16 in a row, then one per 50 ms, so at most 16 + 40 and a few.
"$D" -v --stacks -f binary -o "$T/pages.atz" -- "$FX/stacks_jit" spin 2 2>"$T/pages.err"
pages_held=$(held "$T/pages.err")
check "new JIT pages: holds at the holds' rate (${pages_held:-none} for 200 pages in 2 s)" \
	test "${pages_held:-999}" -le 60

# A hold leaves job control alone: with SIGTSTP blocked and pending, five calls from new code,
# each a hold, and SIGTSTP still pending after each (the generation of SIGCONT flushes it).
"$D" -v --stacks -f binary -o "$T/tstp.atz" -- "$FX/stacks_jit" tstp 5 >"$T/tstp.out" \
	2>"$T/tstp.err"
rc=$?
check_eq "a hold keeps a pending SIGTSTP (exit status, fixture's count)" \
	"$rc $(cat "$T/tstp.out")" "0 pending 5 of 5"
tstp_held=$(held "$T/tstp.err")
check "a hold keeps a pending SIGTSTP: the calls were held (${tstp_held:-none} holds)" \
	test "${tstp_held:-0}" -ge 1

# kill -STOP stops a program that keeps calling malloc from new code, 20 times of 20: it
# spends no CPU time for 0.3 s after each stop.
"$D" -q --stacks -f binary -o "$T/stop.atz" -- "$FX/stacks_jit" spin 60 2>"$T/stop.err" &
dm=$!
spin_pid=
for ((i = 0; i < 50; i++)); do
	spin_pid=$(pgrep -P $dm | head -n 1)
	[ -n "$spin_pid" ] && break
	sleep 0.1
done
stopped=0
if [ -n "$spin_pid" ]; then
	sleep 0.5
	for ((i = 0; i < 20; i++)); do
		kill -STOP "$spin_pid"
		sleep 0.1
		a=$(awk '{print $14 + $15}' "/proc/$spin_pid/stat")
		sleep 0.3
		b=$(awk '{print $14 + $15}' "/proc/$spin_pid/stat")
		[ "$a" = "$b" ] && stopped=$((stopped + 1))
		kill -CONT "$spin_pid"
		sleep 0.1
	done
	kill "$spin_pid"
fi
wait $dm
check_eq "kill -STOP under --stacks stops the program 20 times of 20" "$stopped" 20

# Two plugins opened and closed in turn, at one address, with the same code at the same
# offsets: 4 rounds of 500 mallocs, each plugin's 1,000 under its own function, none
# incomplete.
for p in plugin_a plugin_b; do
	cc -O2 -fomit-frame-pointer -g -shared -fPIC -DSTACKS_PLUGIN=$p -o "$T/$p.so" \
		tests/fixtures/stacks_plugins.c 2>"$T/$p.cc.err" || fail "plugin $p builds" "$(cat "$T/$p.cc.err")"
done
"$D" -v --stacks -f binary -o "$T/plugins.atz" -- "$FX/stacks_plugins" "$T" 4 500 \
	>"$T/plugins.out" 2>"$T/plugins.err"
check_eq "plugins: the four rounds' plugins at one address" \
	"$(awk '{print $2}' "$T/plugins.out" | sort -u | wc -l) $(wc -l <"$T/plugins.out")" "1 4"
"$ROOT/build/alloctap-report" export --folded "$T/plugins.atz" >"$T/plugins.folded" 2>&1
check_eq "plugins: each plugin's 1,000 allocations under its own function" \
	"$(grep ';plugin_alloc;' "$T/plugins.folded" | sort)" \
	"$(printf '%s\n' "_start;__libc_start_main_impl;__libc_start_call_main;main;plugin_alloc;plugin_a_here;malloc 1000" \
		"_start;__libc_start_main_impl;__libc_start_call_main;main;plugin_alloc;plugin_b_here;malloc 1000")"
check_eq "plugins: no stack incomplete" "$(grep -c incomplete "$T/plugins.folded")" 0

# SIGHUP after a rotation: the new file is a trace of its own, whose stack ids start over, so
# every stack and mapping its events need is written into it again (the reader refuses an id
# used before its record). Every allocation is in one file or the other, with its stack. Run
# with one writing thread, then with three encoding lz4 frames (each file then starts its
# stacks over, and its frames go on from each other).
# rotation ENCODERS: one run; its messages say "SIGHUP rotation with --stacks" and, with more
# than one encoder, how many.
rotation() {
	local enc=$1 what="SIGHUP rotation with --stacks" dm rc rc1 rc2 n1 n2 i
	[ "$enc" -gt 1 ] && what="$what, $enc encoders"
	rm -f "$T/first" "$T/go" "$T/rot.atz" "$T/rot.atz.1"
	ALLOCTAP_WRITER_THREAD=1 ALLOCTAP_ENCODERS=$enc "$D" --stacks -f binary -o "$T/rot.atz" -- \
		"$FX/alloc_paced" malloc:50:32 touch:"$T/first" wait:"$T/go" malloc:50:32 \
		pair:20:64 2>"$T/rot.err" &
	dm=$!
	for ((i = 0; i < 100; i++)); do [ -e "$T/first" ] && break; sleep 0.1; done
	sleep 1.2 # two ticks: the first 50 are in the first file
	mv "$T/rot.atz" "$T/rot.atz.1"
	kill -HUP $dm
	sleep 0.5
	touch "$T/go"
	wait $dm
	rc=$?
	"$ATZ" stacks -O "$T/rot.atz.1" >"$T/rot.1.stacks" 2>"$T/rot.1.err"
	rc1=$?
	"$ATZ" stacks -O "$T/rot.atz" >"$T/rot.2.stacks" 2>"$T/rot.2.err"
	rc2=$?
	n1=$(wc -l <"$T/rot.1.stacks")
	n2=$(wc -l <"$T/rot.2.stacks")
	check "$what: both files read whole, every event's stack defined ($n1 + $n2 stacks)" \
		bash -c "[ $rc -eq 0 ] && [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] || { cat '$T/rot.err' '$T/rot.1.err' '$T/rot.2.err'; exit 1; }"
	check_eq "$what: 120 allocations, each with its stack, in the two files" \
		"$((n1 + n2)) $(cat "$T/rot.1.stacks" "$T/rot.2.stacks" | grep -c '^malloc complete ')" \
		"120 120"
	check_eq "$what: the first malloc of each file, the same stack" \
		"$(sed -n 1p "$T/rot.2.stacks")" "$(sed -n 1p "$T/rot.1.stacks")"
}

if [ -x "$FX/alloc_paced" ]; then
	rotation 1
	rotation 3
else
	fail "alloc_paced built" "make tests builds it"
fi

# python3. Single-threaded (demo/workload.py, PYTHONHASHSEED=0) it makes the same calls in
# every run, so the two listings must be the same line for line. With four more threads
# (tests/oracle/py_workload.py) two runs differ a little (the oracle alone gave 285,699 and
# 285,651 allocations): at least 99.9% of the stacks complete, and at least 99.9% of them
# stacks libdw also gave in its run.
# libdw unwinds native frames: alloctapd's Python frames (checked against tracemalloc by
# tests/python_frames.sh) are left out here (--no-python).
# the interpreter itself, not a wrapper that executes it (pyenv's shims are shell scripts)
NATIVE_ONLY=1
check_err_match "--no-python without --stacks: a usage error" 2 "--no-python is for --stacks" \
	"$D" --no-python -f binary -o "$T/x.atz" -- /bin/true
PY=$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))' 2>/dev/null)
if [ -x "$PY" ]; then
	PYTHONHASHSEED=0 PYTHONMALLOC=malloc trace pyjson 0 "$PY" "$ROOT/demo/workload.py"
	same pyjson "python3, one thread"
	# the same run encoded by three threads, each run into an lz4 frame of its own whose stacks
	# go on from the frames before (2.6): the same stacks as libdw's, in many frames; and
	# relayed by atz_tool encode into one frame, the same again (the oracle runs with the
	# same environment: python's allocations depend on its size)
	PYTHONHASHSEED=0 PYTHONMALLOC=malloc ALLOCTAP_WRITER_THREAD=1 ALLOCTAP_ENCODERS=3 \
		ALLOCTAP_FRAME_EACH_RUN=1 trace pyframes 0 "$PY" "$ROOT/demo/workload.py"
	same pyframes "python3, one thread, encoded by 3 threads"
	frames=$(lz4_frames "$T/pyframes.atz")
	echo "# python3, one thread, encoded by 3 threads: $frames lz4 frames"
	check "python3, one thread, encoded by 3 threads: 6 lz4 frames or more (one per 43,690 records), read whole" \
		test "${frames:-0}" -ge 6
	# the document's reader, walking the frames itself: the C reader's events, stacks (its
	# Python frames unprefixed) and times
	check "python3, encoded by 3 threads: the document's reader reads the C reader's events, stacks and times" \
		bash -c "python3 '$ROOT/tests/atz_spec_reader.py' --file '$T/pyframes.atz' |
			cmp -s - <('$ATZ' decode '$T/pyframes.atz' -) &&
			python3 '$ROOT/tests/atz_spec_reader.py' --file '$T/pyframes.atz' --stacks |
			sed 's/ python:/ /g' | cmp -s - <('$ATZ' stacks '$T/pyframes.atz') &&
			python3 '$ROOT/tests/atz_spec_reader.py' --file '$T/pyframes.atz' --times |
			cmp -s - <('$ATZ' times '$T/pyframes.atz')"
	"$ATZ" encode "$T/pyframes.atz" "$T/pyone.atz" 2>"$T/pyone.err"
	"$ATZ" stacks -O "$T/pyone.atz" >"$T/pyone.ours" 2>"$T/pyone.atz.err"
	cp "$T/pyframes.oracle" "$T/pyone.oracle"
	touch "$T/pyone.oracle.err" "$T/pyone.err"
	same pyone "python3, encoded by 3 threads, then into one frame by atz_tool encode"
	check "atz_tool encode wrote one lz4 frame" test "$(lz4_frames "$T/pyone.atz")" = 1
	PYTHONMALLOC=malloc trace py 1 "$PY" "$ROOT/tests/oracle/py_workload.py"
	total=$(wc -l <"$T/py.oracle")
	ours=$(wc -l <"$T/py.ours")
	# a walk that did not fail: the outermost frame reached, or 128 frames and more to go
	complete=$(grep -c '^[a-z_]* \(complete\|truncated\) ' "$T/py.ours")
	truncated=$(grep -c '^[a-z_]* truncated ' "$T/py.ours")
	known_lines=$(known "$T/py.ours" "$T/py.oracle")
	echo "# python3, five threads: $ours allocations traced, $complete complete ($truncated of" \
		"them truncated at 128 frames), $known_lines of them stacks of the oracle's run" \
		"($total allocations)"
	check "python3, five threads: at least 99.9% of the stacks complete (or truncated at 128 frames)" \
		test $((complete * 1000)) -ge $((ours * 999)) -a "$ours" -gt 0
	if [ "$total" -eq 0 ]; then
		fail "python3, five threads: at least 99.9% of the stacks among those of the oracle's run" \
			"the oracle printed no stack:" "$(tail -n 5 "$T/py.oracle.err")"
	else
		if [ $((known_lines * 1000)) -ge $((ours * 999)) ]; then
			ok "python3, five threads: at least 99.9% of the stacks among those of the oracle's run"
		else
			fail "python3, five threads: at least 99.9% of the stacks among those of the oracle's run" \
				"$known_lines of $ours; the oracle: $total allocations" \
				"$(tail -n 5 "$T/py.oracle.err")"
		fi
	fi
else
	fail "python3 is installed" "make deps installs it"
fi

# Big objects: their unwind tables take seconds of CPU to build; the loop must not wait for them.
BIG1=/usr/lib/$MULTIARCH/libLLVM-14.so.1
BIG2=/usr/lib/$MULTIARCH/libLLVM-15.so.1
# seconds since the epoch, to the millisecond
now_s() { date +%s.%3N; }
# in_page_cache OBJECT: reads OBJECT and the libraries it links whole. A dlopen that reads them
# from the disk holds the dynamic loader's lock, which pthread_create takes, as long as the disk
# takes, traced or not: the check below times the daemon, not the disk.
in_page_cache() {
	# shellcheck disable=SC2046 # one word a library
	cat "$1" $(ldd "$1" | awk '$3 ~ /^\// {print $3}') >/dev/null
}
if [ -r "$BIG1" ] && [ -r "$BIG2" ]; then
	# a thread's creation (a ptrace stop the daemon handles) while the daemon builds the table
	# of the object the process has just mapped
	in_page_cache "$BIG1"
	"$D" -q --stacks --format binary -o "$T/big.atz" -- "$FX/stacks_big_object" "$BIG1" 3 \
		>"$T/big.out" 2>"$T/big.err"
	rc=$?
	max_ms=$(awk '{print $4}' "$T/big.out")
	echo "# big object: $(cat "$T/big.out")"
	check "big object: the program ran under --stacks (status 0, a line)" \
		test $rc -eq 0 -a -n "$max_ms"
	check "big object: no pthread_create took 250 ms while libLLVM's table was built ($max_ms ms)" \
		awk -v m="${max_ms:-99999}" 'BEGIN { exit !(m < 250) }'

	# --all --stacks -d 2 with two running processes that map big objects
	"$FX/stacks_big_object" "$BIG1" 30 >/dev/null &
	b1=$!
	"$FX/stacks_big_object" "$BIG2" 30 >/dev/null &
	b2=$!
	sleep 1
	"$D" -v --all --stacks -d 2 --format binary -o "$T/bigall.atz" 2>"$T/bigall.err" &
	dm=$!
	if wait_for "$T/bigall.err" "alloctapd: recording" 20; then
		t0=$(now_s)
		wait "$dm"
		rc=$?
		took=$(awk -v a="$t0" -v b="$(now_s)" 'BEGIN { printf "%.2f", b - a }')
		check "--all --stacks -d 2 with libLLVM mapped: status 0" test $rc -eq 0
		check "--all --stacks -d 2 with libLLVM mapped: ends 3 s after recording began ($took s)" \
			awk -v t="$took" 'BEGIN { exit !(t <= 3.0) }'
		grep "events written" "$T/bigall.err" | sed 's/^/# /'
	else
		kill "$dm" 2>/dev/null
		wait "$dm"
		fail "--all --stacks -d 2 with libLLVM mapped: recording" "$(tail -3 "$T/bigall.err")"
	fi

	# SIGINT while the tables build: a fresh daemon builds them again
	"$D" -v --all --stacks --format binary -o "$T/bigint.atz" 2>"$T/bigint.err" &
	dm=$!
	if wait_for "$T/bigint.err" "alloctapd: recording" 20; then
		sleep 0.5
		t0=$(now_s)
		kill -INT "$dm"
		wait "$dm"
		rc=$?
		took=$(awk -v a="$t0" -v b="$(now_s)" 'BEGIN { printf "%.2f", b - a }')
		check "SIGINT during the build of libLLVM's table: status 0" test $rc -eq 0
		check "SIGINT during the build of libLLVM's table: the daemon ends within 1 s ($took s)" \
			awk -v t="$took" 'BEGIN { exit !(t <= 1.0) }'
	else
		kill "$dm" 2>/dev/null
		wait "$dm"
		fail "SIGINT during a build: recording" "$(tail -3 "$T/bigint.err")"
	fi
	kill "$b1" "$b2" 2>/dev/null
	wait "$b1" "$b2" 2>/dev/null
else
	fail "big objects: $BIG1 and $BIG2 are installed" "make deps installs llvm-14 and llvm-15"
fi

finish
