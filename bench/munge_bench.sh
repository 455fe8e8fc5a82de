#!/usr/bin/env bash
# munge_bench.sh: alloctap-munge throughput on a 2-million-line raw log from build/bench/genlog,
# next to `wc -l` on the same file (the cost of just reading it), best of 3 runs each.
set -u
cd "$(dirname "$0")/.."
LINES=${MUNGE_BENCH_LINES:-2000000}
RUNS=3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

for prog in build/bench/genlog build/alloctap-munge; do
	[ -x "$prog" ] || { echo "munge_bench: $prog missing (make all build/bench/genlog)"; exit 1; }
done
build/bench/genlog "$LINES" 1 >"$T/raw.log" || exit 1
cat "$T/raw.log" >/dev/null # warm the page cache

# best_of CMD...: the shortest wall time of RUNS runs, in seconds
best_of() {
	local best="" i s e
	for i in $(seq $RUNS); do
		s=$(date +%s%N)
		"$@" >/dev/null 2>&1 || { echo "munge_bench: '$*' failed" >&2; return 1; }
		e=$(date +%s%N)
		if [ -z "$best" ] || [ $((e - s)) -lt "$best" ]; then best=$((e - s)); fi
	done
	awk -v ns="$best" 'BEGIN { printf "%.4f", ns / 1e9 }'
}

munge_s=$(best_of build/alloctap-munge -qq "$T/raw.log") || exit 1
munge_file_s=$(best_of build/alloctap-munge -qq -o "$T/munged.log" "$T/raw.log") || exit 1
wc_s=$(best_of wc -l "$T/raw.log") || exit 1
bytes=$(stat -c %s "$T/raw.log")

echo "munge: $LINES-line raw log from genlog ($((bytes / 1000000)) MB), best of $RUNS, page cache warm"
awk -v n="$LINES" -v m="$munge_s" -v mf="$munge_file_s" -v w="$wc_s" 'BEGIN {
	printf "%-38s %10s %9s %10s %12s\n", "command", "lines", "seconds", "Mlines/s", "time vs wc"
	printf "%-38s %10d %9.4f %10.1f %11.1fx\n", "alloctap-munge > /dev/null", n, m, n / m / 1e6, m / w
	printf "%-38s %10d %9.4f %10.1f %11.1fx\n", "alloctap-munge -o FILE", n, mf, n / mf / 1e6, mf / w
	printf "%-38s %10d %9.4f %10.1f %11.1fx\n", "wc -l", n, w, n / w / 1e6, 1
}'
