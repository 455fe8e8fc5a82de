#!/usr/bin/env bash
# alloctap-report top --follow, the live view, against a real alloctapd --stacks writing the
# trace of tests/fixtures/live_growth (a site that leaks 64 KB a second, a steady table of
# 16 KiB, a request freed at the next step):
#   - on a pipe: a snapshot per interval while the trace grows through alloctapd's flushes
#     (lz4 blocks), headed by increasing trace times, each at most 2 s behind the program (the
#     lag printed), the leaking site first with its growth and its allocations per second; the
#     final table at the trace's end mark equal, site for site, to top's on the whole trace;
#   - the same with the trace read from alloctapd's standard output (-o - | ... -);
#   - on a terminal, in tmux: the leaking site at the top within 2 s of the program's start,
#     the key g ordering by growth, q quitting with status 0 and the terminal's mode as it was;
#     Ctrl-Z in an interactive shell giving the terminal back, fg drawing the screen again;
#   - summary, peak and timeline --follow on a trace created after they start: the finished
#     trace's outputs, timeline's snapshots written as they came;
#   - alloctapd --watch: the trace and its view in one command, on a pipe and in tmux (q);
#   - a finished trace followed: read to its end mark at once; usage errors; a text log refused.
# tmux is needed: without it the script fails, it never skips.
source "$(dirname "$0")/lib.sh"
TRY="Try 'alloctap-report --help'."

R=build/alloctap-report
D=build/alloctapd
FX=build/fixtures
need_built "$R" "$FX/live_growth"
need_bpf "$D"

# stamp: each line of stdin prefixed by its arrival time (epoch seconds) and a space.
stamp() {
	local line
	while IFS= read -r line; do
		printf '%s %s\n' "$EPOCHREALTIME" "$line"
	done
}

# snapshots FILE: "ARRIVAL AT BLOCKS END" for each snapshot heading of a stamped FILE (END 1
# for the final table's, at the end of the trace).
snapshots() {
	sed -n 's/^\([0-9.]*\) == at \([0-9.]*\) s\([^:]*\): .* live in \([0-9]*\) blocks*$/\1 \2 \4 \3/p' "$1" |
		awk '{ print $1, $2, $3, ($4 != "") }'
}

# sites_of: a table's rows (site lines, not the shared callers') of stdin as "LIVE SITE", the
# live bytes its first two words, the site after SKIP more words.
sites_of() {
	grep ' < ' | grep -v 'every site above is called from' |
		awk -v skip="$1" '{ v = $1 " " $2; for (i = 1; i <= 2 + skip; i++) $i = ""; sub(/^ +/, ""); print v " " $0 }' |
		sort
}

# growing ROW: whether a row of the view (after its arrival stamp) has a growth above 0 and
# allocations per second above 0.
growing() {
	awk -v r="$1" 'BEGIN { split(r, f, " "); exit !(f[3] ~ /^\+/ && f[3] != "+0" && f[7] + 0 > 0) }'
}

# --- the pipe form, following a file as alloctapd writes it ---------------------------------

rm -f "$T/g.atz"
"$R" top --follow --limit 5 "$T/g.atz" 2>"$T/live.err" | stamp >"$T/live.out" &
view=$!
"$D" --stacks -f binary -o "$T/g.atz" -- "$FX/live_growth" 4 "$T/started" >/dev/null 2>"$T/d.err"
drc=$?
dend=$EPOCHREALTIME
for ((i = 0; i < 100 && $(jobs -r | wc -l) > 0; i++)); do sleep 0.1; done
kill "$view" 2>/dev/null
wait "$view"
check_eq "pipe: alloctapd traced the fixture" "$drc" 0 "$(tail -n 3 "$T/d.err")"
check_eq "pipe: the view ended by itself at the trace's end, nothing on stderr" \
	"$(grep -c 'the end of the trace' "$T/live.out") $(wc -c <"$T/live.err")" "1 0" \
	"$(head -c 500 "$T/live.err")"
started=$(stat -c %.9Y "$T/started")
snapshots "$T/live.out" >"$T/snaps"
# the snapshots with events before alloctapd ended, the end's own aside
awk -v end="$dend" '$3 > 0 && $1 < end && !$4' "$T/snaps" >"$T/during"
running=$(wc -l <"$T/during")
check "pipe: at least two snapshots of a growing trace while alloctapd ran ($running)" \
	test "$running" -ge 2
