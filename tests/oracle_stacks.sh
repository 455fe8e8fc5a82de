#!/usr/bin/env bash
# The stack oracle (build/oracle/stack_oracle: libdw's unwinder under ptrace) on the unwinding
# fixtures, against what each fixture is known to do and against gdb:
#  - per fixture, the lines whose caller (PC1) is one of the fixture's own functions, counted
#    per function and caller, are exactly the fixture's calls (gdb names each caller, in a run
#    with the same layout: ASLR is off in both);
#  - every line is complete, but the recursion's deepest: 128 PCs, truncated; the other
#    lines of the recursion have exactly the frames the recursion depth gives;
#  - for one known call of unwind_chain and of unwind_dlopen (a library opened at run time),
#    gdb's backtrace at that call has the oracle's PCs, frame by frame, and names the
#    fixture's chain of functions;
#  - family_calls (every function, a thread, a forked child not followed) and alloc_stress (four
#    threads at once): the lines per function are exactly the calls the fixture makes (counted
#    by itself for alloc_stress);
#  - a program run through env (an exec) has the lines of a direct run after env's own;
#  - the command's exit status, --out, and the errors.
#  - another tracer's uprobe on malloc coming and going while the oracle runs: it fails, saying so.
# alloctapd or another tracer probing the same C library at the same time (its uprobes on
# malloc swallow the oracle's stops) makes the oracle fail, naming the cause: one already
# there at the start, or gone before the end; one that comes and stays past the end goes
# unnoticed. Do not run the two side by side.
source "$(dirname "$0")/lib.sh"
O=$ROOT/build/oracle/stack_oracle
FX=$ROOT/build/fixtures
need_built "$O" "$ROOT/build/fixtures/alloc_stress" "$FX/alloc_loop" "$FX/refctr_uprobe" "$FX/unwind_chain" "$FX/unwind_recursion" \
	"$FX/unwind_thread" "$FX/unwind_static" "$FX/unwind_dlopen"
if ! command -v gdb >/dev/null; then
	fail "gdb is installed" "gdb names the fixtures' frames (apt-get install gdb)"
	finish
fi
need_root "the oracle traces its command with ptrace"

# gdb_batch PROGRAM ARGS... < COMMANDS: gdb on PROGRAM, without a shell, ASLR off (gdb's
# default), running COMMANDS; its output on stdout.
gdb_batch() {
	cat >"$T/gdb.cmd"
	gdb -nx -batch -ex 'set pagination off' -ex 'set confirm off' \
		-ex 'set startup-with-shell off' -ex 'set breakpoint pending on' \
		-x "$T/gdb.cmd" --args "$@" 2>&1
}

# callers STOP PROGRAM ARGS...: "FUNC CALLER" for each line of $T/lines whose PC1 gdb puts in a
# function, CALLER that function's name; gdb stops PROGRAM at STOP (a function called once its
# code is all mapped) and names every distinct PC1.
callers() {
	local stop=$1 pc
	shift
	{
		echo "break $stop"
		echo "run"
		for pc in $(awk '{ print $4 }' "$T/lines" | sort -u); do
			echo "info symbol $pc"
		done
		echo "kill"
	} | gdb_batch "$@" >"$T/symbols"
	# gdb answers "NAME in section ...", "NAME + N in section ..." or "No symbol matches ..."
	paste -d' ' <(awk '{ print $4 }' "$T/lines" | sort -u) \
		<(grep -e ' in section ' -e '^No symbol matches' "$T/symbols" |
			awk '/^No symbol/ { print "?"; next } { print $1 }') >"$T/pc_names"
	awk 'NR == FNR { name[$1] = $2; next } { print $1, ($4 in name ? name[$4] : "?") }' \
		"$T/pc_names" "$T/lines"
}

# oracle FIXTURE ARGS...: runs the oracle on the fixture; its lines in $T/lines. A point that
# it exits 0 with every line well formed.
oracle() {
	local name="$*"
	run_cmd "$O" --out "$T/lines" -- "$FX/$1" "${@:2}"
	if [ "$rc" -ne 0 ] || [ -s "$T/err" ]; then
		fail_run "$name: the oracle and the fixture exit 0, silently" "exit $rc"
		: >"$T/lines"
		return
	fi
	local bad
	bad=$(grep -cvE '^(malloc|calloc|realloc|reallocarray|memalign|posix_memalign|aligned_alloc|valloc|pvalloc) (complete|truncated|incomplete)( 0x[0-9a-f]+)+$' "$T/lines")
	check_eq "$name: every line is FUNC FLAGS PC0 PC1 ..." "$bad" 0
}

