# bench/lib.sh: what the benchmark scripts share. Source it from bench/*_bench.sh; it moves to
# the top of the tree and sets T, a temporary folder removed at exit.
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
# MULTIARCH: the machine's multiarch tuple; LIBDIR: where its libraries are.
MULTIARCH=$(gcc -print-multiarch 2>/dev/null)
[ -n "$MULTIARCH" ] || MULTIARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null)
if [ -z "$MULTIARCH" ]; then
	echo "bench: neither gcc -print-multiarch nor dpkg-architecture -qDEB_HOST_MULTIARCH answers" >&2
	exit 1
fi
LIBDIR=/usr/lib/$MULTIARCH
T=$(mktemp -d /tmp/alloctap-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
# alloctapd --stacks keeps its unwind tables here, never in the machine's cache: the first
# run of a benchmark builds them, later ones read them
export ALLOCTAP_CACHE_DIR="$T/unwind-cache"

# need_root PART: uprobes need root (or CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN); say so and stop.
need_root() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "$1 bench: needs root for uprobes"
		exit 1
	fi
}

# median: the median of the numbers on standard input, one a line.
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

# minimum: the smallest of the numbers on standard input, one a line.
minimum() { sort -g | head -n 1; }

# preload_of ALLOCATOR: the library to LD_PRELOAD for it (nothing for glibc).
preload_of() {
	case $1 in
	jemalloc) echo "$LIBDIR/libjemalloc.so.2" ;;
	tcmalloc) echo "$LIBDIR/libtcmalloc_minimal.so.4" ;;
	mimalloc) echo "$LIBDIR/libmimalloc.so.2" ;;
	esac
}

# pairloop_setup PART: for the benchmarks that trace bench/pairloop (needs root): D and PL, the
# daemon (ALLOCTAPD, to measure another build of it: build/alloctapd by default) and the loop;
# PAIRS and RUNS with their defaults (100000 pairs, median of 3 runs); and ns_of, which reads
# the loop's ns_per_pair figure.
pairloop_setup() {
	need_root "$1"
	D=${ALLOCTAPD:-build/alloctapd}
	PL=build/bench/pairloop
	PAIRS=${PAIRS:-100000}
	RUNS=${RUNS:-3}
}
ns_of() { sed -n 's/.*ns_per_pair=\([0-9.]*\)$/\1/p'; }

# bench_python: the interpreter the benches run python3's workloads with, resolved: Debian's
# /usr/bin/python3 (make deps installs it), whatever python3 comes first in PATH (a pyenv
# shim, a virtualenv), so that runs on two machines compare; PATH's python3 without it.
bench_python() {
	local py=/usr/bin/python3
	[ -x "$py" ] || py=$(command -v python3)
	"$py" -c 'import os, sys; print(os.path.realpath(sys.executable))'
}

# python_once MODE DOCS -> wall seconds of one run of python3's demo workload (PY, with
# PYTHONMALLOC=malloc) with DOCS documents under the caller's tracer MODE (its alloctapd
# command line, nothing when untraced).
python_once() {
	local t0 t1
	t0=$(date +%s%N)
	PYTHONMALLOC=malloc $(tracer "$1") "$PY" demo/workload.py "$2" >/dev/null 2>&1
	t1=$(date +%s%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", (b - a) / 1e9}'
}

# prog_runs PID: how many times the BPF programs of process PID have run, summed.
prog_runs() {
	cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '/^run_cnt:/ {n += $2} END {print n + 0}'
}

# prog_stats OUT COMMAND...: runs COMMAND (an alloctapd command line) in the background with the
# kernel's BPF statistics on, and 2 seconds after its programs first ran writes to OUT one line
# "NAME run_cnt run_time_ns" per BPF program of that alloctapd, found through its descriptors
# (other tracers may run programs of the same names): fdinfo has the id and the counters,
# bpftool the name. The command must run that long: the counters go with the programs.
prog_stats() {
	local out=$1 pid fd id name info i
	shift
	sysctl -q kernel.bpf_stats_enabled=1
	"$@" >/dev/null 2>&1 &
	pid=$!
	for i in $(seq 60); do
		[ "$(prog_runs "$pid")" -gt 0 ] && break
		sleep 0.5
	done
	sleep 2
	: >"$out"
	for fd in /proc/"$pid"/fd/*; do
		[ "$(readlink "$fd")" = "anon_inode:bpf-prog" ] || continue
		info=/proc/"$pid"/fdinfo/"${fd##*/}"
		id=$(sed -n 's/^prog_id:[[:space:]]*//p' "$info")
		name=$(bpftool prog show id "$id" 2>/dev/null | sed -n 's/.* name \([a-z_]*\) .*/\1/p')
		echo "$name $(sed -n 's/^run_cnt:[[:space:]]*//p' "$info")" \
			"$(sed -n 's/^run_time_ns:[[:space:]]*//p' "$info")" >>"$out"
	done
	wait "$pid"
	sysctl -q kernel.bpf_stats_enabled=0
}

