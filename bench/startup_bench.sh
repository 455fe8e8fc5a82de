#!/usr/bin/env bash
# What a start with --stacks costs, and what the on-disk cache of unwind tables saves, side by
# side in one run (needs root). Each cold run gets a new, empty cache folder; a warm run reads
# the folder a cold run filled. Median of RUNS (default 3) runs.
#  1. A big object's table: node's binary (`node -e 1`) and libLLVM-14 (mapped by
#     build/fixtures/stacks_big_object): built, and read from the cache (ms, alloctapd -v's
#     lines: the builder thread's own time). Goal: 20 ms from the cache.
#  2. `alloctapd -f binary -o /dev/null -- /bin/true`, wall s: without --stacks; --stacks
#     --no-cache; --stacks, empty cache; --stacks, warm cache. Goal: 0.3 s warm.
#  3. `node -e 1`, wall s: untraced; alloctapd --floor (the traps alone); alloctapd -f binary;
#     --stacks with a warm cache; the ratios. Goal: 1.5 (--stacks over untraced).
#  4. The BPF verifier: the time of each program's load (BPF_PROG_LOAD, strace -T) in
#     `--stacks -- /bin/true`, and all the loads without --stacks: the walk's share of a start.
# BASELINE=path/to/another/alloctapd adds its `--stacks -- /bin/true` to table 2 and
# its loads with --stacks to table 4 (given no cache option: it may be one without the cache).
set -u
. "$(dirname "$0")/lib.sh"
need_root startup
D=${ALLOCTAPD:-build/alloctapd}
RUNS=${RUNS:-3}
BIG=$LIBDIR/libLLVM-14.so.1
NODE=$(command -v node || true)
FX=build/fixtures

# wall COMMAND...: the wall seconds COMMAND takes (its output dropped).
wall() {
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1
	t1=$(date +%s%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", (b - a) / 1e9}'
}

# fresh: a new, empty cache folder's path.
n=0
fresh() {
	n=$((n + 1))
	echo "$T/cold$n/unwind"
}

# table_ms LOG ROWS KIND: the ms of the table with ROWS rows in alloctapd -v's LOG, built
# (KIND built) or read from the cache (KIND read).
table_ms() {
	case $3 in
	built) sed -n "s/.*: built in \([0-9.]*\) ms, $2 rows.*/\1/p" "$1" | head -n 1 ;;
	read) sed -n "s/.*read from the cache in \([0-9.]*\) ms, $2 rows.*/\1/p" "$1" | head -n 1 ;;
	esac
}

# big_table NAME COMMAND...: "BUILT_MS READ_MS BYTES" of the largest table COMMAND's tracing
# builds (medians), or "- - -" when COMMAND cannot run.
big_table() {
	local name=$1 rows bytes warm
	shift
	warm=$(fresh)
	if ! "$D" -v --stacks --cache-dir "$warm" -f binary -o /dev/null -- "$@" \
		>/dev/null 2>"$T/$name.first"; then
		echo "- - -"
		return
	fi
	# the largest table built: its rows and bytes
	local built='s/.*: built in [0-9.]* ms, \([0-9]*\) rows, \([0-9]*\) bytes$/\1 \2/p'
	read -r rows bytes < <(sed -n "$built" "$T/$name.first" | sort -n -k2 | tail -n 1)
	for _ in $(seq "$RUNS"); do
		"$D" -v --stacks --cache-dir "$(fresh)" -f binary -o /dev/null -- "$@" >/dev/null \
			2>"$T/$name.cold"
		table_ms "$T/$name.cold" "$rows" built
	done | median >"$T/$name.built"
	for _ in $(seq "$RUNS"); do
		"$D" -v --stacks --cache-dir "$warm" -f binary -o /dev/null -- "$@" >/dev/null 2>"$T/$name.warm"
		table_ms "$T/$name.warm" "$rows" read
	done | median >"$T/$name.read"
	echo "$(cat "$T/$name.built") $(cat "$T/$name.read") $bytes"
}

echo "startup: a big object's unwind table, built and read from the cache (ms, median of" \
	"$RUNS; alloctapd -v)"
printf '%-40s %10s %10s %12s\n' "" "built ms" "cache ms" "table bytes"
if [ -n "$NODE" ]; then
	printf '%-40s %10s %10s %12s\n' "node's binary ($NODE -e 1)" $(big_table node "$NODE" -e 1)
fi
if [ -r "$BIG" ]; then
	printf '%-40s %10s %10s %12s\n' "libLLVM-14 (stacks_big_object)" \
		$(big_table llvm "$FX/stacks_big_object" "$BIG" 1)
fi
echo "goal: 20 ms from the cache"

