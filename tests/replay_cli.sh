#!/usr/bin/env bash
# replay_cli.sh: command-line tests of build/alloctap-replay on the files in tests/data/replay/.
# Every case checks the exit status and the exact messages or summary lines.
set -u
source "$(dirname "$0")/lib.sh"
R=build/alloctap-replay
D=tests/data/replay
LIBDIR=/usr/lib/$MULTIARCH
need_built "$R"

# The summary of tests/data/replay/good.log (worked out by hand in the comments).
GOOD_SUMMARY=(
	"replayed pid: 1"
	"lines of other pids: 0"
	"operations: 11"
	"operations malloc: 2"
	"operations calloc: 1"
	"operations realloc: 2"
	"operations free: 2"
	"operations memalign: 1"
	"operations posix_memalign: 1"
	"operations aligned_alloc: 1"
	"operations valloc: 1"
	"operations jemalloc_stats: 1"
	"failed allocations: 0"
	"overwritten live slots: 0"
	# live: calloc 100 + posix_memalign 240 + memalign 10 + aligned_alloc 128 + realloc 300
	# + malloc(0); the peak is the end
	"peak live requested bytes: 778"
	"final live requested bytes: 778"
	"final live objects: 6"
)

# good_log DESC STATS_LINE_NO ARGS...: the good.log summary and its one stats line, at the
# jemalloc_stats() call (#1 64, #2 100, #3 240 bytes live then).
good_log() {
	local desc=$1 line=$2
	shift 2
	run_cmd "$R" --summary "$@"
	local stats="stats line=$line ops=4 objects=3 slots=4 requested=404 arena="
	if [ "$(grep -c '^stats ' "$T/err")" -ne 1 ] || ! grep -q "^$stats[0-9]* mmap=" "$T/err"; then
		fail_run "$desc" "want one line starting: $stats"
		return
	fi
	check_err_lines "$desc" "${GOOD_SUMMARY[@]}" "allocator: glibc $LIBDIR/libc.so.6"
}

# --- good logs and the reader's hard cases ---------------------------------------------------
good_log "good log: summary counts and live bytes, stats line" 5 "$D/good.log"
good_log "empty and blank lines are skipped" 8 "$D/empty_lines.log"
good_log "CRLF line ends" 5 "$D/crlf.log"
good_log "no final newline: the last line is replayed" 5 "$D/no_final_newline.log"
good_log "input on stdin (-)" 5 - <"$D/good.log"
good_log "input on stdin (no FILE)" 5 <"$D/good.log"
good_log "-c fills blocks" 5 -c "$D/good.log"

run_cmd "$R" --summary -s "$D/good.log"
if grep -q '^stats .* slop=[0-9][0-9]*$' "$T/err" && grep -q '^final slop bytes: [0-9][0-9]*$' "$T/err"; then
	check_err_lines "-s: slop in the stats line and the summary" "${GOOD_SUMMARY[@]}"
else
	fail_run "-s: slop in the stats line and the summary" "no slop= / final slop bytes:"
fi

run_cmd "$R" -q --summary "$D/good.log"
if grep -q '^stats ' "$T/err"; then
	fail_run "-q: no stats line" "a stats line was printed"
else
	check_err_lines "-q: no stats line, summary still printed" "final live requested bytes: 778"
fi

run_cmd "$R" "$D/good.log"
if [ "$rc" -eq 0 ] && [ ! -s "$T/out" ] && [ "$(wc -l <"$T/err")" -eq 1 ]; then
	ok "without --summary: only the stats line, nothing on stdout"
else
	fail_run "without --summary: only the stats line, nothing on stdout" "exit $rc"
fi

# A valid line of 100 kB (leading zeros), then a 100 kB garbage line.
{
	echo "1 1 malloc(32)=#1"
	printf '1 1 malloc(%s7)=#2\n' "$(head -c 100000 /dev/zero | tr '\0' 0)"
	echo "1 1 free(#1)"
} >"$T/long.log"
run_cmd "$R" --summary "$T/long.log"
check_err_lines "a 100 kB line" "operations: 3" "final live requested bytes: 7" "final live objects: 1"
{
	cat "$D/good.log"
	head -c 100000 /dev/zero | tr '\0' x
	echo
} >"$T/longbad.log"
check_err "a 100 kB malformed line: its line number" 1 \
	"alloctap-replay: $T/longbad.log:13: expected a decimal process number" "$R" -q "$T/longbad.log"