# check_callers NAME STOP FIXTURE ARGS... -- "COUNT FUNC CALLER"...: the lines whose caller is
# one of the fixture's own functions (those named in the expectations, plus any other one the
# fixture defines in the pattern FIXTURE_FUNCS) are exactly these.
check_callers() {
	local name=$1 stop=$2 args=() want
	shift 2
	while [ "$1" != "--" ]; do
		args+=("$1")
		shift
	done
	shift
	want=$(printf '%s\n' "$@" | sort)
	callers "$stop" "$FX/${args[0]}" "${args[@]:1}" |
		awk -v own="$FIXTURE_FUNCS" '$2 ~ ("^(" own ")$")' | sort | uniq -c |
		awk '{ print $1, $2, $3 }' | sort >"$T/got_callers"
	check_eq "$name: the calls from the fixture's own functions, per function and caller" \
		"$(cat "$T/got_callers")" "$want"
}

# all_complete NAME: every line of $T/lines is complete.
all_complete() {
	check_eq "$1: every line is complete" \
		"$(awk '$2 != "complete"' "$T/lines" | head -n 3)" ""
}

# --- unwind_chain: malloc, calloc, realloc per round, through a library --------------------------
oracle unwind_chain 5
cp "$T/err" "$T/chain.oracle.err"
FIXTURE_FUNCS="chain_leaf|chain_inner|chain_middle|chain_outer|main"
check_callers "unwind_chain 5" exit unwind_chain 5 -- \
	"5 malloc chain_leaf" "5 calloc chain_leaf" "5 realloc chain_leaf"
check_eq "unwind_chain 5: no other allocation call" "$(wc -l <"$T/lines")" 15
all_complete "unwind_chain 5"
cp "$T/lines" "$T/chain.lines"

# --- unwind_recursion: one malloc at the bottom and at every 8th level -----------------------
oracle unwind_recursion 200
FIXTURE_FUNCS="allocate|recurse|main"
check_callers "unwind_recursion 200" exit unwind_recursion 200 -- "26 malloc allocate"
# allocate at level k (a multiple of 8) has malloc, allocate, recurse x (201 - k), main,
# __libc_start_call_main, __libc_start_main_impl, _start: 207 - k frames; at level 0 (a tail
# call from recurse(0)) 206
check_eq "unwind_recursion 200: levels 0 to 72 truncated at 128 PCs" \
	"$(awk '$2 == "truncated" { print NF - 2 }' "$T/lines" | sort -n | uniq -c | awk '{ print $1, $2 }')" \
	"10 128"
check_eq "unwind_recursion 200: levels 80 to 200 complete with 207 - level PCs" \
	"$(awk '$2 == "complete" { print NF - 2 }' "$T/lines" | sort -n | tr '\n' ' ')" \
	"$(for ((k = 200; k >= 80; k -= 8)); do printf '%d ' $((207 - k)); done)"
check_eq "unwind_recursion 200: no line incomplete" "$(grep -c ' incomplete ' "$T/lines")" 0

oracle unwind_recursion 110
all_complete "unwind_recursion 110"
# level 0 calls allocate as a tail call: malloc, allocate, recurse x 110 and the 4 frames
# under it, 116; level k of the others 117 - k
check_eq "unwind_recursion 110: the frames of every level" \
	"$(awk '{ print NF - 2 }' "$T/lines" | tr '\n' ' ')" \
	"116 $(for ((k = 8; k <= 104; k += 8)); do printf '%d ' $((117 - k)); done)"

# --- unwind_thread: four mallocs in each thread and in main ---------------------------------
oracle unwind_thread 3
FIXTURE_FUNCS="work|thread_main|main"
check_callers "unwind_thread 3" exit unwind_thread 3 -- "16 malloc work"
all_complete "unwind_thread 3"
check_eq "unwind_thread 3: 12 of the mallocs end at the thread start (clone3)" \
	"$(awk '$1 == "malloc"' "$T/lines" | grep -vc ' 0x5[0-9a-f]* *$')" 12

# --- unwind_static: malloc in the executable -------------------------------------------------
oracle unwind_static 6
FIXTURE_FUNCS="leaf|middle|main"
check_callers "unwind_static 6" exit unwind_static 6 -- "6 malloc leaf"
all_complete "unwind_static 6"

# --- unwind_dlopen: malloc and realloc in a library opened at run time -------------------------
oracle unwind_dlopen 4
cp "$T/err" "$T/dlopen.oracle.err"
FIXTURE_FUNCS="dlopen_inner|dlopen_middle|dlopen_outer|main"
check_callers "unwind_dlopen 4" dlclose unwind_dlopen 4 -- \
	"4 malloc dlopen_inner" "4 realloc dlopen_inner"
all_complete "unwind_dlopen 4"
cp "$T/lines" "$T/dlopen.lines"

