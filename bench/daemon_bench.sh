#!/usr/bin/env bash
# alloctapd benchmarks (needs root: real uprobes). Three tables:
#  1. ns per malloc+free pair, one thread, untraced and traced by alloctapd (launch mode,
#     output to /dev/null), with glibc and with jemalloc preloaded; next to it, bpftrace with
#     empty programs on the same three probes (malloc entry and return, free entry): the
#     probes' own cost, which alloctapd cannot go below;
#  2. events per second alloctapd records from the 8-thread stress fixture, and how many it
#     lost (default ring buffer);
#  3. the reorder window's cost per event (bench/daemon_reorder.c).
set -u
. "$(dirname "$0")/lib.sh"
need_root daemon
D=build/alloctapd
FX=build/fixtures
PAIRS=${PAIRS:-200000}

ns_of() { sed -n 's/.* \([0-9.]*\) ns\/pair$/\1/p'; }

echo "alloctapd: malloc(32)+free pairs, 1 thread, $PAIRS pairs (median of 3 runs)"
printf '%-10s %12s %12s %12s %8s %18s\n' allocator "untraced ns" "traced ns" "added ns" ratio \
	"empty probes ns"
for alloc in glibc jemalloc; do
	pre=""
	lib=/usr/lib/$MULTIARCH/libc.so.6
	[ $alloc = jemalloc ] && pre=libjemalloc.so.2 && lib=/usr/lib/$MULTIARCH/libjemalloc.so.2
	u=() t=() b=()
	for run in 1 2 3; do
		u+=("$(LD_PRELOAD=$pre "$FX/alloc_loop" "$PAIRS" | ns_of)")
		t+=("$(LD_PRELOAD=$pre "$D" -q -o /dev/null -- "$FX/alloc_loop" "$PAIRS" | ns_of)")
		if command -v bpftrace >/dev/null; then
			b+=("$(LD_PRELOAD=$pre bpftrace -e "uprobe:$lib:malloc {} uretprobe:$lib:malloc {}
				uprobe:$lib:free {}" -c "$FX/alloc_loop $PAIRS" 2>/dev/null | ns_of)")
		fi
	done
	um=$(printf '%s\n' "${u[@]}" | median)
	tm=$(printf '%s\n' "${t[@]}" | median)
	bm=$(printf '%s\n' "${b[@]:-}" | median)
	awk -v a="$alloc" -v u="$um" -v t="$tm" -v b="${bm:-0}" \
		'BEGIN { printf "%-10s %12.1f %12.1f %12.1f %7.0fx %18.1f\n", a, u, t, t - u, t / u, b }'
done

echo
echo "alloctapd: events recorded per second, 8-thread stress fixture, default ring buffer"
printf '%-10s %12s %10s %10s %12s\n' threads events lost seconds "events/s"
for threads in 1 2 8; do
	rm -f "$T"/s.*
	"$FX/alloc_stress" "$T/s.counts" "$T/s.ready" --threads $threads \
		--iterations $((160000 / threads)) &
	fx=$!
	while [ ! -s "$T/s.ready" ]; do sleep 0.05; done
	"$D" -v --pid $fx -o /dev/null 2>"$T/s.err" &
	dm=$!
	while ! grep -q "alloctapd: recording" "$T/s.err"; do sleep 0.05; done
	start=$(date +%s%N)
	kill -USR1 $fx
	while ! grep -q total "$T/s.counts" 2>/dev/null; do sleep 0.02; done
	end=$(date +%s%N)
	kill -INT $dm
	wait $dm
	kill -USR1 $fx
	wait $fx
	read -r written lost < <(sed -n 's/^alloctapd: \([0-9]*\) events written, \([0-9]*\) events lost.*/\1 \2/p' "$T/s.err")
	awk -v th=$threads -v w="$written" -v l="$lost" -v ns=$((end - start)) \
		'BEGIN { printf "%-10s %12d %10d %10.2f %12.0f\n", th, w, l, ns / 1e9, w / (ns / 1e9) }'
done

echo
build/bench/daemon_reorder
