#!/usr/bin/env bash
# replay_bench.sh: alloctap-replay's speed against glibc, jemalloc, tcmalloc and mimalloc side
# by side, and what its reading and parsing add to the allocator's own cost (build/bench/
# replay_direct makes the same calls from a pre-decoded array).
#
# Two workloads:
#   genlog  build/bench/genlog LINES 1 | alloctap-munge --pid FIRST: the synthetic mix, with
#           large blocks (some above glibc's mmap threshold), so allocators differ widely;
#   small   an awk-generated munged log of small blocks (8 to 1 KiB) churning over 10000
#           slots, where the allocator is cheap and the replay's own cost shows.
# A third table compares the input formats: the same munged log as text and as a munged binary
# trace (.atz, made by build/bench/atz_tool), on the demo log and on genlog.
# Each figure is the best of RUNS runs. Usage: bench/replay_bench.sh [LINES] [RUNS]
set -u
. "$(dirname "$0")/lib.sh"
LINES=${1:-2000000}
RUNS=${2:-3}
R=build/alloctap-replay
DIRECT=build/bench/replay_direct

ATZ=build/bench/atz_tool
need_built "replay bench" "$R" "$DIRECT" "$ATZ"

# The genlog workload, or an awk stand-in when genlog or munge are missing.
make_genlog() {
	if [ -x build/bench/genlog ] && [ -x build/alloctap-munge ]; then
		build/bench/genlog "$LINES" 1 >"$T/raw"
		local pid
		pid=$(head -n 1 "$T/raw" | cut -d' ' -f1)
		build/alloctap-munge -qq --pid "$pid" "$T/raw" >"$T/genlog.log" || return 1
		rm -f "$T/raw"
		GENLOG_WHAT="genlog $LINES 1 | alloctap-munge --pid $pid"
	else
		make_small "$T/genlog.log" "$LINES" 7 65536
		GENLOG_WHAT="awk stand-in (build/bench/genlog or build/alloctap-munge missing)"
	fi
}

# make_small OUT OPS SEED MAXSIZE: a munged log of OPS calls over 10000 slots: an empty slot
# gets malloc (1 in 8 calloc, 1 in 32 posix_memalign), a full one free (1 in 5 realloc).
make_small() {
	awk -v n="$2" -v seed="$3" -v slots=10000 -v max="$4" -f tests/data/munged_churn.awk >"$1"
}

# summary_value FILE KEY: the value of "KEY: value" in a --summary output.
summary_value() {
	sed -n "s/^$2: //p" "$1"
}

# best_replay LOG ALLOCATOR RUNS [OPTION...]: the best "ns per operation" of RUNS replays; the
# summary of that run is left in $T/best.sum.
best_replay() {
	local best="" ns log=$1 alloc=$2 runs=$3
	shift 3
	for _ in $(seq "$runs"); do
		"$R" -q --summary --allocator "$alloc" "$@" "$log" 2>"$T/sum" >/dev/null ||
			{ echo "  $alloc: replay of $log failed: $(tail -n 1 "$T/sum")" >&2; return 1; }
		ns=$(summary_value "$T/sum" "ns per operation")
		if [ -z "$best" ] || awk -v a="$ns" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$ns
			cp "$T/sum" "$T/best.sum"
		fi
	done
	echo "$best"
}

# best_direct LOG PRELOAD RUNS: the best ns per operation of RUNS runs of replay_direct.
best_direct() {
	for _ in $(seq "$3"); do
		LD_PRELOAD=$2 "$DIRECT" "$1" >"$T/direct" 2>&1 ||
			{ echo "  replay_direct failed: $(cat "$T/direct")" >&2; return 1; }
		sed -n 's/.*ns_per_op=//p' "$T/direct"
	done | minimum
}

