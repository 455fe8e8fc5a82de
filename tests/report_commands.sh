#!/usr/bin/env bash
# alloctap-report's commands (summary, peak, leaks, sizes, timeline, diff, export weights):
# - on random text logs (tests/report_model.py gen: three processes, missed frees, frees of
#   unknown pointers, failed calls, realloc in place and to 0), every figure compared with an
#   independent model (tests/report_model.py), also with --pid, on the same log in binary, and
#   with --window on a binary copy whose times are exact (atz_tool synth -T);
# - a small log whose human-readable outputs are written out here, computed by hand;
# - a fixture with known sites, peak, leak and churn (tests/fixtures/report_sites.c) traced
#   with alloctapd --stacks: every command's figures as the fixture makes them;
# - Graphviz output, and bad input: messages and exit codes.
. "$(dirname "$0")/lib.sh"
R=build/alloctap-report
M=tests/report_model.py
A=build/bench/atz_tool
need_built "$R" "$A" build/alloctap-munge build/alloctapd build/fixtures/report_sites \
	build/fixtures/leak_kinds \
	build/fixtures/realloc_temps

# --- the model on random logs ---------------------------------------------------------------
python3 "$M" gen 1 4000 >"$T/g1.log"
python3 "$M" gen 2 3000 >"$T/g2.log"
"$A" synth -T 1000 "$T/g1.log" "$T/g1.atz" # event k at k microseconds
build/alloctap-munge -qq --keep-pointers --format binary "$T/g1.log" -o "$T/g1.plain.atz"

# split_case MODEL_ARGS -- REPORT_ARGS: the model's arguments into margs, the report's into
# rargs (the caller's locals).
split_case() {
	while [ "$1" != "--" ]; do margs+=("$1"); shift; done
	shift
	rargs=("$@")
}
# model_case NAME MODEL_ARGS -- REPORT_ARGS: the report's stdout equals the model's.
model_case() {
	local name=$1 margs=() rargs=()
	shift
	split_case "$@"
	python3 "$M" "${margs[@]}" >"$T/want" || { fail "$name" "the model failed"; return; }
	check_cmd "$name" 0 "$T/want" "" -- "$R" "${rargs[@]}"
}
# units_case NAME MODEL_ARGS -- REPORT_ARGS: model_case twice: byte figures in units (the
# default), then exact (--bytes given to both).
units_case() {
	local name=$1 margs=() rargs=()
	shift
	split_case "$@"
	model_case "$name" "${margs[@]}" -- "${rargs[@]}"
	model_case "$name --bytes" "${margs[@]}" --bytes -- "${rargs[@]}" --bytes
}
# json_case NAME MODEL_ARGS -- REPORT_ARGS: the report's one JSON document equals the model's
# (both printed by json.dumps with sorted keys), exit 0.
json_case() {
	local name=$1 margs=() rargs=()
	shift
	split_case "$@"
	python3 "$M" "${margs[@]}" >"$T/want" || { fail "$name" "the model failed"; return; }
	"$R" "${rargs[@]}" >"$T/json" 2>"$T/err" || { fail "$name" "exit $?: $(cat "$T/err")"; return; }
	python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1])), sort_keys=True))' \
		"$T/json" >"$T/got" 2>&1
	check_file_eq "$name" "$T/got" "$T/want"
}
for log in g1.log g2.log g1.plain.atz; do
	src=${log%%.*}.log
	model_case "$log: summary --json" json "$T/$src" -- summary --json "$T/$log"
	units_case "$log: leaks" leaks "$T/$src" -- leaks "$T/$log"
	units_case "$log: sizes" sizes "$T/$src" -- sizes "$T/$log"
	units_case "$log: peak" tree "$T/$src" -- peak "$T/$log"
	units_case "$log: peak --at end" tree "$T/$src" end -- peak --at end "$T/$log"
	units_case "$log: peak --min-percent 0" tree "$T/$src" --min-percent 0 -- \
		peak --min-percent 0 "$T/$log"
	units_case "$log: peak --min-percent 20" tree "$T/$src" --min-percent 20 -- \
		peak --min-percent 20 "$T/$log"
	model_case "$log: export --folded --weight heaptrack-temp-count" \
		export heaptrack-temp-count "$T/$src" -- \
		export --folded --weight heaptrack-temp-count "$T/$log"
	for w in alloc-count alloc-bytes peak-bytes leak-bytes temp-count churn; do
		model_case "$log: export --folded --weight $w" export "$w" "$T/$src" -- \
			export --folded --weight "$w" "$T/$log"
	done
	for w in alloc-count alloc-bytes peak-bytes leak-bytes temp-count heaptrack-temp-count \
		churn live-bytes; do
		units_case "$log: top --by $w --limit 3" top "$w" 3 "$T/$src" -- \
			top --by "$w" --limit 3 "$T/$log"
	done
	for at in heap-peak end; do
		units_case "$log: top --by live-bytes --at $at" top live-bytes 20 "$T/$src" --at "$at" -- \
			top --by live-bytes --at "$at" "$T/$log"
	done
	units_case "$log: top (leak-bytes, 20 sites)" top leak-bytes 20 "$T/$src" -- top "$T/$log"
	python3 "$M" top-json peak-bytes 4 "$T/$src" >"$T/want"
	"$R" top --by peak-bytes --limit 4 --json "$T/$log" |
		python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin), sort_keys=True))' \
			>"$T/got" 2>&1
	check_file_eq "$log: top --json: the model's figures" "$T/got" "$T/want"
	json_case "$log: leaks --json" leaks-json "$T/$src" -- leaks --json "$T/$log"
	json_case "$log: sizes --json" sizes-json "$T/$src" -- sizes --json "$T/$log"
	json_case "$log: peak --json" tree-json "$T/$src" -- peak --json "$T/$log"
	json_case "$log: peak --at end --min-percent 0 --json" tree-json "$T/$src" end \
		--min-percent 0 -- peak --at end --min-percent 0 --json "$T/$log"
	model_case "$log: leaks --csv" leaks-csv "$T/$src" -- leaks --csv "$T/$log"
	model_case "$log: sizes --csv" sizes-csv "$T/$src" -- sizes --csv "$T/$log"
	model_case "$log: top --by alloc-bytes --limit 5 --csv" top-csv alloc-bytes 5 "$T/$src" -- \
		top --by alloc-bytes --limit 5 --csv "$T/$log"
done
# top --by live-bytes --at SECONDS: event k at k us, so what the first events left live
for at in 0 0.0000005 0.0015 0.002 0.003999; do
	model_case "g1.atz: top --by live-bytes --at $at --limit 4" top live-bytes 4 "$T/g1.log" \
		--at "$at" --step 1000 -- top --by live-bytes --at "$at" --limit 4 "$T/g1.atz"
done
json_case "g1.atz: top --by live-bytes --at 0.0015 --json" top-json live-bytes 3 "$T/g1.log" \
	--at 0.0015 --step 1000 -- top --by live-bytes --at 0.0015 --limit 3 --json "$T/g1.atz"
json_case "g1.atz: top --by live-bytes --at heap-peak --json" top-json live-bytes 3 "$T/g1.log" \
	--at heap-peak -- top --by live-bytes --at heap-peak --limit 3 --json "$T/g1.atz"
model_case "g1.atz: top --by live-bytes --at 0.002 --csv" top-csv live-bytes 5 "$T/g1.log" \
	--at 0.002 --step 1000 -- top --by live-bytes --at 0.002 --limit 5 --csv "$T/g1.atz"
json_case "g1.atz: top --by churn --json" top-json churn 4 "$T/g1.log" -- \
	top --by churn --limit 4 --json "$T/g1.atz"
model_case "g1.atz: top --by heaptrack-temp-count --csv" top-csv heaptrack-temp-count 6 \
	"$T/g1.log" -- top --by heaptrack-temp-count --limit 6 --csv "$T/g1.atz"
json_case "diff --json A B" diff-json "$T/g1.log" "$T/g2.log" -- diff --json "$T/g1.log" "$T/g2.log"
model_case "diff --csv B A" diff-csv "$T/g2.log" "$T/g1.log" -- diff --csv "$T/g2.log" "$T/g1.atz"
json_case "diff --json of a trace and itself: no site" diff-json "$T/g1.log" "$T/g1.log" -- \
	diff --json "$T/g1.log" "$T/g1.atz"
for pid in 1001 1002 1003; do
	model_case "summary --json --pid $pid" json "$T/g1.log" --pid "$pid" -- \
		summary --json --pid "$pid" "$T/g1.log"
done
units_case "leaks --pid 1002" leaks "$T/g1.log" --pid 1002 -- leaks --pid 1002 "$T/g1.log"
units_case "diff A B" diff "$T/g1.log" "$T/g2.log" -- diff "$T/g1.log" "$T/g2.log"
units_case "diff B A" diff "$T/g2.log" "$T/g1.log" -- diff "$T/g2.log" "$T/g1.log"
units_case "diff of a trace and itself: no site differs" diff "$T/g1.log" "$T/g1.log" -- \
	diff "$T/g1.log" "$T/g1.atz"
units_case "timeline --churn 100000 (top 10): every snapshot, then the series" \
	timeline "$T/g1.log" 100000 10 -- timeline --churn 100000 "$T/g1.log"
units_case "timeline --churn 1000000 --top 3" timeline "$T/g2.log" 1000000 3 -- \
	timeline --churn 1000000 --top 3 "$T/g2.log"
# --window on exact times: event k at k us; 0.0005:0.0015 holds events 500..1500
model_case "--window 0.0005:0.0015: the figures of events 500 to 1500, times exact" \
	json "$T/g1.log" --from 500 --to 1500 --step 1000 -- \
	summary --json --window 0.0005:0.0015 "$T/g1.atz"
model_case "--window with --pid: times from the trace's first event" \
	json "$T/g1.log" --from 500 --to 1500 --pid 1003 --step 1000 -- \
	summary --json --pid 1003 --window 0.0005:0.0015 "$T/g1.atz"
model_case "binary trace with times: summary --json, times exact" \
	json "$T/g1.log" --step 1000 -- summary --json "$T/g1.atz"
units_case "--window 0.0005:0.0015: leaks" leaks "$T/g1.log" --from 500 --to 1500 --step 1000 -- \
	leaks --window 0.0005:0.0015 "$T/g1.atz"
units_case "--window :0.001 (from the start)" leaks "$T/g1.log" --from 0 --to 1000 --step 1000 -- \
	leaks --window :0.001 "$T/g1.atz"

# lifetimes and layout --annotate: line for line the model's (written from CMT's description)
python3 "$M" gen-tidy 3 3000 >"$T/t3.log"
python3 "$M" gen-tidy 4 2000 >"$T/t4.log"
for log in t3.log t4.log g1.log; do
	model_case "$log: lifetimes --annotate" lifetimes "$T/$log" -- lifetimes --annotate "$T/$log"
done
for log in t3.log t4.log; do
	model_case "$log: layout --annotate (blocks that never overlap: pages exact)" \
		layout "$T/$log" -- layout --annotate "$T/$log"
done

