#!/usr/bin/env bash
# replay_threads.sh: --threads, --emit, --latency and --compare of build/alloctap-replay.
#
# The threaded replay is checked from outside the replayer: tests/data/replay/thread_calls.c,
# preloaded, writes every call with the OS thread that made it; for each replay thread, the
# calls it made (function and size; for a free, the size of the block freed) must be exactly
# those of one recorded thread, and there must be as many replay threads as recorded ones. The
# fixture (tests/fixtures/replay_xthread.c) frees, on each thread, blocks of sizes only its
# neighbour allocates, so a free made by the wrong thread shows. free(NULL) is left out of the
# comparison: glibc's thread exit calls free(NULL) twice on each thread, after the last op.
set -u
source "$(dirname "$0")/lib.sh"
R=build/alloctap-replay
M=build/alloctap-munge
D=build/alloctapd
need_built "$R" "$M" build/fixtures/replay_xthread
need_bpf "$D"

# --- a recorded trace of four threads freeing each other's blocks
"$D" -q -o "$T/x.log" -- build/fixtures/replay_xthread 2>"$T/err"
check_eq "fixture traced: status 0" "$?" 0
"$M" -q "$T/x.log" -o "$T/x.munged"
"$M" -q --format binary "$T/x.log" -o "$T/x.atz"
recorded_threads=$(awk '{print $2}' "$T/x.munged" | sort -u | wc -l)
check_eq "fixture: 5 recorded threads (main and 4 workers)" "$recorded_threads" 5