# Before the first line with a pointer field (#N or 0x...) lib/source cannot tell munged from
# raw text and reads the line with the reference munge's grammar, whose reason is its own.
check_err "binary garbage" 1 \
	"alloctap-replay: $D/garbage.bin:1: Malformed input" "$R" "$D/garbage.bin"
check_err "slot beyond the limit" 1 \
	"alloctap-replay: $D/slot_limit.log:3: result slot beyond the slot limit: #268435456 (slots #0 to #268435455)" \
	"$R" "$D/slot_limit.log"
: >"$T/empty.log"
run_cmd "$R" --summary "$T/empty.log"
check_err_lines "an empty file replays nothing" "operations: 0" "final live requested bytes: 0"

# --- malformed lines, one kind per case (tests/data/replay/malformed.tsv) ---------------------
while IFS=$'\t' read -r reason line; do
	case $reason in '#'* | '') continue ;; esac
	printf '1 1 malloc(8)=#1\n%s\n' "$line" >"$T/bad.log"
	check_err "malformed: $line" 1 "alloctap-replay: $T/bad.log:2: $reason" "$R" "$T/bad.log"
done <"$D/malformed.tsv"

# --- raw traces are refused with the command that munges them --------------------------------
check_err "a raw text trace: munge it first" 1 \
	"alloctap-replay: $D/raw.log: this is a raw trace; munge it first: alloctap-munge $D/raw.log | alloctap-replay" \
	"$R" "$D/raw.log"
check_err "a raw text trace on stdin: munge it first" 1 \
	"alloctap-replay: <stdin>: this is a raw trace; munge it first: ... | alloctap-munge | alloctap-replay" \
	"$R" - <"$D/raw.log"
# A first line with a pointer field that is neither #N nor 0x...: the munged reasons.
printf '1 1 free(5)\n' >"$T/undecided.log"
check_err "first line free(5): neither munged nor raw" 1 \
	"alloctap-replay: $T/undecided.log:1: expected a slot (#N) as the pointer argument" "$R" "$T/undecided.log"
printf '\n1 1 malloc(1)=5\n' >"$T/undecided.log"
check_err "malloc(1)=5 after an empty line: neither munged nor raw" 1 \
	"alloctap-replay: $T/undecided.log:2: expected '=#N' after ')'" "$R" "$T/undecided.log"

# --- processes, overwritten slots --------------------------------------------------------------
run_cmd "$R" --summary "$D/multi_pid.log"
check_err_lines "only the first pid is replayed" "replayed pid: 3" "lines of other pids: 4" \
	"operations: 4" "operations malloc: 2" "operations realloc: 1" "operations free: 1" \
	"operations calloc: 0" "peak live requested bytes: 2024" \
	"final live requested bytes: 2000" "final live objects: 1"
grep -q '^stats line=9 ops=4 objects=1 slots=4 requested=2000 ' "$T/err" ||
	fail_run "multi-pid stats line" "want: stats line=9 ops=4 objects=1 slots=4 requested=2000 ..."

run_cmd "$R" --summary "$D/overwrite.log"
check_err_lines "a result over a live slot is counted as overwritten" "overwritten live slots: 1" \
	"peak live requested bytes: 20" "final live requested bytes: 5" "final live objects: 1"

# --- no allocations of its own: count every malloc-family call with an LD_PRELOAD ------------
if cc -shared -fPIC -O1 -o "$T/malloc_count.so" "$D/malloc_count.c" 2>"$T/err"; then
	LD_PRELOAD=$T/malloc_count.so "$R" -s -c "$D/good.log" >"$T/out" 2>"$T/err"
	rc=$?
	check_err_lines "the replayer makes exactly the log's calls, none of its own" \
		"malloc_count malloc=2 calloc=1 realloc=2 free=2 memalign=1 posix_memalign=1 aligned_alloc=1 valloc=1"
	LD_PRELOAD=$T/malloc_count.so "$R" --summary "$D/multi_pid.log" >"$T/out" 2>"$T/err"
	rc=$?
	check_err_lines "no allocations of its own with --summary and other pids" \
		"malloc_count malloc=2 calloc=0 realloc=1 free=1 memalign=0 posix_memalign=0 aligned_alloc=0 valloc=0"