# --- a small log, the outputs written out by hand -------------------------------------------
cat >"$T/a.log" <<'EOF'
1 1 malloc(100)=0x1000
1 1 malloc(50)=0x2000
1 1 free(0x2000)
1 2 calloc(10,20)=0x3000
1 1 realloc(0x1000,300)=0x4000
1 2 free(0x9999)
1 2 malloc(1000)=0x5000
1 2 free(0x5000)
1 1 malloc(70)=0
2 7 malloc(64)=0x1000
2 7 malloc(16)=0x2000
2 7 free(0x1000)
EOF
"$A" synth -T 250000000 "$T/a.log" "$T/a.atz" # event k at k/4 s
cat >"$T/want" <<'EOF'
== process 1
events: 9
duration: unknown (the trace has no times)
calls malloc: 4
calls calloc: 1
calls realloc: 1
calls free: 3
peak live bytes: 1.4 KiB in 3 blocks
peak rss bytes: unknown (the trace has no RSS records of it)
final live bytes: 500 B in 2 blocks
temporary allocations: 2
failed allocations: 1
frees of blocks not live: 1
temporary allocations as heaptrack_print counts them: 2
== process 2
events: 3
duration: unknown (the trace has no times)
calls malloc: 2
calls free: 1
peak live bytes: 80 B in 2 blocks
peak rss bytes: unknown (the trace has no RSS records of it)
final live bytes: 16 B in 1 blocks
temporary allocations: 0
failed allocations: 0
frees of blocks not live: 0
temporary allocations as heaptrack_print counts them: 0
EOF
check_cmd "summary: two processes, each under its heading, bytes in units" 0 "$T/want" "" -- "$R" summary "$T/a.log"
cat >"$T/want" <<'EOF'
events: 9
duration: 2.000000 s
calls malloc: 4
calls calloc: 1
calls realloc: 1
calls free: 3
peak live bytes: 1500 in 3 blocks at 1.500000 s
peak rss bytes: unknown (the trace has no RSS records of it)
final live bytes: 500 in 2 blocks
temporary allocations: 2
failed allocations: 1
frees of blocks not live: 1
temporary allocations as heaptrack_print counts them: 2
EOF
check_cmd "summary --pid 1 --bytes of a binary trace: duration and the peak's time, exact" 0 \
	"$T/want" "" -- "$R" summary --pid 1 --bytes "$T/a.atz"

# tests/data/atz/rss-zero.atz: alloc_sequence traced with --stacks by an alloctapd that wrote an
# RSS record of 0 bytes for the exited, unreaped process: a peak of 0 is no RSS at all
run_cmd "$R" summary tests/data/atz/rss-zero.atz
check_eq "a trace whose only RSS record says 0 bytes: summary says no RSS record" \
	"$rc:$(grep '^peak rss bytes' "$T/out")" "0:peak rss bytes: unknown (the trace has no RSS records of it)"
run_cmd "$R" summary --json tests/data/atz/rss-zero.atz
check_eq "the same, --json: no peak RSS" "$rc:$(grep -o '"peak_rss_bytes":[a-z0-9]*,"peak_rss_time_ns":[a-z0-9]*' "$T/out" | sort -u)" \
	'0:"peak_rss_bytes":null,"peak_rss_time_ns":null'
cat >"$T/want" <<'EOF'
== snapshot 1 at 1.000000 s: 300 bytes live in 2 blocks
  live bytes   blocks     allocs      frees allocs all  frees all      pid  site
         200        1          1          0          1          0        1  calloc
         100        1          2          1          2          1        1  malloc
== snapshot 2 at 2.000000 s: 500 bytes live in 2 blocks
  live bytes   blocks     allocs      frees allocs all  frees all      pid  site
         300        1          1          0          1          0        1  realloc
         200        1          0          0          1          0        1  calloc
           0        0          1          2          3          3        1  malloc
== snapshot 3 at 2.750000 s: 516 bytes live in 3 blocks
  live bytes   blocks     allocs      frees allocs all  frees all      pid  site
         300        1          0          0          1          0        1  realloc
         200        1          0          0          1          0        1  calloc
          16        1          2          1          2          1        2  malloc
           0        0          1          0          4          3        1  malloc
== series (seconds, live bytes, RSS bytes)
1.000000 s 300 -
2.000000 s 500 -
2.750000 s 516 -
EOF
check_cmd "timeline --every 1 --bytes: snapshots at 1 s, 2 s and the end, exact" 0 "$T/want" "" -- \
	"$R" timeline --every 1 --bytes "$T/a.atz"
cat >"$T/want" <<'EOF'
== snapshot 1 at 1.000000 s: 300 B live in 2 blocks
  live bytes   blocks     allocs      frees allocs all  frees all      pid  site
       200 B        1          1          0          1          0        1  calloc
...
== series (seconds, live bytes, RSS bytes)
1.000000 s      300 B          -
2.000000 s      500 B          -
2.750000 s      516 B          -
EOF
run_cmd "$R" timeline --every 1 --top 1 "$T/a.atz"
check_eq "timeline --every 1 --top 1: in units, the series in columns" \
	"$rc:$(sed -n '1,3p;/^== series/,$p' "$T/out" | sed '3a ...')" "0:$(cat "$T/want")"
check_eq "timeline --top 1: one site per snapshot" "$(grep -c '^ ' "$T/out")" 6
cat >"$T/want" <<'EOF'
1 1 malloc(100)=0x1000
1 1 malloc(50)=0x2000
1 1 free(0x2000)                                  # 50 bytes, allocated 1 lines ago, 250000000 ns
1 2 calloc(10,20)=0x3000
1 1 realloc(0x1000,300)=0x4000                    # 100 bytes, allocated 4 lines ago, 1000000000 ns
1 2 free(0x9999)
1 2 malloc(1000)=0x5000
1 2 free(0x5000)                                  # 1000 bytes, allocated 1 lines ago, 250000000 ns
1 1 malloc(70)=0x0
2 7 malloc(64)=0x1000
2 7 malloc(16)=0x2000
2 7 free(0x1000)                                  # 64 bytes, allocated 2 lines ago, 500000000 ns
EOF
check_cmd "lifetimes --annotate of a binary trace: lifetimes in lines and ns" 0 "$T/want" "" -- \
	"$R" lifetimes --annotate "$T/a.atz"
cat >"$T/want" <<'EOF'
blocks freed: 4; still live at the end: 3; temporary: 2
== lifetime in events (rows) by bytes asked (columns), blocks
events \ bytes                  32-63       64-127     512-1023
1-1                                 1            0            1
2-3                                 0            1            0
4-7                                 0            1            0
== lifetime in ns (rows) by bytes asked (columns), blocks
ns \ bytes                      32-63       64-127     512-1023
134217728-268435455                 1            0            1
268435456-536870911                 0            1            0
536870912-1073741823                0            1            0
EOF
check_cmd "lifetimes (--hist): lifetimes by size, in events and ns" 0 "$T/want" "" -- \
	"$R" lifetimes --hist "$T/a.atz"
head -n 6 "$T/want" >"$T/want_text"
check_cmd "lifetimes of a text log: in events only" 0 "$T/want_text" "" -- "$R" lifetimes "$T/a.log"
cat >"$T/want" <<'EOF'
blocks placed: 7
== gap to the block below (bytes), blocks placed
none                                2
2048-4095                           4
4096-8191                           1
== gap to the block above (bytes), blocks placed
none                                7
pages in use (4096 bytes): 3 at the end, for 516 B live
most pages in use: 4 after event 11, for 580 B live (3.54% of their bytes)
EOF
check_cmd "layout: gaps and pages" 0 "$T/want" "" -- "$R" layout "$T/a.log"
sed -i 's/for \([0-9]*\) B live/for \1 bytes live/' "$T/want"
check_cmd "layout --bytes: the live bytes exact" 0 "$T/want" "" -- "$R" layout --bytes "$T/a.log"
build/alloctap-munge -qq "$T/a.log" -o "$T/a.munged"
run_cmd "$R" lifetimes --annotate "$T/a.munged"
check_eq "lifetimes --annotate of a munged log: its lines with slots" "$(sed -n 3p "$T/out")" \
	"$(printf '%-50s# %s' '1 1 free(#2)' '50 bytes, allocated 1 lines ago')"
printf '1 1 calloc(1,8)=0x10\n1 1 malloc(0)=0x20\n2 2 malloc(0)=0x20\n' >"$T/zero.log"
cat >"$T/want" <<'EOF'
size (bytes asked)                             calls          bytes  site of most bytes
0                                                  2            0 B  malloc
8-15                                               1            8 B  calloc
EOF
check_cmd "sizes: malloc(0) in the bucket 0, its own site named" 0 "$T/want" "" -- \
	"$R" sizes "$T/zero.log"
printf '1 1 malloc(8)=0x10\n1 1 malloc(8)=0x20\n1 1 free(0x10)\n' >"$T/gap.log"
"$A" synth -T 5000000000 "$T/gap.log" "$T/gap.atz" # 5 s between events
run_cmd timeout 20 "$R" timeline --every 0.000000001 --bytes "$T/gap.atz"
check_eq "timeline --every 1 ns over 10 s: one snapshot per run of empty periods (3), at once" \
	"$rc:$(grep -c '^== snapshot' "$T/out"):$(sed -n '/^== series/,$p' "$T/out" | tr '\n' '|')" \
	"0:3:== series (seconds, live bytes, RSS bytes)|0.000000 s 8 -|5.000000 s 16 -|10.000000 s 8 -|"
cat >"$T/want" <<'EOF'
live at 1.100000 s: 500 B in 2 blocks
100.00%              500 B        2 blocks  all
 60.00%              300 B        1 blocks    realloc
 40.00%              200 B        1 blocks    calloc
EOF
check_cmd "peak --at 1.1 --pid 1: what was live before the event at 1.25 s" 0 "$T/want" "" -- \
	"$R" peak --at 1.1 --pid 1 "$T/a.atz"
cat >"$T/want" <<'EOF'
digraph alloctap {
  node [shape=box, fontname="monospace"];
  rankdir=TB;
  subgraph cluster_0 {
  label="process 2: 16 B live at end";
  p0n0 [label="all", xlabel="16 B (100.0%)", penwidth=5.00];
  p0n0 -> p0n1 [penwidth=9.00, label="16 B"];
  p0n1 [label="malloc", xlabel="16 B (100.0%)", penwidth=5.00];
  }
}
EOF
check_cmd "peak --dot --at end --pid 2: the Graphviz graph" 0 "$T/want" "" -- \
	"$R" peak --dot --at end --pid 2 "$T/a.log"
