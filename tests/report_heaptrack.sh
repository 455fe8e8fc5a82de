#!/usr/bin/env bash
# alloctap-report against heaptrack, an oracle nobody here wrote: the deterministic service of
# tests/fixtures/heap_service.c (a leak, a bounded cache, buffers in flight, temporaries, a spike
# from a second thread) is run under heaptrack (LD_PRELOAD: another tracer's uprobe on malloc
# does not disturb it) and traced by alloctapd --stacks. heaptrack_print's sections (most calls,
# peak memory consumers, memory leaks, most temporary allocations), and its exact figures per
# stack (-F with each --flamegraph-cost-type), are compared site for site with `top --by
# alloc-count|peak-bytes|leak-bytes|temp-count|heaptrack-temp-count --json`, `export --folded
# --weight heaptrack-temp-count` (heaptrack_print's own rule) and `leaks`; `top --by churn`
# (no heaptrack figure) with the fixture's calls and sizes less what heaptrack finds leaked. A site is told by the first
# frame, from the leaf, that is one of the fixture's named functions; sites of neither tool's
# fixture functions (the loader's, libstdc++'s pool that heaptrack's own library brings in) are
# not compared. Where the definitions agree the figures must be equal; where they differ the
# expected difference is computed below and the reason said. heaptrack absent or failing is a
# failed point, never a skip.
. "$(dirname "$0")/lib.sh"
R=build/alloctap-report
FX=build/fixtures/heap_service
SRC=tests/fixtures/heap_service.c
need_built "$R" "$FX"
need_bpf build/alloctapd

if ! command -v heaptrack >/dev/null || ! command -v heaptrack_print >/dev/null; then
	fail "heaptrack is installed" "heaptrack or heaptrack_print not found (apt-get install heaptrack)"
	finish
fi
if ! heaptrack -o "$T/ht" "$FX" >"$T/ht.out" 2>&1 || ! HT=$(ls "$T"/ht.* 2>/dev/null | grep -v '\.out$' | head -n 1) ||
	[ -z "$HT" ]; then
	fail "heaptrack records the fixture" "$(tail -n 5 "$T/ht.out")"
	finish
fi
ok "heaptrack records the fixture"
if ! heaptrack_print -a 1 -p 1 -T 1 -l 1 -n 100 -s 1 "$HT" >"$T/ht.txt" 2>"$T/ht.err"; then
	fail "heaptrack_print reads its trace" "$(tail -n 5 "$T/ht.err")"
	finish
fi
for c in allocations temporary leaked peak; do
	if ! heaptrack_print -a 0 -p 0 -T 0 -F "$T/ht.$c" --flamegraph-cost-type "$c" "$HT" \
		>/dev/null 2>"$T/ht.err"; then
		fail "heaptrack_print -F --flamegraph-cost-type $c" "$(tail -n 5 "$T/ht.err")"
		finish
	fi
done
if ! build/alloctapd -q --stacks -f binary -o "$T/t.atz" -- "$FX" 2>"$T/t.err"; then
	fail "alloctapd traces the fixture" "$(tail -n 5 "$T/t.err")"
	finish
fi
ok "alloctapd traces the fixture"
for k in alloc-count peak-bytes leak-bytes temp-count heaptrack-temp-count churn; do
	"$R" top --by "$k" --limit 100 --json "$T/t.atz" >"$T/top.$k" 2>"$T/err" ||
		fail_run "top --by $k --json"
done
"$R" export --folded --weight heaptrack-temp-count "$T/t.atz" >"$T/export.ht" 2>"$T/err" ||
	fail_run "export --folded --weight heaptrack-temp-count"
"$R" summary --json "$T/t.atz" >"$T/summary.json" 2>"$T/err" || fail_run "summary --json"
"$R" leaks --bytes "$T/t.atz" >"$T/leaks.txt" 2>"$T/err" || fail_run "leaks"

# Each check as NAME<TAB>GOT<TAB>WANT, from the two tools' figures per site.
python3 - "$T" "$SRC" >"$T/checks" <<'PY' || fail "the figures are read" "$(cat "$T/checks")"
import json, os, re, sys

