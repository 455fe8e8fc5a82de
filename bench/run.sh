#!/usr/bin/env bash
# Runs every benchmark part (bench/*_bench.sh) in name order; each prints its own tables.
# Usage: bench/run.sh [PART...]   e.g. bench/run.sh munge replay
set -u
cd "$(dirname "$0")/.."
echo "alloctap benchmarks: $(date -u +%Y-%m-%dT%H:%MZ), kernel $(uname -r), $(nproc) cores," \
	"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
status=0
for part in bench/*_bench.sh; do
	name=$(basename "$part" _bench.sh)
	if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then
		continue
	fi
	echo
	bash "$part" || { echo "bench: $part failed"; status=1; }
done
exit $status
