#!/usr/bin/env bash
# Where an event's cost goes when many threads are traced (needs root): bench/pairloop with
# THREADS threads (the first argument, or PROFILE_THREADS, default nproc), glibc, traced by
# alloctapd --floor and by alloctapd -f binary (attached with --pid, as in scaling_bench.sh).
# One table, CPU ns per traced call (an "event": a malloc or a free; 2 per pair, the same count
# for both), split between the traced program's own code, the uprobe traps, the BPF programs'
# code (the event rings' reservation and writing among it), the BPF helpers and maps, the
# kernel's ring buffer and wakeups (ring_wake's wakeups, and locks), the daemon and the rest of
# the machine:
#  - perf record -a -g on cpu-clock (a sample every PERIOD_NS of CPU time, so samples count
#    time) while the loop runs, its samples sorted by command and symbol (when perf runs);
#  - perf stat -a: context switches and migrations per event (when perf runs);
#  - the kernel's BPF statistics (kernel.bpf_stats_enabled, run_time_ns and run_cnt of each
#    program from /proc/PID/fdinfo, named through /proc/kallsyms), in a run of their own
#    since counting costs time too;
#  - the daemon's CPU time from wait4, from when it records to its end.
# Settings (environment): PAIRS per thread (default 100000), PERIOD_NS (default 500000),
# PERF (the perf command, default perf), OUTDIR (keeps perf's data and reports there).
set -u
. "$(dirname "$0")/lib.sh"
pairloop_setup scaling-profile
PAIRS=${PAIRS:-100000}
THREADS=${1:-${PROFILE_THREADS:-$(nproc)}}
PERIOD_NS=${PERIOD_NS:-500000}
PERF=${PERF:-perf}
KEEP=${OUTDIR:-$T}
mkdir -p "$KEEP"
EVENTS=$((2 * PAIRS * THREADS))
need_built "scaling profile" "$PL" build/bench/rusage_of "$D"

tool_pid=""
cleanup() {
	local p
	for p in $(jobs -p); do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -w /proc/sys/kernel/bpf_stats_enabled ] && bpf_stats 0
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

have_perf=0
if "$PERF" stat -a -e cpu-clock -o /dev/null -- true >/dev/null 2>&1 &&
	"$PERF" record -a -e cpu-clock -o "$T/probe.data" -- true >/dev/null 2>&1; then
	have_perf=1
else
	echo "scaling profile: perf is absent or does not run here ($PERF): no split of the time" \
		"by symbol, no context switches; the BPF statistics and the daemon's CPU time remain"
fi

# The hooks attach_run calls: a tool starts when the daemon records and stops when it ends.
start_sampler() { # DPID: the programs' counters every 0.2 s, the last whole reading kept
	local fds="" fd
	for fd in /proc/"$1"/fd/*; do
		[ "$(readlink "$fd" 2>/dev/null)" = "anon_inode:bpf-prog" ] &&
			fds="$fds /proc/$1/fdinfo/${fd##*/}"
	done
	prog_counts "$1" | awk '{print $1}' >"$T/prog.names"
	(
		# shellcheck disable=SC2086
		while kill -0 "$1" 2>/dev/null; do
			awk '/^run_time_ns:/ {t = $2} /^run_cnt:/ {print $2, t}' $fds >"$T/progs.now" 2>/dev/null
			[ "$(wc -l <"$T/progs.now")" -eq "$(wc -l <"$T/prog.names")" ] &&
				paste -d' ' "$T/prog.names" "$T/progs.now" >"$T/progs"
			sleep 0.2
		done
	) &
	tool_pid=$!
}
start_stat() {
	"$PERF" stat -a -x, -e context-switches,cpu-migrations -o "$T/stat.$mode" 2>/dev/null &
	tool_pid=$!
	sleep 0.3
}
start_record() { # DPID
	ls /proc/"$1"/task >"$T/daemon.tids"
	"$PERF" record -a -g -e cpu-clock -c "$PERIOD_NS" -o "$KEEP/perf.$mode.data" \
		>"$T/record.log" 2>&1 &
	tool_pid=$!
	sleep 1
}
stop_tool() {
	kill -INT "$tool_pid" 2>/dev/null
	wait "$tool_pid" 2>/dev/null
}
# shellcheck disable=SC2034 # read by attach_run
ON_END=stop_tool

