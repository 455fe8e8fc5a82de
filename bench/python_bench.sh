#!/usr/bin/env bash
# What Python frames cost, side by side in one run (needs root): python3 (PYTHONMALLOC=malloc,
# demo/workload.py) with SMALL and LARGE documents, wall seconds, and the ns per event between
# the two (the cost of a call apart from what a trace costs once): untraced; alloctapd --floor
# (the traps alone); binary; binary --stacks --no-python (native frames only); binary --stacks
# (native and Python frames). Goal: --stacks at most 1.2 times --stacks --no-python per event.
# Then what the Python frames give: the stacks with Python frames and the frames named, from
# alloctapd -v, and the allocation entry program's ns per run (bpf_stats). Medians of RUNS
# (default 3) rounds, each running every mode once.
set -u
. "$(dirname "$0")/lib.sh"
pairloop_setup python
PY=$(bench_python)
need_built "python bench" "$D"

# tracer MODE: the alloctapd command line of a mode (nothing when untraced).
tracer() {
	case $1 in
	untraced) ;;
	floor) echo "$D -q --floor -o /dev/null --" ;;
	binary) echo "$D -q -f binary -o $T/trace.atz --" ;;
	native) echo "$D -q -f binary --stacks --no-python -o $T/trace.atz --" ;;
	python) echo "$D -q -f binary --stacks -o $T/trace.atz --" ;;
	esac
}
label() {
	case $1 in
	untraced) echo "untraced" ;;
	floor) echo "floor: empty programs, same sites" ;;
	binary) echo "binary" ;;
	native) echo "binary --stacks --no-python" ;;
	python) echo "binary --stacks (Python frames)" ;;
	esac
}

# events DOCS: the events alloctapd writes of the workload with DOCS documents
events() {
	PYTHONMALLOC=malloc "$D" -f binary -o /dev/null -- "$PY" demo/workload.py "$1" 2>&1 \
		>/dev/null | sed -n 's/^alloctapd: \([0-9]*\) events written.*/\1/p'
}

modes=(untraced floor binary native python)
SMALL=200
LARGE=5000
declare -A small large
for _ in $(seq "$RUNS"); do
	for m in "${modes[@]}"; do
		python_once "$m" $SMALL >>"$T/small.$m"
		python_once "$m" $LARGE >>"$T/large.$m"
	done
done
for m in "${modes[@]}"; do
	small[$m]=$(median <"$T/small.$m")
	large[$m]=$(median <"$T/large.$m")
done
ev_small=$(events $SMALL)
ev_large=$(events $LARGE)
per_event() {
	awk -v a="$1" -v b="$2" -v n=$((ev_large - ev_small)) 'BEGIN {printf "%.0f", (b - a) * 1e9 / n}'
}
echo "python: $PY ($("$PY" --version 2>&1)) demo/workload.py, $SMALL and $LARGE documents ($ev_small and $ev_large" \
	"events; wall s, median of $RUNS interleaved rounds), and the ns per event between the two"
printf '%-40s %10s %12s %12s\n' "" "$SMALL docs s" "$LARGE docs s" "ns/event"
declare -A pe
for m in "${modes[@]}"; do
	pe[$m]=$(per_event "${small[$m]}" "${large[$m]}")
	printf '%-40s %10s %12s %12s\n' "$(label "$m")" "${small[$m]}" "${large[$m]}" "${pe[$m]}"
done
awk -v n="${pe[native]}" -v p="${pe[python]}" -v f="${pe[floor]}" -v b="${pe[binary]}" 'BEGIN {
	printf "per event: --stacks %.2f times --stacks --no-python (goal <= 1.2); ", p / n
	printf "over the floor: binary %.2f, --no-python %.2f, --stacks %.2f\n", b / f, n / f, p / f }'
PYTHONMALLOC=malloc "$D" -v -f binary --stacks -o "$T/py.atz" -- "$PY" demo/workload.py $LARGE \
	2>&1 >/dev/null | sed -n 's/^alloctapd: \(Python frames read.*\)/python: \1/p;
		s/^alloctapd: \([0-9]* stacks written.*\)/python: \1/p'
# the allocation entry program's run time (bpf_stats, the first 2 s of the LARGE run: the
# walks of the interpreter's start and imports, and of the workload)
for m in native python; do
	PYTHONMALLOC=malloc prog_stats "$T/stats.$m" $(tracer "$m") "$PY" demo/workload.py $LARGE
done
echo "python: alloc_entry ns per run (bpf_stats): --stacks --no-python $(prog_ns "$T/stats.native" alloc_entry)," \
	"--stacks $(prog_ns "$T/stats.python" alloc_entry)"
