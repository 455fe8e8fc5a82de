#!/usr/bin/env bash
# alloctapd following process trees with the real BPF program: the proc_tree fixture makes a
# process every way a program does (fork, vfork + exec, posix_spawn of a static program,
# posix_spawn with jemalloc preloaded, a thread); each process writes the lines it expects,
# and the log must hold them exactly, per pid and thread, in launch mode and with
# --pid P --follow. Also: --no-follow, the process records of a binary trace, an exec
# followed in attach mode, job control through the tracer, --all picking up a new
# allocator, a process that cannot be ptraced, a preload that forwards free to the C library,
# --all counting every program whose calls may be missing, and ended processes leaving the set
# of processes seen.
source "$(dirname "$0")/lib.sh"
D=$ROOT/build/alloctapd
FX=$ROOT/build/fixtures
need_bpf "$D"
JE=/usr/lib/$MULTIARCH/libjemalloc.so.2
MD=/usr/lib/$MULTIARCH/libc_malloc_debug.so.0
[ -e "$JE" ] || { fail "jemalloc is installed" "libjemalloc2 is missing (make deps)"; finish; }

# tree_exact NAME DIR LOG: every process of the tree ended well and its lines are in LOG
# exactly; prints nothing on success.
tree_exact() {
	local dir=$2 log=$3
	[ -s "$dir/tree.pids" ] || { echo "the tree did not end well (no $dir/tree.pids)"; return 1; }
	[ "$(wc -l <"$dir/tree.pids")" -eq 5 ] || { echo "not 5 processes"; return 1; }
	cat "$dir"/*.exp >"$dir/all.exp"
	compare_bracketed "$dir/all.exp" "$log"
}
export -f tree_exact compare_bracketed

# first_is PID DIR LOG: the first line LOG has for PID is the first one it expects (nothing
# of the process was missed before its first call).
first_is() {
	[ "$(grep -m1 "^$1 " "$3")" = "$(head -n1 "$2/$1.exp")" ]
}
export -f first_is

# 1. Launch mode: the whole tree, each process exact from its first call.
mkdir "$T/launch"
"$D" -v -o "$T/launch.log" -- "$FX/proc_tree" "$T/launch" --jemalloc "$JE" 2>"$T/launch.err"
rc=$?
check "launch: the command's status (0)" test $rc -eq 0
check "launch: every process and thread of the tree matches exactly" \
	bash -c "T=$T; tree_exact launch $T/launch $T/launch.log"
pids=($(cat "$T/launch/tree.pids" 2>/dev/null))
check "launch: the root, its fork child and its vfork+exec child from their first call" \
	bash -c "first_is ${pids[0]} $T/launch $T/launch.log && first_is ${pids[1]} $T/launch $T/launch.log &&
		first_is ${pids[2]} $T/launch $T/launch.log"
check "launch: the static program's own malloc is probed when it executes" \
	grep -q "pid ${pids[3]} executed a new program: probing $FX/proc_tree_static\$" "$T/launch.err"
check "launch: the preloaded jemalloc is probed when its process executes" \
	grep -q "pid ${pids[4]} executed a new program: probing .*$JE\$" "$T/launch.err"
check "launch: 5 processes seen, nothing lost" \
	grep -qE '^alloctapd: [0-9]+ events written, 0 events lost, 5 processes seen$' "$T/launch.err"

# The trace ends when the last followed process does; the status is still the command's.
start=$(date +%s%N)
"$D" -o /dev/null -- sh -c 'sleep 0.6 & exit 5' 2>"$T/bg.err"
rc=$?
took=$((($(date +%s%N) - start) / 1000000))
check "launch: the command's status (5) though a child outlives it, whose end the trace waits for" \
	bash -c "test $rc -eq 5 && test $took -ge 600 && grep -q ' 2 processes seen\$' $T/bg.err"

# 2. The process records of a binary trace: a start for each child (parent: the root), an
# exec for each program executed, an exit with its status for each process.
mkdir "$T/bin"
"$D" -q -f binary -o "$T/bin.atz" -- "$FX/proc_tree" "$T/bin" --jemalloc "$JE"
make -s -C "$ROOT" build/bench/atz_tool >/dev/null 2>&1
"$ROOT/build/bench/atz_tool" decode "$T/bin.atz" "$T/bin.log"
check "binary: the decoded trace holds every process's lines exactly" \
	bash -c "T=$T; tree_exact bin $T/bin $T/bin.log"
lz4 -q -d -c "$T/bin.atz" | python3 "$ROOT/tests/atz_spec_reader.py" --processes >"$T/bin.procs"
bp=($(cat "$T/bin/tree.pids" 2>/dev/null))
{
	echo "START ${bp[1]} ${bp[0]}"
	echo "START ${bp[2]} ${bp[0]}"
	echo "START ${bp[3]} ${bp[0]}"
	echo "START ${bp[4]} ${bp[0]}"
} >"$T/bin.starts"
check "binary: a start record for each child, naming the root as its parent" \
	bash -c "grep '^START' $T/bin.procs | grep -v '^START ${bp[0]} ' | cut -d' ' -f1-3 | sort | cmp - <(sort $T/bin.starts)"
check "binary: exec records with the programs and their arguments" \
	bash -c "grep -q '^EXEC ${bp[0]} [0-9]* 0 0 $FX/proc_tree $FX/proc_tree $T/bin --jemalloc $JE\$' $T/bin.procs &&
		grep -q '^EXEC ${bp[2]} ${bp[0]} 0 0 $FX/proc_tree proc_tree $T/bin --leaf\$' $T/bin.procs &&
		grep -q '^EXEC ${bp[3]} ${bp[0]} 0 0 $FX/proc_tree_static proc_tree_static $T/bin\$' $T/bin.procs &&
		grep -q '^EXEC ${bp[4]} ${bp[0]} 0 0 $FX/proc_tree proc_tree $T/bin --leaf --no-extras\$' $T/bin.procs"
check "binary: an exit record with status 0 for each of the 5 processes" \
	bash -c "test \$(grep -c '^EXIT [0-9]* [0-9]* 0 0 \$' $T/bin.procs) -eq 5 &&
		grep -q '^EXIT ${bp[1]} ${bp[0]} 0 0 \$' $T/bin.procs"
check "binary: alloctap-munge reads a trace with process records" \
	bash -c "'$ROOT/build/alloctap-munge' $T/bin.atz >/dev/null"

# 3. --no-follow: the launched process alone.
mkdir "$T/nofollow"
"$D" -q --no-follow -o "$T/nofollow.log" -- "$FX/proc_tree" "$T/nofollow" --jemalloc "$JE"
rc=$?
np=($(cat "$T/nofollow/tree.pids" 2>/dev/null))
check "--no-follow: status 0, and lines of the root only" \
	bash -c "test $rc -eq 0 && test \"\$(cut -d' ' -f1 $T/nofollow.log | sort -u)\" = '${np[0]}'"
check "--no-follow: the root's own lines exactly" \
	bash -c "T=$T; compare_bracketed $T/nofollow/${np[0]}.exp $T/nofollow.log"

# 4. --pid P --follow: the same tree, made after the daemon attached.
mkdir "$T/attach"
"$FX/proc_tree" "$T/attach" --wait "$T/attach.ready" --jemalloc "$JE" &
fx=$!
if wait_for "$T/attach.ready" . 10; then
	"$D" -v --pid "$fx" --follow -o "$T/attach.log" 2>"$T/attach.err" &
	dm=$!
	wait_for "$T/attach.err" "alloctapd: recording" 10
	kill -USR1 "$fx"
	wait "$fx"
	wait "$dm"
	rc=$?
	check "--pid --follow: ends with the tree, status 0" test $rc -eq 0
	check "--pid --follow: every process and thread of the tree matches exactly" \
		bash -c "T=$T; tree_exact attach $T/attach $T/attach.log"
	check "--pid --follow: nothing of the root before the signal" \
		bash -c "test \"\$(grep -m1 '^$fx ' $T/attach.log)\" = \"\$(head -n1 $T/attach/$fx.exp)\""
	ap=($(cat "$T/attach/tree.pids" 2>/dev/null))
	check "--pid --follow: the fork and vfork+exec children from their first call" \
		bash -c "first_is ${ap[1]} $T/attach $T/attach.log && first_is ${ap[2]} $T/attach $T/attach.log"
else
	kill "$fx" 2>/dev/null
	fail "--pid --follow: fixture ready" "no ready file after 10 s"
fi

# 5. --pid P alone follows P's exec: a shell that then executes a program with jemalloc
# preloaded is traced with jemalloc's probes (the shell's own were libc's).
mkfifo "$T/go"
sh -c "read x < '$T/go'; LD_PRELOAD=$JE exec '$FX/alloc_sequence' '$T/exec.exp' --no-extras --threads 0" &
fx=$!
sleep 0.2
"$D" -v --pid "$fx" -o "$T/exec.log" 2>"$T/exec.err" &
dm=$!
wait_for "$T/exec.err" "alloctapd: recording" 10
echo go >"$T/go"
wait "$fx"
wait "$dm"
rc=$?
check "--pid, exec: status 0, jemalloc probed at the exec" \
	bash -c "test $rc -eq 0 && grep -q 'pid $fx executed a new program: probing .*$JE\$' $T/exec.err"
check "--pid, exec: the new program's sequence matches exactly" \
	bash -c "T=$T; compare_bracketed $T/exec.exp $T/exec.log"

# 6. Nothing a shell can see: bash with job control runs a traced loop of commands and
# reports no stopped job; a child stopped with SIGTSTP and continued with SIGCONT is seen so
# by its parent, and ends with its own status.
"$D" -q -o /dev/null -- bash -m -c 'for i in 1 2 3 4 5 6; do /bin/true; ls / >/dev/null; done;
	sleep 0.1 & wait; (exit 4); echo "done $?"' >"$T/shell.out" 2>&1
rc=$?
check "job control: a traced bash -m reports no stopped job" \
	bash -c "test $rc -eq 0 && ! grep -qi stopped $T/shell.out && grep -q '^done 4\$' $T/shell.out"
mkdir "$T/outer"
bash -m -c "'$D' -q -o /dev/null -- '$FX/proc_tree' '$T/outer' --jemalloc '$JE'; echo \"status \$?\"" \
	>"$T/outer.out" 2>&1
check "job control: a bash -m running the traced tree reports no stopped job" \
	bash -c "! grep -qi stopped $T/outer.out && grep -q '^status 0\$' $T/outer.out"
"$D" -q -o /dev/null -- /usr/bin/python3 -c '
import os, signal, time
pid = os.fork()
if pid == 0:
    os.setpgid(0, 0)
    time.sleep(0.5)
    os._exit(7)
os.setpgid(pid, pid)  # its own group, as a shell makes a job: SIGTSTP to an orphaned one is dropped
os.kill(pid, signal.SIGTSTP)
_, st = os.waitpid(pid, os.WUNTRACED)
print("stopped" if os.WIFSTOPPED(st) and os.WSTOPSIG(st) == signal.SIGTSTP else "not stopped")
time.sleep(0.3)
os.kill(pid, signal.SIGCONT)
_, st = os.waitpid(pid, os.WCONTINUED)
print("continued" if os.WIFCONTINUED(st) else "not continued")
_, st = os.waitpid(pid, 0)
print("exit", os.WEXITSTATUS(st))
' >"$T/tstp.out" 2>&1
check "job control: SIGTSTP stops a traced child, its parent sees it, SIGCONT resumes it" \
	bash -c "printf 'stopped\ncontinued\nexit 7\n' | cmp - $T/tstp.out"

# 7. --all: a program started later with an allocator not probed yet (a static program, a
# preloaded jemalloc) is probed when it executes.
"$D" -v --all -o "$T/all.log" 2>"$T/all.err" &
dm=$!
if wait_for "$T/all.err" "alloctapd: recording" 20; then
	mkdir "$T/all"
	"$FX/proc_tree_static" "$T/all" --wait "$T/all.ready" &
	fx=$!
	wait_for "$T/all.ready" . 10 && wait_for "$T/all.err" "probing $FX/proc_tree_static\$" 10
	kill -USR1 "$fx"
	wait "$fx"
	LD_PRELOAD=$JE "$FX/alloc_sequence" "$T/allje.exp" --no-extras --threads 0 \
		--wait "$T/allje.ready" &
	fx2=$!
	wait_for "$T/allje.ready" . 10 && wait_for "$T/all.err" "probing .*$JE\$" 10
	kill -USR1 "$fx2"
	wait "$fx2"
	# a preload that forwards free to the C library's: each free once, at its own probe
	LD_PRELOAD=$MD "$FX/alloc_sequence" "$T/allmd.exp" --threads 0 --wait "$T/allmd.ready" &
	fx4=$!
	wait_for "$T/allmd.ready" . 10 && wait_for "$T/all.err" "probing .*libc_malloc_debug.so.0\$" 10
	kill -USR1 "$fx4"
	wait "$fx4"
	# ... and the fork child of such a process, which the daemon hears of after its calls
	mkdir "$T/allmdt"
	LD_PRELOAD=$MD "$FX/proc_tree" "$T/allmdt" --wait "$T/allmdt.ready" >/dev/null &
	fx5=$!
	wait_for "$T/allmdt.ready" . 10 && wait_for "$T/all.err" "probing .*libc_malloc_debug.so.0\$" 10
	sleep 0.5
	kill -USR1 "$fx5"
	wait "$fx5"
	# a chrooted program with its own copy of the C library, as a container's
	CH=$T/chroot
	mkdir -p "$CH/tmp"
	cp "$FX/alloc_sequence" "$CH/"
	for lib in $(ldd "$FX/alloc_sequence" | grep -o '/[^ ]*'); do
		mkdir -p "$CH$(dirname "$lib")"
		cp -L "$lib" "$CH$lib"
	done
	chroot "$CH" /alloc_sequence /tmp/exp --threads 0 --wait /tmp/ready &
	fx3=$!
	wait_for "$CH/tmp/ready" . 10 && wait_for "$T/all.err" "probing $CH/.*libc.so.6\$" 10
	kill -USR1 "$(cat "$CH/tmp/ready")"
	wait "$fx3"
	sleep 0.5
	kill -INT "$dm"
	wait "$dm"
	check "--all: a chrooted program with its own C library is probed and traced exactly" \
		bash -c "T=$T; compare_bracketed $CH/tmp/exp $T/all.log"
	check "--all: the static program started later is probed and traced exactly" \
		bash -c "T=$T; compare_bracketed $T/all/$fx.exp $T/all.log"
	check "--all: the jemalloc program started later is probed and traced exactly" \
		bash -c "T=$T; compare_bracketed $T/allje.exp $T/all.log"
	check "--all: a free-forwarding preload started later: the sequence exactly, each free once" \
		bash -c "T=$T; compare_bracketed $T/allmd.exp $T/all.log"
	mdt=($(cat "$T/allmdt/tree.pids" 2>/dev/null))
	check "--all: the fork child of a free-forwarding preload's process: each free once" \
		bash -c "T=$T; compare_bracketed $T/allmdt/${mdt[1]}.exp $T/all.log"
	check "--all: the summary counts the programs picked up late" \
		grep -qE '^alloctapd: [0-9]+ processes and programs picked up late' "$T/all.err"
else
	kill "$dm" 2>/dev/null
	wait "$dm"
	fail "--all: attached" "$(cat "$T/all.err")"
fi

# 9. A tree of glibc processes (env) and a program with a preload that forwards free to the C
# library's (glibc's malloc debugging library): both files are probed for every process, but
# each call is recorded once, at the probe of its process's allocator.
"$D" -v -o "$T/md.log" -- env LD_PRELOAD="$MD" "$FX/alloc_sequence" "$T/md.exp" --threads 0 \
	2>"$T/md.err"
rc=$?
check "launch, free-forwarding preload in a glibc tree: status 0, both objects probed" \
	bash -c "test $rc -eq 0 && grep -q 'probing .*libc_malloc_debug.so.0\$' $T/md.err &&
		 grep -q 'probing .*/libc.so.6\$' $T/md.err"
check "launch, free-forwarding preload in a glibc tree: the sequence exactly, each free once" \
	bash -c "T=$T; compare_bracketed $T/md.exp $T/md.log"

# 10. --all: eight programs with jemalloc preloaded (not probed yet) start at once and make their
# calls at once: a program whose calls may be missing (its allocator probed after it started,
# for itself or another, or ended before it was looked at) is counted, none silently absent.
"$D" --all -o "$T/burst.log" 2>"$T/burst.err" &
dm=$!
if wait_for "$T/burst.err" "tracing every process" 20; then
	sleep 0.5
	for i in 1 2 3 4 5 6 7 8; do
		LD_PRELOAD=$JE "$FX/alloc_sequence" "$T/burst$i.exp" --no-extras --threads 0 &
	done
	wait $(jobs -p | grep -v "^$dm\$")
	sleep 0.5
	kill -INT "$dm"
	wait "$dm"
	missing=0
	for i in 1 2 3 4 5 6 7 8; do
		compare_bracketed "$T/burst$i.exp" "$T/burst.log" >/dev/null || missing=$((missing + 1))
	done
	counted=$(sed -n -e 's/^alloctapd: \([0-9]*\) processes and programs picked up late.*/\1/p' \
		-e 's/^alloctapd: \([0-9]*\) programs ended before their allocator.*/\1/p' \
		"$T/burst.err" | awk '{ n += $1 } END { print n + 0 }')
	check "--all, eight jemalloc programs at once: every one with calls missing is counted ($missing missing, $counted counted)" \
		test "$missing" -le "$counted"
else
	kill "$dm" 2>/dev/null
	wait "$dm"
	fail "--all burst: attached" "$(cat "$T/burst.err")"
fi

# 11. An ended process leaves the sets of processes seen: after 32 short children (seq, 30 true,
# sleep) have ended, SIGUSR1 writes a marker for the one live process (the shell) alone, and the
# summary still counts all 33.
"$D" -o "$T/gone.log" -- sh -c 'for i in $(seq 30); do /bin/true; done; sleep 1
	kill -USR1 $PPID; exec sleep 1' 2>"$T/gone.err"
check "ended processes: SIGUSR1 marks the live process alone" \
	bash -c "test \$(grep -c 'jemalloc_stats()' $T/gone.log) -eq 1"
check "ended processes: the summary counts every process seen (33)" \
	grep -qE '^alloctapd: [0-9]+ events written, 0 events lost, 33 processes seen$' "$T/gone.err"

# 8. A process another tracer holds (strace) cannot be ptraced: said once, followed late
# through process events, counted; its own lines still exact.
if command -v strace >/dev/null; then
	mkdir "$T/late"
	strace -f -o /dev/null "$FX/proc_tree" "$T/late" --wait "$T/late.ready" &
	st=$!
	if wait_for "$T/late.ready" . 10; then
		fx=$(cat "$T/late.ready")
		"$D" -v --pid "$fx" --follow -o "$T/late.log" 2>"$T/late.err" &
		dm=$!
		wait_for "$T/late.err" "alloctapd: recording" 10
		kill -USR1 "$fx"
		wait "$st"
		wait "$dm"
		rc=$?
		check "no ptrace: status 0, said once" \
			bash -c "test $rc -eq 0 && test \$(grep -c 'cannot follow pid $fx with ptrace' $T/late.err) -eq 1"
		check "no ptrace: the summary counts the processes picked up late" \
			grep -qE '^alloctapd: [1-9][0-9]* processes and programs picked up late' "$T/late.err"
		check "no ptrace: the root's own lines exactly" \
			bash -c "T=$T; compare_bracketed $T/late/$fx.exp $T/late.log"
	else
		kill "$st" 2>/dev/null
		fail "no ptrace: fixture ready" "no ready file after 10 s"
	fi
else
	fail "no ptrace" "strace is missing"
fi

# A program started with every signal blocked (the mask survives exec: spawn_masked, then env),
# whose C library comes from LD_LIBRARY_PATH (env's own is the system's), so that only what its
# loader maps names its allocator: it is held at the loader all the same (SIGSTOP stands in for
# the blocked hold signal), and its calls recorded.
LIBC=$(readlink -f /lib/$MULTIARCH/libc.so.6)
mkdir -p "$T/maskedlib"
cp "$LIBC" "$T/maskedlib/libc.so.6"
"$D" -o "$T/masked.log" -- "$FX/spawn_masked" /usr/bin/env LD_LIBRARY_PATH="$T/maskedlib" \
	"$FX/alloc_sequence" "$T/masked.exp" --threads 0 2>"$T/masked.err"
rc=$?
check "every signal blocked, libc from LD_LIBRARY_PATH: status 0, no process unprobed" \
	bash -c "test $rc -eq 0 && ! grep -q 'its calls are not recorded\|could not be probed' $T/masked.err"
check "every signal blocked, libc from LD_LIBRARY_PATH: the sequence exactly" \
	bash -c "T=$T; compare_bracketed $T/masked.exp $T/masked.log"

# --pid --follow of a process whose short threads (one after another) may start, run and end
# before their creator's clone event is read: when the process ends, the trace ends (a thread
# announced after its end is not waited for).
"$FX/thread_serial" 200 3000 &
ts=$!
timeout 20 "$D" -q --follow --pid $ts -o "$T/serial.log" 2>"$T/serial.err"
rc=$?
wait $ts
check "--pid --follow of 200 short threads: the trace ends with the process (exit $rc)" test $rc -eq 0
check "--pid --follow of 200 short threads: 200 mallocs" \
	test "$(grep -c " malloc(40)=" "$T/serial.log")" -eq 200
finish