# bench_table LOG TITLE: one row per allocator.
bench_table() {
	local log=$1
	echo "$2"
	echo "  $(grep -c . "$log") lines, $(du -h "$log" | cut -f1)B; best of $RUNS runs"
	printf '  %-9s %13s %10s %13s %13s %14s %17s %15s\n' allocator "replay ns/op" "Mops/s" \
		"direct ns/op" "replay cost" "peak RSS MiB" "-c peak RSS MiB" "final live MiB"
	for a in glibc jemalloc tcmalloc mimalloc; do
		local pre best_r best_d rss live ops
		pre=$(preload_of "$a")
		if [ -n "$pre" ] && [ ! -r "$pre" ]; then
			printf '  %-9s %s\n' "$a" "(missing $pre)"
			continue
		fi
		best_r=$(best_replay "$log" "$a" "$RUNS") || return 1
		rss=$(summary_value "$T/best.sum" "peak rss bytes")
		live=$(summary_value "$T/best.sum" "final live requested bytes")
		ops=$(summary_value "$T/best.sum" "operations")
		best_d=$(best_direct "$log" "$pre" "$RUNS") || return 1
		# -c touches every byte requested: the RSS the workload really costs
		"$R" -q -c --summary --allocator "$a" "$log" 2>"$T/sum" >/dev/null ||
			{ echo "  $a: replay -c failed: $(tail -n 1 "$T/sum")"; return 1; }
		local rss_c
		rss_c=$(summary_value "$T/sum" "peak rss bytes")
		awk -v a="$a" -v r="$best_r" -v d="$best_d" -v rss="$rss" -v rc="$rss_c" \
			-v live="$live" 'BEGIN {
			printf "  %-9s %13.1f %10.2f %13.1f %+13.1f %14.1f %17.1f %15.1f\n", a, r,
				1000 / r, d, r - d, rss / 1048576, rc / 1048576, live / 1048576 }'
	done
	echo "  ($ops operations replayed; replay cost = replay ns/op - direct ns/op: reading,"
	echo "   parsing, checks and accounting per call; peak RSS is VmHWM, the replayer's"
	echo "   own slots and 1 MiB input buffer included; -c: one run with every block filled)"
}

# The input formats differ by a few ns per call, less than the run-to-run noise of one replay:
# their table takes the best of more runs.
INPUT_RUNS=$((RUNS * 3 > 5 ? RUNS * 3 : 5))

# input_table NAME TEXTLOG ALLOCATOR...: one row per allocator and format (text, binary) of
# the same munged log, with the binary's speed-up over text side by side.
input_table() {
	local name=$1 text=$2
	shift 2
	"$ATZ" encode "$text" "$T/input.atz" 2>"$T/sum" ||
		{ echo "  $name: atz_tool encode failed: $(tail -n 1 "$T/sum")"; return 1; }
	local ops tb bb
	ops=$(grep -c . "$text")
	tb=$(stat -c %s "$text")
	bb=$(stat -c %s "$T/input.atz")
	echo "workload $name: $ops events; text $tb bytes, binary $bb bytes; best of $INPUT_RUNS runs"
	printf '  %-9s %-7s %13s %10s %13s %13s %9s\n' allocator input "replay ns/op" "Mops/s" \
		"direct ns/op" "replay cost" "speed-up"
	for a in "$@"; do
		local nt nb nd
		nt=$(best_replay "$text" "$a" "$INPUT_RUNS") || return 1
		nb=$(best_replay "$T/input.atz" "$a" "$INPUT_RUNS") || return 1
		nl=$(best_replay "$T/input.atz" "$a" "$INPUT_RUNS" --load) || return 1
		nd=$(best_direct "$text" "$(preload_of "$a")" "$INPUT_RUNS") || return 1
		awk -v a="$a" -v t="$nt" -v b="$nb" -v l="$nl" -v d="$nd" 'BEGIN {
			printf "  %-9s %-7s %13.1f %10.2f %13.1f %+13.1f %9s\n", a, "text", t, 1000 / t,
				d, t - d, ""
			printf "  %-9s %-7s %13.1f %10.2f %13.1f %+13.1f %8.2fx\n", a, "binary", b,
				1000 / b, d, b - d, t / b
			printf "  %-9s %-7s %13.1f %10.2f %13.1f %+13.1f %8.2fx\n", a, "--load", l,
				1000 / l, d, l - d, t / l }'
	done
	echo "  (speed-up = text ns/op / binary ns/op; replay cost = replay - direct: reading,"
	echo "   parsing or decoding, checks and accounting per call; --load: the binary trace"
	echo "   read whole first, as replay_direct does, so only the calls and their checks and"
	echo "   accounting are timed; goal: a replay cost of at most 15 ns)"
}