sys.path.insert(0, os.path.join(os.getcwd(), 'tests'))
from heaptrack_oracle import FIX, alloctap, flame, human, sections  # noqa: E402

t, src = sys.argv[1], sys.argv[2]
define = {m.group(1): eval(m.group(2)) for m in  # digits, shifts and parentheses only
          re.finditer(r'^#define (\w+) ([\d() <]+)$', open(src).read(), re.M)}
a = {k: alloctap(f'{t}/top.{k}') for k in ('alloc-count', 'peak-bytes', 'leak-bytes',
                                           'temp-count', 'heaptrack-temp-count', 'churn')}
h = {c: flame(f'{t}/ht.{c}') for c in ('allocations', 'peak', 'leaked', 'temporary')}
a['export-heaptrack-temp-count'] = flame(f'{t}/export.ht')
sec = sections(open(f'{t}/ht.txt').read().split('\n'))

# heaptrack_print's temporary: a free of a block whose (size, stack) is that of the trace's
# allocation just before it, no free in between (src/analyze/accumulatedtracedata.cpp compares
# allocation-info indices, not pointers): alloctap's heaptrack-temp-count, compared as it is
# above. temp-count, alloctap's own: a free of the very block the thread's previous call
# allocated. They differ where a block is allocated and then another block of the same size
# and stack is freed:
#  - request_buffer allocates the request's buffer, then frees the buffer of IN_FLIGHT
#    requests before (same size, same stack): heaptrack counts each retirement, that is every
#    request but the first IN_FLIGHT (whose retirement frees NULL, which heaptrack does not
#    record); alloctap none (the freed block lived IN_FLIGHT requests);
#  - spike allocates its SPIKE_BLOCKS blocks, then frees the first: heaptrack counts that one.
# cache_insert evicts (frees) before it allocates: neither tool counts it.
extra_temps = {f: 0 for f in FIX}
extra_temps['request_buffer'] = define['REQUESTS'] - define['IN_FLIGHT']
extra_temps['spike'] = 1

checks = []
for f in FIX:
    calls, peak, leak, temps = (a[k][f] for k in ('alloc-count', 'peak-bytes', 'leak-bytes',
                                                  'temp-count'))
    checks += [
        (f'{f}: calls, heaptrack -F allocations = top --by alloc-count', h['allocations'][f], calls),
        (f'{f}: bytes at the heap peak, heaptrack -F peak = top --by peak-bytes', h['peak'][f], peak),
        (f'{f}: bytes leaked, heaptrack -F leaked = top --by leak-bytes', h['leaked'][f], leak),
        (f'{f}: temporaries, heaptrack -F temporary = top --by temp-count + {extra_temps[f]}',
         h['temporary'][f], temps + extra_temps[f]),
        (f'{f}: temporaries, heaptrack -F temporary = export --weight heaptrack-temp-count',
         h['temporary'][f], a['export-heaptrack-temp-count'][f]),
        (f'{f}: temporaries, heaptrack -F temporary = top --by heaptrack-temp-count',
         h['temporary'][f], a['heaptrack-temp-count'][f]),
    ]
    e = sec['MOST CALLS TO ALLOCATION FUNCTIONS'].get(f, {})
    checks.append((f'{f}: MOST CALLS: calls and peak', (e.get('calls'), e.get('peak')),
                   (str(calls), human(peak)) if calls else (None, None)))
    e = sec['PEAK MEMORY CONSUMERS'].get(f, {})
    checks.append((f'{f}: PEAK MEMORY CONSUMERS: peak and calls', (e.get('peak'), e.get('calls')),
                   (human(peak), str(calls)) if peak else (None, None)))
    e = sec['MEMORY LEAKS'].get(f, {})
    checks.append((f'{f}: MEMORY LEAKS: bytes and calls', (e.get('leaked'), e.get('calls')),
                   (human(leak), str(calls)) if leak else (None, None)))
    e = sec['MOST TEMPORARY ALLOCATIONS'].get(f, {})
    ht = a['heaptrack-temp-count'][f]
    checks.append((f'{f}: MOST TEMPORARY ALLOCATIONS = top --by heaptrack-temp-count, and calls',
                   (e.get('temps'), e.get('calls')), (str(ht), str(calls)) if ht else (None, None)))
    want = temps + extra_temps[f]
    checks.append((f'{f}: MOST TEMPORARY ALLOCATIONS: temporaries (+ {extra_temps[f]}) and calls',
                   (e.get('temps'), e.get('calls')), (str(want), str(calls)) if want else (None, None)))