else
	fail_run "the malloc-counting library builds"
fi

# --- allocators: the summary names what /proc/self/maps says provides malloc -----------------
for a in glibc:libc.so.6 jemalloc:libjemalloc.so.2 tcmalloc:libtcmalloc_minimal.so.4 \
	mimalloc:libmimalloc.so.2; do
	name=${a%%:*}
	lib=$(readlink -f "$LIBDIR/${a#*:}")
	run_cmd "$R" --allocator "$name" --summary "$D/good.log"
	check_err_lines "--allocator $name: malloc really comes from $lib" "allocator: $name $lib" \
		"final live requested bytes: 778" "operations: 11"
done
run_cmd "$R" --allocator="$LIBDIR/libjemalloc.so.2" --summary "$D/good.log"
check_err_lines "--allocator=PATH" "allocator: jemalloc $LIBDIR/libjemalloc.so.2" "operations: 11"
run_cmd "$R" --allocator mimalloc --summary - <"$D/good.log"
check_err_lines "--allocator with stdin input" "allocator: mimalloc $(readlink -f $LIBDIR/libmimalloc.so.2)" \
	"operations: 11"
LD_PRELOAD=$LIBDIR/libjemalloc.so.2 "$R" --allocator glibc --summary "$D/good.log" >"$T/out" 2>"$T/err"
rc=$?
check_err_lines "--allocator glibc drops an inherited LD_PRELOAD" "allocator: glibc $LIBDIR/libc.so.6"
check_err "--allocator with a missing library" 1 \
	"alloctap-replay: /nonexistent/libx.so: No such file or directory" \
	"$R" --allocator /nonexistent/libx.so "$D/good.log"
run_cmd "$R" --allocator /etc/hostname "$D/good.log"
if [ "$rc" -eq 1 ] && grep -qxF "alloctap-replay: /etc/hostname was preloaded but malloc comes from $LIBDIR/libc.so.6 (not a malloc library?)" "$T/err"; then
	ok "--allocator with a file that is no allocator: the check in the child fails"
else
	fail_run "--allocator with a file that is no allocator: the check in the child fails" "exit $rc"
fi
# The marker stops re-execution: here it claims jemalloc is preloaded when it is not.
ALLOCTAP_REPLAY_ALLOCATOR=$LIBDIR/libjemalloc.so.2 "$R" --allocator jemalloc "$D/good.log" \
	>"$T/out" 2>"$T/err"
rc=$?
if [ "$rc" -eq 1 ] && [ "$(cat "$T/err")" == "alloctap-replay: $LIBDIR/libjemalloc.so.2 was preloaded but malloc comes from $LIBDIR/libc.so.6 (not a malloc library?)" ]; then
	ok "re-exec guard: a marked process does not re-execute, it checks"
else
	fail_run "re-exec guard: a marked process does not re-execute, it checks" "exit $rc"
fi

# --- usage ------------------------------------------------------------------------------------
check_err "unknown option" 2 "alloctap-replay: unknown option '-x' (see --help)" "$R" -x "$D/good.log"
check_err "unknown long option" 2 "alloctap-replay: unknown option '--stats' (see --help)" "$R" --stats
check_err "unknown allocator name" 2 \
	"alloctap-replay: unknown allocator (jemalloc, tcmalloc, mimalloc, glibc or a path): 'hoard' (see --help)" \
	"$R" --allocator hoard "$D/good.log"
check_err "--allocator without a value" 2 "alloctap-replay: missing value after '--allocator' (see --help)" \
	"$R" "$D/good.log" --allocator
check_err "two input files" 2 "alloctap-replay: more than one input file: '$D/crlf.log' (see --help)" \
	"$R" "$D/good.log" "$D/crlf.log"
check_err "missing file" 1 "alloctap-replay: /nonexistent/x.log: No such file or directory" \
	"$R" /nonexistent/x.log
check_err "a directory" 1 "alloctap-replay: $D:1: read error: Is a directory" "$R" "$D"
check_err "an endless line (/dev/zero)" 1 \
	"alloctap-replay: /dev/zero:1: read error: a line longer than 64 MiB (no log line is: not a log?)" \
	"$R" /dev/zero
