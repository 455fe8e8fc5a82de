#!/usr/bin/env bash
# alloctap-report's speed, side by side in one run:
#  1. events per second and peak memory of summary, export --folded (by count, and by
#     peak-bytes, which needs the whole pass), leaks and peak, on a binary trace of EVENTS
#     (default 10 million) synthetic events with 1000 stacks of 20 frames (genlog, then
#     atz_tool synth -t -s 1000: shaped like a --stacks recording; its objects are not on this
#     machine, so frames are OBJECT+0xOFFSET and symbolization costs little). Goal: 5 million
#     events per second or more.
#  2. a real program, python3 running demo/workload.py (PYTHONMALLOC=malloc), recorded twice:
#     by alloctapd --stacks (then alloctap-report summary, export --folded) and by heaptrack
#     (then heaptrack_print, what its users run instead): recording size and analysis time.
#     The python3 here may carry DWARF (a pyenv build does): symbolizing its return addresses,
#     inlined functions included, is then most of the report's time; heaptrack resolved its
#     symbols while recording (heaptrack_interpret), so heaptrack_print reads names.
# Best of RUNS (default 3) runs.
set -u
. "$(dirname "$0")/lib.sh"
need_root report
EVENTS=${EVENTS:-10000000}
RUNS=${RUNS:-3}
R=build/alloctap-report

# best_of COMMAND...: "SECONDS KB" of the fastest of RUNS runs (wall seconds, max RSS).
best_of() {
	for _ in $(seq "$RUNS"); do
		/usr/bin/time -f "%e %M" "$@" 2>&1 >/dev/null | tail -n 1
	done | sort -g | head -n 1
}

build/bench/genlog "$EVENTS" 1 -p 1 -t 4 >"$T/big.log"
build/bench/atz_tool synth -t -s 1000 "$T/big.log" "$T/big.atz"
rm -f "$T/big.log"
echo "alloctap-report on $EVENTS synthetic events ($(stat -c %s "$T/big.atz") bytes of .atz), best of $RUNS"
printf '%-40s %10s %12s %10s\n' command seconds "M events/s" "max KB"
for cmd in "summary" "export --folded" "export --folded --weight peak-bytes" "leaks" "peak"; do
	read -r s kb < <(best_of "$R" -qq $cmd "$T/big.atz")
	printf '%-40s %10s %12.2f %10s\n' "$cmd" "$s" "$(awk -v e="$EVENTS" -v s="$s" 'BEGIN {print e / s / 1e6}')" "$kb"
done

echo
PY=$(bench_python)
if ! command -v heaptrack >/dev/null; then
	echo "report bench: heaptrack is not installed (apt-get install heaptrack)"
	exit 1
fi
PYTHONMALLOC=malloc build/alloctapd -q --stacks -f binary -o "$T/py.atz" -- "$PY" demo/workload.py \
	>/dev/null 2>&1
PYTHONMALLOC=malloc heaptrack -o "$T/py.heaptrack" "$PY" demo/workload.py >/dev/null 2>&1
HT=$(ls "$T"/py.heaptrack*)
events=$("$R" summary --json "$T/py.atz" | sed 's/^{"processes":[0-9]*,"events":\([0-9]*\),.*/\1/')
echo "python3 demo/workload.py ($events events), best of $RUNS"
printf '%-48s %12s %10s %10s\n' analysis "trace bytes" seconds "max KB"
for cmd in "summary" "export --folded"; do
	read -r s kb < <(best_of "$R" -qq $cmd "$T/py.atz")
	printf '%-48s %12s %10s %10s\n' "alloctap-report $cmd" "$(stat -c %s "$T/py.atz")" "$s" "$kb"
done
read -r s kb < <(best_of heaptrack_print "$HT")
printf '%-48s %12s %10s %10s\n' "heaptrack_print" "$(stat -c %s "$HT")" "$s" "$kb"