check "pipe: the block counts grow from snapshot to snapshot (several lz4 blocks followed)" \
	awk 'NR > 1 && $3 <= prev { exit 1 } { prev = $3 }' "$T/during"
check "pipe: the snapshots' trace times increase" \
	awk '$3 > 0 { if (n++ && $2 <= prev) exit 1; prev = $2 }' "$T/snaps"
# lag: a snapshot's arrival minus the moment it shows (the program's start plus its trace time)
lags=$(awk -v s="$started" '$3 > 0 { printf "%.2f ", $1 - (s + $2) }' "$T/snaps")
first=$(awk -v s="$started" '$3 > 0 { printf "%.2f", $1 - s; exit }' "$T/snaps")
echo "# pipe: first snapshot with events $first s after the program started; lags (s): $lags"
check "pipe: the first snapshot with events at most 2 s after the program started ($first s)" \
	awk -v f="$first" 'BEGIN { exit !(f != "" && f <= 2.0) }'
check "pipe: every snapshot at most 2 s behind the program ($lags)" \
	awk -v l="$lags" 'BEGIN { n = split(l, a, " "); for (i = 1; i <= n; i++) if (a[i] > 2.0) exit 1; exit !n }'
# the last snapshot while alloctapd ran: the leak first, growing, allocating
last=$(grep -n '^[0-9.]* == at' "$T/live.out" | grep -v 'the end' | tail -n 1 | cut -d: -f1)
row=$(sed -n "$((last + 2))p" "$T/live.out" | cut -d' ' -f2-)
echo "# pipe: the last snapshot's first row: $row"
check "pipe: the leaking site first in the last snapshot" \
	grep -q '^ *[0-9.]* [KMG]*i*B .*  malloc < leak (live_growth\.c:[0-9]*) < main' <<<"$row"
check "pipe: its growth and its allocations per second above 0" growing "$row"
# the final table: the same live bytes, site for site, as top on the finished trace
end=$(grep -n 'the end of the trace' "$T/live.out" | cut -d: -f1)
tail -n +"$((end + 2))" "$T/live.out" | cut -d' ' -f2- | sites_of 5 | grep -v '^0 B ' >"$T/final"
run_cmd "$R" top --by leak-bytes --limit 5 "$T/g.atz"
sites_of 1 <"$T/out" >"$T/top"
check_eq "pipe: the final table has the fixture's three sites" "$(grep -c 'live_growth.c' "$T/final")" 3
check_file_eq "pipe: the final table's live bytes are top's on the finished trace" "$T/final" "$T/top"

# --- the pipe form, the trace read from alloctapd's standard output -------------------------

"$D" --stacks -f binary -o - -- "$FX/live_growth" 4 "$T/started2" 2>"$T/d2.err" |
	"$R" top --follow --limit 3 - 2>"$T/live2.err" | stamp >"$T/live2.out"
rcs="${PIPESTATUS[*]}"
snapshots "$T/live2.out" >"$T/snaps2"
n=$(awk '$3 > 0' "$T/snaps2" | wc -l)
check_eq "stdin: alloctapd -o - | top --follow -: exit 0 0 0, one end, nothing on stderr" \
	"$rcs $(grep -c 'the end of the trace' "$T/live2.out") $(wc -c <"$T/live2.err")" "0 0 0 1 0" \
	"$(head -c 300 "$T/live2.err")"
check "stdin: snapshots with events as the trace came ($n, at least 3)" test "$n" -ge 3

# --- a finished trace, usage errors, text --------------------------------------------------

check_cmd "a finished trace: followed to its end at once (the final table alone)" 0 - "" -- \
	timeout 5 "$R" top --follow --interval 60 "$T/g.atz"
check_eq "a finished trace: one snapshot, the end's" \
	"$(grep -c '^== at' "$T/out") $(grep -c 'the end of the trace' "$T/out")" "1 1"
check_err "--interval 0 is refused" 2 "alloctap-report: --interval needs SECONDS above 0, not: 0
$TRY" \
	"$R" top --follow --interval 0 "$T/g.atz"
check_err "--interval without --follow is refused" 2 \
	"alloctap-report: --interval goes with top --follow, not with top
$TRY" \
	"$R" top --interval 2 "$T/g.atz"

# --- every command follows a growing trace to its end mark ------------------------------------

