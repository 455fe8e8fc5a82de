#!/usr/bin/env bash
# demo/run.sh: the main job on a bundled workload (make demo).
#  1. trace: alloctapd launches python3 on demo/workload.py (PYTHONMALLOC=malloc, so every Python
#     object is a malloc call) and writes the raw log; without a daemon build it uses the raw log
#     bundled in demo/python3-json.log (recorded from the same workload) and says so;
#  2. munge: pointers become slot numbers;
#  3. replay: the same workload against glibc, jemalloc, tcmalloc and mimalloc, side by side
#     (alloctap-replay --compare: each replay in a process of its own, one table).
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