# res_field FILE NAME: the figure NAME of an attach_run result file.
res_field() { awk -v n="$2" '{for (i = 1; i < NF; i += 2) if ($i == n) print $(i + 1)}' "$1"; }

# perf_split MODE LOOP: "CATEGORY samples" lines from the recorded run of MODE: the loop's
# (process LOOP) by kind of symbol, the daemon's (its threads as start_record listed them) and
# the machine's (other tracers and loops of the same names apart).
perf_split() {
	local data=$KEEP/perf.$1.data
	"$PERF" report -i "$data" --stdio --no-children -n --pid "$2" --sort comm,dso,sym -g none \
		--percent-limit 0 2>/dev/null >"$KEEP/report.$1.txt"
	"$PERF" report -i "$data" --stdio --children --pid "$2" --sort sym -g caller,0.5,callee \
		--percent-limit 2 2>/dev/null >"$KEEP/callers.$1.txt"
	"$PERF" report -i "$data" --stdio --no-children -n --sort pid -g none 2>/dev/null >"$T/all.txt"
	awk '/^#/ || NF < 6 { next }
	{
		n = $2; kind = $5; sym = $6
		if (kind == "[.]") c = "user"
		else if (sym ~ /queued_spin_lock_slowpath/) c = "lockwait"
		else if (sym ~ /ringbuf|spin_lock|spin_unlock|irq_work/) c = "ring"
		else if (sym ~ /wake_up|ttwu|select_task_rq|enqueue_task/) c = "ring"
		else if (sym ~ /^bpf_prog_/) c = "progs"
		else if (sym ~ /bpf|map_lookup|percpu|htab|array_map|task_storage/) c = "helpers"
		else c = "traps"
		s[c] += n; threads += n
	}
	END { for (c in s) print c, s[c]; print "threads", threads + 0 }' "$KEEP/report.$1.txt"
	# the lines read "PERCENT SAMPLES TID:COMMAND"
	awk 'FILENAME == ARGV[1] { daemon[$1] = 1; next }
		/^#/ || NF < 3 { next }
		{ tid = $3; sub(/:.*/, "", tid); comm = $3; sub(/^[0-9]*:/, "", comm) }
		tid in daemon { d += $2 }
		comm ~ /^swapper/ { next }
		comm ~ /^perf/ { perf += $2; next }
		{ all += $2 }
		END { print "daemon", d + 0; print "perf", perf + 0; print "busy", all + 0 }' \
		"$T/daemon.tids" "$T/all.txt"
}

declare -A v
other_tracers
for mode in floor binary; do
	[ $mode = floor ] && args=(--floor -o /dev/null) || args=(-f binary -o "$T/trace.atz")
	# 1. the programs' run time, counted by the kernel
	bpf_stats 1
	rm -f "$T/progs"
	ON_RECORDING=start_sampler attach_run "$T/$mode.stats" "$PAIRS" "$THREADS" "${args[@]}" || exit 1
	bpf_stats 0
	cp "$T/progs" "$KEEP/progs.$mode" 2>/dev/null
	# per call: all programs' time over the entry programs' runs (one per call), so that a
	# reading taken before the end counts as well as a whole one
	v[$mode,bpf]=$(awk '{t += $3} $1 ~ /_entry$/ {n += $2} END {if (n > 0) printf "%.0f", t / n}' \
		"$T/progs" 2>/dev/null)
	for p in malloc_entry alloc_return free_entry; do
		v[$mode,$p]=$(awk -v n="$p" '$1 == n && $2 > 0 {printf "%.0f", $3 / $2}' "$T/progs" 2>/dev/null)
	done
	# 2. the timed run, under perf stat when it runs
	hook=""
	[ $have_perf = 1 ] && hook=start_stat
	ON_RECORDING=$hook attach_run "$T/$mode.timed" "$PAIRS" "$THREADS" "${args[@]}" || exit 1
	v[$mode,ns]=$(res_field "$T/$mode.timed.res" ns)
	v[$mode,lost]=$(res_field "$T/$mode.timed.res" lost)
	v[$mode,dcpu]=$(awk -v e="$EVENTS" '{printf "%.0f", $8 / e}' "$T/$mode.timed.res")
	if [ $have_perf = 1 ]; then
		cp "$T/stat.$mode" "$KEEP/stat.$mode.csv" 2>/dev/null
		v[$mode,cs]=$(awk -F, -v e="$EVENTS" '$3 ~ /context-switches/ {printf "%.3f", $1 / e}' \
			"$T/stat.$mode")
		v[$mode,mig]=$(awk -F, -v e="$EVENTS" '$3 ~ /cpu-migrations/ {printf "%.4f", $1 / e}' \
			"$T/stat.$mode")
		# 3. where the time goes, by symbol
		ON_RECORDING=start_record attach_run "$T/$mode.rec" "$PAIRS" "$THREADS" "${args[@]}" || exit 1
		for c in user traps progs helpers ring lockwait daemon perf busy threads; do v[$mode,$c]=0; done
		while read -r c n; do
			v[$mode,$c]=$(awk -v n="$n" -v p="$PERIOD_NS" -v e="$EVENTS" 'BEGIN {printf "%.0f", n * p / e}')
		done < <(perf_split $mode "$AR_LOOP_PID")
		v[$mode,other]=$((v[$mode,busy] - v[$mode,threads] - v[$mode,daemon]))
	fi
	rm -f "$T"/trace.*
