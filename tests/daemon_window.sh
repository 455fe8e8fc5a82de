#!/usr/bin/env bash
# The recording window with the real BPF program. A process whose main thread allocates only
# with realloc (realloc(NULL, n) included) and frees with free, while a second thread loops on
# malloc/free, is traced in WINDOWS windows of 0.3 s (alloctapd --pid --duration): in each
# window's log the main thread has no malloc( line (a realloc(NULL, n) half seen at the start
# would be one), no address is allocated twice while live nor released twice (frees missing at
# the end would do the first), and no more blocks are live at the end than the process holds.
# Then the process is stopped (SIGSTOP) while traced, most likely inside allocator calls, and
# the trace ended: the daemon must not wait for those calls past its bound, and counts them
# lost.
source "$(dirname "$0")/lib.sh"
D=$ROOT/build/alloctapd
FX=$ROOT/build/fixtures
need_bpf "$D"
WINDOWS=${WINDOWS:-5}

"$FX/alloc_realloc_loop" "$T/ready" &
fx=$!
if ! wait_for "$T/ready" . 10; then
	kill $fx
	fail "alloc_realloc_loop ready" "no ready file after 10 s"
	finish
fi
read -r pid held <"$T/ready"
for w in $(seq "$WINDOWS"); do
	"$D" --pid "$pid" --duration 0.3 -o "$T/w$w.log" 2>"$T/w$w.err"
	rc=$?
	lines=$(wc -l <"$T/w$w.log")
	check "window $w: alloctapd exit status 0, $lines lines" \
		bash -c "[ $rc -eq 0 ] && [ $lines -gt 0 ] || { cat '$T/w$w.err'; exit 1; }"
	check "window $w: no malloc( line from the realloc-only thread" \
		bash -c "! grep -m3 '^$pid $pid malloc(' '$T/w$w.log'"
	check "window $w: nothing allocated twice while live nor released twice, at most $held live at the end" \
		"$FX/log_checker" "$T/w$w.log" "$pid" --window "$held"
	check "window $w: nothing lost" grep -q ' 0 events lost' "$T/w$w.err"
done

"$D" -v --pid "$pid" -o "$T/stop.log" 2>"$T/stop.err" &
dm=$!
wait_for "$T/stop.err" recording 10
sleep 0.3
kill -STOP $fx
sleep 0.1
start=$(date +%s%N)
kill -INT $dm
wait $dm
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
kill -CONT $fx
unfinished=$(sed -n 's/^alloctapd: \([0-9]*\) calls\{0,1\} w[a-z]* still unfinished.*/\1/p' "$T/stop.err")
lost=$(sed -n 's/^alloctapd: [0-9]* events written, \([0-9]*\) events lost.*/\1/p' "$T/stop.err")
check "stopped inside calls: the daemon ended in $ms ms (< 5 s), status 0" \
	bash -c "[ $rc -eq 0 ] && [ $ms -lt 5000 ] || { cat '$T/stop.err'; exit 1; }"
check "stopped inside calls: the ${unfinished:-0} unfinished calls are the events lost (${lost:-?})" \
	test "${unfinished:-0}" = "$lost"
check "stopped inside calls: the log is valid" "$FX/log_checker" "$T/stop.log" "$pid" --window "$held"
kill $fx
wait $fx 2>/dev/null
finish
