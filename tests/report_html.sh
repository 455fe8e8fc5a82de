#!/usr/bin/env bash
# alloctap-report html, the page, on tests/fixtures/report_sites traced four ways: with
# --stacks (stacks, times, RSS records), without (times, RSS; sites split by size class),
# without times (ALLOCTAP_TIMES=none, as an older alloctapd wrote binary traces without
# --stacks: RSS records placed by position) and as a text log (no times, no stacks, no RSS).
#   - the page's data (the curve's series, read from its data element): on the trace without
#     times the x axis is the event number for RSS records too, the RSS peak in the bucket of
#     the event it follows; with times, at its time;
#   - in headless Chromium, driven by the page's URL fragment (the functions a click calls):
#     each flame graph's total equal to alloctap-report's own figures on the same trace: the
#     heap peak to `peak`, the leaks to `leaks`, allocations and temporaries of the whole trace
#     to `summary`, a moment to `peak --at SECONDS`, a window's allocations to
#     `summary --window`; a click and a drag on the curve (mouse events); search (highlighted
#     frames, their share), zoom, tooltips (their text, and the box a pointer opens),
#     the table of sites bottom-up and top-down and its order; the axes' ticks and units;
#   - self-contained (no URL but SVG's namespace); screenshots of a few states are written
#     when HTML_SHOTS names a folder (for a person to look at).
# Chromium is needed: without it the script fails, it never skips.
source "$(dirname "$0")/lib.sh"

R=build/alloctap-report
D=build/alloctapd
FX=build/fixtures
need_built "$R" "$FX/report_sites"
need_bpf "$D"
if ! command -v chromium >/dev/null; then
	fail "chromium is installed" "make deps installs it"
	finish
fi
src=tests/fixtures/report_sites.c
line_of() { grep -n -F -- "$1" "$2" | head -n 1 | cut -d: -f1; }

# --- the traces -------------------------------------------------------------------------------
trace() { # NAME ALLOCTAPD-ARGS...: $T/NAME, or a failed point and the end
	local name=$1
	shift
	if ! "$@" >/dev/null 2>"$T/$name.err"; then
		fail "report_sites: traced ($name)" "$(tail -n 5 "$T/$name.err")"
		finish
	fi
}
trace s.atz "$D" -q --stacks -f binary -o "$T/s.atz" -- "$FX/report_sites" hold
trace ns.atz "$D" -q -f binary -o "$T/ns.atz" -- "$FX/report_sites" hold
trace nt.atz env ALLOCTAP_TIMES=none "$D" -q -f binary -o "$T/nt.atz" -- "$FX/report_sites" hold
trace l.log "$D" -q -o "$T/l.log" -- "$FX/report_sites"
for t in s.atz ns.atz nt.atz l.log; do
	run_cmd "$R" html -o "$T/$t.html" "$T/$t"
	check_eq "html $t: exit 0, nothing said" "$rc:$(cat "$T/err")" "0:"
done

# data PAGE EXPR: the Python expression EXPR over the page's data d (its JSON), printed.
data() {
	python3 -c '
import json, re, sys
s = open(sys.argv[1]).read()
d = json.loads(re.search(r"<script type=\"application/json\" id=\"alloctap-data\">(.*?)</script>", s, re.S).group(1))
def bucket(name, x):  # [most, last] of the bucket holding x, or None
	se = d[name]; b = se["b"]
	for i in range(0, len(b), 3):
		if b[i] == x // se["width"]:
			return b[i + 1:i + 3]
def xs(name):
	se = d[name]; return [se["b"][i] * se["width"] for i in range(0, len(se["b"]), 3)]
r = eval(sys.argv[2])
print(" ".join(map(str, r)) if isinstance(r, tuple) else r)' "$1" "$2"
}