# --- family_calls: every function, in main, in a thread and in a forked child -----------------
# every_function runs in main, in a thread, in a forked child (not followed: its breakpoints
# are lifted) and in main again: 3 times followed. Per run: malloc(24) and realloc(NULL, 72)
# (which gcc makes a malloc), calloc, 2 realloc, memalign and aligned_alloc (one address in
# glibc: memalign), 2 posix_memalign, valloc, pvalloc, 3 reallocarray (the C library's
# reallocarray jumps to realloc: one call).
FAMILY=$ROOT/build/oracle/family_calls
if [ -x "$FAMILY" ]; then
	run_cmd "$O" --out "$T/lines" -- "$FAMILY"
	check_eq "family_calls: exits 0, silently" "$rc $(cat "$T/err")" "0 "
	FIXTURE_FUNCS="every_function|thread_main|main"
	FX=$ROOT/build/oracle check_callers "family_calls" exit family_calls -- \
		"6 malloc every_function" "3 calloc every_function" "6 realloc every_function" \
		"6 memalign every_function" "6 posix_memalign every_function" \
		"3 valloc every_function" "3 pvalloc every_function" \
		"9 reallocarray every_function"
	all_complete "family_calls"
else
	fail "family_calls is built" "$FAMILY is missing (make tests)"
fi

# --- alloc_stress: threads allocating at once (the others stopped while one steps) ------------
# The fixture counts its own calls. glibc's pthread_create adds one calloc per thread (its
# dynamic thread vector, from the dynamic loader).
STRESS=$ROOT/build/fixtures/alloc_stress
"$O" --out "$T/stress.lines" -- "$STRESS" "$T/stress.counts" "$T/stress.ready" --threads 4 \
	--iterations 2000 >"$T/stress.out" 2>"$T/stress.err" &
ORACLE_PID=$!
if wait_for "$T/stress.ready" . 30; then
	kill -USR1 "$(cat "$T/stress.ready")"
	wait_for "$T/stress.counts" '^threads' 120 && kill -USR1 "$(cat "$T/stress.ready")"
fi
wait "$ORACLE_PID"
rc=$?
check_eq "alloc_stress: exits 0, silently" "$rc $(head -c 300 "$T/stress.err")" "0 "
if [ -s "$T/stress.counts" ]; then
	want=$(awk '$1 == "threads" { t = $2 } $1 ~ /^(malloc|calloc|realloc|posix_memalign)$/ {
		n[$1] = $2 } END { n["calloc"] += t; for (f in n) print n[f], f }' \
		"$T/stress.counts" | sort -k2)
	check_eq "alloc_stress: the lines per function are the fixture's counts" \
		"$(awk '{ print $1 }' "$T/stress.lines" | sort | uniq -c | awk '{ print $1, $2 }' |
			sort -k2)" "$want"
	check_eq "alloc_stress: every line is complete" \
		"$(awk '$2 != "complete"' "$T/stress.lines" | head -n 3)" ""
else
	fail "alloc_stress: the fixture wrote its counts" "$(head -c 300 "$T/stress.err")"
fi

# --- exec: the program run through env --------------------------------------------------------
run_cmd "$O" -- env "$FX/unwind_chain" 5
check_eq "env unwind_chain 5: exits 0" "$rc" 0
check_eq "env unwind_chain 5: after env's own lines, those of unwind_chain 5 run directly" \
	"$(tail -n 15 "$T/out" | md5sum)" "$(md5sum <"$T/chain.lines")" "$(head -c 500 "$T/err")"

# --- gdb's backtrace at one known call ------------------------------------------------------
# gdb_frames FIRST FUNC PROGRAM ARGS...: at the first call of FUNC after FIRST is entered, gdb's
# frames (inlined ones aside), past main and the entry: "FRAMES pc..." and "NAMES name...".
gdb_frames() {
	local first=$1 func=$2
	shift 2
	gdb_batch "$@" <<EOF | tee "$T/gdb.all" | grep -E '^(FRAMES|NAMES) '
set backtrace past-main on
set backtrace past-entry on
break $first
run
delete
break $func
continue
python
f = gdb.newest_frame()
pcs, names = [], []
while f is not None:
    if f.type() != gdb.INLINE_FRAME:
        pcs.append("0x%x" % f.pc())
        names.append(f.name() or "?")
    f = f.older()
print("FRAMES " + " ".join(pcs))
print("NAMES " + " ".join(names))
end
kill
EOF
}

