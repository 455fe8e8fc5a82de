#!/usr/bin/env bash
# demo/run.sh: the main job on a bundled workload (make demo).
#  1. trace: alloctapd launches python3 on demo/workload.py (PYTHONMALLOC=malloc, so every Python
#     object is a malloc call) and writes the raw log; without a daemon build it uses the raw log
#     bundled in demo/python3-json.log (recorded from the same workload) and says so;
#  2. munge: pointers become slot numbers;
#  3. replay: the same workload against glibc, jemalloc, tcmalloc and mimalloc, side by side
#     (alloctap-replay --compare: each replay in a process of its own, one table);
#  4. report: the workload traced again with its call stacks (alloctapd --stacks, binary), and
#     why it uses its memory: alloctap-report summary, the call tree at the heap peak, and an
#     HTML page (with the bundled log: the summary of its text log, sites by function).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${DEMO_OUT:-build/demo}
mkdir -p "$out"
rm -f "$out/raw.log" # alloctapd appends to a path (MALLOC_LOG's rule): start afresh

if [ -x build/alloctapd ]; then
	echo "== 1. trace: build/alloctapd -o $out/raw.log -- python3 demo/workload.py"
	PYTHONMALLOC=malloc build/alloctapd -o "$out/raw.log" -- /usr/bin/python3 demo/workload.py
else
	echo "== 1. trace: no build/alloctapd: using the bundled log demo/python3-json.log"
	cp demo/python3-json.log "$out/raw.log"
fi
echo "   $(wc -l < "$out/raw.log") calls recorded; first lines:"
head -n 3 "$out/raw.log" | sed 's/^/     /'

echo "== 2. munge: build/alloctap-munge $out/raw.log -o $out/munged.log"
build/alloctap-munge -q "$out/raw.log" -o "$out/munged.log"
head -n 3 "$out/munged.log" | sed 's/^/     /'

echo "== 3. replay against glibc, jemalloc, tcmalloc and mimalloc (alloctap-replay --compare)"
build/alloctap-replay --compare glibc,jemalloc,tcmalloc,mimalloc "$out/munged.log" | sed 's/^/   /'

if [ -x build/alloctapd ]; then
	echo "== 4. report: build/alloctapd --stacks -f binary -o $out/stacks.atz -- python3 ..., then alloctap-report"
	PYTHONMALLOC=malloc build/alloctapd -q --stacks -f binary -o "$out/stacks.atz" -- \
		/usr/bin/python3 demo/workload.py >/dev/null
	build/alloctap-report -q summary "$out/stacks.atz" | sed 's/^/   /'
	echo "   the call tree at the heap peak (alloctap-report peak, all of it in $out/peak.txt):"
	build/alloctap-report -q peak -o "$out/peak.txt" "$out/stacks.atz"
	head -n 14 "$out/peak.txt" | cut -c1-110 | sed 's/^/     /'
	build/alloctap-report -q html -o "$out/report.html" "$out/stacks.atz"
	echo "   one page with the curves, the flame graph and the top sites: $out/report.html"
else
	echo "== 4. report: alloctap-report summary $out/raw.log (a text log: sites are function names)"
	build/alloctap-report summary "$out/raw.log" | sed 's/^/   /'
fi
