#!/usr/bin/env bash
# When and where alloctapd writes: a slow target's events reach the file within a second or
# two and survive the daemon's SIGKILL; SIGUSR1's jemalloc_stats() line stands after exactly the
# events that happened before the signal; a failing output is counted as it is.
source "$(dirname "$0")/lib.sh"
D=$ROOT/build/alloctapd
FX=$ROOT/build/fixtures
need_bpf "$D"
need_built "$FX/alloc_paced"

# 1. One malloc+free pair per millisecond: the file grows while the target runs, far below
# the 1/8 of the ring that wakes the daemon, and what was written survives a SIGKILL.
"$D" -o "$T/slow.log" -- "$FX/alloc_paced" "pair:20000:48:1000" 2>"$T/slow.err" &
dm=$!
sleep 3
lines=$(wc -l <"$T/slow.log")
check "a slow target: lines in the file after 3 s ($lines)" test "$lines" -ge 500
kill -KILL $dm
wait $dm 2>/dev/null
pkill -f "alloc_paced pair:20000:48:1000"
lines=$(wc -l <"$T/slow.log")
check "after SIGKILL of the daemon: the file keeps its $lines lines" test "$lines" -ge 500
check "after SIGKILL of the daemon: every line whole" \
	bash -c "[ \"\$(tail -c 1 '$T/slow.log' | od -An -c | tr -d ' ')\" = '\\n' ] &&
		! grep -qvE '^[0-9]+ [0-9]+ (malloc\\(48\\)=0x[0-9a-f]+|free\\(0x[0-9a-f]+\\))$' '$T/slow.log'"

# 2. 2000 malloc(111), a pause in which SIGUSR1 arrives, 2000 malloc(222): the marker stands
# after the 2000th malloc(111) and before the first malloc(222), in text and binary traces.
for fmt in text binary; do
	rm -f "$T/paused" "$T/go"
	"$D" -f $fmt -o "$T/mark.$fmt" -- "$FX/alloc_paced" "malloc:2000:111" "touch:$T/paused" \
		"wait:$T/go" "malloc:2000:222" 2>"$T/mark.err" &
	dm=$!
	for _ in $(seq 200); do [ -e "$T/paused" ] && break; sleep 0.05; done
	sleep 0.2
	kill -USR1 $dm
	sleep 0.5
	touch "$T/go"
	wait $dm
	if [ $fmt = binary ]; then
		"$ROOT/build/alloctap-munge" -qq --keep-pointers "$T/mark.$fmt" >"$T/mark.txt"
	else
		cp "$T/mark.$fmt" "$T/mark.txt"
	fi
	grep -n . "$T/mark.txt" | sed -n 's/^\([0-9]*\):[0-9]* [0-9]* \(malloc([0-9]*)\).*/\1 \2/p;
		s/^\([0-9]*\):.*jemalloc_stats().*/\1 stats/p' >"$T/mark.seq"
	last111=$(awk '$2 == "malloc(111)" { n = $1 } END { print n }' "$T/mark.seq")
	first222=$(awk '$2 == "malloc(222)" { print $1; exit }' "$T/mark.seq")
	stats=$(awk '$2 == "stats" { print $1 }' "$T/mark.seq" | tr '\n' ' ')
	check "$fmt: SIGUSR1 in the pause: one jemalloc_stats() line, after line $last111 and before line $first222 (at $stats)" \
		test "$(echo $stats)" = "$((last111 + 1))"
	check "$fmt: 2000 malloc(111) before, 2000 malloc(222) after" \
		test "$(grep -c 'malloc(111)' "$T/mark.txt")" = 2000 -a "$(grep -c 'malloc(222)' "$T/mark.txt")" = 2000
done

# 6. A full device: nothing reached it, the summary says so and the exit status is 1.
"$D" -o /dev/full -- "$FX/alloc_paced" "pair:1000:32" 2>"$T/full.err"
rc=$?
check "-o /dev/full: exit 1" test $rc -eq 1
check "-o /dev/full: '0 events written' in the summary" grep -q "^alloctapd: 0 events written" "$T/full.err"
check "-o /dev/full: the write error named" grep -q "No space left on device" "$T/full.err"
finish