# signatures_of_log MUNGED: per recorded thread, the md5 of its sorted "FUNC SIZE" lines.
signatures_of_log() {
	awk '{
		tid = $2; line = $0; sub(/^[0-9]+ [0-9]+ /, "", line)
		f = line; sub(/\(.*/, "", f)
		a = line; sub(/^[a-z_]+\(/, "", a); sub(/\).*/, "", a); gsub(/ /, "", a)
		n = split(a, arg, ",")
		r = line; res = ""; if (sub(/.*=#/, "", r)) res = r
		if (f == "malloc") { size[res] = arg[1]; print tid, "malloc", arg[1] }
		else if (f == "calloc") { size[res] = arg[1] * arg[2]; print tid, "calloc", arg[1] * arg[2] }
		else if (f == "realloc") { s = substr(arg[1], 2); print tid, "realloc-free", size[s] + 0
			delete size[s]; size[res] = arg[2]; print tid, "realloc", arg[2] }
		else if (f == "free") { s = substr(arg[1], 2); if (size[s] + 0 > 0) print tid, "free", size[s]
			delete size[s] }
	}' "$1" | signatures "${2:-}"
}
# signatures [ordered]: "THREAD LINE" on stdin -> one md5 per thread of its lines, sorted
# (kept in their order with "ordered"), the md5s sorted.
signatures() {
	awk '{ t = $1; $1 = ""; print > "'"$T"'/sig." t }'
	for f in "$T"/sig.*; do
		if [ "${1:-}" = ordered ]; then md5sum <"$f"; else sort "$f" | md5sum; fi
	done | cut -d' ' -f1 | sort
	rm -f "$T"/sig.*
}

if cc -shared -fPIC -O1 -o "$T/thread_calls.so" tests/data/replay/thread_calls.c 2>"$T/err"; then
	for input in x.munged x.atz; do
		rm -f "$T/calls"
		THREAD_CALLS=$T/calls LD_PRELOAD=$T/thread_calls.so "$R" --threads --summary \
			"$T/$input" >"$T/out" 2>"$T/err"
		check_eq "$input --threads: status 0" "$?" 0
		check_err_lines "$input --threads: 5 threads, every call made" "threads: 5" \
			"operations: $(grep -c . "$T/x.munged")"
		os_threads=$(grep -v '^main ' "$T/calls" | awk '{print $1}' | sort -u | wc -l)
		check_eq "$input --threads: the calls happen on 5 threads besides main" "$os_threads" 5
		grep -v '^main ' "$T/calls" | grep -v '^[0-9]* free 0$' | signatures >"$T/got.sig"
		signatures_of_log "$T/x.munged" >"$T/want.sig"
		check_file_eq "$input --threads: each replay thread made exactly one recorded thread's calls, frees of the other threads' blocks included" \
			"$T/got.sig" "$T/want.sig"
	done
	# without --threads every call is the main thread's
	rm -f "$T/calls"
	THREAD_CALLS=$T/calls LD_PRELOAD=$T/thread_calls.so "$R" "$T/x.munged" 2>"$T/err"
	check_eq "without --threads: no call on another thread" \
		"$(grep -vc '^main ' "$T/calls")" 0
else
	fail "the thread_calls library builds" "$(cat "$T/err")"
fi

run_cmd "$R" --summary "$T/x.munged"
grep -E '^(peak|final) live' "$T/err" >"$T/serial.live"
run_cmd "$R" --summary --threads "$T/x.munged"
grep -E '^(peak|final) live' "$T/err" >"$T/threads.live"
check_file_eq "--threads: the same peak and final live bytes and objects as one thread" \
	"$T/threads.live" "$T/serial.live"
waits=$(sed -n 's/^thread waits: //p' "$T/err")
check "--threads: the waits are counted (cross-thread frees must wait: $waits)" \
	test "${waits:-0}" -gt 0
check_eq "--threads: a line per thread" "$(grep -c '^thread [0-9]*: tid=' "$T/err")" 5

# --- --emit: munging the replay's output gives back its input (one thread; threads that kept
# the log's interleaving); a threaded replay's is written in the order its calls happened
"$M" -q demo/python3-json.log -o "$T/demo.munged"
for input in x.munged demo.munged; do
	run_cmd "$R" --emit "$T/emit.log" "$T/$input"
	"$M" -q "$T/emit.log" -o "$T/emit.munged"
	check_file_eq "--emit on $input: munged, the input byte for byte" "$T/emit.munged" "$T/$input"
done
run_cmd "$R" --threads --emit "$T/emit.log" "$T/demo.munged"
"$M" -q "$T/emit.log" -o "$T/emit.munged"
check_file_eq "--emit --threads on demo.munged (one recorded thread): munged, the input byte for byte" \
	"$T/emit.munged" "$T/demo.munged"
run_cmd "$R" --threads --emit "$T/emit.log" "$T/x.munged"
run_cmd "$M" --strict "$T/emit.log" -o "$T/emit.munged"
check_eq "--emit --threads on x.munged: a causal trace (munge --strict accepts every line)" "$rc" 0
signatures_of_log "$T/emit.munged" ordered >"$T/got.sig"
signatures_of_log "$T/x.munged" ordered >"$T/want.sig"
check_file_eq "--emit --threads on x.munged: each thread's calls, in order, as recorded" \
	"$T/got.sig" "$T/want.sig"
check_eq "--emit --threads on x.munged: as many lines as the input" \
	"$(wc -l <"$T/emit.munged")" "$(wc -l <"$T/x.munged")"
check "--emit: real pointers, not slots" grep -q '=0x[0-9a-f]*[1-9a-f]' "$T/emit.log"
run_cmd "$R" --emit - "$T/x.munged"
check_eq "--emit -: to stdout" "$(wc -l <"$T/out")" "$(wc -l <"$T/x.munged")"
run_cmd "$R" --emit /nonexistent/dir/out.log "$T/x.munged"
check_eq "--emit to a folder that does not exist: status 1" "$rc" 1
check "--emit to a folder that does not exist: the path named" \
	grep -q '/nonexistent/dir/out.log' "$T/err"

# --- markers in a threaded replay: a barrier and a statistics line each
{
	echo "1 1 malloc(10)=#1"
	echo "1 2 malloc(20)=#2"
	echo "1 1 jemalloc_stats()"
	echo "1 2 free(#1)"
	echo "1 1 free(#2)"
	echo "1 2 jemalloc_stats()"
} >"$T/marks.log"
run_cmd "$R" --threads "$T/marks.log"
check_eq "--threads, markers: a statistics line at each" \
	"$(grep -o '^stats line=[0-9]* ops=[0-9]* objects=[0-9]*' "$T/err" | tr '\n' ' ')" \
	"stats line=3 ops=2 objects=2 stats line=6 ops=4 objects=0 "

# --- a free of a slot nothing allocated, on another thread: replayed (free(NULL)), no hang
printf '1 1 malloc(8)=#1\n1 2 free(#9)\n1 2 free(#1)\n' >"$T/orphan.log"
run_cmd timeout 10 "$R" --threads --summary "$T/orphan.log"
check_eq "--threads, free of a slot never filled: status 0, no hang" "$rc" 0
check_err_lines "--threads, free of a slot never filled: final live 0" \
	"final live requested bytes: 0" "operations: 3"

# --- --latency on a log whose counts are known
awk 'BEGIN { for (i = 1; i <= 1000; i++) print "1 1 malloc(" (i % 2 ? 40 : 3000) ")=#" i
	     for (i = 1; i <= 1000; i++) print "1 1 free(#" i ")" }' >"$T/lat.log"
run_cmd "$R" --latency "$T/lat.log"
check_eq "--latency: status 0" "$rc" 0
check "--latency: the clock and its cost" grep -q '^latency clock: CLOCK_MONOTONIC (vDSO), [0-9.]* ns per read' "$T/err"
check "--latency: malloc and free, 1000 calls each" \
	test "$(grep -oE '^latency (malloc|free): count=[0-9]+' "$T/err" | tr '\n' ' ')" = \
	"latency malloc: count=1000 latency free: count=1000 "
# ordered percentiles: p50 <= p90 <= p99 <= p99.9 <= max, all > 0
ordered=$(sed -n 's/^latency malloc: count=1000 mean=[0-9.]* p50=\([0-9]*\) p90=\([0-9]*\) p99=\([0-9]*\) p99.9=\([0-9]*\) max=\([0-9]*\)$/\1 \2 \3 \4 \5/p' "$T/err" |
	awk '{ print ($1 > 0 && $1 <= $2 && $2 <= $3 && $3 <= $4 && $4 <= $5) ? "yes" : "no" }')
check_eq "--latency: percentiles in order, none zero" "$ordered" yes
run_cmd "$R" --latency=size "$T/lat.log"
check_eq "--latency=size: a line per function and size class with their counts" \
	"$(grep -oE '^latency [a-z]+ [0-9-]+: count=[0-9]+' "$T/err" | tr '\n' ' ')" \
	"latency malloc 32-63: count=500 latency malloc 2048-4095: count=500 latency free 32-63: count=500 latency free 2048-4095: count=500 "
run_cmd "$R" -v --latency "$T/lat.log"
hist=$(awk '/^  histogram malloc / { n += $NF } END { print n }' "$T/err")
check_eq "--latency -v: the histogram behind malloc's line sums to its count" "$hist" 1000
run_cmd "$R" --threads --latency "$T/x.munged"
check_eq "--threads --latency: every call counted" \
	"$(sed -n 's/^latency [a-z_]*: count=\([0-9]*\).*/\1/p' "$T/err" | awk '{ n += $1 } END { print n }')" \
	"$(grep -c . "$T/x.munged")"

# --- --compare
run_cmd "$R" --compare glibc,jemalloc --latency "$T/lat.log"
check_eq "--compare: status 0" "$rc" 0
check_eq "--compare: a column per allocator" "$(head -n 1 "$T/out" | tr -s ' ')" "allocator glibc jemalloc"
check_eq "--compare: each allocator's library" \
	"$(grep '^library ' "$T/out" | tr -s ' ')" "library libc.so.6 libjemalloc.so.2"
check_eq "--compare: the operations of each" \
	"$(grep '^operations ' "$T/out" | tr -s ' ')" "operations 2000 2000"
check_eq "--compare: live bytes of each" \
	"$(grep '^peak live requested bytes ' "$T/out" | tr -s ' ')" "peak live requested bytes 1520000 1520000"
check "--compare --latency: malloc's percentiles" grep -q '^malloc p99.9 ns  *[0-9][0-9]*  *[0-9][0-9]*$' "$T/out"
check "--compare: time per operation of each" grep -q '^ns per operation  *[0-9.]*  *[0-9.]*$' "$T/out"
run_cmd "$R" --compare glibc,jemalloc --threads "$T/x.munged"
check "--compare --threads: the threads row" grep -q '^threads  *5  *5$' "$T/out"
check_err "--compare with stdin: usage error" 2 \
	"alloctap-replay: --compare replays the input once per allocator: it needs a FILE, not 'stdin' (see --help)" \
	"$R" --compare glibc,jemalloc -
check_err_match "--compare with an unknown allocator: usage error naming it" 2 "'nosuch'" \
	"$R" --compare glibc,nosuch "$T/lat.log"
check_err_match "--compare with --emit: usage error" 2 "does not go with '--emit'" \
	"$R" --compare glibc --emit "$T/e" "$T/lat.log"
check_err_match "--compare, a replay that fails: its message and status 1" 1 "the replay failed" \
	"$R" --compare glibc "$T/x.log"
check_err_match "--latency=bad: usage error" 2 "takes nothing or =size" "$R" --latency=bad "$T/lat.log"
finish
