#!/usr/bin/env bash
# What following a process tree costs (needs root: real uprobes), five tables:
#  1. bystander: bench/pairloop (glibc) run outside the tree, ns per malloc+free pair, 1 thread
#     and the machine's cores (and 16 where it has them): bare (no trace), while
#     `alloctapd -q -o /dev/null -- sleep` follows its tree, and while the same runs with
#     --no-follow; each with its ratio to bare. Beside them, the tree's own cost: pairloop as
#     the traced command (`alloctapd -q -o /dev/null -f binary -- pairloop`);
#  1b. the tree's own pair (pairloop, the tree's last command) while N other processes of the
#     tree are alive (LIVE, sleeping), with links of each process's own and with
#     --shared-probes: a probe hit passes by the link of every live process;
#  2. a tree of PROCS processes (`sh -c 'for i in $(seq PROCS); do /bin/true; done'`) and of
#     one: untraced, followed (with --shared-probes too), and --no-follow; wall time, and the ms each traced way adds per
#     process over untraced (whole: over the PROCS processes; net: the PROCS tree less the
#     one-process tree, over the PROCS - 1 processes between them, which leaves the daemon's
#     start and end out);
#  2b. a process that creates SPAWN threads one batch of 32 after another, each making one
#     malloc+free pair (build/bench/thread_spawn): us per thread untraced, followed (every
#     thread of a followed process is a tracee whose creation stops until the daemon takes it
#     in) and --no-follow (its threads are not tracees), and what each traced way adds;
#  3. the end: how long alloctapd takes to exit after the last process of a PROCS-process tree
#     exits (its last command writes a clock stamp; the script reads the clock when alloctapd
#     returns), and after SIGINT sent once the same tree's loop is done (its last command then
#     sleeps);
#  4. the kernel's price of a uprobe_multi link, pid set or not (build/bench/link_cost).
# Rounds are interleaved: each round runs every way once in turn, so the machine's drift moves
# them together; medians over the rounds. A tracer is ready when it holds BPF links and their
# count has stood still for 0.3 s.
# Settings (environment): ROUNDS (bystander and end rounds, default 5), PAIRS per thread
# (default 100000), THREADS (the bystander's thread counts, a list, default "1 nproc", with 16
# between where nproc > 16), TREE_ROUNDS (default 9), PROCS (default 200), LINK_ROUNDS
# (default 5), LIVE (the live processes of table 1b, default "0 100"), SPAWN (table 2b's threads,
# default 20000), BASELINE (another alloctapd: table 2 then has a way "baseline", that daemon
# following the same tree in turn with the others in each round, so that two builds compare in
# one run).
set -u
. "$(dirname "$0")/lib.sh"
pairloop_setup follow
ROUNDS=${ROUNDS:-5}
TREE_ROUNDS=${TREE_ROUNDS:-9}
PROCS=${PROCS:-200}
LINK_ROUNDS=${LINK_ROUNDS:-5}
LIVE=${LIVE:-0 100}
SPAWN=${SPAWN:-20000}
need_built "follow bench" "$PL" build/bench/link_cost build/bench/thread_spawn "$D"
TREE_WAYS="untraced followed shared no-follow"
if [ -n "${BASELINE:-}" ]; then
	need_built "follow bench" "$BASELINE"
	TREE_WAYS="untraced baseline followed shared no-follow"
fi
if [ -z "${THREADS:-}" ]; then
	cores=$(nproc)
	[ "$cores" -gt 64 ] && cores=64 # pairloop's most
	THREADS="1"
	[ "$cores" -gt 16 ] && THREADS="$THREADS 16"
	[ "$cores" -gt 1 ] && THREADS="$THREADS $cores"
fi
TRACER=""

# Whatever this script started ends with it (a timeout's TERM included): the tracer's tree
# first (so that the tracer ends), then every job.
cleanup() {
	local p
	[ -n "$TRACER" ] && pkill -KILL -P "$TRACER" 2>/dev/null
	for p in $(jobs -p); do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -s "$T/sleeper.pid" ] && kill "$(cat "$T/sleeper.pid")" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

# now_ns: the wall clock in ns (bash's own, no process started).
now_ns() { local t=${EPOCHREALTIME/./}; echo "${t}000"; }