# byte figures in the graph and the page: in units (1500 bytes: 1.4 KiB), or exact with --bytes
run_cmd "$R" peak --dot --pid 1 "$T/a.log"
check_eq "peak --dot: the labels in units" "$rc:$(grep -o 'xlabel="[^"]*"' "$T/out" | head -n 2 | tr '\n' ' ')" \
	'0:xlabel="1.4 KiB (100.0%)" xlabel="1000 B (66.7%)" '
run_cmd "$R" peak --dot --pid 1 --bytes "$T/a.log"
check_eq "peak --dot --bytes: the labels exact" "$rc:$(grep -o 'xlabel="[^"]*"' "$T/out" | head -n 2 | tr '\n' ' ')" \
	'0:xlabel="1500 B (100.0%)" xlabel="1000 B (66.7%)" '
# the page's figures: the summary's rows, a table's first rows (the figures its script draws:
# tests/report_html.sh)
html_figures() {
	grep -o -e '<tr><th>[a-zA-Z ]*bytes</th><td class="n">[^<]*</td>' \
		-e '<tr><td class="n">[^<]*</td><td class="n">1</td>' "$1" |
		head -n 4 | tr '\n' '|'
}
"$R" html -o "$T/a.html" "$T/a.log" 2>"$T/err"
check_eq "html: byte figures in units" "$?:$(html_figures "$T/a.html")" \
	'0:<tr><th>peak live bytes</th><td class="n">1.4 KiB</td>|<tr><th>final live bytes</th><td class="n">516 B</td>|<tr><td class="n">1000 B</td><td class="n">1</td>|<tr><td class="n">300 B</td><td class="n">1</td>|'
"$R" html --bytes -o "$T/a.html" "$T/a.log" 2>"$T/err"
check_eq "html --bytes: byte figures exact" "$?:$(html_figures "$T/a.html")" \
	'0:<tr><th>peak live bytes</th><td class="n">1500</td>|<tr><th>final live bytes</th><td class="n">516</td>|<tr><td class="n">1000</td><td class="n">1</td>|<tr><td class="n">300</td><td class="n">1</td>|'
if command -v dot >/dev/null; then
	run_cmd "$R" peak --dot -o "$T/a.svg" "$T/a.log"
	if [ "$rc" -eq 0 ] && grep -q '<svg' "$T/a.svg" && grep -q '>realloc<' "$T/a.svg" &&
		grep -q '>1000 B (66.7%)<' "$T/a.svg"; then
		ok "peak --dot -o FILE.svg: rendered by Graphviz's dot"
	else
		fail_run "peak --dot -o FILE.svg: rendered by Graphviz's dot" "exit $rc"
	fi
else
	fail "peak --dot -o FILE.svg: rendered by Graphviz's dot" "dot is not installed (make deps)"
fi
if command -v dot >/dev/null; then
	run_cmd "$R" peak --dot -o "$T/p.png" "$T/a.log"
	magic=$(head -c 8 "$T/p.png" | od -An -tx1 | tr -d ' \n')
	check_eq "peak --dot -o FILE.png: a PNG rendered by dot, exit 0, nothing said" \
		"$rc:$magic:$(wc -c <"$T/err")" "0:89504e470d0a1a0a:0"
	run_cmd "$R" peak --dot -o "$T/P.JPG" "$T/a.log"
	magic=$(head -c 3 "$T/P.JPG" | od -An -tx1 | tr -d ' \n')
	check_eq "peak --dot -o FILE.JPG: the extension taken lowercased, a JPEG" "$rc:$magic" \
		"0:ffd8ff"
	"$R" peak --dot -o "$T/p.pdf" "$T/a.log" 2>"$T/err"
	check_eq "peak --dot -o FILE.pdf: a PDF" "$?:$(head -c 5 "$T/p.pdf")" "0:%PDF-"
	"$R" peak --dot --at end --pid 2 -o "$T/p.gv" "$T/a.log" 2>"$T/err"
	check_eq "peak --dot -o FILE.gv: the graph's text, not rendered" \
		"$?:$(cmp "$T/p.gv" "$T/want" && echo same)" "0:same"
	"$R" peak --dot --at end --pid 2 -o "$T/graph" "$T/a.log" 2>"$T/err"
	check_eq "peak --dot -o FILE (no extension): the graph's text" \
		"$?:$(cmp "$T/graph" "$T/want" && echo same)" "0:same"
	check_err "peak --dot -o FILE.xyz: refused before reading, exit 2" 2 \
		"alloctap-report: $T/p.xyz: not a format Graphviz's dot renders (by its extension; dot -T? lists them); -o FILE.dot writes the graph itself" \
		"$R" peak --dot -o "$T/p.xyz" "$T/no-such-trace"
	check_eq "peak --dot -o FILE.xyz: no file made" "$(test -e "$T/p.xyz" && echo made)" ""
fi
"$R" peak --dot --at end --pid 2 -o "$T/p.dot" "$T/a.log" 2>"$T/err"
check_eq "peak --dot -o FILE.dot: the graph's text, dot not needed" \
	"$?:$(cmp "$T/p.dot" "$T/want" && echo same)" "0:same"
check_err "peak --dot -o FILE.svg without dot: said, exit 2" 2 \
	"alloctap-report: $T/b.svg: cannot render it: Graphviz's dot is not installed (apt-get install graphviz); -o FILE.dot writes the graph itself" \
	env PATH=/nonexistent "$ROOT/$R" peak --dot -o "$T/b.svg" "$T/a.log"
check_err "peak --dot -o FILE.dot without dot: written, exit 0" 0 "" \
	env PATH=/nonexistent "$ROOT/$R" peak --dot -o "$T/b.dot" "$T/a.log"
if command -v dot >/dev/null; then
	run_cmd "$R" peak --dot -o "$T/none/b.svg" "$T/a.log"
	check_eq "peak --dot -o into a missing folder: dot's failure said, exit 1" \
		"$rc:$(tail -n 1 "$T/err")" "1:alloctap-report: $T/none/b.svg: Graphviz's dot failed (status 1)"
fi
run_cmd script -qec "'$ROOT/$R' export --pprof '$T/a.log'" /dev/null
check_eq "export --pprof to a terminal: refused, exit 1" \
	"$rc:$(tr -d '\r' <"$T/out")" \
	"1:alloctap-report: export --pprof writes a binary file: give -o FILE, or redirect stdout"
run_cmd "$R" leaks -o "$T/leaks.txt" "$T/a.log"
check_eq "-o FILE: nothing on stdout, the file written" "$rc:$(wc -c <"$T/out"):$(head -n 1 "$T/leaks.txt")" \
	"0:0:== process 1"

# every command's --json against its text output, and its --csv against its --json, with the
# same arguments, on the fixtures' traces below (tests/report_formats.py: every figure, site, frame)
# (the text with --bytes, its figures exact, then without, in units; lifetimes has no byte
# figures)
formats_case() {
	local name=$1 cmd=$2 csv=$3 exact=--bytes
	shift 3
	[ "$cmd" != lifetimes ] || exact=()
	if ! "$R" "$cmd" ${exact[@]+"${exact[@]}"} "$@" >"$T/f.txt" 2>"$T/err" ||
		! "$R" "$cmd" --json "$@" >"$T/f.json" 2>"$T/err"
	then
		fail "$name: --json" "$(cat "$T/err")"
		return
	fi
	check "$name: --json, one document, the text's figures" python3 tests/report_formats.py \
		"$cmd" "$T/f.txt" "$T/f.json"
	if [ "$cmd" != lifetimes ]; then
		"$R" "$cmd" "$@" >"$T/f.txt" 2>"$T/err"
		check "$name: the text in units, the JSON's figures" python3 tests/report_formats.py \
			"$cmd" "$T/f.txt" "$T/f.json" --units
	fi
	[ "$csv" = csv ] || return 0
	"$R" "$cmd" --csv "$@" >"$T/f.csv" 2>"$T/err"
	check "$name: --csv, the JSON's figures" python3 tests/report_formats.py "$cmd-csv" \
		"$T/f.csv" "$T/f.json"
}
# --- a fixture with known sites, traced with its stacks --------------------------------------
if ! build/alloctapd --stacks -f binary -o "$T/s.atz" -- build/fixtures/report_sites \
	>/dev/null 2>"$T/s.err"; then
	fail "report_sites: traced with --stacks" "$(tail -n 5 "$T/s.err")"
	finish
fi
ok "report_sites: traced with --stacks"
# Where each site is: the fixture's source lines, found in its source (a frame's line is the
# line of its call), and the frames above main as this libc names them (its folded stack).
src=tests/fixtures/report_sites.c
line_of() { grep -n -F -- "$1" "$2" | head -n 1 | cut -d: -f1; }
at() { echo "$1 (report_sites.c:$(line_of "$2" "$src"))"; }
lno() { local x=${1##*:}; echo "${x%)}"; } # the line of "function (file:LINE)"
keep_at=$(at keep_blocks 'kept[i] = malloc(1000);')
burst_at=$(at burst 'p[i] = malloc(50000);')
churn_at=$(at churn 'void *p = malloc(64);')
grow_at=$(at grow_table 'return table ? realloc')
main_keep=$(at main 'keep_blocks();')
main_burst=$(at main 'burst();')
main_churn=$(at main 'churn();')
main_table=$(at main 'void *table = grow_table(NULL);')
main_regrow=$(at main 'table = grow_table(table);')
top=$("$R" export --folded --weight leak-bytes "$T/s.atz" | sed -n 's/;main;keep_blocks;malloc 10000$//p')
# the same frames with their lines, leaf first, from the leak's shared callers
run_cmd "$R" leaks --bytes "$T/s.atz"
above=$(sed -n "s/^ *every site above is called from: $main_keep < //p" "$T/out")
IFS=';' read -r -a frames <<<"$top"
names=""
for f in "${frames[@]}"; do names="$f${names:+ < $names}"; done
check_eq "report_sites: the frames above main, with lines where libc's debug file has them" \
	"$(sed -E 's/ \([^ ]*:[0-9]+\)//g' <<<"$above")" "$names"
# the kept blocks were allocated first and held: steady, no growth, as old as the trace
check_eq "report_sites: leaks: the kept blocks, 10000 bytes in 10 at keep_blocks, steady" \
	"$(sed -n 3p "$T/out" | sed -E 's/ +[0-9.]+ s  steady / AGE steady /')" \
	"       10000       10           +0 AGE steady   malloc < $keep_at"
check_eq "report_sites: leaks: nothing else" \
	"$(head -n 1 "$T/out" | sed 's/since .*/since T/'):$(wc -l <"$T/out")" \
	"live at the end: 10000 bytes in 10 blocks, 1 sites; growth since T:4"
run_cmd "$R" summary --json "$T/s.atz"
sed -e 's/"duration_ns":[0-9]*/"duration_ns":D/g' -e 's/"peak_live_time_ns":[0-9]*/"peak_live_time_ns":P/g' \
	-e 's/"peak_rss_bytes":\(null,"peak_rss_time_ns":null\|[1-9][0-9]*,"peak_rss_time_ns":[0-9]*\)/"peak_rss_bytes":R/g' \
	-e 's/"pid":[0-9]*/"pid":N/' "$T/out" >"$T/got"
# heaptrack_print's temporaries: the churn's and the table's, and the burst's first free,
# which follows the burst's last allocation, of the same site and size
fig='"events":2053,"duration_ns":D,"calls":{"malloc":1030,"calloc":1,"realloc":1,"free":1021},"peak_live_bytes":1014096,"peak_live_blocks":31,"peak_live_time_ns":P,"peak_rss_bytes":R,"final_live_bytes":10000,"final_live_blocks":10,"temporary_allocations":1001,"failed_allocations":0,"unknown_frees":0,"heaptrack_temporary_allocations":1002'
check_eq "report_sites: summary --json: the fixture's counts, peak, leak and temporaries" \
	"$(cat "$T/got")" "{\"processes\":1,$fig,\"per_process\":[{\"pid\":N,$fig}]}"
# the tree at the peak: the table, the kept blocks and the burst, under main; main is called
# at three lines, so it is shown by its name; each function below it, at one line, with it
ind() { printf '%*s' "$1" ''; }
IFS='<' read -r -a located <<<"$above"
{
	echo "live at heap peak: 1014096 bytes in 31 blocks"
	echo "100.00%      1014096 bytes       31 blocks  all"
	d=2
	for ((k = ${#located[@]} - 1; k >= 0; k--)); do
		f=${located[k]# }
		echo "100.00%      1014096 bytes       31 blocks  $(ind $d)${f% }"
		d=$((d + 2))
	done
	echo "100.00%      1014096 bytes       31 blocks  $(ind $d)main"
	d=$((d + 2))
	echo " 98.61%      1000000 bytes       20 blocks  $(ind $d)$burst_at"
	echo " 98.61%      1000000 bytes       20 blocks  $(ind $((d + 2)))malloc"
} >"$T/want"
cp "$T/want" "$T/want.all"
echo "(2 frames under 1% left out, 14096 bytes; --min-percent 0 shows them)" >>"$T/want"
check_cmd "report_sites: peak --bytes: the call tree at the heap peak, frames under 1% left out and said" \
	0 "$T/want" "" -- "$R" peak --bytes "$T/s.atz"
# the same in units (the default), figures in the same 18 columns: 1014096 bytes are 990.3 KiB,
# 1000000 are 976.5 KiB, 14096 are 13.7 KiB (rounded down)
sed -i -e 's/1014096 bytes/    990.3 KiB/' -e 's/1000000 bytes/    976.5 KiB/' \
	-e 's/: *990.3 KiB in/: 990.3 KiB in/' -e 's/14096 bytes;/13.7 KiB;/' "$T/want"
check_cmd "report_sites: peak: the same tree, bytes in units" 0 "$T/want" "" -- "$R" peak "$T/s.atz"
{
	cat "$T/want.all"
	echo "  0.99%        10000 bytes       10 blocks  $(ind $d)$keep_at"
	echo "  0.99%        10000 bytes       10 blocks  $(ind $((d + 2)))malloc"
	echo "  0.40%         4096 bytes        1 blocks  $(ind $d)$grow_at"
	echo "  0.40%         4096 bytes        1 blocks  $(ind $((d + 2)))calloc"
} >"$T/want"
check_cmd "report_sites: peak --min-percent 0 --bytes: every frame" 0 "$T/want" "" -- \
	"$R" peak --min-percent 0 --bytes "$T/s.atz"
# --depth: the levels shown, the deeper frames counted (burst and malloc, keep_blocks and
# malloc, grow_table and calloc below main); --bottom-up: the allocation
# functions first, then their callers, each function at its line while it has one
depth=$((${#located[@]} + 1))
{
	head -n $((depth + 2)) "$T/want.all"
	echo "(6 frames deeper than $depth levels left out, their bytes in the frames above them; --depth 0 shows them)"
} >"$T/want"
check_cmd "report_sites: peak --depth: the frames above main and main, the rest counted" 0 \
	"$T/want" "" -- "$R" peak --depth "$depth" --min-percent 0 --bytes "$T/s.atz"
# up_from FIGURES CALLER SITE: a bottom-up branch under its allocation function: the site's
# function, the line of main calling it, then the frames above main, each a level deeper
up_from() {
	local d=8 f
	echo "$1      $2"
	echo "$1        $3"
	for f in "${located[@]}"; do
		f=${f# }
		echo "$1  $(ind $d)${f% }"
		d=$((d + 2))
	done
}
{
	echo "live at heap peak: 1014096 bytes in 31 blocks (bottom-up: each allocation function, then its callers)"
	echo "100.00%      1014096 bytes       31 blocks  all"
	echo " 99.60%      1010000 bytes       30 blocks    malloc"
	up_from " 98.61%      1000000 bytes       20 blocks" "$burst_at" "$main_burst"
	up_from "  0.99%        10000 bytes       10 blocks" "$keep_at" "$main_keep"
	echo "  0.40%         4096 bytes        1 blocks    calloc"
	up_from "  0.40%         4096 bytes        1 blocks" "$grow_at" "$main_table"
} >"$T/want"
check_cmd "report_sites: peak --bottom-up: the allocation functions, then their callers, with lines" \
	0 "$T/want" "" -- "$R" peak --bottom-up --min-percent 0 --bytes "$T/s.atz"
# leaks tells a leak from a cache (tests/fixtures/leak_kinds.c): what keeps being allocated and
# stays is growing, what was allocated at the start and is held is steady, a cache of recent
# blocks and a request in flight are young; growing first, then steady, then young. Each row
# leaf first: the allocation function, then the fixture's function at the line of the call.
if build/alloctapd --stacks -f binary -o "$T/lk.atz" -- build/fixtures/leak_kinds 2>"$T/lk.err"; then
	run_cmd "$R" leaks --bytes "$T/lk.atz"
	formats_case "leak_kinds: leaks" leaks csv "$T/lk.atz"
	lk=tests/fixtures/leak_kinds.c
	lk_at() { echo "$1 (leak_kinds.c:$(line_of "$2" "$lk"))"; }
	check_eq "leak_kinds: leaks: each site's bytes, blocks, kind and line, the leak first" \
		"$(sed -n '3,$p' "$T/out" | grep -v 'every site above' |
			sed -E 's/^ *([0-9]+) +([0-9]+) +[-+0-9]+ +[0-9.]+ s  ([a-z]+) +/\1 \2 \3 /' |
			awk -F' < ' '{ print $1 " < " $2 }')" \
		"640000 20000 growing malloc < $(lk_at remember 'remembered[i] = malloc(32);')
160000 1 steady malloc < $(lk_at main 'remembered = malloc(')
4096 1 steady calloc < $(lk_at make_table 'return calloc(512, 8);')
3072 64 young malloc < $(lk_at cache_put 'cache[i % 64] = malloc(48);')
200 1 young malloc < $(lk_at request 'in_flight = malloc(200);')" "$(cat "$T/err")"
else
	fail "leak_kinds: traced with --stacks" "$(tail -n 5 "$T/lk.err")"
fi
# top: leaf first, the callers every listed site shares said once (what is above main)
callers="$above"
{
	echo "sites by peak-bytes, bytes live at the heap peak: 3 of 3 shown"
	echo "         bytes   share  site: the allocation function, then its callers"
	echo "     976.5 KiB    98.6%  malloc < $burst_at < $main_burst"
	echo "       9.7 KiB     0.9%  malloc < $keep_at < $main_keep"
	echo "       4.0 KiB     0.4%  calloc < $grow_at < $main_table"
	echo "                          every site above is called from: $callers"
} >"$T/want"
check_cmd "report_sites: top --by peak-bytes: leaf first, lines, shares, the shared callers once" 0 \
	"$T/want" "" -- "$R" top --by peak-bytes "$T/s.atz"
{
	echo "sites by temp-count, temporary allocations (freed by the next call of their thread): 1 of 2 shown"
	echo "         count   share  site: the allocation function, then its callers"
	echo "          1000    99.9%  malloc < $churn_at"
	echo "                          every site above is called from: $main_churn < $callers"
} >"$T/want"
check_cmd "report_sites: top --by temp-count --limit 1: one row of two" 0 "$T/want" "" \
	-- "$R" top --by temp-count --limit 1 "$T/s.atz"
# churn: the bytes of each site's blocks released again, whatever their age: the burst's
# 20 x 50000, the churn's 1000 x 64, the table's 8192 freed and its 4096 released by the
# realloc (to calloc's site); the kept blocks are never released
{
	echo "sites by churn, bytes allocated and released again (freed or reallocated): 4 of 4 shown"
	echo "         bytes   share  site: the allocation function, then its callers"
	echo "     976.5 KiB    92.9%  malloc < $burst_at < $main_burst"
	echo "      62.5 KiB     5.9%  malloc < $churn_at < $main_churn"
	echo "       8.0 KiB     0.7%  realloc < $grow_at < $main_regrow"
	echo "       4.0 KiB     0.3%  calloc < $grow_at < $main_table"
	echo "                          every site above is called from: $callers"
} >"$T/want"
check_cmd "report_sites: top --by churn: the burst, the churn, the table's two blocks" 0 \
	"$T/want" "" -- "$R" top --by churn "$T/s.atz"
sed -e 's/^ *976.5 KiB /       1000000 /' -e 's/^ *62.5 KiB /         64000 /' \
	-e 's/^ *8.0 KiB /          8192 /' -e 's/^ *4.0 KiB /          4096 /' "$T/want" >"$T/want.B"
check_cmd "report_sites: top --by churn -B: exact bytes" 0 "$T/want.B" "" -- \
	"$R" top --by churn --bytes "$T/s.atz"
# heaptrack_print's temporaries (see summary above): the churn's 1000, the burst's first free
# (after the burst's last allocation, same site and size) and the table freed right after its
# realloc; the two of one by text, main's line of burst() before its line of the realloc
{
	echo "sites by heaptrack-temp-count, temporary allocations as heaptrack_print counts them (released right after an allocation of their site and size): 3 of 3 shown"
	echo "         count   share  site: the allocation function, then its callers"
	echo "          1000    99.8%  malloc < $churn_at < $main_churn"
	echo "             1     0.0%  malloc < $burst_at < $main_burst"
	echo "             1     0.0%  realloc < $grow_at < $main_regrow"
	echo "                          every site above is called from: $callers"
} >"$T/want"
check_cmd "report_sites: top --by heaptrack-temp-count: the churn, the burst's last, the table" 0 \
	"$T/want" "" -- "$R" top --by heaptrack-temp-count "$T/s.atz"
# live-bytes at a moment: at the heap peak the peak's rows, at the end the leak, at 0 s (the
# first event's time) the table's calloc alone
"$R" top --by peak-bytes "$T/s.atz" | sed '1s/^sites by peak-bytes,/sites by live-bytes,/' >"$T/want"
check_cmd "report_sites: top --by live-bytes --at heap-peak: peak-bytes's rows" 0 "$T/want" "" \
	-- "$R" top --by live-bytes --at heap-peak "$T/s.atz"
{
	echo "sites by live-bytes, bytes live at the end: 1 of 1 shown"
	echo "         bytes   share  site: the allocation function, then its callers"
	echo "       9.7 KiB   100.0%  malloc < $keep_at"
	echo "                          every site above is called from: $main_keep < $callers"
} >"$T/want"
check_cmd "report_sites: top --by live-bytes (--at end, the default): the leak" 0 "$T/want" "" \
	-- "$R" top --by live-bytes "$T/s.atz"
check_cmd "report_sites: top --by live-bytes --at end: the same" 0 "$T/want" "" \
	-- "$R" top --by live-bytes --at end "$T/s.atz"
{
	echo "sites by live-bytes, bytes live at 0 s: 1 of 1 shown"
	echo "         bytes   share  site: the allocation function, then its callers"
	echo "       4.0 KiB   100.0%  calloc < $grow_at"
	echo "                          every site above is called from: $main_table < $callers"
} >"$T/want"
check_cmd "report_sites: top --by live-bytes --at 0: the first event's block, the table" 0 \
	"$T/want" "" -- "$R" top --by live-bytes --at 0 "$T/s.atz"
run_cmd "$R" top --by live-bytes --at 0 --json "$T/s.atz"
check_eq "report_sites: top --by live-bytes --at 0 --json: the moment, the table's calloc" \
	"$(python3 -c 'import json, sys; d = json.load(sys.stdin); s = d["processes"][0]["sites"]; print(d["by"], d["at"], d["time_ns"], len(s), s[0]["value"], [f["function"] for f in s[0]["stack"][:3]])' <"$T/out")" \
	"live-bytes time 0 1 4096 ['calloc', 'grow_table', 'main']"
run_cmd "$R" top --by live-bytes --at 0 --csv "$T/s.atz"
check_eq "report_sites: top --by live-bytes --at 0 --csv: one record, the table" \
	"$(tr -d '\r' <"$T/out" | cut -d, -f2- | sed 's/;main (\([^)]*\));.*/;main (\1)/')" \
	"rank,value,process_total,stack
1,4096,4096,calloc;$grow_at;$main_table"
run_cmd "$R" top --json --limit 1 "$T/s.atz"
check_eq "report_sites: top --json: frames as records, the leak's two with their file and line" \
	"$(python3 -c 'import json, sys; s = json.load(sys.stdin)["processes"][0]["sites"][0]; print(s["value"], json.dumps(s["stack"][:3], sort_keys=True))' <"$T/out")" \
	"10000 [{\"function\": \"malloc\"}, {\"file\": \"tests/fixtures/report_sites.c\", \"function\": \"keep_blocks\", \"line\": $(lno "$keep_at")}, {\"file\": \"tests/fixtures/report_sites.c\", \"function\": \"main\", \"line\": $(lno "$main_keep")}]"
printf '%s\n' "$top;main;churn;malloc 1000" "$top;main;grow_table;realloc 1" >"$T/want"
check_cmd "report_sites: export --weight temp-count: the churn, and the table freed at once" 0 \
	"$T/want" "" -- "$R" export --folded --weight temp-count "$T/s.atz"
printf '%s\n' "$top;main;burst;malloc 1000000" "$top;main;grow_table;calloc 4096" \
	"$top;main;keep_blocks;malloc 10000" >"$T/want"
check_cmd "report_sites: export --weight peak-bytes" 0 "$T/want" "" -- \
	"$R" export --folded --weight peak-bytes "$T/s.atz"
printf '%s\n' "$top;main;keep_blocks;malloc 10000" >"$T/want"
check_cmd "report_sites: export --weight leak-bytes" 0 "$T/want" "" -- \
	"$R" export --folded --weight leak-bytes "$T/s.atz"
cat >"$T/want" <<EOF
size (bytes asked)                             calls          bytes  site of most bytes
64-127                                          1000          64000  malloc < $churn_at < $main_churn
512-1023                                          10          10000  malloc < $keep_at < $main_keep
4096-8191                                          1           4096  calloc < $grow_at < $main_table
8192-16383                                         1           8192  realloc < $grow_at < $main_regrow
32768-65535                                       20        1000000  malloc < $burst_at < $main_burst
                                                                     every site above is called from: $callers
EOF
check_cmd "report_sites: sizes --bytes" 0 "$T/want" "" -- "$R" sizes --bytes "$T/s.atz"
check_cmd "report_sites: sizes -B, the short form of --bytes" 0 "$T/want" "" -- "$R" sizes -B "$T/s.atz"
run_cmd "$R" timeline --every 0.0001 --top 3 --bytes "$T/s.atz"
check_eq "report_sites: timeline --every: the last snapshot holds the leak" \
	"$(grep '^== snapshot' "$T/out" | tail -n 1 | sed 's/.*: //; s/, RSS.*//'):$(grep -v 'every site above' "$T/out" | tail -n 1 | cut -d' ' -f3)" \
	"10000 bytes live in 10 blocks:10000"
run_cmd "$R" diff "$T/s.atz" "$T/s.atz"
check_eq "report_sites: diff with itself: no site differs" "$rc:$(sed -n 2p "$T/out")" "0:(no site differs)"

formats_case "report_sites: peak" peak - "$T/s.atz"
formats_case "report_sites: peak --min-percent 0" peak - --min-percent 0 "$T/s.atz"
formats_case "report_sites: peak --at end" peak - --at end "$T/s.atz"
formats_case "report_sites: peak --at 0.0001" peak - --at 0.0001 "$T/s.atz"
formats_case "report_sites: peak --bottom-up" peak - --bottom-up --min-percent 0 "$T/s.atz"
formats_case "report_sites: peak --depth 3" peak - --depth 3 "$T/s.atz"
formats_case "report_sites: peak --bottom-up --depth 2" peak - --bottom-up --depth 2 "$T/s.atz"
formats_case "report_sites: leaks" leaks csv "$T/s.atz"
formats_case "report_sites: sizes" sizes csv "$T/s.atz"
formats_case "report_sites: timeline --every" timeline csv --every 0.0001 --top 3 "$T/s.atz"
formats_case "report_sites: timeline --churn" timeline csv --churn 100000 --top 2 "$T/s.atz"
formats_case "report_sites: lifetimes" lifetimes - "$T/s.atz"
formats_case "report_sites: layout" layout - "$T/s.atz"
formats_case "report_sites: diff with a random log" diff csv "$T/s.atz" "$T/g1.log"
formats_case "report_sites: diff with itself" diff csv "$T/s.atz" "$T/s.atz"
"$R" top --by peak-bytes --json "$T/s.atz" >"$T/f.json"
"$R" top --by peak-bytes --csv "$T/s.atz" >"$T/f.csv"
check "report_sites: top --csv: top --json's figures" python3 tests/report_formats.py top-csv \
	"$T/f.csv" "$T/f.json"
check_eq "report_sites: top --csv: the header, the burst first, exact bytes, leaf first" \
	"$(head -n 2 "$T/f.csv" | tr -d '\r' | cut -d, -f2- | sed 's/;main (\([^)]*\));.*/;main (\1)/')" \
	"rank,value,process_total,stack
1,1000000,1014096,malloc;$burst_at;$main_burst"
for by in "churn" "heaptrack-temp-count" "live-bytes --at heap-peak" "live-bytes --at 0.0001"; do
	"$R" top --by $by --json "$T/s.atz" >"$T/f.json"
	"$R" top --by $by --csv "$T/s.atz" >"$T/f.csv"
	check "report_sites: top --by $by --csv: top --json's figures" python3 \
		tests/report_formats.py top-csv "$T/f.csv" "$T/f.json"
done
# the fixture's own figures in the JSON: the kept blocks, leaf first, frames as objects
"$R" leaks --json "$T/s.atz" >"$T/f.json"
check_eq "report_sites: leaks --json: the kept blocks, steady, malloc < keep_blocks < main" \
	"$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
s = d["processes"][0]["sites"]
print(d["clock"], len(s), s[0]["bytes"], s[0]["blocks"], s[0]["growth"], s[0]["kind"],
      [f["function"] for f in s[0]["stack"][:3]], sorted(s[0]["stack"][0]))' "$T/f.json")" \
	"ns 1 10000 10 0 steady ['malloc', 'keep_blocks', 'main'] ['function']"
"$R" sizes --json "$T/s.atz" >"$T/f.json"
check_eq "report_sites: sizes --json: the buckets' calls and bytes, exact" \
	"$(python3 -c 'import json, sys
for b in json.load(open(sys.argv[1]))["buckets"]:
    print(b["min"], b["max"], b["calls"], b["bytes"], b["top_site"]["stack"][1]["function"])' \
		"$T/f.json")" \
	"64 127 1000 64000 churn
512 1023 10 10000 keep_blocks
4096 8191 1 4096 grow_table
8192 16383 1 8192 grow_table
32768 65535 20 1000000 burst"

# --- a binary trace taken without --stacks has times: peak --at T is the state at T ---------
# The model reads the same trace's text form (atz_tool decode) up to the first event stamped
# after T (atz_tool times), as the man page defines the moment.
if ! build/alloctapd -q -f binary -o "$T/nt0.atz" -- build/fixtures/report_sites \
	>/dev/null 2>"$T/nt0.err"; then
	fail "report_sites: traced without --stacks" "$(tail -n 5 "$T/nt0.err")"
else
	"$A" decode "$T/nt0.atz" "$T/nt0.log"
	"$A" times "$T/nt0.atz" >"$T/nt0.times"
	check_eq "without --stacks: every event has a time" \
		"$(awk '$1 != 0' "$T/nt0.times" | wc -l)" "$(wc -l <"$T/nt0.log")"
	# for the events a quarter, half and three quarters in: SECONDS, the events before the
	# first stamped after it, and the tree's title
	python3 - "$T/nt0.times" >"$T/nt0.cuts" <<'PY'
import sys
t = [int(line.split()[0]) for line in open(sys.argv[1])]
rel = [max(0, x - t[0]) for x in t]
for j in (len(t) // 4, len(t) // 2, 3 * len(t) // 4):
    at = rel[j]
    k = next((i for i, r in enumerate(rel) if r > at), len(rel))
    print('%d.%09d %d %d.%06d' % (at // 10**9, at % 10**9, k, at // 10**9, at % 10**9 // 1000))
PY
	while read -r s k title; do
		python3 "$M" tree "$T/nt0.log" end --from 0 --to $((k - 1)) |
			sed "1s/^live at end:/live at $title s:/" >"$T/want"
		check_cmd "without --stacks: peak --at $s: the model's state after $k events" 0 \
			"$T/want" "" -- "$R" peak --at "$s" "$T/nt0.atz"
	done <"$T/nt0.cuts"
	read -r s k title < <(sed -n 2p "$T/nt0.cuts")
	python3 "$M" tree "$T/nt0.log" end >"$T/end"
	check "without --stacks: the state halfway differs from the end's" \
		bash -c "! cmp -s '$T/end' <(python3 '$M' tree '$T/nt0.log' end --from 0 --to $((k - 1)))"
	check_err_match "without --stacks: peak --at 99: outside, exit 4" 4 \
		"^alloctap-report: $T/nt0.atz: --at 99 is outside the trace, which spans 0 to [0-9.]* s (seconds from its first event)$" \
		"$R" peak --at 99 "$T/nt0.atz"
fi

# --- RSS: the daemon samples it; the report puts it beside the heap ------------------------------
if ! build/alloctapd -q --stacks -f binary -o "$T/h.atz" -- build/fixtures/report_sites hold \
	>/dev/null 2>"$T/h.err"; then
	fail "report_sites hold: traced with --stacks" "$(tail -n 5 "$T/h.err")"
else
	run_cmd "$R" summary --json "$T/h.atz"
	rss=$(sed -n 's/^{"processes":1,.*"peak_rss_bytes":\([0-9]*\),"peak_rss_time_ns":[0-9]*,.*/\1/p' "$T/out")
	check "report_sites hold: peak RSS while 32 MiB were live: 32 to 48 MiB" \
		test "${rss:-0}" -ge 33554432 -a "${rss:-0}" -le 50331648
	run_cmd "$R" peak --at rss-peak --bytes "$T/h.atz"
	check_eq "report_sites hold: peak --at rss-peak: the 32 MiB block, at hold_pages" \
		"$(head -n 1 "$T/out"):$(grep -c -E "^100.00% +33554432 bytes +1 blocks +hold_pages \(report_sites.c:$(line_of 'char *p = malloc(32u << 20);' "$src")\)\$" "$T/out")" \
		"live at RSS peak: 33554432 bytes in 1 blocks:1"
	hold_at=$(at hold_pages 'char *p = malloc(32u << 20);')
	main_hold=$(at main 'hold_pages();')
	{
		echo "sites by live-bytes, bytes live at the RSS peak: 1 of 1 shown"
		echo "         bytes   share  site: the allocation function, then its callers"
		echo "      32.0 MiB   100.0%  malloc < $hold_at"
		echo "                          every site above is called from: $main_hold < $callers"
	} >"$T/want"
	check_cmd "report_sites hold: top --by live-bytes --at rss-peak: the 32 MiB block alone" 0 \
		"$T/want" "" -- "$R" top --by live-bytes --at rss-peak "$T/h.atz"
	run_cmd "$R" timeline --every 0.1 --bytes "$T/h.atz"
	check_eq "report_sites hold: the timeline's RSS series: over 32 MiB while held, under after" \
		"$(sed -n '/^== series/,$p' "$T/out" | awk 'NR > 1 && $4 != "-" { if ($3 == 33554432 && $4 >= 33554432) held++; if ($3 < 33554432 && $4 < 33554432) after++ } END { print (held > 0) ":" (after > 0) }')" "1:1"
	# a trace without times, as an older alloctapd wrote without --stacks (ALLOCTAP_TIMES=none
	# writes it so): RSS records placed by their position in the stream
	if ALLOCTAP_TIMES=none build/alloctapd -q -f binary -o "$T/n.atz" -- \
		build/fixtures/report_sites hold >/dev/null 2>"$T/n.err"; then
		run_cmd "$R" summary --bytes "$T/n.atz"
		nrss=$(sed -n 's/^peak rss bytes: \([0-9]*\) after event 1$/\1/p' "$T/out")
		check "no --stacks: peak RSS after the first event (the 32 MiB block): 32 to 48 MiB" \
			test "${nrss:-0}" -ge 33554432 -a "${nrss:-0}" -le 50331648
		run_cmd "$R" peak --at rss-peak --bytes "$T/n.atz"
		check_eq "no --stacks: peak --at rss-peak: the 32 MiB block, at malloc" \
			"$(head -n 1 "$T/out"):$(sed -n 3p "$T/out")" \
			"live at RSS peak: 33554432 bytes in 1 blocks:100.00%     33554432 bytes        1 blocks    malloc"
	else
		fail "report_sites hold: traced without --stacks" "$(tail -n 5 "$T/n.err")"
	fi
	# without --stacks now: times, the RSS peak at its time
	if build/alloctapd -q -f binary -o "$T/nt.atz" -- build/fixtures/report_sites hold \
		>/dev/null 2>"$T/nt.err"; then
		run_cmd "$R" summary --bytes "$T/nt.atz"
		nrss=$(sed -n 's/^peak rss bytes: \([0-9]*\) at [0-9]*\.[0-9]* s$/\1/p' "$T/out")
		check "no --stacks, times: peak RSS at a time (the 32 MiB block): 32 to 48 MiB" \
			test "${nrss:-0}" -ge 33554432 -a "${nrss:-0}" -le 50331648
		run_cmd "$R" peak --at rss-peak --bytes "$T/nt.atz"
		check_eq "no --stacks, times: peak --at rss-peak: the 32 MiB block, at malloc" \
			"$(head -n 1 "$T/out"):$(sed -n 3p "$T/out")" \
			"live at RSS peak: 33554432 bytes in 1 blocks:100.00%     33554432 bytes        1 blocks    malloc"
	else
		fail "report_sites hold: traced without --stacks" "$(tail -n 5 "$T/nt.err")"
	fi
	# a process shorter than the sampling period: no RSS record, and no "0 bytes" peak
	if build/alloctapd -q --stacks -f binary -o "$T/short.atz" -- \
		build/fixtures/alloc_sequence "$T/short.expect" --threads 0 >/dev/null 2>"$T/short.err"; then
		run_cmd "$R" summary "$T/short.atz"
		check_eq "a process shorter than 100 ms: summary says no RSS record, not a peak of 0" \
			"$rc:$(grep '^peak rss bytes' "$T/out")" \
			"0:peak rss bytes: unknown (the trace has no RSS records of it)"
	else
		fail "alloc_sequence: traced with --stacks" "$(tail -n 5 "$T/short.err")"
	fi
	# html: one page, no network, rendered by headless Chromium with its charts
	run_cmd "$R" html -o "$T/h.html" "$T/h.atz"
	check_eq "html -o FILE: exit 0, nothing said" "$rc:$(cat "$T/err")" "0:"
	check_eq "html: self-contained (no src or href, no URL but SVG's namespace)" \
		"$(grep -c -E 'src=|href=' "$T/h.html"):$(grep -o 'https\?://[^"]*' "$T/h.html" | sort -u)" \
		"0:http://www.w3.org/2000/svg"
	check_eq "html: the leak's site in the tables, leaf first, with its line; the callers said once" \
		"$(grep -c -F "<td class=\"s\">malloc &lt; $keep_at</td>" "$T/h.html"):$(grep -c -F "<td class=\"s\">every site above is called from: $main_keep &lt; " "$T/h.html")" \
		"1:1"
	# the page in headless Chromium: tests/report_html.sh
	build/alloctap-munge -qq --keep-pointers --format binary "$T/h.atz" -o "$T/hk.atz"
	run_cmd "$R" summary --json "$T/hk.atz"
	check_eq "munge --keep-pointers to binary: the RSS records kept" \
		"$(sed -n 's/^{"processes":1,.*"peak_rss_bytes":\([0-9]*\),.*/\1/p' "$T/out")" "$rss"
	build/alloctap-munge -qq --format binary "$T/h.atz" -o "$T/hm.atz"
	run_cmd "$R" summary --json "$T/hm.atz"
	check_eq "munge to binary: processes numbered anew, RSS records dropped (no phantom process)" \
		"$(grep -o '"processes":[0-9]*' "$T/out"):$(grep -o '"peak_rss_bytes":null' "$T/out" | head -n 1)" \
		'"processes":1:"peak_rss_bytes":null'
fi

# --- pprof, read back by go tool pprof (Debian's golang-go) --------------------------------------
# pprof_raw FILE: the samples of `go tool pprof -raw FILE`, one line per stack (summed over
# processes): "ROOT;...;LEAF ALLOC_OBJECTS ALLOC_SPACE INUSE_OBJECTS INUSE_SPACE", sorted; a
# location's functions inlined into one another are frames of their own, caller first.
pprof_raw() {
	HOME=$T go tool pprof -raw "$1" 2>"$T/pprof.err" | python3 -c '
import re, sys
text = sys.stdin.read()
names, loc = {}, None
for line in text.split("\n"):
    m = re.match(r"^ +(\d+): 0x[0-9a-f]+ (?:M=\d+ )?(\S+) \S*:\d+ s=\d+$", line)
    if m:
        loc = m.group(1)
        names[loc] = [m.group(2)]
        continue
    m = re.match(r"^ {13,}(\S+) \S*:\d+ s=\d+$", line)
    if m and loc:
        names[loc].append(m.group(1))  # the function this one was inlined into
        continue
    loc = None
tot = {}
for m in re.finditer(r"^ +(\d+) +(\d+) +(\d+) +(\d+): ([\d ]+)$", text, re.M):
    stack = ";".join(n for i in reversed(m.group(5).split()) for n in reversed(names[i]))
    t = tot.setdefault(stack, [0, 0, 0, 0])
    for k in range(4):
        t[k] += int(m.group(k + 1))
for stack in sorted(tot):
    print(stack, *tot[stack])
'
}
# pprof_fixture_locations FILE FIXTURE: each location of the profile in FIXTURE's mapping,
# "FUNCTION FILE:LINE s=START" as the profile says, and what binutils' addr2line says at the
# same place ("FUNCTION FILE:LINE", looked up at the address before the return address), one
# per line, sorted.
pprof_fixture_locations() {
	HOME=$T go tool pprof -raw "$1" 2>/dev/null | python3 -c '
import re, subprocess, sys
text, exe = sys.stdin.read(), sys.argv[1]
maps = {m[0]: (int(m[1], 16), int(m[3], 16), m[4]) for m in
        re.findall(r"^(\d+): 0x([0-9a-f]+)/0x([0-9a-f]+)/0x([0-9a-f]+) (\S+)", text, re.M)}
loads = [(int(o, 16), int(v, 16), int(s, 16)) for o, v, s in re.findall(
    r"^ *LOAD +0x([0-9a-f]+) 0x([0-9a-f]+) 0x[0-9a-f]+ 0x([0-9a-f]+)",
    subprocess.run(["readelf", "-lW", exe], capture_output=True, text=True).stdout, re.M)]
for addr, mid, fn, path, line, start in re.findall(
        r"^ +\d+: 0x([0-9a-f]+) M=(\d+) (\S+) (\S+):(\d+) s=(\d+)$", text, re.M):
    base, off, obj = maps[mid]
    if obj != exe:
        continue
    foff = int(addr, 16) - base + off
    vaddr = next(v + foff - o for o, v, s in loads if o <= foff < o + s)
    a2l = subprocess.run(["addr2line", "-f", "-e", exe, hex(vaddr - 1)], capture_output=True,
                         text=True).stdout.split("\n")
    where = re.sub(r" \(discriminator \d+\)", "", a2l[1])
    print("%s %s:%s s=%s | %s %s" % (fn, path.split("/")[-1], line, start, a2l[0],
                                     where.split("/")[-1]))
' "$2" | sort
}
if ! command -v go >/dev/null; then
	fail "export --pprof: go tool pprof reads it" "go is not installed (make deps installs golang-go)"
else
	run_cmd "$R" export --pprof -o "$T/s.pb.gz" "$T/s.atz"
	check_eq "report_sites: export --pprof -o FILE: exit 0, nothing said" "$rc:$(cat "$T/err")" "0:"
	check_eq "report_sites: the profile is gzip'd" "$(head -c 2 "$T/s.pb.gz" | od -An -tx1 | tr -d ' ')" 1f8b
	pprof_raw "$T/s.pb.gz" >"$T/got"
	printf '%s\n' "$top;main;burst;malloc 20 1000000 0 0" "$top;main;churn;malloc 1000 64000 0 0" \
		"$top;main;grow_table;calloc 1 4096 0 0" "$top;main;grow_table;realloc 1 8192 0 0" \
		"$top;main;keep_blocks;malloc 10 10000 10 10000" >"$T/want"
	check_file_eq "report_sites: go tool pprof -raw: each site's four values, in use at the end" \
		"$T/got" "$T/want"
	"$R" export --pprof --at heap-peak "$T/s.atz" >"$T/peak.pb.gz"
	pprof_raw "$T/peak.pb.gz" >"$T/got"
	printf '%s\n' "$top;main;burst;malloc 20 1000000 20 1000000" "$top;main;churn;malloc 1000 64000 0 0" \
		"$top;main;grow_table;calloc 1 4096 1 4096" "$top;main;grow_table;realloc 1 8192 0 0" \
		"$top;main;keep_blocks;malloc 10 10000 10 10000" >"$T/want"
	check_file_eq "report_sites: export --pprof --at heap-peak: in use at the peak" "$T/got" "$T/want"
	HOME=$T go tool pprof -top -sample_index=inuse_space -unit=B "$T/s.pb.gz" >"$T/top" 2>&1
	check_eq "report_sites: go tool pprof -top: the leak, 10000 B in keep_blocks" \
		"$(grep -c '^ *10000B  *100%  *100%  *10000B  *100%  malloc$' "$T/top"):$(grep -c ' 10000B  *100%  keep_blocks$' "$T/top")" "1:1"
	# file and line: the fixture's mapping (its path and build-id), each of its locations at
	# the line binutils' addr2line gives for the same address, each function from the line
	# it is declared at, and pprof's source view of the leak at its line
	fx=$ROOT/build/fixtures/report_sites
	bid=$(readelf -n "$fx" | sed -n 's/^ *Build ID: //p')
	HOME=$T go tool pprof -raw "$T/s.pb.gz" >"$T/raw" 2>&1
	check_eq "report_sites: pprof Mapping: the fixture's path and build-id, with functions" \
		"$(grep -c "^[0-9]*: 0x[0-9a-f]*/0x[0-9a-f]*/0x[0-9a-f]* $fx $bid \[FN\]" "$T/raw")" 1
	pprof_fixture_locations "$T/s.pb.gz" "$fx" >"$T/locs"
	decl() { line_of "static void $1(" "$src"; }
	grep_decl=$(line_of 'static void *grow_table(' "$src")
	{
		echo "burst report_sites.c:${burst_at##*:} s=$(decl burst) | burst report_sites.c:${burst_at##*:}"
		echo "churn report_sites.c:${churn_at##*:} s=$(decl churn) | churn report_sites.c:${churn_at##*:}"
		for g in 1 2; do
			echo "grow_table report_sites.c:${grow_at##*:} s=$grep_decl | grow_table report_sites.c:${grow_at##*:}"
		done
		echo "keep_blocks report_sites.c:${keep_at##*:} s=$(decl keep_blocks) | keep_blocks report_sites.c:${keep_at##*:}"
		for m in "$main_burst" "$main_churn" "$main_keep" "$main_regrow" "$main_table"; do
			echo "main report_sites.c:${m##*:} s=$(line_of 'int main(' "$src") | main report_sites.c:${m##*:}"
		done
	} | tr -d ')' | sort >"$T/want"
	check_file_eq "report_sites: pprof Location: each address at the line addr2line gives, Function at its declaration" \
		"$T/locs" "$T/want"
	(cd "$ROOT" && HOME=$T go tool pprof -list '^keep_blocks$' -sample_index=inuse_space -unit=B \
		"$T/s.pb.gz") >"$T/list" 2>&1
	check_eq "report_sites: go tool pprof -list keep_blocks: the fixture's source, the leak at its line" \
		"$(grep -c '^ROUTINE =* keep_blocks in tests/fixtures/report_sites.c$' "$T/list"):$(grep -E '^ +\. +10000B +[0-9]+:' "$T/list" | sed -E 's/^ +\. +10000B +([0-9]+):.*/\1/')" \
		"1:$(lno "$keep_at")" "$(cat "$T/list")"
	HOME=$T go tool pprof -traces -lines -sample_index=inuse_space "$T/s.pb.gz" >"$T/traces" 2>&1
	check_eq "report_sites: go tool pprof -traces -lines: the leak's stack, with the fixture's lines" \
		"$(grep -A2 '^ *9.77kB   malloc$' "$T/traces" | sed -n '2,3p' | awk '{ print $1, $2 }' | sed 's|tests/fixtures/||' | tr '\n' ';')" \
		"keep_blocks report_sites.c:$(lno "$keep_at");main report_sites.c:$(lno "$main_keep");"
	# the random log, three processes: pprof's samples summed per site = the model's weights
	"$R" export --pprof "$T/g1.log" >"$T/g1.pb.gz"
	pprof_raw "$T/g1.pb.gz" >"$T/got"
	for w in alloc-count alloc-bytes leak-bytes; do python3 "$M" export "$w" "$T/g1.log" >"$T/w.$w"; done
	python3 - "$T/got" "$T/w.alloc-count" "$T/w.alloc-bytes" "$T/w.leak-bytes" >"$T/cmp" <<'PY'
import sys
got = {l.split()[0]: [int(v) for v in l.split()[1:]] for l in open(sys.argv[1])}
for col, path in ((0, sys.argv[2]), (1, sys.argv[3]), (3, sys.argv[4])):
    want = {l.split()[0]: int(l.split()[1]) for l in open(path)}
    have = {k: v[col] for k, v in got.items() if v[col]}
    assert have == want, (path, have, want)
print("same")
PY
	check_eq "random log: pprof's alloc_objects, alloc_space and inuse_space = the model's" \
		"$(cat "$T/cmp")" same
fi

# --- temporary allocations as heaptrack counts them -----------------------------------------
# realloc_temps: 1000 x (malloc, realloc of that block, free of the realloc's): heaptrack sees
# a realloc as a free then an allocation, so the realloc is a temporary of malloc's site and
# the free one of realloc's. Both tools trace the fixture; their counts at its sites compare.
FXR=build/fixtures/realloc_temps
if ! command -v heaptrack >/dev/null || ! command -v heaptrack_print >/dev/null; then
	fail "realloc_temps: heaptrack runs" "heaptrack is not installed (apt-get install heaptrack)"
elif ! heaptrack -o "$T/heaptrack-rt" "$FXR" >"$T/ht.out" 2>&1 || ! ls "$T"/heaptrack-rt.* >/dev/null 2>&1; then
	fail "realloc_temps: heaptrack runs" "$(tail -n 5 "$T/ht.out")"
elif ! build/alloctapd -q -f binary -o "$T/rt.atz" -- "$FXR" 2>"$T/rt.err"; then
	fail "realloc_temps: traced by alloctapd" "$(tail -n 5 "$T/rt.err")"
else
	# heaptrack's temporaries at the fixture's lines, each named by the call on its line
	heaptrack_print -p 0 -a 0 -T 1 "$(ls "$T"/heaptrack-rt.* | head -n 1)" 2>/dev/null |
		awk '/^MOST TEMPORARY/ {on = 1; next}
		     on && /^[0-9]+ temporary allocations of .* from$/ {n = $1; next}
		     on && n != "" && /^  at tests\/fixtures\/realloc_temps.c:/ {split($2, a, ":"); line = a[2]}
		     on && n != "" && /^  in / {if ($0 ~ /\/realloc_temps$/) print line, n; n = ""; line = ""}' \
		>"$T/ht.sites"
	ht=$(while read -r line n; do
		echo "$(sed -n "${line}p" tests/fixtures/realloc_temps.c | grep -o 'realloc\|malloc' | head -n 1) $n"
	done <"$T/ht.sites" | sort)
	run_cmd "$R" export --folded --weight temp-count "$T/rt.atz"
	check_eq "realloc_temps: temporaries per site as heaptrack_print counts them" \
		"$(cat "$T/out")" "$ht"
	check_eq "realloc_temps: heaptrack counts 1000 at malloc, 1000 at realloc" \
		"$(echo $ht)" "malloc 1000 realloc 1000"
	run_cmd "$R" summary --json "$T/rt.atz"
	check_eq "realloc_temps: summary: 2000 temporary allocations" \
		"$(grep -o '"temporary_allocations":[0-9]*' "$T/out" | head -n 1)" \
		'"temporary_allocations":2000'
fi

# --- bad input ---------------------------------------------------------------------------------
# A time the trace cannot answer: exit 4, the reason, no report.
TEXT_NONE="needs event times, and this trace has none: a text log never has them; record a binary trace (alloctapd -f binary)"
BINARY_NONE="needs event times, and this trace has none: it was written without them (by an older alloctapd without --stacks, or converted from a text log); record it again with alloctapd -f binary, which writes them into every binary trace"
# refused NAME STDERR COMMAND...: exit 4, stderr exactly STDERR, nothing on stdout.
refused() {
	local name=$1 want=$2
	shift 2
	check_err "$name: exit 4, said" 4 "$want" "$@"
	check_eq "$name: no report" "$(wc -c <"$T/out")" 0
}
build/alloctap-munge -qq --keep-pointers --format binary "$T/a.log" -o "$T/a.notimes.atz"
"$A" encode -V 1.1 "$T/a.atz" "$T/a11.atz"
refused "--every on a text log" \
	"alloctap-report: $T/a.log: --every 1 $TEXT_NONE; or use timeline --churn BYTES, which needs none" \
	"$R" timeline --every 1 "$T/a.log"
refused "--window on a text log" "alloctap-report: $T/a.log: --window 2:5 $TEXT_NONE" \
	"$R" summary --window 2:5 "$T/a.log"
refused "peak --at 1 on a text log" "alloctap-report: $T/a.log: --at 1 $TEXT_NONE" \
	"$R" peak --at 1 "$T/a.log"
refused "peak --at 1 on a binary trace without times (2.x, NO_TIMES)" \
	"alloctap-report: $T/a.notimes.atz: --at 1 $BINARY_NONE" "$R" peak --at 1 "$T/a.notimes.atz"
refused "top --by live-bytes --at 1 on a text log" "alloctap-report: $T/a.log: --at 1 $TEXT_NONE" \
	"$R" top --by live-bytes --at 1 "$T/a.log"
refused "top --by live-bytes --at 1 on a binary trace without times" \
	"alloctap-report: $T/a.notimes.atz: --at 1 $BINARY_NONE" \
	"$R" top --by live-bytes --at 1 "$T/a.notimes.atz"
refused "peak --at 0 on a binary trace of format 1.1" \
	"alloctap-report: $T/a11.atz: --at 0 $BINARY_NONE" "$R" peak --at 0 "$T/a11.atz"
refused "--window on a binary trace without times, with diff" \
	"alloctap-report: $T/a.notimes.atz: --window :1 $BINARY_NONE" \
	"$R" diff --window :1 "$T/a.atz" "$T/a.notimes.atz"
refused "timeline --every on a binary trace without times" \
	"alloctap-report: $T/a.notimes.atz: --every 1 $BINARY_NONE; or use timeline --churn BYTES, which needs none" \
	"$R" timeline --every 1 "$T/a.notimes.atz"
# a.atz: event k at k/4 s, 12 events: it spans 0 to 2.75 s
OUTSIDE="is outside the trace, which spans 0 to 2.75 s (seconds from its first event)"
refused "peak --at 99 on a 2.75 s trace" "alloctap-report: $T/a.atz: --at 99 $OUTSIDE" \
	"$R" peak --at 99 "$T/a.atz"
refused "peak --at 2.750000001, just past the end" \
	"alloctap-report: $T/a.atz: --at 2.750000001 $OUTSIDE" "$R" peak --at 2.750000001 "$T/a.atz"
refused "peak --at -1" "alloctap-report: $T/a.atz: --at -1 $OUTSIDE" "$R" peak --at -1 "$T/a.atz"
refused "top --by live-bytes --at 99" "alloctap-report: $T/a.atz: --at 99 $OUTSIDE" \
	"$R" top --by live-bytes --at 99 "$T/a.atz"
refused "top --by live-bytes --at 2.750000001 --json" \
	"alloctap-report: $T/a.atz: --at 2.750000001 $OUTSIDE" \
	"$R" top --by live-bytes --at 2.750000001 --json "$T/a.atz"
refused "top --by live-bytes --at -0.5 --csv" "alloctap-report: $T/a.atz: --at -0.5 $OUTSIDE" \
	"$R" top --by live-bytes --csv --at -0.5 "$T/a.atz"
refused "peak --at -0.5 --pid 2 --dot" "alloctap-report: $T/a.atz: --at -0.5 $OUTSIDE" \
	"$R" peak --dot --pid 2 --at -0.5 "$T/a.atz"
refused "--window 2:5 past the end" "alloctap-report: $T/a.atz: --window 2:5 $OUTSIDE" \
	"$R" summary --window 2:5 "$T/a.atz"
refused "--window 3: after the end" "alloctap-report: $T/a.atz: --window 3: $OUTSIDE" \
	"$R" leaks --window 3: "$T/a.atz"
refused "--window -1:1 before the start" "alloctap-report: $T/a.atz: --window -1:1 $OUTSIDE" \
	"$R" summary --window -1:1 "$T/a.atz"
# timeline writes snapshots as it reads: none comes out before the window is refused
refused "timeline --every 1 --window 1:9: no snapshot written" \
	"alloctap-report: $T/a.atz: --window 1:9 $OUTSIDE" \
	"$R" timeline --every 1 --window 1:9 "$T/a.atz"
refused "lifetimes --annotate --window 1:9: no line written" \
	"alloctap-report: $T/a.atz: --window 1:9 $OUTSIDE" \
	"$R" lifetimes --annotate --window 1:9 "$T/a.atz"
: >"$T/empty0.log"
refused "an empty trace: peak --at 0" \
	"alloctap-report: $T/empty0.log: --at 0 needs event times, and this trace has none: it holds no event" \
	"$R" peak --at 0 "$T/empty0.log"
run_cmd "$R" peak --at 2.75 --pid 1 "$T/a.atz"
check_eq "peak --at 2.75, the trace's last event: answered, the end state" \
	"$rc:$(head -n 1 "$T/out")" "0:live at 2.750000 s: 500 B in 2 blocks"
run_cmd "$R" timeline --every 1 --window 1:2.75 "$T/a.atz"
check_eq "timeline --every 1 --window 1:2.75, inside: answered" \
	"$rc:$(grep -c '^== snapshot' "$T/out")" "0:3"
size=$(stat -c %s "$T/s.atz")
head -c $((size / 2)) "$T/s.atz" >"$T/cut.atz"
check_err_match "a truncated binary trace with --strict: said where, exit 1" 1 \
	"^alloctap-report: $T/cut.atz: truncated after [0-9]* events" "$R" --strict summary "$T/cut.atz"
check_eq "a truncated binary trace with --strict: no report" "$(wc -c <"$T/out")" 0
# A trace cut as kill -9 or a full disk leaves it: the report of the events before the cut
# (the model's, on as many lines of the log), the cut said, exit 3.
python3 "$M" gen 3 60000 >"$T/g3.log"
build/alloctap-munge -qq --keep-pointers --format binary "$T/g3.log" -o "$T/g3.atz"
head -c $(($(stat -c %s "$T/g3.atz") * 6 / 10)) "$T/g3.atz" >"$T/g3cut.atz"
run_cmd "$R" summary --json "$T/g3cut.atz"
n=$(sed -n 's/^alloctap-report: .*: truncated after \([0-9]*\) events: .*; the report covers the \1 events before it$/\1/p' "$T/err")
check_eq "a truncated binary trace: exit 3, the cut said once with the events before it" \
	"$rc:$(wc -l <"$T/err"):${n:-none}" "3:1:${n:-none}"
if [ -n "$n" ] && [ "$n" -gt 1000 ] && [ "$n" -lt 60000 ]; then
	head -n "$n" "$T/g3.log" >"$T/g3head.log"
	python3 "$M" json "$T/g3head.log" >"$T/want"
	check_file_eq "a truncated binary trace: summary --json of the $n events before the cut = the model's" \
		"$T/out" "$T/want"
	python3 "$M" leaks "$T/g3head.log" >"$T/want"
	check_cmd "a truncated binary trace: leaks of the events before the cut = the model's, exit 3" \
		3 "$T/want" - -- "$R" leaks "$T/g3cut.atz"
else
	fail "a truncated binary trace: some whole blocks before the cut" "events: ${n:-none}"
fi
check_err "-o a directory: said, exit 1" 1 "alloctap-report: cannot open $T: Is a directory" \
	"$R" summary -o "$T" "$T/a.log"
printf '1 1 malloc(8)=0x10\n1 1 free(0x10\n' >"$T/bad.log"
check_err_match "a malformed line with --strict: FILE:LINE, exit 1" 1 "^alloctap-report: $T/bad.log:2: " \
	"$R" leaks --strict "$T/bad.log"
# One malformed line in a log: skipped and said; the report is the model's on the other lines.
{ head -n 2000 "$T/g1.log"; echo '1001 1 malloc(12'; tail -n +2001 "$T/g1.log"; } >"$T/g1bad.log"
python3 "$M" json "$T/g1.log" >"$T/want"
printf '%s\n' "alloctap-report: $T/g1bad.log:2001: Malformed input; line skipped" \
	"alloctap-report: $T/g1bad.log: 1 malformed line skipped; the report covers the others" \
	>"$T/want_err"
check_cmd "a malformed line: skipped and said, the report of the others, exit 3" 3 "$T/want" \
	"$T/want_err" -- "$R" summary --json "$T/g1bad.log"
check_cmd "a malformed line with --strict: no report, exit 1" 1 "" - -- \
	"$R" summary --strict --json "$T/g1bad.log"
printf '1 1 free(0x10)\n1 1 free(0x10)\n' >"$T/frees.log"
run_cmd "$R" summary --json "$T/frees.log"
check_eq "frees of unknown pointers: counted, nothing live" \
	"$rc:$(grep -o '"final_live_bytes":[0-9]*,"final_live_blocks":[0-9]*,"temporary_allocations":0,"failed_allocations":0,"unknown_frees":[0-9]*' "$T/out" | head -n 1)" \
	'0:"final_live_bytes":0,"final_live_blocks":0,"temporary_allocations":0,"failed_allocations":0,"unknown_frees":2'
: >"$T/empty.log"
printf 'events: 0\n' >"$T/want"
check_cmd "an empty trace: no events" 0 "$T/want" "" -- "$R" summary "$T/empty.log"

usage_case() {
	local what=$1 msg=$2
	shift 2
	check_err "usage error: $what" 2 "alloctap-report: $msg
Try 'alloctap-report --help'." "$R" "$@"
}
J="--json goes with summary, peak, leaks, top, sizes, timeline, lifetimes, layout and diff (export and html write formats of their own)"
usage_case "--json with export: it writes a format of its own" "$J, not with export" \
	export --folded --json "$T/a.log"
usage_case "--json with html" "$J, not with html" html --json -o "$T/a.html" "$T/a.log"
C="--csv goes with leaks, top, sizes, timeline and diff (their tables)"
usage_case "--csv with summary" "$C, not with summary" summary --csv "$T/a.log"
usage_case "--csv with peak" "$C, not with peak" peak --csv "$T/a.log"
usage_case "--csv with export" "$C, not with export" export --pprof --csv "$T/a.log"
for c in leaks top sizes; do
	usage_case "$c --json --csv" "$c takes one of --json and --csv" $c --json --csv "$T/a.log"
done
usage_case "diff --json --csv" "diff takes one of --json and --csv" \
	diff --json --csv "$T/a.log" "$T/a.log"
usage_case "timeline --json --csv" "timeline takes one of --json and --csv" \
	timeline --churn 1 --csv --json "$T/a.log"
usage_case "peak --json --dot" "peak takes one of --json and --dot" peak --dot --json "$T/a.log"
usage_case "lifetimes --annotate --json" "lifetimes takes one of --annotate and --json" \
	lifetimes --annotate --json "$T/a.log"
usage_case "layout --annotate --json" "layout takes one of --annotate and --json" \
	layout --json --annotate "$T/a.log"
usage_case "--dot with summary" "--dot goes with peak, not with summary" summary --dot "$T/a.log"
check_err "--at rss-peak on a trace without RSS records: said, exit 4" 4 \
	"alloctap-report: $T/a.atz: --at rss-peak: the trace has no RSS records (alloctapd writes them into binary traces)" \
	"$R" peak --at rss-peak "$T/a.atz"
check_err "top --at rss-peak on a trace without RSS records: said, exit 4" 4 \
	"alloctap-report: $T/a.atz: --at rss-peak: the trace has no RSS records (alloctapd writes them into binary traces)" \
	"$R" top --by live-bytes --at rss-peak "$T/a.atz"
usage_case "--at garbage" "--at needs heap-peak, rss-peak, end or SECONDS, not: 1.2.3" peak --at 1.2.3 "$T/a.log"
usage_case "top --at garbage" "--at needs heap-peak, rss-peak, end or SECONDS, not: later" \
	top --by live-bytes --at later "$T/a.log"
for by in "" "--by leak-bytes" "--by peak-bytes" "--by churn"; do
	usage_case "top ${by:-without --by} --at 1: --at goes with live-bytes only" \
		"top --at goes with --by live-bytes (the other keys are figures of the whole trace)" \
		top $by --at 1 "$T/a.atz"
done
usage_case "top --by bytes" \
	"--by needs leak-bytes, live-bytes, peak-bytes, alloc-bytes, alloc-count, temp-count, heaptrack-temp-count or churn, not: bytes" \
	top --by bytes "$T/a.log"
usage_case "export --weight live-bytes: top's" \
	"export --folded --weight takes alloc-count, alloc-bytes, peak-bytes, leak-bytes, temp-count, heaptrack-temp-count or churn; live-bytes goes with top" \
	export --folded --weight live-bytes "$T/a.log"
usage_case "--at with summary" "--at goes with peak, top and export --pprof, not with summary" \
	summary --at 1 "$T/a.log"
usage_case "export --folded --at end: --pprof's" \
	"--at goes with peak, top and export --pprof, not with export" \
	export --folded --at end "$T/a.log"
usage_case "timeline without a rhythm" "timeline needs one of --every SECONDS and --churn BYTES" \
	timeline "$T/a.log"
usage_case "timeline with both" "timeline needs one of --every SECONDS and --churn BYTES" \
	timeline --every 1 --churn 5 "$T/a.log"
usage_case "--every 0" "--every needs SECONDS above 0, not: 0" timeline --every 0 "$T/a.log"
usage_case "--churn -5" "--churn needs BYTES above 0, not: -5" timeline --churn -5 "$T/a.log"
usage_case "--top with peak" "--every, --churn and --top go with timeline, not with peak" \
	peak --top 3 "$T/a.log"
usage_case "--window backwards" \
	"--window needs T0:T1, seconds from the first event with T0 <= T1 (2:5, 1.5:, :0.25), not: 5:2" \
	summary --window 5:2 "$T/a.log"
usage_case "--window of ten decimals" \
	"--window needs T0:T1, seconds from the first event with T0 <= T1 (2:5, 1.5:, :0.25), not: 0.0000000001:1" \
	summary --window 0.0000000001:1 "$T/a.log"
usage_case "--pid x" "--pid needs a process id, not: x" summary --pid x "$T/a.log"
usage_case "--pid too big" "--pid needs a process id, not: 4294967296" summary --pid 4294967296 "$T/a.log"
usage_case "diff with one trace" "diff needs two traces, A and B (a file, or - for standard input)" \
	diff "$T/a.log"
usage_case "diff of stdin twice" "diff: only one of the traces can be standard input" diff - -
usage_case "summary with two traces" "summary: one operand too many: b" summary a b
usage_case "--pprof with --weight" "--weight goes with --folded: a pprof profile holds every weight" \
	export --pprof --weight alloc-bytes "$T/a.log"
usage_case "export --pprof --at 2" "export --pprof takes --at heap-peak or end" \
	export --pprof --at 2 "$T/a.log"
usage_case "export with both formats" "export needs one output format: --folded, --pprof or --heaptrack" \
	export --pprof --folded "$T/a.log"
usage_case "--annotate with leaks" "--annotate goes with lifetimes and layout, not with leaks" \
	leaks --annotate "$T/a.log"
usage_case "--hist with layout" "--hist goes with lifetimes, not with layout" layout --hist "$T/a.log"
usage_case "--hist and --annotate" "lifetimes takes one of --annotate and --hist" \
	lifetimes --hist --annotate "$T/a.log"
usage_case "html without -o" "html needs -o FILE (the page)" html "$T/a.log"
usage_case "--weight with leaks" "--folded, --pprof, --heaptrack and --weight go with export, not with leaks" \
	leaks --weight alloc-bytes "$T/a.log"
finish
