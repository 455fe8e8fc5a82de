#!/usr/bin/env bash
# munge_bench.sh: alloctap-munge throughput on a 2-million-line raw log from build/bench/genlog,
# next to `wc -l` on the same file (the cost of just reading it), best of 3 runs each; then the
# same log as a raw binary trace (.atz): munged to text and to a munged .atz, and the
# conversions of --keep-pointers.
set -u
. "$(dirname "$0")/lib.sh"
LINES=${MUNGE_BENCH_LINES:-2000000}
RUNS=3

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

t2=$(best_of build/alloctap-munge -qq --threads 2 "$T/raw.log") || exit 1
t1=$(best_of build/alloctap-munge -qq --threads 1 "$T/raw.log") || exit 1
t2f=$(best_of build/alloctap-munge -qq --threads 2 -o "$T/munged.log" "$T/raw.log") || exit 1
wc_s=$(best_of wc -l "$T/raw.log") || exit 1
bytes=$(stat -c %s "$T/raw.log")
build/alloctap-munge -qq --keep-pointers --format binary "$T/raw.log" -o "$T/raw.atz" || exit 1
atz_bytes=$(stat -c %s "$T/raw.atz")
tb=$(best_of build/alloctap-munge -qq "$T/raw.atz") || exit 1
tbf=$(best_of build/alloctap-munge -qq -o "$T/munged.log" "$T/raw.atz") || exit 1
tbb=$(best_of build/alloctap-munge -qq --format binary -o "$T/munged.atz" "$T/raw.atz") || exit 1
ttb=$(best_of build/alloctap-munge -qq --format binary -o "$T/munged.atz" "$T/raw.log") || exit 1
tkb=$(best_of build/alloctap-munge -qq --keep-pointers --format binary -o "$T/k.atz" "$T/raw.log") || exit 1
tkt=$(best_of build/alloctap-munge -qq --keep-pointers -o "$T/k.log" "$T/raw.atz") || exit 1

echo "munge: $LINES-line raw log from genlog ($((bytes / 1000000)) MB text, $((atz_bytes / 1000000)) MB as .atz), best of $RUNS, page cache warm"
awk -v n="$LINES" -v t2="$t2" -v t1="$t1" -v t2f="$t2f" -v w="$wc_s" -v tb="$tb" -v tbf="$tbf" \
	-v tbb="$tbb" -v ttb="$ttb" -v tkb="$tkb" -v tkt="$tkt" '
function row(name, s) { printf "%-42s %10d %9.4f %10.1f %12.1fx\n", name, n, s, n / s / 1e6, s / w }
BEGIN {
	printf "%-42s %10s %9s %10s %13s\n", "command", "lines", "seconds", "Mlines/s", "time / wc -l"
	row("alloctap-munge --threads 2 > /dev/null", t2)
	row("alloctap-munge --threads 1 > /dev/null", t1)
	row("alloctap-munge --threads 2 -o FILE", t2f)
	row("binary in, text out > /dev/null", tb)
	row("binary in, text out -o FILE", tbf)
	row("binary in, --format binary -o FILE", tbb)
	row("text in, --format binary -o FILE", ttb)
	row("--keep-pointers text -> binary", tkb)
	row("--keep-pointers binary -> text", tkt)
	row("wc -l", w)
}'
