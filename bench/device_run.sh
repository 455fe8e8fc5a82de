#!/usr/bin/env bash
# The scaling measurements on a machine of many cores where nothing is installed: only the
# tree, build/alloctapd, build/bench/pairloop, build/bench/rusage_of and devlibs/ (made here by
# bench/devlibs.sh, with --tools for perf and bpftool). Needs root. Writes to $OUT:
#   machine.txt    the machine (date, kernel, cores, CPU model, memory, distribution);
#   scaling.txt    bench/scaling_bench.sh: 16 threads down to 1 (up to the machine's cores),
#                  6 modes (bare, floor, discard, binary, text, stacks), SCALING_ROUNDS rounds
#                  (default 9) of 50000 pairs per thread; stopped at SCALING_S seconds
#                  (default 420) at the latest, the thread counts done kept;
#   profile.txt    bench/scaling_profile.sh at PROFILE_THREADS threads (default 16, or the
#                  cores where fewer), within PROFILE_S seconds (default 120);
#   profile/       its perf reports (by symbol and by caller) and BPF counters, when perf runs;
#   lossless.txt   16 threads (or the cores) x LOSSLESS_PAIRS pairs (default 1000000) launched
#                  under the daemon, binary to a file (encoded by the default number of
#                  threads, then by one: ALLOCTAP_ENCODERS=1) and text to /dev/null, each daemon of
#                  LOSSLESS_DAEMONS (default build/alloctapd; others to compare builds): its
#                  summary (events written and lost) and the loop's wall time, within
#                  LOSSLESS_S seconds (default 50);
#   device_run.log what ran, how long each part took, and which perf.
# Prepared here with: make build/alloctapd build/bench/pairloop build/bench/rusage_of &&
# bench/devlibs.sh --tools (33 MB with the tools, 3 MB without); the paths to bring along are
# build/alloctapd, build/bench/pairloop, build/bench/rusage_of and devlibs; then, there,
# OUT=folder bench/device_run.sh.
set -u
cd "$(dirname "$0")/.." || exit 1
if [ -z "${OUT:-}" ]; then
	echo "device_run: set OUT to the folder for the results"
	exit 2
fi
mkdir -p "$OUT/profile"
export LD_LIBRARY_PATH=$PWD/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
log() { echo "$(date -u +%H:%M:%S) $*" | tee -a "$OUT/device_run.log"; }

{
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "kernel: $(uname -r)"
	echo "cores: $(nproc)"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
	echo "memory: $(grep -m1 MemTotal /proc/meminfo | awk '{print $2, $3}')"
	echo "system: $(. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-?}")"
	echo "glibc: $(getconf GNU_LIBC_VERSION 2>/dev/null)"
} >"$OUT/machine.txt"
cat "$OUT/machine.txt" >>"$OUT/device_run.log"

missing=0
for p in build/alloctapd build/bench/pairloop build/bench/rusage_of; do
	[ -x "$p" ] || { log "device_run: $p is missing"; missing=1; }
done
if ! build/alloctapd --version >/dev/null 2>&1; then
	log "device_run: build/alloctapd does not start (a library missing from devlibs?):"
	build/alloctapd --version 2>&1 | tee -a "$OUT/device_run.log"
	missing=1
fi
[ $missing = 0 ] || exit 1

# perf: the machine's when it runs, else the one devlibs.sh --tools copied, else none
PERF=perf
if ! perf stat -a -e cpu-clock -o /dev/null -- true >/dev/null 2>&1; then
	PERF=$PWD/devlibs/tools/perf
	if ! "$PERF" stat -a -e cpu-clock -o /dev/null -- true >/dev/null 2>&1; then
		PERF=perf-absent
	fi
fi
export PERF
log "perf: $PERF ($("$PERF" --version 2>/dev/null || echo "does not run"))"

threads=16
[ "$(nproc)" -lt 16 ] && threads=$(nproc)
scaling_s=${SCALING_S:-420}
profile_s=${PROFILE_S:-120}

# the thread counts from the most down, so that a cut at the budget loses the fewest-thread
# rows, which matter least
counts=""
for ((t = 1; t <= $(nproc); t *= 2)); do counts="$t $counts"; done
[ "$(nproc)" -ge 16 ] && [[ " $counts " != *" 16 "* ]] && counts="16 $counts"
log "scaling_bench.sh: threads $counts, ${SCALING_ROUNDS:-9} rounds, 50000 pairs," \
	"at most $scaling_s s"
start=$SECONDS
THREADS=$counts ROUNDS=${SCALING_ROUNDS:-9} PAIRS=50000 BUDGET_S=$((scaling_s - 30)) \
	timeout "$scaling_s" bash bench/scaling_bench.sh >"$OUT/scaling.txt" 2>&1
log "scaling_bench.sh: status $?, $((SECONDS - start)) s"

log "scaling_profile.sh: $threads threads, at most $profile_s s"
start=$SECONDS
PAIRS=${PROFILE_PAIRS:-100000} PERIOD_NS=1000000 OUTDIR=$OUT/profile \
	timeout "$profile_s" bash bench/scaling_profile.sh "$threads" >"$OUT/profile.txt" 2>&1
log "scaling_profile.sh: status $?, $((SECONDS - start)) s"
# perf's data files are large; the reports made from them stay
rm -f "$OUT"/profile/perf.*.data
echo 0 >/proc/sys/kernel/bpf_stats_enabled 2>/dev/null

lossless_pairs=${LOSSLESS_PAIRS:-1000000}
lossless_end=$((SECONDS + ${LOSSLESS_S:-50}))
log "lossless: $threads threads x $lossless_pairs pairs, until $((lossless_end - SECONDS)) s from now"
for d in ${LOSSLESS_DAEMONS:-build/alloctapd}; do
	for mode in binary text binary-1; do
		if [ $SECONDS -ge $lossless_end ]; then
			log "lossless: out of time before $d $mode"
			break 2
		fi
		dest=$OUT/lossless.atz
		[ $mode = text ] && dest=/dev/null
		args="-f binary"
		[ $mode = text ] && args=""
		encoders=${ALLOCTAP_ENCODERS:-}
		[ $mode = binary-1 ] && encoders=1
		# the daemon refuses an empty ALLOCTAP_ENCODERS: set only when there is a number
		# shellcheck disable=SC2086
		env ${encoders:+ALLOCTAP_ENCODERS=$encoders} timeout $((lossless_end - SECONDS + 5)) "$d" $args \
			-o "$dest" -- build/bench/pairloop \
			"$lossless_pairs" "$threads" >"$OUT/lossless.out" 2>"$OUT/lossless.err"
		status=$?
		echo "$d $mode status $status: $(cat "$OUT/lossless.out") $(grep 'events written' \
			"$OUT/lossless.err")" >>"$OUT/lossless.txt"
		# a run that failed says why
		[ $status = 0 ] || tail -n 5 "$OUT/lossless.err" | sed 's/^/    /' >>"$OUT/lossless.txt"
		rm -f "$OUT/lossless.atz"
	done
done
rm -f "$OUT/lossless.out" "$OUT/lossless.err"
log "lossless: done"
cat "$OUT/scaling.txt" "$OUT/profile.txt" "$OUT/lossless.txt"