# --- the curve's data ------------------------------------------------------------------------
# Without times: x is the event number; an RSS record's x the number of events before it (a
# record's raw clock time there, 10^12 and more, was the x axis's end before).
run_cmd "$R" summary --json "$T/nt.atz"
events=$(sed -n 's/^{"processes":1,"events":\([0-9]*\),.*/\1/p' "$T/out")
rss=$(sed -n 's/.*"peak_rss_bytes":\([0-9]*\),.*/\1/p' "$T/out")
after=$("$R" summary --bytes "$T/nt.atz" | sed -n 's/^peak rss bytes: [0-9]* after event \([0-9]*\)$/\1/p')
check_eq "no times: the live series ends at the last event, the RSS series inside the events, its peak after event $after" \
	"$(data "$T/nt.atz.html" "d['times'], d['live']['xmax'], max(xs('rss')) <= $events, d['rss']['xmax'] <= $events, bucket('rss', $after)[0]")" \
	"0 $events True True $rss"
check_eq "no times: the data's columns cover the events" \
	"$(data "$T/nt.atz.html" "d['data']['ncols'] <= 200, d['data']['width'] * d['data']['ncols'] > $events")" "True True"
# With times: x in ns from the first event; the RSS peak in the bucket of its time.
run_cmd "$R" summary --json "$T/ns.atz"
span=$(sed -n 's/^{"processes":1,"events":[0-9]*,"duration_ns":\([0-9]*\),.*/\1/p' "$T/out")
rss=$(sed -n 's/.*"peak_rss_bytes":\([0-9]*\),.*/\1/p' "$T/out")
rss_at=$(sed -n 's/.*"peak_rss_time_ns":\([0-9]*\),.*/\1/p' "$T/out")
check_eq "times: both series inside the trace's span, the RSS peak at its time" \
	"$(data "$T/ns.atz.html" "d['times'], d['live']['xmax'] <= $span, d['rss']['xmax'] <= $span, bucket('rss', $rss_at)[0]")" \
	"1 True True $rss"

# --- the page in Chromium ---------------------------------------------------------------------
# dom PAGE FRAGMENT: the page's DOM after its script ran with the fragment, in $T/dom; the
# body's attributes in $T/body; Chromium's errors (uncaught, syntax) counted in $T/js.
dom() {
	HOME=$T timeout 120 chromium --headless --no-sandbox --disable-gpu --enable-logging=stderr \
		--v=0 --dump-dom "file://$1#$2" >"$T/dom" 2>"$T/chromium.err"
	grep -o '<body [^>]*>' "$T/dom" >"$T/body"
	grep -c -i 'uncaught\|SyntaxError' "$T/chromium.err" >"$T/js"
}
attr() { sed -n "s/.* $1=\"\\([^\"]*\\)\".*/\\1/p" "$T/body"; }
# first NAME-LINE-OF-OUTPUT: "BYTES BLOCKS" of "...: BYTES bytes in BLOCKS blocks..."
figs() { sed -n '1s/^[^:]*: \([0-9]*\) bytes in \([0-9]*\) blocks.*/\1 \2/p'; }

for t in s.atz ns.atz nt.atz l.log; do
	P=$T/$t.html
	dom "$P" ""
	check_eq "$t in Chromium: ready, no script error, the heap peak's flame graph total = peak's" \
		"$(attr data-ready):$(cat "$T/js"):$(attr data-root) $(attr data-root-n)" \
		"1:0:$("$R" peak --bytes "$T/$t" | figs)"
	dom "$P" "view=leaks"
	check_eq "$t: the leaks' flame graph total = leaks'" "$(attr data-root) $(attr data-root-n)" \
		"$("$R" leaks --bytes "$T/$t" | figs)"
	run_cmd "$R" summary --json "$T/$t"
	allocs=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(v for k, v in d["calls"].items() if k != "free") - d["failed_allocations"])' "$T/out")
	temps=$(sed -n 's/.*"temporary_allocations":\([0-9]*\),.*/\1/p' "$T/out")
	dom "$P" "view=allocs&at=all"
	check_eq "$t: allocations of the whole trace = summary's calls that allocated" "$(attr data-root)" "$allocs"
	dom "$P" "view=temps&at=all"
	check_eq "$t: temporaries of the whole trace = summary's" "$(attr data-root)" "$temps"
	check_eq "$t: self-contained (no src or href, no URL but SVG's namespace)" \
		"$(grep -c -E 'src=|href=' "$P"):$(grep -o 'https\?://[^"'"'"']*' "$P" | sort -u)" \
		"0:http://www.w3.org/2000/svg"
done