run_cmd "$R" --help
if [ "$rc" -eq 0 ] && grep -q '^Usage: alloctap-replay' "$T/out" && grep -q '2^28 slots' "$T/out" &&
	grep -q '^Exit status: 0 replayed, 1 input or data error' "$T/out"; then
	ok "--help: usage, slot limit and exit codes on stdout"
else
	fail_run "--help: usage, slot limit and exit codes on stdout" "exit $rc"
fi

# --- round trip: a raw log munged then replayed reports the live bytes the log implies ---------
M=build/alloctap-munge
RAW=demo/python3-json.log
if [ -x "$M" ] && [ -f "$RAW" ]; then
	# Live bytes the raw log implies for its first process, by address, following munge's
	# rules: unknown frees and zero results are ignored.
	want=$(awk '
		function release(p) { if (p in live) { total -= live[p]; delete live[p] } }
		{
			if (pid == "") pid = $1
			if ($1 != pid) next
			line = $0; sub(/^[0-9]+ [0-9]+ /, "", line)
			fn = line; sub(/\(.*/, "", fn)
			args = line; sub(/^[a-z_]+\(/, "", args); sub(/\).*/, "", args)
			res = ""; if (index(line, ")=")) { res = line; sub(/.*\)=/, "", res) }
			n = split(args, a, ",")
			if (fn == "free") { if (a[1] != "0x0") release(a[1]); next }
			if (fn == "jemalloc_stats" || res == "" || res == "0x0") next
			if (fn == "realloc") { if (a[1] != "0x0") release(a[1]); size = a[2] }
			else if (fn == "calloc") size = a[1] * a[2]
			else if (fn == "malloc" || fn == "valloc") size = a[1]
			else size = a[2]
			release(res)
			live[res] = size; total += size
		}
		END { printf "%d\n", total }' "$RAW")
	"$M" "$RAW" 2>/dev/null | "$R" --summary >"$T/out" 2>"$T/err"
	rc=$?
	check_err_lines "round trip: $RAW munged and replayed, final live bytes $want" \
		"final live requested bytes: $want"
else
	fail_run "round trip: $M and $RAW exist"
fi

# --- a reader that goes away (| head): quiet, killed by SIGPIPE (141) as cat is ------------
awk 'BEGIN { for (i = 0; i < 100000; i++) print "1 1 malloc(8)=#1\n1 1 free(#1)" }' >"$T/pairs.munged"
"$R" --emit - "$T/pairs.munged" 2>"$T/err" | head -n 1 >"$T/out"
status=("${PIPESTATUS[@]}")
check_eq "--emit - (200,000 lines) | head -n 1: quiet, killed by SIGPIPE (141)" \
	"${status[*]}:$(grep -c '^1 1 malloc(8)=0x[0-9a-f]*$' "$T/out"):$(wc -c <"$T/err")" "141 0:1:0" \
	"$(head -n 3 "$T/err")"
# --compare prints its table once the replays are done: to a pipe whose reader is gone already
# (python3 closes the reading end, then executes the replayer on the writing end)
closed_stdout() {
	python3 -c 'import os, sys
r, w = os.pipe()
os.close(r)
os.dup2(w, 1)
os.execv(sys.argv[1], sys.argv[1:])' "$@"
}
closed_stdout "$R" --compare glibc,glibc "$D/good.log" 2>"$T/err"
check_eq "--compare to a closed pipe: quiet, killed by SIGPIPE (141)" "$?:$(wc -c <"$T/err")" "141:0" \
	"$(head -n 3 "$T/err")"
closed_stdout "$R" -v --compare glibc "$D/good.log" 2>"$T/err"
check_eq "--compare -v to a closed pipe: said once, no write error" \
	"$?:$(tail -n 1 "$T/err"):$(grep -c 'write error' "$T/err")" \
	"141:alloctap-replay: <stdout>: the reader went away; output stopped:0"
closed_stdout "$R" -q --emit - "$D/good.log" 2>"$T/err"
check_eq "--emit - to a closed pipe: quiet, killed by SIGPIPE (141)" "$?:$(wc -c <"$T/err")" "141:0"
run_cmd "$R" -q --emit /dev/full "$D/good.log"
check_eq "--emit /dev/full: a write error, said as every program says it, exit 1" \
	"$rc:$(cat "$T/err")" "1:alloctap-replay: /dev/full: write error: No space left on device"

# --- --compare --repeat: runs interleaved, the median and min-max of each measured figure ----
# Two "allocators" that note each run in RUN_LOG when loaded (run_log.c over malloc_count.c's
# forwarding to glibc): the log shows, from outside the replayer, how many runs and in what order.
ok_libs=1
for tag in a b; do
	cc -shared -fPIC -O1 -DTAG="\"$tag\"" -o "$T/$tag.so" "$D/malloc_count.c" "$D/run_log.c" \
		2>"$T/err" || ok_libs=0
done
if [ "$ok_libs" -eq 1 ]; then
	RUN_LOG=$T/runs3 "$R" --compare "$T/a.so,$T/b.so" --repeat 3 "$D/good.log" >"$T/out" 2>"$T/err"
	check_eq "--repeat 3: three runs of each, interleaved (a b a b a b), exit 0" \
		"$?:$(cut -d' ' -f1 "$T/runs3" | paste -sd' '):$(cut -d' ' -f2 "$T/runs3" | sort -u | wc -l)" \
		"0:a b a b a b:6"
	# the shape: runs first, then each figure; a min-max row after each measured one
	check_eq "--repeat 3: the table's rows" "$(awk '{ sub(/  +.*/, ""); print }' "$T/out" | paste -sd'|')" \
		"allocator|runs|library|operations|failed allocations|wall time ns|wall time ns min-max|ns per operation|ns per operation min-max|peak rss bytes|peak rss bytes min-max|peak live requested bytes|final live requested bytes|final live objects"
	check_eq "--repeat 3: runs, and the figures the trace decides, as one run gives them" \
		"$(grep -E '^(runs|library|operations|final live objects) ' "$T/out" | tr -s ' ' | paste -sd'|')" \
		"runs 3 3|library a.so b.so|operations 11 11|final live objects 6 6"
	check "--repeat 3: each measured median lies within its min-max, for both allocators" \
		awk '/ min-max / { split($(NF - 1), x, "-"); split($NF, y, "-")
			if (!(x[1] + 0 <= m1 && m1 <= x[2] + 0 && y[1] + 0 <= m2 && m2 <= y[2] + 0)) bad = 1; n++ }
			{ m1 = $(NF - 1); m2 = $NF } END { exit bad || n != 3 }' "$T/out"
	RUN_LOG=$T/runs4 "$R" --compare "$T/a.so" --repeat 4 "$D/good.log" >"$T/out" 2>"$T/err"
	check_eq "--repeat 4: four runs, exit 0, the runs row" \
		"$?:$(wc -l <"$T/runs4"):$(grep '^runs ' "$T/out" | tr -s ' ')" "0:4:runs 4"
	RUN_LOG=$T/runs5 "$R" --compare "$T/b.so" "$D/good.log" >"$T/out" 2>"$T/err"
	check_eq "--compare without --repeat: 5 runs (the default)" \
		"$?:$(wc -l <"$T/runs5"):$(grep '^runs ' "$T/out" | tr -s ' ')" "0:5:runs 5"
	RUN_LOG=$T/runs1 "$R" --compare "$T/a.so,$T/b.so" --repeat 1 "$D/good.log" >"$T/out" 2>"$T/err"
	check_eq "--repeat 1: one run each, the table as a single run gives it (no runs, no min-max rows)" \
		"$?:$(wc -l <"$T/runs1"):$(grep -c '^runs \| min-max ' "$T/out"):$(wc -l <"$T/out")" "0:2:0:10"
else
	fail "--compare --repeat: the run-noting allocators compile" "$(head -n 5 "$T/err")"
fi
for bad in 0 101 -1 x 3x ""; do
	check_err "--repeat '$bad': usage error" 2 \
		"alloctap-replay: --repeat takes a count of runs from 1 to 100, not '$bad' (see --help)" \
		"$R" --compare glibc --repeat "$bad" "$D/good.log"
done
check_err "--repeat without --compare: usage error" 2 \
	"alloctap-replay: --repeat goes with --compare, not without: '--repeat' (see --help)" \
	"$R" --repeat 3 "$D/good.log"

finish
