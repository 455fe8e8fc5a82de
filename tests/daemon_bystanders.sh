#!/usr/bin/env bash
# A followed tree's probes cost the processes outside it nothing, and leave nothing behind:
#  1. a bystander (bench/pairloop, 100,000 malloc+free pairs) runs during a following trace of
#     another command: with the kernel's BPF statistics on, the daemon's own entry programs ran
#     no more often than the tree's calls (as its trace shows them) plus a small slack, and the
#     bystander is nowhere in the trace; no timing is measured;
#  2. after SIGINT of the daemon, and after kill -9 of it, none of the BPF links it held while
#     it traced a tree of three processes exists any more;
#  3. a fork storm (fork_storm: 500 children forked at once, five known calls each) is traced
#     exactly, call for call, against the LD_PRELOAD oracle (tests/oracle);
#  4. with --pid alone, a child the traced process makes by fork (a subshell) is not traced: the
#     breakpoint it inherited at malloc's site is taken out of its memory (the file's own byte is
#     back there), while the traced process keeps its own;
#  5. the daemon holds links for every traced process: its soft limit of open descriptors is
#     raised to the hard one, and a launched command still gets the limit it was given;
#  6. following a tree of three processes, every uprobe link the daemon holds is bound to one
#     of them (fdinfo's pid), and each has its own; with --shared-probes, every one is for
#     every process (pid 0);
#  7. a trace written to a pipe whose reader goes away (alloctapd --pid P | head -n 1): the
#     daemon says nothing, detaches (the process runs on, not stopped, not traced), ends killed
#     by SIGPIPE (141) as cat does, and none of the links it held remains; with a COMMAND, the
#     daemon ends so at once and the command runs on, untraced.
# The daemon's programs and links are found through its own descriptors (/proc/PID/fdinfo), so
# another tracer's on the same machine are never counted (bpftool's "pids" would name them too,
# but only a bpftool built with skeletons has it, and Debian 12's is not); bpftool gives the
# programs' names and the links that exist.
source "$(dirname "$0")/lib.sh"
D=$ROOT/build/alloctapd
FX=$ROOT/build/fixtures
O=$ROOT/build/oracle
PL=$ROOT/build/bench/pairloop
need_bpf "$D"
need_built "$FX/alloc_sequence" "$FX/fork_storm"
need_make build/bench/pairloop
for tool in bpftool python3; do
	command -v "$tool" >/dev/null || { fail "$tool is installed" "make deps installs it"; finish; }
done

# Everything started here is killed at exit, and the BPF statistics setting is given back.
STARTED=()
STATS_WAS=$(cat /proc/sys/kernel/bpf_stats_enabled)
cleanup() {
	local p
	for p in "${STARTED[@]}"; do
		kill -9 "$p" 2>/dev/null
	done
	# a shell of case 1 left waiting on its fifo (opened read-write: never blocks)
	[ -p "$T/by.go" ] && { echo go >&3; } 3<>"$T/by.go"
	echo "$STATS_WAS" >/proc/sys/kernel/bpf_stats_enabled
	rm -rf "$T"
}
trap cleanup EXIT

# forget PID: PID has ended (and was reaped): cleanup must not kill a process that reuses it.
forget() {
	local p keep=()
	for p in "${STARTED[@]}"; do
		[ "$p" = "$1" ] || keep+=("$p")
	done
	STARTED=("${keep[@]}")
}

# fds_of PID KIND: the descriptors of PID whose file is anon_inode:KIND (bpf-prog, bpf_link).
fds_of() {
	local fd
	for fd in /proc/"$1"/fd/*; do
		[ "$(readlink "$fd" 2>/dev/null)" = "anon_inode:$2" ] && echo "${fd##*/}"
	done
}

# fdinfo_field PID FD FIELD: FIELD's value in the fdinfo of PID's descriptor FD.
fdinfo_field() {
	sed -n "s/^$3:[[:space:]]*//p" /proc/"$1"/fdinfo/"$2" 2>/dev/null
}