echo "== replay: operations per second by allocator"
make_genlog || { echo "replay bench: cannot build the genlog workload"; exit 1; }
bench_table "$T/genlog.log" "workload genlog: $GENLOG_WHAT"
echo
make_small "$T/small.log" "$LINES" 1 1024
bench_table "$T/small.log" "workload small: $LINES calls, 8 B to 1 KiB blocks over 10000 slots"
echo
echo "== replay: text vs binary input (the same munged log)"
if [ -x build/alloctap-munge ] && [ -f demo/python3-json.log ]; then
	build/alloctap-munge -qq demo/python3-json.log >"$T/demo.log"
	input_table "demo/python3-json.log munged" "$T/demo.log" glibc jemalloc
else
	echo "  (build/alloctap-munge or demo/python3-json.log missing: demo row skipped)"
fi
echo
input_table "genlog: $GENLOG_WHAT" "$T/genlog.log" glibc jemalloc
echo
echo "== replay --threads: a recorded 4-thread program, replayed on one thread and on 4"
# threads_row NAME COMMAND...: records COMMAND with alloctapd (root), then times the program
# itself, the replay on one thread and with --threads (best of RUNS each), and the waits.
threads_row() {
	local name=$1 best_p="" best_1="" best_t="" t0 ms waits
	shift
	if [ "$(id -u)" -ne 0 ] || [ ! -x build/alloctapd ]; then
		printf '  %-28s %s\n' "$name" "(needs root and build/alloctapd to record)"
		return
	fi
	rm -f "$T/threads.raw" # alloctapd appends to a path
	build/alloctapd -q -o "$T/threads.raw" -- "$@" >/dev/null 2>&1
	build/alloctap-munge -qq --format binary "$T/threads.raw" -o "$T/threads.atz"
	for _ in $(seq "$RUNS"); do
		t0=$(date +%s%N)
		"$@" >/dev/null
		ms=$((($(date +%s%N) - t0) / 1000))
		[ -z "$best_p" ] || [ "$ms" -lt "$best_p" ] && best_p=$ms
		"$R" -q --summary "$T/threads.atz" 2>"$T/sum"
		ms=$(($(summary_value "$T/sum" "wall time ns") / 1000))
		[ -z "$best_1" ] || [ "$ms" -lt "$best_1" ] && best_1=$ms
		"$R" -q --summary --threads "$T/threads.atz" 2>"$T/sum"
		ms=$(($(summary_value "$T/sum" "wall time ns") / 1000))
		if [ -z "$best_t" ] || [ "$ms" -lt "$best_t" ]; then
			best_t=$ms
			waits="$(summary_value "$T/sum" "thread waits") / $(($(summary_value "$T/sum" "thread wait time ns") / 1000))"
		fi
	done
	printf '  %-28s %9s %11s %12s %13s %18s\n' "$name" "$(grep -c . "$T/threads.raw")" \
		"$best_p" "$best_1" "$best_t" "$waits"
}
printf '  %-28s %9s %11s %12s %13s %18s\n' workload calls "program us" "1 thread us" \
	"--threads us" "waits / wait us"
threads_row "pairloop 100000 x 4 threads" build/bench/pairloop 100000 4
threads_row "replay_xthread (4 threads)" build/fixtures/replay_xthread
echo "  (program: the recorded program run untraced, whole process; replays: the replay alone,"
echo "   from a munged binary trace, glibc; $(nproc) cores; best of $RUNS runs; waits: ops of"
echo "   --threads that waited for another thread, and the time summed over the threads)"
