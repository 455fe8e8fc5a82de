# bench/lib.sh: what the benchmark scripts share. Source it from bench/*_bench.sh; it moves to
# the top of the tree and sets T, a temporary folder removed at exit.
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
LIBDIR=/usr/lib/x86_64-linux-gnu
T=$(mktemp -d /tmp/alloctap-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT

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
# daemon and the loop; PAIRS and RUNS with their defaults (100000 pairs, median of 3 runs); and
# ns_of, which reads the loop's ns_per_pair figure.
pairloop_setup() {
	need_root "$1"
	D=build/alloctapd
	PL=build/bench/pairloop
	PAIRS=${PAIRS:-100000}
	RUNS=${RUNS:-3}
}
ns_of() { sed -n 's/.*ns_per_pair=\([0-9.]*\)$/\1/p'; }

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
