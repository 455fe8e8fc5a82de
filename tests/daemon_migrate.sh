#!/usr/bin/env bash
# Threads moving between CPUs, with the real BPF program: alloc_migrate's workers pass blocks to
# each other while they move themselves (and the main thread moves them) from CPU to CPU, so a
# block allocated on one CPU is released on another, a call may return on another CPU than it
# entered on, and the events of one thread, and of one address, are spread over several rings.
# Run as is: the daemon exits 0, nothing is lost, and the log is causally valid per address
# (allocated, released, allocated...; a realloc's release of its old address before anyone's
# allocation of it) with the calls per function exactly the fixture's. Run with the daemon
# stopped (SIGSTOP) for a while, so that the rings back up: still exit 0, and written + lost ==
# calls, the log valid but for what the lost events explain. Run writing a binary trace encoded
# by three threads into lz4 frames (decoded by atz_tool): the same checks, in several frames.
# ROUNDS (default: about 150000 calls) sets each worker's rounds; STOP_S (default 0.5) how long
# the daemon stops; SEED (default: the time) the fixture's choices, printed first.
source "$(dirname "$0")/lib.sh"
D=$ROOT/build/alloctapd
FX=$ROOT/build/fixtures
need_bpf "$D"
# the output written by a thread of its own, as on a machine of 2 CPUs or more (the default
# there); one run below has the loop write it, as on one CPU
export ALLOCTAP_WRITER_THREAD=1
ATZ=$ROOT/build/bench/atz_tool
need_built "$FX/alloc_migrate" "$FX/log_checker" "$ATZ"
STOP_S=${STOP_S:-0.5}
SEED=${SEED:-$(date +%s)}

# The CPUs this script may run on: two workers per CPU, at most 4.
CPUS=$(nproc)
THREADS=$((CPUS * 2 < 4 ? CPUS * 2 : 4))
# a worker's round: 4 blocks allocated and 4 freed, a realloc every other round
ROUNDS=${ROUNDS:-$((150000 / (9 * THREADS)))}
echo "# alloc_migrate $THREADS threads, $ROUNDS rounds, seed $SEED, $CPUS CPUs"

# migrate NAME STOP: alloctapd -v launching alloc_migrate, stopped for STOP seconds 0.3 s after
# it starts (0: never); its log in $T/NAME.log, its messages in $T/NAME.err, the fixture's
# counts in $T/NAME.counts and its stdout in $T/NAME.out; the daemon's status in $drc, the
# fixture's pid in $pid; $working 1 when the fixture had not yet written its counts as the daemon
# stopped.
# With BINARY=1 the daemon writes a binary trace ($T/NAME.atz), decoded into $T/NAME.log.
migrate() {
	local name=$1 stop=$2 dm out=$T/$1.log fmt=()
	working=0
	[ "${BINARY:-0}" = 1 ] && out=$T/$name.atz && fmt=(-f binary)
	"$D" -v "${fmt[@]}" -o "$out" -- "$FX/alloc_migrate" "$THREADS" "$ROUNDS" \
		"$T/$name.counts" "$SEED" >"$T/$name.out" 2>"$T/$name.err" &
	dm=$!
	if [ "$stop" != 0 ]; then
		sleep 0.3
		kill -STOP $dm
		[ -e "$T/$name.counts" ] || working=1
		sleep "$stop"
		kill -CONT $dm
	fi
	wait $dm
	drc=$?
	[ "${BINARY:-0}" = 1 ] && "$ATZ" decode "$out" "$T/$name.log" 2>>"$T/$name.err"
	pid=$(sed -n 's/^alloctapd: launched .* as pid \([0-9]*\),.*/\1/p' "$T/$name.err")
}

# summary NAME FIELD: a figure of the daemon's summary (written, lost).
summary() {
	local e=$T/$1.err
	case $2 in
	written) sed -n 's/^alloctapd: \([0-9]*\) events written, .*/\1/p' "$e" ;;
	lost) sed -n 's/^alloctapd: [0-9]* events written, \([0-9]*\) events lost.*/\1/p' "$e" ;;
	esac
}

migrate calm 0
check "moving threads: daemon exit status 0 (and the fixture's)" \
	bash -c "[ $drc -eq 0 ] && [ -n '$pid' ] || { cat '$T/calm.err'; exit 1; }"
crossed=$(sed -n 's/^crossed \([0-9]*\) .*/\1/p' "$T/calm.out")
echo "# alloc_migrate says: $(cat "$T/calm.out")"
if [ "$CPUS" -gt 1 ]; then
	check "moving threads: blocks released on another CPU than they were allocated on (${crossed:-none})" \
		test "${crossed:-0}" -gt 0
else
	check "moving threads, one CPU: no block released on another CPU (${crossed:-none})" \
		test "${crossed:-x}" = 0