# check_gdb NAME LINES FUNC FIRST CHAIN PROGRAM ARGS...: gdb's frames at the first FUNC call
# under FIRST are a line of LINES (FUNC complete PCs) COUNT times, and gdb names them CHAIN (the
# first name only has to contain FUNC: the C library's own name for it).
check_gdb() {
	local name=$1 lines=$2 func=$3 first=$4 count=$5 chain=$6 frames names
	shift 6
	gdb_frames "$first" "$func" "$@" >"$T/gdb.frames"
	frames=$(sed -n 's/^FRAMES //p' "$T/gdb.frames")
	names=$(sed -n 's/^NAMES //p' "$T/gdb.frames")
	if [ -z "$frames" ]; then
		# gdb's breakpoint at the function's entry never stops while another tracer's
		# uprobe is there: the kernel takes the trap (the oracle says so when it refuses)
		fail "$name: gdb stops at the call" "gdb never stopped at $func; its last lines:" \
			"$(grep -v '^$' "$T/gdb.all" | tail -n 4)" \
			"another tracer's uprobe at $func's entry would take gdb's stop (the kernel" \
			"handles its trap); the oracle's run of $(basename "$1") said:" \
			"$(head -c 500 "${lines%.lines}.oracle.err" 2>/dev/null)"
		return
	fi
	check_eq "$name: the oracle's line is gdb's backtrace, $count times" \
		"$(grep -cxF "$func complete $frames" "$lines")" "$count" \
		"$(head -c 500 "${lines%.lines}.oracle.err" 2>/dev/null)"
	check_eq "$name: gdb names the frames" \
		"$(echo "$names" | cut -d' ' -f2-)" "$chain"
	case ${names%% *} in
	*"$func"*) ok "$name: frame 0 is $func (${names%% *})" ;;
	*) fail "$name: frame 0 is $func" "gdb names it ${names%% *}" ;;
	esac
}

check_gdb "unwind_chain 5, calloc" "$T/chain.lines" calloc chain_leaf 5 \
	"chain_leaf chain_inner chain_middle chain_outer main __libc_start_call_main __libc_start_main_impl _start" \
	"$FX/unwind_chain" 5
check_gdb "unwind_dlopen 4, realloc" "$T/dlopen.lines" realloc dlopen_inner 4 \
	"dlopen_inner dlopen_middle dlopen_outer main __libc_start_call_main __libc_start_main_impl _start" \
	"$FX/unwind_dlopen" 4

# --- the command's status, the output, the errors -------------------------------------------
run_cmd "$O" -- "$FX/unwind_chain" 0
check_eq "unwind_chain 0 exits 1 (its own status), nothing printed" "$rc $(wc -c <"$T/out")" "1 0"
run_cmd "$O" -- "$FX/unwind_chain" 2
check_eq "without --out the lines go to stdout" "$(wc -l <"$T/out")" 6 "$(head -c 500 "$T/err")"
run_cmd "$O" -- /bin/sh -c 'kill -TERM $$'
check_eq "a command killed by SIGTERM: 143" "$rc" 143 "$(head -c 500 "$T/err")"
check_err "a missing command: exit 1, the reason" 1 \
	"stack_oracle: cannot run $T/none: No such file or directory" "$O" -- "$T/none"
check_err_match "no command: usage error" 2 "no command given" "$O"
check_err_match "an unwritable --out: exit 1, the file named" 1 \
	"cannot open $T/no/such: No such file or directory" "$O" --out "$T/no/such" -- /bin/true
# --- beside another tracer ---------------------------------------------------------------------
# Another tracer's uprobe on malloc (refctr_uprobe, without a counter, for the traced process)
# comes while the oracle runs and goes before the end: the kernel took the oracle's stops
# meanwhile, so the oracle must fail and say why, not print a shorter listing as if whole.
name="another tracer's uprobe on malloc while the oracle runs: exit 1, the reason"
rm -f "$T/late.ready"
"$O" --out "$T/late.out" -- "$FX/alloc_loop" 3000000 >/dev/null 2>"$T/late.err" &
op=$!
# the uprobe goes in once the oracle stops at malloc: its first lines are out
child=
for _ in $(seq 400); do
	child=$(pgrep -P $op) && [ -s "$T/late.out" ] && break
	sleep 0.025
done
"$FX/refctr_uprobe" "$T/late.ready" 0 "$child" 2>"$T/late.fx.err" &
up=$!
wait_for "$T/late.ready" . 10
planted=$?
sleep 0.2
kill $up 2>/dev/null
wait $up 2>/dev/null
wait $op
rc=$?
if [ $planted -ne 0 ]; then
	fail "$name" "the fixture could not plant its uprobe in pid $child:" "$(cat "$T/late.fx.err")"
else
	check_eq "$name" "$rc $(cat "$T/late.err")" "1 stack_oracle: $FX/alloc_loop: a breakpoint at an allocation function's entry was removed behind the oracle's back: another tracer's uprobe came there while the program ran (the kernel took its stops) and went (it put the original byte back), so calls were missed; the oracle cannot run beside that tracer"
fi
finish