# summary and peak read a trace while alloctapd writes it (a file created after they start):
# no truncation error, and their output is that of the finished trace
rm -f "$T/f.atz" "$T/started7"
"$R" summary --follow "$T/f.atz" >"$T/sum.follow" 2>"$T/sum.err" &
summary=$!
"$R" peak --follow --bytes "$T/f.atz" >"$T/peak.follow" 2>"$T/peak.err" &
peak=$!
# timeline's snapshots, stamped with the wall clock as they come
"$R" timeline --every 0.5 --top 1 --follow "$T/f.atz" 2>"$T/tl.err" | stamp >"$T/tl.follow" &
timeline=$!
sleep 0.3
"$D" --stacks -f binary -o "$T/f.atz" -- "$FX/live_growth" 3 "$T/started7" >/dev/null 2>"$T/d7.err"
end=$EPOCHREALTIME
wait "$summary"; rc_s=$?
wait "$peak"; rc_p=$?
wait "$timeline"; rc_t=$?
"$R" summary "$T/f.atz" >"$T/sum.after" 2>&1
"$R" peak --bytes "$T/f.atz" >"$T/peak.after" 2>&1
check_eq "summary --follow, a trace created after it started: exit 0, nothing said" \
	"$rc_s:$(cat "$T/sum.err")" "0:"
check_file_eq "summary --follow: the finished trace's summary" "$T/sum.follow" "$T/sum.after"
check_eq "peak --follow: exit 0, nothing said" "$rc_p:$(cat "$T/peak.err")" "0:"
check_file_eq "peak --follow: the finished trace's peak" "$T/peak.follow" "$T/peak.after"
check_eq "timeline --follow: exit 0, nothing said" "$rc_t:$(cat "$T/tl.err")" "0:"
# the snapshots came while the program ran: the first at least a second before the trace ended
first=$(grep -m 1 '== snapshot 1 ' "$T/tl.follow" | cut -d ' ' -f 1)
early=$(awk -v f="${first:-0}" -v e="$end" 'BEGIN { printf "%.2f", e - f }')
check "timeline --follow: snapshots written as they came (the first $early s before the end)" \
	awk -v a="$early" 'BEGIN { exit !(a >= 1.0) }'
check_eq "timeline --follow: the snapshots of the finished trace" \
	"$(sed 's/^[0-9.]* //' "$T/tl.follow" | grep '^== snapshot')" \
	"$("$R" timeline --every 0.5 --top 1 "$T/f.atz" | grep '^== snapshot')"
for extra in --json --csv "--by alloc-count" "--by live-bytes --at end"; do
	# shellcheck disable=SC2086
	check_err "--follow with $extra is refused" 2 \
		"alloctap-report: top --follow writes text snapshots by live bytes: not with --json, --csv, --by or --at
$TRY" \
		"$R" top --follow $extra "$T/g.atz"
done
printf '1 1 malloc 32 = 0x10\n' >"$T/t.log"
check_err "a text log is not followed" 1 \
	"alloctap-report: $T/t.log: --follow reads a binary trace (alloctapd -f binary), not a text log" \
	timeout 5 "$R" top --follow "$T/t.log"

# --- alloctapd --watch: the trace and its view in one command ---------------------------------

# not on a terminal: the viewer's snapshots on the daemon's standard output, its summary after
run_cmd "$D" --watch --stacks -- "$FX/live_growth" 3
check_eq "--watch -- COMMAND: exit 0, the summary said, nothing lost" \
	"$rc:$(grep -c ' 0 events lost' "$T/err")" "0:1" "$(head -c 600 "$T/err")"
check "--watch -- COMMAND: snapshots while the command ran ($(grep -c '^== at' "$T/out"), at least 3)" \
	test "$(grep -c '^== at' "$T/out")" -ge 3
check_eq "--watch -- COMMAND: the end of the trace last, the leaking site first in it" \
	"$(grep -A2 '^== at .*the end of the trace' "$T/out" | tail -n 1 | grep -o 'malloc < leak (live_growth.c:[0-9]*)')" \
	"malloc < leak (live_growth.c:26)" "$(tail -n 8 "$T/out")"