# prog_ns FILE NAME: ns per run of program NAME in a prog_stats file ("-" when not counted).
prog_ns() {
	local v
	v=$(awk -v n="$2" '$1 == n && $2 > 0 {printf "%.0f", $3 / $2}' "$1")
	echo "${v:--}"
}

# ---- the scaling benchmarks: a traced pairloop in attach mode, measured with no tool but bash,
# awk, coreutils and /proc (bench/scaling_bench.sh, bench/scaling_profile.sh) ----

# bpf_fdinfo_sum PID KIND FIELD: FIELD summed over the fdinfo of PID's descriptors of KIND
# (bpf-map or bpf-prog), e.g. the memlock bytes of its maps; 0 when it has none.
bpf_fdinfo_sum() {
	local fd sum=0 v
	for fd in /proc/"$1"/fd/*; do
		[ "$(readlink "$fd" 2>/dev/null)" = "anon_inode:$2" ] || continue
		v=$(sed -n "s/^$3:[[:space:]]*//p" /proc/"$1"/fdinfo/"${fd##*/}" 2>/dev/null)
		sum=$((sum + ${v:-0}))
	done
	echo "$sum"
}

# task_cpu_ns PID: the CPU time of every thread of PID so far, in ns (schedstat's run time;
# the ticks of /proc/PID/stat where schedstat reads 0).
task_cpu_ns() {
	local ns
	ns=$(cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{n += $1} END {print n + 0}')
	if [ "$ns" -eq 0 ]; then
		ns=$(awk -v hz="$(getconf CLK_TCK)" '{printf "%.0f", ($14 + $15) * 1e9 / hz}' \
			/proc/"$1"/stat 2>/dev/null)
	fi
	echo "${ns:-0}"
}

# prog_counts PID: one line "NAME run_cnt run_time_ns" per BPF program PID holds, from fdinfo;
# the name from /proc/kallsyms by the program's tag (bpftool is not needed), "?" when absent.
prog_counts() {
	local fd info tag name
	for fd in /proc/"$1"/fd/*; do
		[ "$(readlink "$fd" 2>/dev/null)" = "anon_inode:bpf-prog" ] || continue
		info=$(cat /proc/"$1"/fdinfo/"${fd##*/}" 2>/dev/null) || continue
		tag=$(sed -n 's/^prog_tag:[[:space:]]*//p' <<<"$info")
		name=$(grep -m1 "bpf_prog_${tag}_" /proc/kallsyms |
			sed 's/.*bpf_prog_[0-9a-f]*_\([^[:space:]]*\).*/\1/')
		echo "${name:-?} $(sed -n 's/^run_cnt:[[:space:]]*//p' <<<"$info")" \
			"$(sed -n 's/^run_time_ns:[[:space:]]*//p' <<<"$info")"
	done
}

# bpf_stats VALUE: turns the kernel's BPF run-time statistics on (1) or off (0).
bpf_stats() { echo "$1" >/proc/sys/kernel/bpf_stats_enabled; }

# attach_run PREFIX PAIRS THREADS ALLOCTAPD-ARGS...: one traced run of the pairloop. The loop
# starts and waits; alloctapd -v --pid LOOP ARGS attaches (under rusage_of, which gives its CPU
# time and peak RSS); when it says it records, the daemon's CPU time so far and its maps'
# memlock are read, the function named by $ON_RECORDING (if set) is called with the daemon's
# pid, and the loop is let go. After the loop and the daemon end, $ON_END (if set) is called.
# Writes PREFIX.res, one line: "ns N written W lost L cpu_ns C maxrss_kb R memlock M" (ns the
# loop's ns per pair; written the records discarded with --discard; cpu_ns the daemon's CPU
# time from the moment it recorded to its end);
# PREFIX.err holds the daemon's messages; AR_LOOP_PID and AR_DAEMON_PID keep the two pids (for
# the hooks, and for a profile's reports after the run). Returns 1, the messages on stderr,
# when the daemon did not start recording.
attach_run() {
	local prefix=$1 pairs=$2 threads=$3 pl ru dpid cpu0 mem
	shift 3
	rm -f "$prefix".go "$prefix".ru "$prefix".res "$prefix".err
	mkfifo "$prefix".go
	PAIRLOOP_WAIT=1 "$PL" "$pairs" "$threads" <"$prefix".go >"$prefix".out &
	pl=$!
	exec 3>"$prefix".go
	build/bench/rusage_of "$prefix".ru "$D" -v --pid "$pl" "$@" 2>"$prefix".err &
	ru=$!
	for _ in $(seq 600); do
		grep -q "^alloctapd: recording" "$prefix".err 2>/dev/null && break
		kill -0 "$ru" 2>/dev/null || break
		sleep 0.05
	done
	dpid=$(sed -n 's/^pid //p' "$prefix".ru)
	# shellcheck disable=SC2034 # for the caller
	AR_LOOP_PID=$pl AR_DAEMON_PID=$dpid
	if ! grep -q "^alloctapd: recording" "$prefix".err; then
		kill "$pl" "$ru" 2>/dev/null
		exec 3>&-
		wait "$pl" "$ru" 2>/dev/null
		cat "$prefix".err >&2
		return 1
	fi
	cpu0=$(task_cpu_ns "$dpid")
	mem=$(bpf_fdinfo_sum "$dpid" bpf-map memlock)
	[ -n "${ON_RECORDING:-}" ] && "$ON_RECORDING" "$dpid"
	echo >&3
	exec 3>&-
	wait "$pl"
	wait "$ru"
	[ -n "${ON_END:-}" ] && "$ON_END"
	awk -v ns="$(ns_of <"$prefix".out)" -v cpu0="$cpu0" -v mem="$mem" '
		/^alloctapd: [0-9]+ events written/ { w = $2; l = $5 }
		/^alloctapd: [0-9]+ records discarded unread/ { w = $2; l = $6 }
		/^user_us/ { cpu = ($2 + $4) * 1000; rss = $6 }
		END { printf "ns %s written %d lost %d cpu_ns %.0f maxrss_kb %d memlock %d\n",
			ns, w, l, cpu - cpu0, rss, mem }' "$prefix".err "$prefix".ru >"$prefix".res
}

# need_built PART PROG...: exits 1, naming it, at the first PROG not built.
need_built() {
	local part=$1 prog
	shift
	for prog in "$@"; do
		[ -x "$prog" ] || { echo "$part: $prog is not built (make bench builds it)"; exit 1; }
	done
}

# count_other_tracers: how many alloctapd and bpftrace processes run now that this shell did
# not start.
count_other_tracers() {
	local p mine n=0
	mine=" $(jobs -p | tr '\n' ' ') "
	for p in /proc/[0-9]*; do
		case $(cat "$p"/comm 2>/dev/null) in
		alloctapd | bpftrace) [[ "$mine" == *" ${p#/proc/} "* ]] || n=$((n + 1)) ;;
		esac
	done
	echo "$n"
}

# other_tracers: a note counting the alloctapd and bpftrace processes running now that this shell
# did not start (nothing when none): probes for every process on a shared C library (--all, a
# bpftrace uprobe, an alloctapd older than probes per process) trap the benchmark's untraced
# loop too.
other_tracers() {
	local n
	n=$(count_other_tracers)
	[ "$n" -gt 0 ] && echo "(note: other tracers (alloctapd, bpftrace) running at this moment: $n;" \
		"their probes on a shared C library may trap these loops too)"
	return 0
}