# link_count PID: how many BPF links PID holds.
link_count() {
	local fd n=0
	for fd in /proc/"$1"/fd/*; do
		[ "$(readlink "$fd" 2>/dev/null)" = "anon_inode:bpf_link" ] && n=$((n + 1))
	done
	echo "$n"
}

# start_tracer ARGS...: starts alloctapd -q -o /dev/null ARGS -- sleep 600 in the background
# (TRACER, its pid) and returns when it is ready: it holds links and their count has not
# changed for 0.3 s. Returns 1 when it ended first or was not ready within 15 s.
start_tracer() {
	local n last=-1 still=0
	"$D" -q -o /dev/null "$@" -- sleep 600 2>"$T/tracer.err" &
	TRACER=$!
	for _ in $(seq 150); do
		kill -0 "$TRACER" 2>/dev/null || break
		n=$(link_count "$TRACER")
		if [ "$n" -gt 0 ] && [ "$n" -eq "$last" ]; then
			still=$((still + 1))
			[ "$still" -ge 3 ] && return 0
		else
			still=0
		fi
		last=$n
		sleep 0.1
	done
	echo "follow bench: alloctapd $* did not get ready:" >&2
	cat "$T/tracer.err" >&2
	stop_tracer
	return 1
}

# stop_tracer: ends the tracer's sleep, and so the tracer, and waits for it.
stop_tracer() {
	pkill -TERM -P "$TRACER" 2>/dev/null
	wait "$TRACER" 2>/dev/null
	TRACER=""
}

# sample TABLE: counts a measurement of TABLE about to begin, in $T/TABLE.samples, and in
# $T/TABLE.foreign when another tracer runs beside it.
sample() {
	echo >>"$T/$1.samples"
	[ "$(count_other_tracers)" -gt 0 ] && echo >>"$T/$1.foreign"
	return 0
}

# foreign_note TABLE WHAT: a note saying how many of TABLE's measurements (WHAT) began beside
# another tracer; nothing when none did.
foreign_note() {
	local n=0
	[ -f "$T/$1.foreign" ] && n=$(wc -l <"$T/$1.foreign")
	[ "$n" -gt 0 ] && echo "(note: $n of the $(wc -l <"$T/$1.samples") $2 began while another" \
		"tracer (alloctapd, bpftrace) ran: a following one traps them too)"
	return 0
}

# loop_ns THREADS: ns per pair of an untraced pairloop of PAIRS pairs a thread.
loop_ns() {
	sample by
	"$PL" "$PAIRS" "$1" | ns_of
}

# ratio VALUE BASE: VALUE / BASE as "N.NNx", "-" when either is missing.
ratio() {
	awk -v v="$1" -v b="$2" 'BEGIN { if (v == "" || b == "" || b <= 0) print "-";
		else printf "%.2fx\n", v / b }'
}

# ---- 1. the bystander ----
echo "follow: a bystander's malloc+free pair (bench/pairloop, glibc, outside the traced tree)," \
	"$PAIRS pairs per thread, median of $ROUNDS rounds, ns; $(nproc) cores"
rm -f "$T"/by.*
for _ in $(seq "$ROUNDS"); do
	for t in $THREADS; do loop_ns "$t" >>"$T/by.bare.$t"; done
	for way in follow no-follow; do
		args=()
		[ "$way" = no-follow ] && args=(--no-follow)
		start_tracer "${args[@]}" || continue
		for t in $THREADS; do loop_ns "$t" >>"$T/by.$way.$t"; done
		stop_tracer
	done
	for t in $THREADS; do
		"$D" -q -o /dev/null -f binary -- "$PL" "$PAIRS" "$t" | ns_of >>"$T/by.tree.$t"
	done
done
printf '%7s %9s %11s %8s %11s %8s %13s %8s\n' threads bare following /bare no-follow /bare \
	"traced tree" /bare
for t in $THREADS; do
	b=$(median <"$T/by.bare.$t")
	f=$(median <"$T/by.follow.$t" 2>/dev/null)
	n=$(median <"$T/by.no-follow.$t" 2>/dev/null)
	c=$(median <"$T/by.tree.$t" 2>/dev/null)
	printf '%7s %9s %11s %8s %11s %8s %13s %8s\n' "$t" "$b" "${f:--}" "$(ratio "$f" "$b")" \
		"${n:--}" "$(ratio "$n" "$b")" "${c:--}" "$(ratio "$c" "$b")"
done
echo "(following: while alloctapd -q -o /dev/null -- sleep follows its tree; no-follow: the same"
echo " with --no-follow; traced tree: pairloop as the traced command, -f binary to /dev/null)"
foreign_note by "bystander loops"

# ---- 1b. the traced tree's own pair, with other processes of the tree alive ----
# live_ns N ARGS...: pairloop's ns per pair, traced as the last command of a tree that keeps N
# other processes (sleep) alive meanwhile, alloctapd run with ARGS.
live_ns() {
	local n=$1
	shift
	"$D" -q -o /dev/null -f binary "$@" -- sh -c "for i in \$(seq $n); do sleep 30 & done
		sleep 0.5; '$PL' $PAIRS 1; kill \$(jobs -p) 2>/dev/null" | ns_of
}

echo
echo "follow: the traced tree's own malloc+free pair (pairloop, 1 thread, -f binary) while N other" \
	"processes of the tree are alive, median of $ROUNDS rounds, ns"
rm -f "$T"/live.*
for _ in $(seq "$ROUNDS"); do
	for n in $LIVE; do
		live_ns "$n" >>"$T/live.own.$n"
		live_ns "$n" --shared-probes >>"$T/live.shared.$n"
	done
done
printf '%7s %16s %16s %8s\n' alive "own probes" "--shared-probes" ratio
for n in $LIVE; do
	o=$(median <"$T/live.own.$n")
	sh=$(median <"$T/live.shared.$n")
	printf '%7s %16s %16s %8s\n' "$n" "$o" "$sh" "$(ratio "$o" "$sh")"
done
echo "(own probes: each process of the tree has its links, and a probe hit passes by every"
echo " live process's link; --shared-probes: one link per file, for every process on the host)"

# ---- 2. a tree of PROCS processes ----
# tree_cmd N: the shell loop that starts N processes (/bin/true), as one argument.
tree_cmd() { echo "for i in \$(seq $1); do /bin/true; done"; }

# tree_ms WAY N: the wall time in ms of the N-process tree run the way WAY.
tree_ms() {
	local t0 t1
	sample tree
	t0=$(now_ns)
	case $1 in
	untraced) sh -c "$(tree_cmd "$2")" ;;
	followed) "$D" -q -o /dev/null -- sh -c "$(tree_cmd "$2")" ;;
	baseline) "$BASELINE" -q -o /dev/null -- sh -c "$(tree_cmd "$2")" ;;
	no-follow) "$D" -q -o /dev/null --no-follow -- sh -c "$(tree_cmd "$2")" ;;
	shared) "$D" -q -o /dev/null --shared-probes -- sh -c "$(tree_cmd "$2")" ;;
	esac
	t1=$(now_ns)
	awk -v d=$((t1 - t0)) 'BEGIN { printf "%.1f\n", d / 1e6 }'
}

echo
echo "follow: a tree of $PROCS processes (sh -c 'for i in \$(seq $PROCS); do /bin/true; done')" \
	"and of 1, wall ms, median of $TREE_ROUNDS rounds"
rm -f "$T"/tree.*
for _ in $(seq "$TREE_ROUNDS"); do
	for way in $TREE_WAYS; do
		for n in 1 "$PROCS"; do tree_ms "$way" "$n" >>"$T/tree.$way.$n"; done
	done
done
printf '%-10s %10s %10s %14s %14s\n' way "1 proc" "$PROCS procs" "added/proc" "net/proc"
u1=$(median <"$T/tree.untraced.1")
un=$(median <"$T/tree.untraced.$PROCS")
for way in $TREE_WAYS; do
	w1=$(median <"$T/tree.$way.1")
	wn=$(median <"$T/tree.$way.$PROCS")
	awk -v way="$way" -v w1="$w1" -v wn="$wn" -v u1="$u1" -v un="$un" -v p="$PROCS" 'BEGIN {
		printf "%-10s %10.1f %10.1f %14.3f %14.3f\n", way, w1, wn, (wn - un) / p,
			((wn - w1) - (un - u1)) / (p - 1) }'
done
echo "(added/proc: the tree's wall time less the untraced one's, over $PROCS; net/proc: the same"
echo " less the one-process tree's, over $((PROCS - 1)): the daemon's start and end left out;"
echo " shared: followed with --shared-probes${BASELINE:+; baseline: followed by $BASELINE})"
foreign_note tree trees

# ---- 2b. threads created by a traced process ----
# spawn_us WAY: thread_spawn's us per thread, run the way WAY.
spawn_us() {
	local out
	sample spawn
	case $1 in
	untraced) out=$(build/bench/thread_spawn "$SPAWN") ;;
	followed) out=$("$D" -q -o /dev/null -- build/bench/thread_spawn "$SPAWN") ;;
	no-follow) out=$("$D" -q -o /dev/null --no-follow -- build/bench/thread_spawn "$SPAWN") ;;
	esac
	echo "${out#us_per_thread }"
}

echo
echo "follow: a process creating $SPAWN threads (build/bench/thread_spawn, 32 at a time, each" \
	"one malloc+free), us per thread, median of $TREE_ROUNDS rounds"
rm -f "$T"/spawn.*
for _ in $(seq "$TREE_ROUNDS"); do
	for way in untraced followed no-follow; do spawn_us "$way" >>"$T/spawn.$way"; done
done
printf '%-10s %12s %12s
' way "us/thread" "added"
su=$(median <"$T/spawn.untraced")
for way in untraced followed no-follow; do
	w=$(median <"$T/spawn.$way")
	awk -v way="$way" -v w="$w" -v u="$su" 'BEGIN {
		if (w == "" || u == "") printf "%-10s %12s %12s\n", way, "-", "-"
		else printf "%-10s %12.2f %12.2f\n", way, w, w - u }'
done
echo "(followed: every thread is a tracee, its creation two stops the daemon ends; no-follow:"
echo " the threads are not tracees; both trace every call)"
foreign_note spawn "thread runs"

# ---- 3. the end ----
echo
echo "follow: how long alloctapd takes to end, a followed tree of $PROCS processes, median of" \
	"$ROUNDS rounds, ms"
rm -f "$T"/end.*
for _ in $(seq "$ROUNDS"); do
	# after the tree's last process: its last command writes the stamp, then the shell exits
	rm -f "$T/stamp"
	sample end
	"$D" -q -o /dev/null -- sh -c "$(tree_cmd "$PROCS"); date +%s%N >$T/stamp"
	t1=$(now_ns)
	[ -s "$T/stamp" ] && echo $(((t1 - $(cat "$T/stamp")) / 1000)) >>"$T/end.exit"
	# after SIGINT, sent once the loop is done; the tree's last command (sleep) then ends
	rm -f "$T/stamp" "$T/sleeper.pid"
	sample end
	"$D" -q -o /dev/null -- sh -c "$(tree_cmd "$PROCS"); echo \$\$ >$T/sleeper.pid;
		date +%s%N >$T/stamp; exec sleep 600" &
	dm=$!
	for _ in $(seq 600); do
		[ -s "$T/stamp" ] && break
		kill -0 "$dm" 2>/dev/null || break
		sleep 0.05
	done
	(sleep 20 && kill -KILL "$dm" 2>/dev/null) &
	watchdog=$!
	t0=$(now_ns)
	kill -INT "$dm"
	wait "$dm"
	t1=$(now_ns)
	kill "$watchdog" 2>/dev/null
	wait "$watchdog" 2>/dev/null
	echo $(((t1 - t0) / 1000)) >>"$T/end.int"
	[ -s "$T/sleeper.pid" ] && kill "$(cat "$T/sleeper.pid")" 2>/dev/null
	rm -f "$T/sleeper.pid"
done
printf '%-36s %10s %10s\n' event median worst
for e in exit int; do
	label="the tree's last process exits"
	[ $e = int ] && label="SIGINT (the tree still running)"
	awk -v l="$label" -v m="$(median <"$T/end.$e")" -v w="$(sort -g "$T/end.$e" | tail -n 1)" \
		'BEGIN { printf "%-36s %10.1f %10.1f\n", l, m / 1000, w / 1000 }'
done
foreign_note end runs

# ---- 4. a link's price ----
echo
build/bench/link_cost "$LINK_ROUNDS" || echo "follow bench: link_cost failed"