# with --pid and -o FILE: the trace kept in FILE, followed there; the final table is top's on it
"$FX/live_growth" 4 "$T/started5" &
target=$!
for ((i = 0; i < 100; i++)); do [ -e "$T/started5" ] && break; sleep 0.05; done
run_cmd "$D" --watch --stacks -o "$T/kept.atz" --pid "$target"
wait "$target"
check_eq "--watch --pid -o FILE: exit 0 when the process ends, the trace kept 0600" \
	"$rc:$(stat -c %a "$T/kept.atz")" "0:600" "$(head -c 600 "$T/err")"
grep -A9 '^== at .*the end of the trace' "$T/out" | grep -o '^ *[0-9.]* [KMG]*i*B ' | sed 's/ *$//;s/^ *//' >"$T/watch.live"
"$R" top --by live-bytes --at end "$T/kept.atz" | grep -o '^ *[0-9.]* [KMG]*i*B ' | sed 's/ *$//;s/^ *//' >"$T/top.live"
check_file_eq "--watch --pid -o FILE: the final table's live bytes are top's on the kept trace" \
	"$T/watch.live" "$T/top.live"
# a daemon that cannot start: its message and status, no viewer
check_cmd "--watch --pid of no process: exit 1, the daemon's message, no view" 1 "" - \
	-- "$D" --watch --pid 999999
check_eq "--watch --pid of no process: the message" "$(cat "$T/err")" "alloctapd: no process 999999"
check_err "--watch with --format text: refused, exit 2" 2 \
	"alloctapd: --watch shows a binary trace: --format text does not go with it
Try 'alloctapd --help'." "$D" --watch -f text -- true
check_err "--watch with -o -: refused, exit 2" 2 \
	"alloctapd: --watch shows the trace on the terminal: -o takes a path then (the trace is kept there and followed), not a descriptor
Try 'alloctapd --help'." "$D" --watch -o - -- true

# --- the terminal form, in tmux --------------------------------------------------------------

if ! command -v tmux >/dev/null; then
	fail "tmux is installed" "the terminal form is driven in tmux: apt-get install tmux"
	finish
fi
TM=(tmux -L "alloctap-live-$$")
trap '"${TM[@]}" kill-server 2>/dev/null; rm -rf "$T"' EXIT
# next_tmux N: the tmux server of the case before killed, a new one (its own socket: a server
# still ending would take the new session with it) for case N
next_tmux() {
	"${TM[@]}" kill-server 2>/dev/null
	TM=(tmux -L "alloctap-live-$$-$1")
	rm -f "$T/stty."* "$T/tty.rc"
}
# wait_pane PATTERN: polls the pane (5 s at most) until a line matches
wait_pane() {
	for ((i = 0; i < 50; i++)); do
		"${TM[@]}" capture-pane -p >"$T/pane"
		grep -q -e "$1" "$T/pane" && return 0
		sleep 0.1
	done
	return 1
}
# quit_view WHAT: q typed; then the view's status 0 and the terminal's mode as before
# keys_and_quit WHAT: g orders by growth, then quit_view
keys_and_quit() {
	"${TM[@]}" send-keys g
	wait_pane 'sites by growth:'
	check "$1: g orders by growth" grep -q 'sites by growth:' "$T/pane"
	quit_view "$1, then q"
}
quit_view() {
	"${TM[@]}" send-keys q
	for ((i = 0; i < 100; i++)); do [ -s "$T/stty.after" ] && break; sleep 0.05; done
	check_eq "$1: quits, status 0" "$(cat "$T/tty.rc" 2>/dev/null)" 0 "$(cat "$T/pane")"
	check_file_eq "$1: the terminal's mode restored" "$T/stty.after" "$T/stty.before"
}
rm -f "$T/g2.atz" "$T/started3"
"${TM[@]}" new-session -d -x 160 -y 40 \
	"stty -a >'$T/stty.before'; '$R' top --follow '$T/g2.atz'; echo \$? >'$T/tty.rc'; stty -a >'$T/stty.after'; sleep 30"
"$D" --stacks -f binary -o "$T/g2.atz" -- "$FX/live_growth" 6 "$T/started3" >/dev/null 2>"$T/d3.err" &
daemon=$!
for ((i = 0; i < 100; i++)); do [ -e "$T/started3" ] && break; sleep 0.05; done
# poll the pane until the first row of the table is the leak
top_at=""
for ((i = 0; i < 50; i++)); do
	"${TM[@]}" capture-pane -p >"$T/pane"
	if grep -A1 'sites by live bytes' "$T/pane" | tail -n 1 | grep -q 'malloc < leak (live_growth.c:'; then
		top_at=$EPOCHREALTIME
		break
	fi
	sleep 0.1