fi
check "moving threads: the summary says 0 events lost" \
	bash -c "[ '$(summary calm lost)' = 0 ] || { grep 'events written' '$T/calm.err'; exit 1; }"
check "moving threads: causally valid per address, written == calls, per function exact" \
	"$FX/log_checker" "$T/calm.log" "${pid:-0}" "$T/calm.counts" 0
# how many free(0x0) each thread exit makes, seen with nothing lost (the stopped run may lose
# some or all of them, so its log cannot tell)
exit_null_frees=$(sed -n 's/^free(0x0) from [0-9]* threads, \([0-9]*\) each$/\1/p' "$T/check.out")

ALLOCTAP_WRITER_THREAD=0
migrate loop 0
ALLOCTAP_WRITER_THREAD=1
check "moving threads, the loop writing the output: daemon exit status 0 (and the fixture's)" \
	bash -c "[ $drc -eq 0 ] && [ -n '$pid' ] || { cat '$T/loop.err'; exit 1; }"
check "moving threads, the loop writing the output: causally valid per address, written == calls, per function exact" \
	"$FX/log_checker" "$T/loop.log" "${pid:-0}" "$T/loop.counts" 0

# encoded into lz4 frames by three threads, each run a frame of its own: a block allocated in
# one frame and released in a later one is coded by address there, and read back the same
BINARY=1 ALLOCTAP_ENCODERS=3 ALLOCTAP_FRAME_EACH_RUN=1 migrate frames 0
check "moving threads, a binary trace encoded by 3 threads: daemon exit status 0 (and the fixture's)" \
	bash -c "[ $drc -eq 0 ] && [ -n '$pid' ] || { cat '$T/frames.err'; exit 1; }"
check "moving threads, a binary trace encoded by 3 threads: causally valid per address, written == calls, per function exact" \
	"$FX/log_checker" "$T/frames.log" "${pid:-0}" "$T/frames.counts" 0
check "moving threads, a binary trace encoded by 3 threads: the summary's events written are the trace's ($(summary frames written))" \
	test "$(summary frames written)" = "$(wc -l <"$T/frames.log")"
check "moving threads, a binary trace encoded by 3 threads: the document's reader reads the C reader's events" \
	bash -c "python3 '$ROOT/tests/atz_spec_reader.py' --file '$T/frames.atz' | cmp -s - '$T/frames.log'"
frames=$(lz4_frames "$T/frames.atz")
check "moving threads, a binary trace encoded by 3 threads: in several lz4 frames (${frames:-none})" \
	test "${frames:-0}" -ge 3
# the same, a run going on in the frame of the run before while its encoder keeps up (the
# frames as the encoders' speed made them: the sink's own, then one at least)
BINARY=1 ALLOCTAP_ENCODERS=3 migrate goon 0
check "moving threads, 3 encoders whose runs go on in their frames: daemon exit status 0 (and the fixture's)" \
	bash -c "[ $drc -eq 0 ] && [ -n '$pid' ] || { cat '$T/goon.err'; exit 1; }"
check "moving threads, 3 encoders whose runs go on in their frames: causally valid per address, written == calls, per function exact" \
	"$FX/log_checker" "$T/goon.log" "${pid:-0}" "$T/goon.counts" 0
check "moving threads, 3 encoders whose runs go on in their frames: the document's reader reads the C reader's events" \
	bash -c "python3 '$ROOT/tests/atz_spec_reader.py' --file '$T/goon.atz' | cmp -s - '$T/goon.log'"
echo "# moving threads, 3 encoders whose runs go on in their frames: $(lz4_frames "$T/goon.atz") lz4 frames"
migrate stopped "$STOP_S"
lost=$(summary stopped lost)
check "moving threads, daemon stopped ${STOP_S} s: daemon exit status 0 (and the fixture's)" \
	bash -c "[ $drc -eq 0 ] && [ -n '$pid' ] || { cat '$T/stopped.err'; exit 1; }"
check "moving threads, daemon stopped: it stopped while the workers worked (else raise ROUNDS)" \
	test "$working" = 1
check "moving threads, daemon stopped: the summary counts the lost (${lost:-none})" test -n "$lost"
if [ -n "$exit_null_frees" ] && [ -n "$lost" ]; then
	check "moving threads, daemon stopped: written + lost == calls, valid but for the lost ($lost)" \
		"$FX/log_checker" "$T/stopped.log" "${pid:-0}" "$T/stopped.counts" "$lost" \
		"$exit_null_frees"
else
	fail "moving threads, daemon stopped: written + lost == calls" \
		"the run without stop did not say how many free(0x0) a thread exit makes," \
		"or the stopped run's summary has no lost count"
fi
finish