# A moment (a column's end) and a window, against the report's own time options.
width=$(data "$T/s.atz.html" "d['data']['width']")
ncols=$(data "$T/s.atz.html" "d['data']['ncols']")
secs() { python3 -c "print('%d.%09d' % divmod($1, 10**9))"; }
for c in 10 $((ncols * 2 / 3)); do
	dom "$T/s.atz.html" "select=$c,$c"
	check_eq "a moment, column $c: the live flame graph's total = peak --at its end" \
		"$(attr data-root) $(attr data-root-n)" \
		"$("$R" peak --bytes --at "$(secs $(((c + 1) * width - 1)))" "$T/s.atz" | figs)"
done
a=$((ncols / 3)) b=$((ncols / 2))
dom "$T/s.atz.html" "view=allocs&select=$a,$b"
run_cmd "$R" summary --json --window "$(secs $((a * width))):$(secs $(((b + 1) * width - 1)))" "$T/s.atz"
check_eq "a window, columns $a to $b: its allocations = summary --window's" "$(attr data-root)" \
	"$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(v for k, v in d["calls"].items() if k != "free") - d["failed_allocations"])' "$T/out")"
# the trace lasts 0.7 s: the axis in ms, a column some 4 ms wide, so whole ms
check_eq "a window: said in the axis's unit" "$(attr data-choice)" \
	"$(python3 -c "print('the window from %d ms to %d ms' % (round($a * $width / 1e6), round(($b + 1) * $width / 1e6)))")"

# The pointer on the curve: a click chooses a moment, a drag a window (the chart's handlers,
# with mouse events dispatched at its left end and 300 px further).
mouse() { # PAGE DOWN-DX UP-DX: the page with a mousedown and a mouseup on the chart
	sed "s#</body>#<script>var c=document.querySelector('svg.chart'),r=c.getBoundingClientRect();function m(t,dx){c.dispatchEvent(new MouseEvent(t,{bubbles:true,clientX:r.left+80+dx,clientY:r.top+100}))}m('mousedown',$2);m('mouseup',$3);</script></body>#" "$1" >"$T/mouse.html"
}
mouse "$T/s.atz.html" 0 0
dom "$T/mouse.html" ""
check_eq "a click on the curve: the moment at the first column's end" "$(attr data-choice)" \
	"the moment at $(python3 -c "print(round($width / 1e6))") ms (in the window from 0 ms)"
mouse "$T/s.atz.html" 0 300
dom "$T/mouse.html" "view=allocs"
check_eq "a drag on the curve: a window from the first column" \
	"$(attr data-choice | sed 's/ to [0-9]* ms$/ to T/')" "the window from 0 ms to T"

# Search, zoom, tooltips and the table, with stacks.
hold="hold_pages (report_sites.c:$(line_of 'char *p = malloc(32u << 20);' "$src"))"
churn_line=$(line_of 'void *p = malloc(64);' "$src")
run_cmd "$R" summary --json "$T/s.atz"
allocs=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(v for k, v in d["calls"].items() if k != "free") - d["failed_allocations"])' "$T/out")
dom "$T/s.atz.html" "search=hold_pag"
check_eq "search: the matching frame highlighted, its share said" \
	"$(grep -o '<g class="f hit"' "$T/dom" | wc -l):$(attr data-found)" \
	"1:hold_pag: 32.0 MiB, 100.00% of 32.0 MiB"
dom "$T/s.atz.html" "view=allocs&at=all&search=churn"
check_eq "search on the allocations: churn's share of the calls" "$(attr data-found)" \
	"churn: 1000 allocations, $(python3 -c "print('%.2f' % (100000 / $allocs))")% of $allocs allocations"
dom "$T/s.atz.html" ""
check_eq "a frame's tooltip: function, file:line, bytes, blocks, share" \
	"$(grep -o '<title>hold_pages ([^<]*</title>' "$T/dom")" \
	"<title>$hold: 32.0 MiB in 1 blocks (100.00%)</title>"