done
if [ -n "$top_at" ] && [ -e "$T/started3" ]; then
	after=$(awk -v a="$top_at" -v s="$(stat -c %.9Y "$T/started3")" 'BEGIN { printf "%.2f", a - s }')
	echo "# tmux: the leak at the top $after s after the program started"
	check "tmux: the leaking site at the top within 2 s of the program's start ($after s)" \
		awk -v a="$after" 'BEGIN { exit !(a <= 2.0) }'
	row=$(grep -A1 'sites by live bytes' "$T/pane" | tail -n 1)
	check "tmux: its growth and allocations per second shown: $row" growing "$row"
else
	fail "tmux: the leaking site at the top within 2 s of the program's start" "$(cat "$T/pane")"
fi
check "tmux: the keys on the status line" grep -q '^q quit   l by live bytes   g by growth' "$T/pane"
keys_and_quit "tmux"
wait "$daemon"
check_eq "tmux: alloctapd traced the fixture" "$?" 0 "$(tail -n 3 "$T/d3.err")"

# Ctrl-Z in an interactive shell: the terminal given back while the view is stopped, taken
# again and the screen redrawn at fg
next_tmux 2
rm -f "$T/g4.atz" "$T/started4"
"${TM[@]}" new-session -d -x 160 -y 40 "bash --norc --noprofile -i"
# one job (a subshell), so that the shell waits for the whole of it after fg
"${TM[@]}" send-keys "(stty -a >'$T/stty.before'; '$ROOT/$R' top --follow '$T/g4.atz'; echo \$? >'$T/tty.rc'; stty -a >'$T/stty.after')" Enter
"$D" --stacks -f binary -o "$T/g4.atz" -- "$FX/live_growth" 8 "$T/started4" >/dev/null 2>"$T/d4.err" &
daemon=$!
wait_pane 'sites by live bytes'
"${TM[@]}" send-keys C-z
wait_pane '^\[1\]+ *Stopped'
check "Ctrl-Z: the view stopped, the shell back" grep -q 'Stopped.*top --follow' "$T/pane"
"${TM[@]}" send-keys "stty -a >'$T/stty.stopped'" Enter
for ((i = 0; i < 40; i++)); do [ -s "$T/stty.stopped" ] && break; sleep 0.05; done
check_file_eq "Ctrl-Z: the terminal's mode given back while stopped" "$T/stty.stopped" "$T/stty.before"
"${TM[@]}" send-keys clear Enter fg Enter
wait_pane 'sites by live bytes'
check "fg: the screen drawn again" grep -q '^q quit   l by live bytes' "$T/pane"
keys_and_quit "fg: the keys read again"
wait "$daemon"
check_eq "Ctrl-Z: alloctapd traced the fixture" "$?" 0 "$(tail -n 3 "$T/d4.err")"

# alloctapd --watch --pid on a terminal: the view drawn; q ends the trace (status 0), the
# process traced goes on, no alloctapd is left, the terminal's mode as it was
next_tmux 3
rm -f "$T/started6"
"$FX/live_growth" 30 "$T/started6" &
target=$!
for ((i = 0; i < 100; i++)); do [ -e "$T/started6" ] && break; sleep 0.05; done
"${TM[@]}" new-session -d -x 160 -y 40 \
	"stty -a >'$T/stty.before'; '$ROOT/$D' --watch --stacks --pid $target 2>'$T/d6.err'; echo \$? >'$T/tty.rc'; stty -a >'$T/stty.after'; sleep 30"
if wait_pane 'malloc < leak (live_growth.c:'; then
	ok "--watch on a terminal: the view drawn, the leaking site in it"
else
	fail "--watch on a terminal: the view drawn, the leaking site in it" "$(cat "$T/pane")"
fi
quit_view "--watch, q (the trace ended)"
check_eq "--watch, q: no alloctapd left" "$(pgrep -f -- "^$ROOT/$D --watch --stacks --pid $target")" ""
check_eq "--watch, q: the process traced goes on" "$(kill -0 "$target" 2>&1 && echo alive)" alive
kill "$target"
wait "$target" 2>/dev/null
finish