echo
echo "startup: alloctapd -f binary -o /dev/null -- /bin/true (wall s, median of $RUNS)"
warm=$(fresh)
"$D" -q --stacks --cache-dir "$warm" -f binary -o /dev/null -- /bin/true 2>/dev/null
true_s() { for _ in $(seq "$RUNS"); do wall "$@"; done | median; }
printf '%-40s %10s\n' "without --stacks" "$(true_s "$D" -q -f binary -o /dev/null -- /bin/true)"
printf '%-40s %10s\n' "--stacks --no-cache" \
	"$(true_s "$D" -q --stacks --no-cache -f binary -o /dev/null -- /bin/true)"
for _ in $(seq "$RUNS"); do
	wall "$D" -q --stacks --cache-dir "$(fresh)" -f binary -o /dev/null -- /bin/true
done | median >"$T/true.cold"
printf '%-40s %10s\n' "--stacks, an empty cache" "$(cat "$T/true.cold")"
if [ -n "${BASELINE:-}" ]; then
	printf '%-40s %10s\n' "BASELINE --stacks" \
		"$(true_s "$BASELINE" -q --stacks -f binary -o /dev/null -- /bin/true)"
fi
warm_s=$(true_s "$D" -q --stacks --cache-dir "$warm" -f binary -o /dev/null -- /bin/true)
printf '%-40s %10s\n' "--stacks, a warm cache" "$warm_s"
echo "goal: 0.3 s warm"

if [ -n "$NODE" ]; then
	echo
	echo "startup: $NODE -e 1 (wall s, median of $RUNS)"
	warm=$(fresh)
	"$D" -q --stacks --cache-dir "$warm" -f binary -o /dev/null -- "$NODE" -e 1 2>/dev/null
	untraced=$(true_s "$NODE" -e 1)
	printf '%-40s %10s\n' "untraced" "$untraced"
	floor=$(true_s "$D" -q --floor -o /dev/null -- "$NODE" -e 1)
	printf '%-40s %10s\n' "alloctapd --floor (the traps alone)" "$floor"
	binary=$(true_s "$D" -q -f binary -o /dev/null -- "$NODE" -e 1)
	printf '%-40s %10s\n' "alloctapd -f binary" "$binary"
	stacks=$(true_s "$D" -q --stacks --cache-dir "$warm" -f binary -o /dev/null -- "$NODE" -e 1)
	printf '%-40s %10s\n' "--stacks, a warm cache" "$stacks"
	"$D" --stacks --cache-dir "$warm" -f binary -o /dev/null -- "$NODE" -e 1 2>&1 >/dev/null |
		sed -n 's/^alloctapd: \([0-9]*\) events written.*/(\1 events)/p'
	awk -v a="$stacks" -v b="$untraced" -v f="$floor" -v n="$binary" 'BEGIN {
		printf "--stacks (warm) / untraced: %.2f; goal <= 1.5\n", a / b
		printf "(the traps alone / untraced: %.2f; --stacks (warm) / -f binary: %.2f)\n",
			f / b, a / n }'
fi

echo
if command -v strace >/dev/null; then
	echo "startup: the BPF verifier, BPF_PROG_LOAD's time per program (ms, strace -T, median" \
		"of $RUNS), alloctapd -- /bin/true"
	loads() { # DAEMON OPTIONS... -> "PROGRAM MS" lines of one run
		local d=$1
		shift
		strace -f -T -e trace=bpf "$d" -q "$@" -f binary -o /dev/null -- /bin/true 2>&1 >/dev/null |
			sed -n 's/.*BPF_PROG_LOAD.*prog_name="\([a-z_][a-z_]*\)".*<\([0-9.]*\)>$/\1 \2/p' |
			grep -v '^libbpf_' # libbpf's probes of the kernel's features
	}
	: >"$T/loads.stacks" && : >"$T/loads.plain" && : >"$T/loads.base"
	for _ in $(seq "$RUNS"); do # interleaved
		loads "$D" --stacks --no-cache >>"$T/loads.stacks"
		loads "$D" >>"$T/loads.plain"
		[ -z "${BASELINE:-}" ] || loads "$BASELINE" --stacks >>"$T/loads.base"
	done
	printf '%-20s %12s %12s %16s\n' program "binary" "--stacks" "BASELINE --stacks"
	for p in $(awk '{print $1}' "$T/loads.plain" "$T/loads.stacks" | sort -u); do
		ms() { awk -v p="$p" '$1 == p {print $2 * 1000}' "$1" | median; }
		printf '%-20s %12s %12s %16s\n' "$p" "$(ms "$T/loads.plain")" "$(ms "$T/loads.stacks")" \
			"$(ms "$T/loads.base")"
	done
	total() { awk '{s += $2} END {printf "%.0f", s * 1000 / '"$RUNS"'}' "$1"; }
	echo "all loads: $(total "$T/loads.plain") ms without --stacks, $(total "$T/loads.stacks")" \
		"ms with${BASELINE:+, $(total "$T/loads.base") ms the BASELINE with}"
else
	echo "startup: the BPF verifier: strace is not installed"
fi