# The fixture's own figures, so that an oracle and a report wrong alike are caught too.
R = define['REQUESTS']
design = {'remember_session': (R // 3 + (R % 3 > 0), 40), 'cache_insert': (R // 2, 48),
          'request_buffer': (R, 512), 'scratch_copy': (2 * R, 256),
          'spike': (define['SPIKE_BLOCKS'], define['SPIKE_BYTES']), 'warm_up': (1, 8)}
for f, (n, size) in design.items():
    checks.append((f'{f}: calls as the fixture makes them', a['alloc-count'][f], n))
    # churn: every block the fixture allocates but those heaptrack finds leaked is freed
    checks.append((f'{f}: top --by churn = calls x size - heaptrack -F leaked', a['churn'][f],
                   n * size - h['leaked'][f]))
checks.append(('spike: its blocks at the peak, as the fixture makes them', a['peak-bytes']['spike'],
               define['SPIKE_BLOCKS'] * define['SPIKE_BYTES']))
checks.append(('the leak, the cache, the buffers in flight: bytes live at the end',
               [a['leak-bytes'][f] for f in ('remember_session', 'cache_insert', 'request_buffer')],
               [design['remember_session'][0] * 40, define['CACHE_ENTRIES'] * 48,
                define['IN_FLIGHT'] * 512]))
checks.append(('scratch_copy: every call a temporary, by both rules', a['temp-count']['scratch_copy'],
               2 * R))
for name, got, want in checks:
    print(f'{name}\t{json.dumps(got)}\t{json.dumps(want)}')
PY
while IFS=$'\t' read -r name got want; do
	check_eq "$name" "$got" "$want"
done <"$T/checks"

# leaks: blocks at the end per site (heaptrack_print gives no per-site block count), and
# heaptrack's own count of blocks left (the run's "leaked allocations") = alloctap's, since
# the blocks heaptrack's libraries bring (libstdc++'s pool) are freed before the end.
for f in remember_session:1000 cache_insert:64 request_buffer:4; do
	check_eq "leaks: ${f%%:*}: blocks live at the end" \
		"$(grep -w -- "${f%%:*}" "$T/leaks.txt" | awk '{print $2}')" "${f#*:}"
done
# the leak comes first, growing; the cache and the buffers in flight after it
check_eq "leaks: the leak first, growing" \
	"$(grep -n -m 1 'remember_session' "$T/leaks.txt" | grep -o '^[0-9]*:\|growing' | tr -d '\n')" \
	"3:growing"
check_eq "blocks left at the end: heaptrack's run = summary's final_live_blocks" \
	"$(sed -n 's/.*leaked allocations:[[:space:]]*\([0-9]*\).*/\1/p' "$T/ht.out")" \
	"$(python3 -c 'import json, sys; print(json.load(sys.stdin)["final_live_blocks"])' <"$T/summary.json")"
# heaptrack's run also counts temporaries as it records (src/interpret/heaptrack_interpret.cpp):
# there by pointer, a free of the block the trace's previous allocation returned, which is
# alloctap's rule on a process whose threads do not interleave (here: main waits for the
# spike's thread). heaptrack_print's count of the same trace is the one by (size, stack) above.
check_eq "temporaries: heaptrack's run (by pointer) = summary's temporary_allocations" \
	"$(sed -n 's/.*temporary allocations:[[:space:]]*\([0-9]*\).*/\1/p' "$T/ht.out")" \
	"$(python3 -c 'import json, sys; print(json.load(sys.stdin)["temporary_allocations"])' <"$T/summary.json")"
finish