# A tooltip: the handler a pointer over a frame calls (a mousemove dispatched to it).
sed 's#</body>#<script>var g=[].filter.call(document.querySelectorAll("svg.flame g.f"),function(e){return e.querySelector("title").textContent.indexOf("hold_pages (")==0})[0];g.dispatchEvent(new MouseEvent("mousemove",{bubbles:true,clientX:50,clientY:50}));document.body.setAttribute("data-tip",document.getElementById("tip").innerText.split("\\n").join("/"));</script></body>#' \
	"$T/s.atz.html" >"$T/tip.html"
dom "$T/tip.html" ""
check_eq "a frame's tooltip on the pointer: function, file:line, bytes, blocks, share" \
	"$(attr data-tip)" "hold_pages/at report_sites.c:$(line_of 'char *p = malloc(32u << 20);' "$src")/32.0 MiB in 1 blocks/100.00% of 32.0 MiB"
check_eq "the heap peak marked on the curve (one process)" "$(grep -c '<line class="peak"' "$T/dom")" 1
# The pointer over the curve: the time, and the live bytes and RSS there (at 200 ms, while
# the 32 MiB block is held, RSS above it).
xmax=$(data "$T/s.atz.html" "max(d['live']['xmax'], d['rss']['xmax'])")
sed "s#</body>#<script>var c=document.querySelector('svg.chart'),r=c.getBoundingClientRect();c.dispatchEvent(new MouseEvent('mousemove',{bubbles:true,clientX:r.left+78+906*200e6/$xmax,clientY:r.top+100}));document.body.setAttribute('data-tip',document.getElementById('tip').innerText.split('\\\\n').join('/'));</script></body>#" \
	"$T/s.atz.html" >"$T/tip.html"
dom "$T/tip.html" ""
# the time read back to within one pixel of the curve's 906 (xmax/906 ns), and its ms rounded
check_eq "the curve's tooltip: the time (to a pixel), live bytes and RSS there" \
	"$(attr data-tip | sed 's#/RSS: 3[23]\.[0-9] MiB$#/RSS: 32 to 34 MiB#' |
		awk -F/ -v px="$xmax" '{ t = $1; sub(/ ms$/, "", t); d = t - 200; if (d < 0) d = -d
			if (d <= px / 906 / 1e6 + 1) $1 = "200 ms (to a pixel)"; print }' OFS=/)" \
	"200 ms (to a pixel)/live: 32.0 MiB/RSS: 32 to 34 MiB"
dom "$T/s.atz.html" "zoom=hold_pages"
check_eq "zoom: the frame stretched to the full width" "$(attr data-zoomed)" "1200.000"
check_eq "the curve: both series drawn, the axes' labels" \
	"$(grep -c '<polyline class="live"' "$T/dom"):$(grep -c '<polyline class="rss"' "$T/dom"):$(grep -o 'class="xlabel">[^<]*<' "$T/dom")" \
	'1:1:class="xlabel">time (ms)<'
# rows TABLE-DOM: the table's rows as "frame|file:line|value" lines
rows() { grep -o '<div id="table">.*</table>' "$T/dom" | sed 's|<tr>|\n|g' | sed -n 's|^<td class="s">\([^<]*\)</td><td class="s">\([^<]*\)</td><td class="n">\([^<]*\)</td>.*|\1\|\2\|\3|p'; }
dom "$T/s.atz.html" "view=allocs&at=all&sort=bytes"
check_eq "bottom-up by calls: churn first, then burst" "$(rows | head -n 2 | tr '\n' ' ')" \
	"churn|report_sites.c:$churn_line|1000 allocations burst|report_sites.c:$(line_of 'p[i] = malloc(50000);' "$src")|20 allocations "
dom "$T/s.atz.html" "view=allocs&at=all&table=topdown&sort=name"
check_eq "top-down sorted by name: in order, main inclusive of every call under it" \
	"$(rows | cut -d'|' -f1 | LC_ALL=C sort -c && echo sorted):$(rows | grep '^main|' | cut -d'|' -f2,3)" \
	"sorted:report_sites.c|$allocs allocations" "$(rows)"