done
bare=$(for _ in 1 2 3; do "$PL" "$PAIRS" "$THREADS" | ns_of; done | median)

# line LABEL KEY: one row, floor, binary and their difference ("-" where not measured).
line() {
	awk -v l="$1" -v a="${v[floor,$2]:-}" -v b="${v[binary,$2]:-}" 'BEGIN {
		d = (a != "" && b != "") ? sprintf("%.0f", b - a) : "-"
		if (a ~ /\./ || b ~ /\./) d = (a != "" && b != "") ? sprintf("%.3f", b - a) : "-"
		printf "%-58s %9s %9s %9s\n", l, (a != "" ? a : "-"), (b != "" ? b : "-"), d }'
}
v[floor,half]=$(awk -v n="${v[floor,ns]}" 'BEGIN {printf "%.0f", n / 2}')
v[binary,half]=$(awk -v n="${v[binary,ns]}" 'BEGIN {printf "%.0f", n / 2}')
echo "scaling profile: $THREADS threads, $PAIRS pairs per thread, glibc, $(nproc) cores;" \
	"ns per traced call (malloc or free: $EVENTS per run); bare loop $bare ns per pair"
printf '%-58s %9s %9s %9s\n' "" floor binary "+binary"
line "wall: ns per pair / 2 (a thread's time per call)" half
line "traced threads' CPU per call (perf samples), of which:" threads
line "  the program (loop, malloc, free, uretprobe trampoline)" user
line "  uprobe traps (kernel, outside BPF)" traps
line "  BPF programs' own code (clock, slots, in-flight, rings)" progs
line "  BPF helpers and maps other than the ring" helpers
line "  kernel ring buffer, locks and wakeups" ring
line "  waiting on a spin lock (queued_spin_lock_slowpath)" lockwait
line "daemon CPU per call (perf samples)" daemon
line "daemon CPU per call (wait4, from recording to its end)" dcpu
line "other processes' CPU per call (perf samples)" other
line "perf's own CPU per call" perf
line "BPF run time per call, all programs (bpf_stats, own run)" bpf
line "  malloc_entry, ns per run" malloc_entry
line "  alloc_return, ns per run" alloc_return
line "  free_entry, ns per run" free_entry
line "context switches per call (perf stat -a)" cs
line "CPU migrations per call (perf stat -a)" mig
line "events lost" lost
other_tracers
if [ $have_perf = 1 ]; then
	echo "(perf record -a -g -e cpu-clock -c $PERIOD_NS;" \
		"perf stat -a -e context-switches,cpu-migrations)"
	if [ -n "${OUTDIR:-}" ]; then
		echo "(in $OUTDIR: report.MODE.txt the loop's samples by symbol, callers.MODE.txt the" \
			"callers of its hottest symbols, progs.MODE the BPF counters, stat.MODE.csv)"
	fi
fi