# prog_table PID: one line "ID NAME RUN_CNT" per BPF program PID holds (each once).
prog_table() {
	local fd id name
	for fd in $(fds_of "$1" bpf-prog); do
		id=$(fdinfo_field "$1" "$fd" prog_id)
		name=$(bpftool prog show id "$id" 2>/dev/null | sed -n 's/.* name \([A-Za-z_0-9]*\) .*/\1/p')
		echo "$id ${name:-?} $(fdinfo_field "$1" "$fd" run_cnt)"
	done | sort -un -k1,1
}

# link_ids PID: the ids of the BPF links PID holds, one a line.
link_ids() {
	local fd
	for fd in $(fds_of "$1" bpf_link); do
		fdinfo_field "$1" "$fd" link_id
	done | sort -un
}

# links_left IDS...: those of the link ids IDS that still exist on the machine, in numeric
# order, on one line.
links_left() {
	local all
	all=$(bpftool link show --json 2>/dev/null | grep -o '{"id":[0-9]*' | cut -d: -f2)
	comm -12 <(printf '%s\n' "$@" | sort) <(sort <<<"$all") | sort -n | paste -sd' ' -
}

# wait_gone PID SECONDS: waits until PID no longer exists; 1 on timeout.
wait_gone() {
	local i
	for ((i = 0; i < $2 * 20; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.05
	done
	return 1
}

export -f compare_bracketed

# ---- 1. A bystander pays nothing --------------------------------------------------------------
# The tree: sh runs alloc_sequence (its known calls) to the end, then waits on a fifo, which
# keeps the trace on while the bystander runs its 200,000 calls. The run counts are read then,
# before the tree's last calls, so the tree's calls in the final trace bound them from above.
# BYSTANDER_SLACK: the entry programs' runs that write no line (calls inside another call of the
# family, the shell's calls before its window opened).
PAIRS=100000
BYSTANDER_SLACK=1000
ENTRIES='^(malloc_entry|calloc_entry|realloc_entry|free_entry|alloc_entry)$'
echo 1 >/proc/sys/kernel/bpf_stats_enabled
mkfifo "$T/by.go"
"$D" -v -o "$T/by.log" -- \
	sh -c "'$FX/alloc_sequence' '$T/by.exp' --threads 0 && read x <'$T/by.go'" 2>"$T/by.err" &
dm=$!
STARTED+=("$dm")
if wait_for "$T/by.exp" . 20 && wait_for "$T/by.err" "alloctapd: recording" 10; then
	"$PL" "$PAIRS" >"$T/by.pl" 2>&1 &
	bp=$!
	STARTED+=("$bp")
	wait "$bp"
	bprc=$?
	forget "$bp"
	prog_table "$dm" >"$T/by.progs"
	timeout 10 sh -c "echo go >'$T/by.go'"
	wait_gone "$dm" 30 || kill -9 "$dm"
	wait "$dm"
	rc=$?
	forget "$dm"
	runs=$(awk -v re="$ENTRIES" '$2 ~ re { n += $3 } END { print n + 0 }' "$T/by.progs")
	nprogs=$(grep -cE " (malloc|calloc|realloc|free|alloc)_entry " "$T/by.progs")
	calls=$(wc -l <"$T/by.log")
	seq_calls=$(wc -l <"$T/by.exp")
	check "bystander: the bystander made its $PAIRS pairs, the traced tree ended with status 0" \
		bash -c "test $bprc -eq 0 && grep -q '^pairs=$PAIRS ' '$T/by.pl' && test $rc -eq 0"
	check "bystander: the tree's sequence is in the trace exactly" \
		bash -c "T=$T; compare_bracketed '$T/by.exp' '$T/by.log'"
	check_eq "bystander: the bystander (pid $bp) has no line in the trace" \
		"$(grep -c "^$bp " "$T/by.log")" 0
	if [ "$nprogs" -gt 0 ] && [ "$runs" -ge "$seq_calls" ]; then
		ok "bystander: the daemon's entry programs are counted ($nprogs programs, $runs runs >= the sequence's $seq_calls calls)"
	else
		fail "bystander: the daemon's entry programs are counted" \
			"$nprogs entry programs, $runs runs; the sequence alone made $seq_calls calls" \
			"(is kernel.bpf_stats_enabled turned off by another run?) programs (id name run_cnt):" \
			"$(cat "$T/by.progs")"
	fi
	if [ "$runs" -le $((calls + BYSTANDER_SLACK)) ]; then
		ok "bystander: entry programs ran $runs times, at most the tree's $calls calls + $BYSTANDER_SLACK"
	else
		fail "bystander: entry programs ran at most the tree's calls + $BYSTANDER_SLACK" \
			"entry programs ran $runs times; the tree made $calls calls (its trace);" \
			"the bystander made $((2 * PAIRS)) calls; programs (id name run_cnt):" \
			"$(cat "$T/by.progs")"
	fi
else
	fail "bystander: the traced tree made its calls" "$(head -n 20 "$T/by.err")"
	timeout 2 sh -c "echo go >'$T/by.go'"
	kill -9 "$dm" 2>/dev/null
	wait "$dm"
	forget "$dm"
fi
echo "$STATS_WAS" >/proc/sys/kernel/bpf_stats_enabled

# ---- 2. No link left behind -------------------------------------------------------------------
# links_case SIGNAL: the daemon follows a tree of three processes (sh, two alloc_sequence waiting
# for SIGUSR1) and is sent SIGNAL; every link it held while tracing must be gone within 5 s.
links_case() {
	local sig=$1 p=$T/links.$1 dm ids left i fx=()
	"$D" -v -o /dev/null -- sh -c "'$FX/alloc_sequence' '$p.exp1' --threads 0 --wait '$p.ready1' &
		'$FX/alloc_sequence' '$p.exp2' --threads 0 --wait '$p.ready2'; wait" 2>"$p.err" &
	dm=$!
	STARTED+=("$dm")
	if ! wait_for "$p.ready1" . 20 || ! wait_for "$p.ready2" . 20 ||
		! wait_for "$p.err" "alloctapd: recording" 10; then
		fail "SIG$sig: the traced tree started" "$(head -n 20 "$p.err")"
		cat "$p.ready1" "$p.ready2" 2>/dev/null | xargs -r kill -USR1 2>/dev/null
		kill -9 "$dm" 2>/dev/null
		wait "$dm"
		forget "$dm"
		return
	fi
	fx=("$(cat "$p.ready1")" "$(cat "$p.ready2")")
	STARTED+=("${fx[@]}")
	mapfile -t ids < <(link_ids "$dm")
	left=$(links_left "${ids[@]}")
	check_eq "SIG$sig: bpftool lists the ${#ids[@]} links the daemon holds" "$left" "${ids[*]}"
	kill -"$sig" "$dm"
	if ! wait_gone "$dm" 10; then
		fail "SIG$sig: the daemon ends" "still running 10 s after SIG$sig"
		kill -9 "$dm"
	fi
	wait "$dm"
	rc=$?
	forget "$dm"
	[ "$sig" = INT ] && check_eq "SIGINT: the daemon exits 0" "$rc" 0 "$(head -n 20 "$p.err")"
	if [ ${#ids[@]} -eq 0 ]; then
		fail "SIG$sig: no link left behind" "the daemon held no BPF link while it traced"
	else
		for ((i = 0; i < 100; i++)); do
			left=$(links_left "${ids[@]}")
			[ -z "$left" ] && break
			sleep 0.05
		done
		if [ -z "$left" ]; then
			ok "SIG$sig: none of the ${#ids[@]} links the daemon held remains"
		else
			fail "SIG$sig: no link left behind" \
				"5 s after the daemon's end, $(wc -w <<<"$left") of its ${#ids[@]} links remain: ids" \
				"$left"
		fi
	fi
	kill -USR1 "${fx[@]}" 2>/dev/null
	wait_gone "${fx[0]}" 5 && forget "${fx[0]}"
	wait_gone "${fx[1]}" 5 && forget "${fx[1]}"
}
links_case INT
links_case KILL 2>/dev/null # bash's "Killed" line for the daemon's job

# ---- 3. A fork storm, call for call -----------------------------------------------------------
STORM=500
for f in preload_tracer.so preload_exec; do
	[ -e "$O/$f" ] || fail "fork storm: the oracle can run" "$O/$f is missing (make tests)"
done
LIBC=$(readlink -f "$(ldd "$FX/fork_storm" | awk '$1 == "libc.so.6" { print $3 }')")
if [ -e "$O/preload_exec" ] && [ -f "$LIBC" ]; then
	timeout -s KILL 60 "$D" --lib "$LIBC" -o "$T/storm.traced" -- "$O/preload_exec" \
		"$O/preload_tracer.so" "$T/storm.oracle" "$FX/fork_storm" "$STORM" \
		>"$T/storm.out" 2>"$T/storm.err" </dev/null
	rc=$?
	check_eq "fork storm: alloctapd and fork_storm $STORM exit 0" "$rc" 0 "$(head -n 20 "$T/storm.err")"
	if [ -s "$T/storm.oracle" ] && ! grep -q '^preload_tracer:' "$T/storm.err"; then
		ok "fork storm: the oracle wrote lines, and no call of its own reached the C library"
	else
		fail "fork storm: the oracle can run" "the LD_PRELOAD tracer wrote no line or said:" \
			"$(grep '^preload_tracer:' "$T/storm.err" | head -n 5)"
	fi
	check_eq "fork storm: every process seen, nothing lost" \
		"$(grep -E '^alloctapd: [0-9]+ events written, [0-9]+ events lost, [0-9]+ processes seen$' "$T/storm.err")" \
		"alloctapd: $((5 * STORM + 2)) events written, 0 events lost, $((STORM + 1)) processes seen"
	check_eq "fork storm: $((STORM + 1)) processes in the trace" \
		"$(cut -d' ' -f1 "$T/storm.traced" | sort -u | wc -l)" $((STORM + 1))
	python3 "$ROOT/tests/oracle/compare_threads.py" --name "fork storm" "$T/storm.traced" \
		"$T/storm.oracle" >"$T/storm.cmp" 2>&1
	rc=$?
	echo "# $(head -n1 "$T/storm.cmp")"
	if [ $rc -eq 0 ]; then
		ok "fork storm: every process's calls identical in the trace and the oracle's log"
	else
		fail "fork storm: every process's calls identical in the trace and the oracle's log" \
			"$(head -n 40 "$T/storm.cmp")"
	fi
else
	[ -f "$LIBC" ] || fail "fork storm: the C library found" "ldd $FX/fork_storm names no libc.so.6"
fi
# ---- 4. --pid alone: a child made by fork keeps no breakpoint -------------------------------
# byte_at PID FILE OFFSET: the byte (two hex digits) at OFFSET of FILE in PID's executable
# mapping of it, read from /proc/PID/mem; empty when PID does not map that part.
byte_at() {
	python3 - "$@" <<'PY'
import os, sys
pid, path, off = sys.argv[1], os.path.realpath(sys.argv[2]), int(sys.argv[3])
st = os.stat(path)
for line in open(f"/proc/{pid}/maps"):
    f = line.split()
    if len(f) < 6 or "x" not in f[1] or int(f[4]) != st.st_ino:
        continue
    start, end = (int(x, 16) for x in f[0].split("-"))
    base = int(f[2], 16)
    if base <= off < base + end - start:
        with open(f"/proc/{pid}/mem", "rb") as m:
            m.seek(start + off - base)
            print(m.read(1).hex())
        break
PY
}
fork_case() {
	local p=$T/fork sh dm child lib site want i got parent hex delta
	mkfifo "$p.1" "$p.2"
	sh -c "read x <'$p.1'; (read y <'$p.2'); exit 0" &
	sh=$!
	STARTED+=("$sh")
	"$D" -v -o /dev/null --pid "$sh" 2>"$p.err" &
	dm=$!
	STARTED+=("$dm")
	if ! wait_for "$p.err" "alloctapd: recording" 10; then
		fail "--pid, a forked child: the daemon attached" "$(head -n 20 "$p.err")"
		return
	fi
	read -r lib hex delta < <(sed -n \
		's/^alloctapd: probe malloc: \(.*\)+0x\([0-9a-f]*\), .* at +\([0-9]*\) .*/\1 \2 \3/p' "$p.err")
	site=$((16#${hex:-0} + ${delta:-0}))
	want=$(od -An -tx1 -j "$site" -N1 "$lib" | tr -d ' ')
	echo go >"$p.1" # the shell forks its subshell, which waits on $p.2
	for ((i = 0; i < 100; i++)); do
		child=$(pgrep -P "$sh" | head -n 1)
		[ -n "$child" ] && got=$(byte_at "$child" "$lib" "$site") && [ "$got" = "$want" ] && break
		sleep 0.05
	done
	parent=$(byte_at "$sh" "$lib" "$site")
	check_eq "--pid, a forked child: the traced shell has its breakpoint at malloc ($lib+$site)" \
		"$parent" cc
	check_eq "--pid, a forked child (pid ${child:-none}): malloc's own byte is back at its site" \
		"${got:-none}" "$want" "$(grep -i "breakpoints\|fork" "$p.err" | head -n 5)"
	echo go >"$p.2"
	wait "$sh"
	forget "$sh"
	kill -INT "$dm"
	wait "$dm"
	check_eq "--pid, a forked child: the daemon exits 0 and counts it" "$?:$(grep -c \
		'^alloctapd: 1 untraced processes made by fork had their inherited breakpoints taken out$' \
		"$p.err")" 0:1 "$(tail -n 5 "$p.err")"
	forget "$dm"
}
fork_case

# ---- 5. Descriptors: the daemon's limit raised, the command's kept -------------------------
nofile_case() {
	local p=$T/nofile hard got daemon
	hard=$(ulimit -Hn)
	[ "$hard" = unlimited ] && hard=$(cat /proc/sys/fs/nr_open)
	if [ "$hard" -le 1000 ]; then
		fail "descriptors: a hard limit above 1000 to test with" "ulimit -Hn is $hard"
		return
	fi
	mkfifo "$p.go"
	got=$(ulimit -Sn 1000
		"$D" -q -o /dev/null -- sh -c "ulimit -Sn; read x <'$p.go'" 2>"$p.err" &
		daemon=$!
		for ((i = 0; i < 100; i++)); do
			grep -q "^Max open files" /proc/$daemon/limits 2>/dev/null && [ -n "$(pgrep -P $daemon)" ] && break
			sleep 0.05
		done
		awk '/^Max open files/ { print "daemon " $4 }' /proc/$daemon/limits
		echo go >"$p.go"
		wait $daemon)
	check_eq "descriptors: the daemon's soft limit is the hard one, the command keeps 1000" \
		"$(echo "$got" | sort | tr '\n' ' ')" "1000 daemon $hard " "$(cat "$p.err")"
}
nofile_case

# ---- 6. Whose links: the tree's processes, or every process with --shared-probes ------------
# link_pids DAEMON: the pid of each uprobe_multi link DAEMON holds, sorted and unique.
link_pids() {
	local fd
	for fd in $(fds_of "$1" bpf_link); do
		grep -q '^link_type:[[:space:]]*uprobe_multi' /proc/"$1"/fdinfo/"$fd" 2>/dev/null &&
			fdinfo_field "$1" "$fd" pid
	done | sort -nu | tr '\n' ' '
}
pids_case() {
	local name=$1 p=$T/pids.$2 dm sh got want
	shift 2
	"$D" -v -o /dev/null "$@" -- sh -c "'$FX/alloc_sequence' '$p.exp1' --threads 0 --wait '$p.ready1' &
		'$FX/alloc_sequence' '$p.exp2' --threads 0 --wait '$p.ready2'; wait" 2>"$p.err" &
	dm=$!
	STARTED+=("$dm")
	if ! wait_for "$p.ready1" . 20 || ! wait_for "$p.ready2" . 20; then
		fail "$name: the traced tree started" "$(head -n 20 "$p.err")"
	else
		sh=$(pgrep -P "$dm" | head -n 1)
		got=$(link_pids "$dm")
		if [ "$#" -eq 0 ]; then
			want=$(printf '%s\n' "$sh" "$(cat "$p.ready1")" "$(cat "$p.ready2")" | sort -nu | tr '\n' ' ')
		else
			want="0 "
		fi
		check_eq "$name: the pids of the daemon's uprobe links" "$got" "$want"
		kill -USR1 "$(cat "$p.ready1")" "$(cat "$p.ready2")"
	fi
	wait "$dm"
	forget "$dm"
}
pids_case "following" follow
pids_case "--shared-probes" shared --shared-probes

# ---- 7. A reader that goes away ---------------------------------------------------------------
# The daemon attaches to alloc_loop (malloc+free in a loop) and writes its trace to stdout, read
# by head -n 1 once the daemon holds its links (their ids kept): head takes one line and goes.
pipe_case() {
	local p=$T/pipe lp dm i ids=() left state
	"$FX/alloc_loop" 4000000000 >/dev/null &
	lp=$!
	STARTED+=("$lp")
	{
		"$D" --pid "$lp" 2>"$p.err" &
		echo $! >"$p.pid"
		wait $!
		exit $?
	} | {
		for ((i = 0; i < 400; i++)); do
			[ -s "$p.pid" ] && [ -n "$(link_ids "$(cat "$p.pid")")" ] && break
			sleep 0.05
		done
		link_ids "$(cat "$p.pid")" >"$p.ids"
		head -n 1 >"$p.out"
	}
	local status=("${PIPESTATUS[@]}")
	dm=$(cat "$p.pid")
	mapfile -t ids <"$p.ids"
	check_eq "| head -n 1: the daemon said nothing and ended killed by SIGPIPE (141)" \
		"${status[*]}:$(wc -c <"$p.err")" "141 0:0" "$(head -n 5 "$p.err")"
	check "| head -n 1: the line head took is an event of the process" \
		grep -qE "^$lp $lp (malloc\\([0-9]+\\)=0x[0-9a-f]+|free\\(0x[0-9a-f]+\\))\$" "$p.out"
	state=$(awk '{ print $3 }' /proc/"$lp"/stat 2>/dev/null)
	case $state in R | S) state=running ;; esac
	check_eq "| head -n 1: the traced process runs on, neither stopped nor traced" \
		"$state:$(awk '/^TracerPid:/ { print $2 }' /proc/"$lp"/status 2>/dev/null)" "running:0"
	if [ ${#ids[@]} -eq 0 ]; then
		fail "| head -n 1: no link left behind" "the daemon held no BPF link while it traced"
	else
		for ((i = 0; i < 100; i++)); do
			left=$(links_left "${ids[@]}")
			[ -z "$left" ] && break
			sleep 0.05
		done
		check_eq "| head -n 1: none of the ${#ids[@]} links the daemon ($dm) held remains" \
			"$left" ""
	fi
	kill -9 "$lp" 2>/dev/null
	wait "$lp" 2>/dev/null
	forget "$lp"
}
pipe_case
# The same with a COMMAND: the daemon ends at once, the command runs on untraced.
command_pipe_case() {
	local p=$T/cpipe cp state
	"$D" -- "$FX/alloc_loop" 4000000000 2>"$p.err" | head -n 1 >"$p.out"
	local status=("${PIPESTATUS[@]}")
	cp=$(cut -d' ' -f1 "$p.out")
	[ -n "$cp" ] && STARTED+=("$cp")
	check_eq "a COMMAND's trace | head -n 1: the daemon said nothing, killed by SIGPIPE (141)" \
		"${status[*]}:$(wc -c <"$p.err")" "141 0:0" "$(head -n 5 "$p.err")"
	state=$(awk '{ print $3 }' /proc/"${cp:-0}"/stat 2>/dev/null)
	case $state in R | S) state=running ;; esac
	check_eq "a COMMAND's trace | head -n 1: the command runs on, untraced" \
		"$state:$(awk '/^TracerPid:/ { print $2 }' /proc/"${cp:-0}"/status 2>/dev/null)" "running:0"
	[ -n "$cp" ] && kill -9 "$cp" 2>/dev/null && forget "$cp"
}
command_pipe_case

finish