# The bottom-up table against top: per frame that calls the allocation function, the sum of
# top's sites under it (top by alloc-count over the whole trace, by peak-bytes at the peak,
# by leak-bytes for the leaks; --bytes and the page's exact figures).
"$R" html --bytes -o "$T/sx.html" "$T/s.atz"
by_caller() { # top's rows as "frame|sum" lines, sorted
	"$R" top --bytes --limit 1000 "$@" "$T/s.atz" | sed -n 's/^ *\([0-9][0-9]*\) .*  [a-z_]* < \([^<]*)\)\( <.*\)\{0,1\}$/\2|\1/p' |
		awk -F'|' '{ s[$1] += $2 } END { for (k in s) print k "|" s[k] }' | LC_ALL=C sort
}
page_rows() { rows | awk -F'|' '{ split($3, v, " "); print $1 " (" $2 ")|" v[1] }' | LC_ALL=C sort; }
for v in "allocs&at=all:--by alloc-count" "live:--by peak-bytes" "leaks:--by leak-bytes"; do
	dom "$T/sx.html" "view=${v%%:*}"
	check "top ${v#*:}: its rows read" test -n "$(by_caller ${v#*:})"
	check_eq "bottom-up table, view ${v%%:*}: each frame's sum = top ${v#*:}'s sites under it" \
		"$(page_rows | tr '\n' ' ')" "$(by_caller ${v#*:} | tr '\n' ' ')"
done

# Without stacks: the sites are the allocation function, then the size class.
dom "$T/ns.atz.html" ""
check_eq "no stacks: the 32 MiB block under malloc, in its size class" \
	"$(grep -o '<title>size [^<]*</title>' "$T/dom")" \
	"<title>size 33554432 B to 67108863 B: 32.0 MiB in 1 blocks (100.00%)</title>"
# Without times: the x axis in events, the choice said in events.
dom "$T/l.log.html" "select=0,0"
check_eq "no times: the x axis in events, a moment said at an event" \
	"$(grep -o 'class="xlabel">[^<]*<' "$T/dom"):$(attr data-choice)" \
	"class=\"xlabel\">events (the trace has no times)<:the moment at event $(data "$T/l.log.html" "d['data']['width']") (in the window from event 0)"

# Two processes (a log written by hand): a frame each, at its own peak; in units as the text
# outputs write them (tenths truncated), or exact with --bytes.
printf '%s\n' '1 1 malloc(100)=0x1000' '1 1 malloc(50)=0x2000' '1 1 free(0x2000)' \
	'1 2 calloc(10,20)=0x3000' '1 1 realloc(0x1000,300)=0x4000' '1 2 free(0x9999)' \
	'1 2 malloc(1000)=0x5000' '1 2 free(0x5000)' '1 1 malloc(70)=0' '2 7 malloc(64)=0x1000' \
	'2 7 malloc(16)=0x2000' '2 7 free(0x1000)' >"$T/two.log"
"$R" html -o "$T/two.html" "$T/two.log"
dom "$T/two.html" ""
check_eq "two processes: a frame each, at its own peak, in units" \
	"$(attr data-root):$(grep -o '<title>process [^<]*</title>' "$T/dom" | tr '\n' '|')" \
	"1580:<title>process 1: 1.4 KiB in 3 blocks (94.94%)</title>|<title>process 2: 80 B in 2 blocks (5.06%)</title>|"
"$R" html --bytes -o "$T/two.html" "$T/two.log"
dom "$T/two.html" "view=leaks"
check_eq "two processes, --bytes: the leaks exact" \
	"$(grep -o '<title>process [^<]*</title>' "$T/dom" | tr '\n' '|')" \
	"<title>process 1: 500 B in 2 blocks (96.90%)</title>|<title>process 2: 16 B in 1 blocks (3.10%)</title>|"

if [ -n "$HTML_SHOTS" ]; then
	mkdir -p "$HTML_SHOTS"
	shot() {
		HOME=$T timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
			--window-size=1300,1000 --screenshot="$HTML_SHOTS/$1.png" "file://$2#$3" >/dev/null 2>&1
		check "screenshot $1" test -s "$HTML_SHOTS/$1.png"
	}
	shot peak "$T/s.atz.html" ""
	shot window "$T/s.atz.html" "view=allocs&select=$a,$b&search=churn"
	shot nostacks "$T/ns.atz.html" "view=temps&at=all"
	shot notimes "$T/nt.atz.html" "select=3,40"
fi
finish
