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
