#!/usr/bin/env bash
# export --heaptrack read back by heaptrack's own reader, heaptrack_print (Debian's heaptrack,
# an oracle nobody here wrote). The deterministic service tests/fixtures/heap_service.c is
# traced by alloctapd --stacks, exported, and heaptrack_print's sections (most calls, peak
# memory consumers, memory leaks, most temporary allocations), its exact figures per stack
# (-F with each --flamegraph-cost-type) and its totals are compared with alloctap-report's on
# the same trace, site for site (a site: the first frame, from the leaf, that is one of the
# fixture's functions), exactly: calls, bytes at the heap peak, bytes leaked and temporaries
# by heaptrack_print's rule (export --folded --weight heaptrack-temp-count). Each fixture
# function's entry starts at the line of its malloc and is called from the line of its call
# in handle_request, as the source says (found there with grep). Then: the same file gzip'd;
# a trace taken by attaching;
# RSS and times (tests/fixtures/report_sites.c holding 32 MiB); a trace without stacks (each
# allocation function a one-frame trace); a trace of two processes refused without --pid and
# one process of it with --pid; a bad -o; inlined frames (tests/fixtures/cxx_sites.cc) against
# llvm-symbolizer; heaptrack_gui under Xvfb. A tool absent is a failed point.
. "$(dirname "$0")/lib.sh"
R=build/alloctap-report
FX=build/fixtures/heap_service
SRC=tests/fixtures/heap_service.c
PACED=build/fixtures/alloc_paced
need_built "$R" "$FX" build/fixtures/report_sites build/fixtures/cxx_sites build/bench/atz_tool "$PACED"
need_bpf build/alloctapd

if ! command -v heaptrack_print >/dev/null; then
	fail "heaptrack_print is installed" "not found (apt-get install heaptrack)"
	finish
fi
if ! build/alloctapd -q --stacks -f binary -o "$T/t.atz" -- "$FX" 2>"$T/t.err"; then
	fail "alloctapd traces the fixture" "$(tail -n 5 "$T/t.err")"
	finish
fi
run_cmd "$R" export --heaptrack -o "$T/t.ht" "$T/t.atz"
check_eq "export --heaptrack -o FILE: exit 0, nothing said" "$rc:$(cat "$T/err")" "0:"
check_eq "the file says heaptrack 1.4.0 and file format 3, its page size 4096" \
	"$(head -n 2 "$T/t.ht" | tr '\n' '|')" "v 10400 3|I 1000 0|"
# heaptrack_print: every section, every entry (-n 100), and -F per cost type
htp() { # htp FILE OUT: heaptrack_print's text of FILE into OUT; 0 when it read it
	heaptrack_print -a 1 -p 1 -T 1 -l 1 -n 100 -s 1 "$1" >"$2" 2>"$T/htp.err" &&
		! grep -q 'failed to parse\|unexpected non-hex\|out of bounds' "$T/htp.err"
}
if ! htp "$T/t.ht" "$T/ht.txt"; then
	fail "heaptrack_print reads the exported file" "$(head -n 5 "$T/htp.err")"
	finish
fi
ok "heaptrack_print reads the exported file, nothing said"
for c in allocations temporary leaked peak; do
	heaptrack_print -a 0 -p 0 -T 0 -F "$T/ht.$c" --flamegraph-cost-type "$c" "$T/t.ht" \
		>/dev/null 2>"$T/err" || fail_run "heaptrack_print -F --flamegraph-cost-type $c"
done
for k in alloc-count peak-bytes leak-bytes; do
	"$R" top --by "$k" --limit 100 --json "$T/t.atz" >"$T/top.$k" 2>"$T/err" ||
		fail_run "top --by $k --json"
done
"$R" export --folded --weight heaptrack-temp-count "$T/t.atz" >"$T/export.ht" 2>"$T/err" ||
	fail_run "export --folded --weight heaptrack-temp-count"
"$R" summary --json "$T/t.atz" >"$T/summary.json" 2>"$T/err" || fail_run "summary --json"

# The source lines: each fixture function's malloc, and its call in handle_request.
line_of() { grep -n -F -- "$1" "$SRC" | head -n 1 | cut -d: -f1; }
{
	echo "remember_session $(line_of 'struct session *s = malloc(sizeof(*s));') $(line_of '		remember_session(request);')"
	echo "cache_insert $(line_of 'cache[slot] = malloc(sizeof(struct entry));') $(line_of '		cache_insert(request);')"
	echo "request_buffer $(line_of 'char *buf = malloc(512);') $(line_of '	request_buffer(request);')"
	echo "scratch_copy $(line_of 'char *p = malloc(256);') $(line_of '	scratch_copy();')"
	echo "spike $(line_of 'p[i] = malloc(SPIKE_BYTES);') $(line_of '	spike();')"
	echo "warm_up $(line_of 'sink = malloc(8);') $(line_of '	warm_up();')"
} >"$T/lines"

# Each check as NAME<TAB>GOT<TAB>WANT.
python3 - "$T" "$SRC" >"$T/checks" <<'PY' || fail "the figures are read" "$(cat "$T/checks")"
import json, os, re, sys

sys.path.insert(0, os.path.join(os.getcwd(), 'tests'))
from heaptrack_oracle import FIX, alloctap, flame, human, sections  # noqa: E402

t, src = sys.argv[1], sys.argv[2]
lines = open(f'{t}/ht.txt').read().split('\n')

a = {k: alloctap(f'{t}/top.{k}') for k in ('alloc-count', 'peak-bytes', 'leak-bytes')}
a['temps'] = flame(f'{t}/export.ht')
h = {c: flame(f'{t}/ht.{c}') for c in ('allocations', 'peak', 'leaked', 'temporary')}
sec = sections(lines)
where = {l.split()[0]: l.split()[1:] for l in open(f'{t}/lines')}
srcname = src
checks = []
for f in FIX:
    calls, peak, leak, temps = (a[k][f] for k in ('alloc-count', 'peak-bytes', 'leak-bytes', 'temps'))
    checks += [
        (f'{f}: calls, heaptrack_print -F allocations = top --by alloc-count', h['allocations'][f], calls),
        (f'{f}: bytes at the heap peak, -F peak = top --by peak-bytes', h['peak'][f], peak),
        (f'{f}: bytes leaked, -F leaked = top --by leak-bytes', h['leaked'][f], leak),
        (f'{f}: temporaries, -F temporary = export --folded --weight heaptrack-temp-count',
         h['temporary'][f], temps),
    ]
    e = sec['MOST CALLS TO ALLOCATION FUNCTIONS'].get(f, {})
    checks.append((f'{f}: MOST CALLS: calls and peak', (e.get('calls'), e.get('peak')),
                   (str(calls), human(peak))))
    leaf, call = where[f]
    checks.append((f'{f}: MOST CALLS: at the line of its malloc, called from the line of its call',
                   (e.get('at'), e.get('caller')),
                   (f'at {srcname}:{leaf}',
                    ('main' if f == 'warm_up' else 'spike_thread' if f == 'spike' else 'handle_request',
                     f'at {srcname}:{call}'))))
    e = sec['PEAK MEMORY CONSUMERS'].get(f, {})
    checks.append((f'{f}: PEAK MEMORY CONSUMERS: peak and calls', (e.get('peak'), e.get('calls')),
                   (human(peak), str(calls)) if peak else (None, None)))
    e = sec['MEMORY LEAKS'].get(f, {})
    checks.append((f'{f}: MEMORY LEAKS: bytes and calls', (e.get('leaked'), e.get('calls')),
                   (human(leak), str(calls)) if leak else (None, None)))
    e = sec['MOST TEMPORARY ALLOCATIONS'].get(f, {})
    checks.append((f'{f}: MOST TEMPORARY ALLOCATIONS: temporaries and calls',
                   (e.get('temps'), e.get('calls')), (str(temps), str(calls)) if temps else (None, None)))

s = json.load(open(f'{t}/summary.json'))
total = {k: v for k, v in (re.match(r'(.*): (\S+)', l).groups() for l in lines if re.match(
    r'(calls to allocation functions|temporary memory allocations|peak heap memory consumption|'
    r'total memory leaked): ', l))}
checks += [
    ('totals: calls to allocation functions = summary calls but free (none failed)',
     total['calls to allocation functions'],
     str(sum(n for k, n in s['calls'].items() if k != 'free') - s['failed_allocations'])),
    ('totals: temporary memory allocations = summary heaptrack_temporary_allocations',
     total['temporary memory allocations'], str(s['heaptrack_temporary_allocations'])),
    ('totals: peak heap memory consumption = summary peak_live_bytes',
     total['peak heap memory consumption'], human(s['peak_live_bytes'])),
    ('totals: total memory leaked = summary final_live_bytes', total['total memory leaked'],
     human(s['final_live_bytes'])),
]
for name, got, want in checks:
    print(f'{name}\t{json.dumps(got)}\t{json.dumps(want)}')
PY
while IFS=$'\t' read -r name got want; do
	check_eq "$name" "$got" "$want"
done <"$T/checks"

# The totals heaptrack_interpret writes at the end, and the file's lines in order.
python3 - "$T/t.ht" >"$T/order" <<'PY'
import sys
strings = ips = traces = infos = 0
last_c, problems, prev, pending = -1, [], None, None
for n, line in enumerate(open(sys.argv[1], encoding='utf-8', errors='replace'), 1):
    k, _, rest = line.rstrip('\n').partition(' ')
    f = rest.split(' ')
    if k == 's':
        strings += 1
        if int(f[0], 16) != len(rest) - len(f[0]) - 1:
            problems.append(f'{n}: sized string of another length')
    elif k == 'i':
        ips += 1
        if any(int(x, 16) > strings for x in f[1:2] + f[2::3] + f[3::3]):
            problems.append(f'{n}: a string not written yet')
    elif k == 't':
        traces += 1
        if int(f[0], 16) > ips or int(f[1], 16) >= traces:
            problems.append(f'{n}: an ip or parent not written yet')
    elif k == 'a':
        infos += 1
        if int(f[1], 16) > traces or not int(f[1], 16):
            problems.append(f'{n}: a trace not written yet, or none')
        pending = infos - 1
    elif k in '+-':
        if not int(f[0], 16) < infos:
            problems.append(f'{n}: info {f[0]} not written yet')
    elif k == 'c':
        if int(f[0], 16) <= last_c:
            problems.append(f'{n}: time not after the last')
        last_c = int(f[0], 16)
    elif k == '#':
        print(line.rstrip('\n'))
    if prev == 'a' and (k != '+' or int(f[0], 16) != pending):
        problems.append(f'{n}: info {pending} not allocated on the next line (heaptrack_gui '
                        'needs infos first allocated in their order)')
    prev = k
print(f'strings {strings}, ips {ips}', *problems[:5], sep='\n')
PY
check_eq "every index written before its use, each info allocated right after its a line, times increasing; the totals at the end" \
	"$(cat "$T/order")" "$(sed -n 's/^# strings: \(.*\)/# strings: \1/p; s/^# ips: \(.*\)/# ips: \1/p' "$T/t.ht")
strings $(sed -n 's/^# strings: //p' "$T/t.ht"), ips $(sed -n 's/^# ips: //p' "$T/t.ht")"
check_eq "the debuggee: the trace and its pid" \
	"$(grep '^Debuggee command was' "$T/ht.txt")" \
	"Debuggee command was: alloctap trace $T/t.atz, pid $(sed -n 's/^X .*, pid //p' "$T/t.ht")"

# gzip'd by the name: heaptrack_print reads it (by its .gz) as the plain file.
run_cmd "$R" export --heaptrack -o "$T/t.ht.gz" "$T/t.atz"
check_eq "-o FILE.gz: a gzip stream of the same file" "$rc:$(gzip -dc "$T/t.ht.gz" | cmp - "$T/t.ht" && echo same)" \
	"0:same"
htp "$T/t.ht.gz" "$T/gz.txt"
check_eq "heaptrack_print reads FILE.gz as the plain file (its first line names the file)" \
	"$(tail -n +2 "$T/gz.txt" | cmp - <(tail -n +2 "$T/ht.txt") && echo same)" same
run_cmd "$R" export --heaptrack "$T/t.atz"
check_eq "no -o: the plain file on stdout" "$rc:$(cmp "$T/out" "$T/t.ht" && echo same)" "0:same"

# RSS and times: report_sites holds 32 MiB for 400 ms; alloctapd writes RSS every 100 ms.
if build/alloctapd -q --stacks -f binary -o "$T/s.atz" -- build/fixtures/report_sites hold 2>"$T/err"; then
	"$R" export --heaptrack -o "$T/s.ht" "$T/s.atz" 2>"$T/err" || fail_run "export --heaptrack (RSS)"
	htp "$T/s.ht" "$T/s.txt" || fail "heaptrack_print reads the file with RSS" "$(head -n 5 "$T/htp.err")"
	"$R" summary --json "$T/s.atz" >"$T/s.json"
	read -r rss dur < <(python3 -c 'import json,sys; s=json.load(sys.stdin); print(s["peak_rss_bytes"], s["duration_ns"])' <"$T/s.json")
	check_eq "RSS: heaptrack_print's peak RSS = summary's peak rss bytes" \
		"$(sed -n 's/^peak RSS (including heaptrack overhead): //p' "$T/s.txt")" \
		"$(python3 -c "import sys; n=$rss
for u in 'KMGTPE':
    n /= 1000
    if n < 1000: print(f'{n:.2f}{u}'); break")"
	check_eq "RSS: the largest R line, in pages of 4096, = summary's peak rss bytes exactly" \
		"$(python3 -c "print(max(int(l.split()[1], 16) for l in open('$T/s.ht') if l.startswith('R ')) * 4096)")" \
		"$rss"
	check_eq "times: the last c line is the trace's last millisecond or before, the runtime after it" \
		"$(python3 -c "print(max(int(l.split()[1], 16) for l in open('$T/s.ht') if l.startswith('c ')) <= $dur // 1000000)")" \
		"True"
else
	fail "alloctapd traces report_sites hold" "$(tail -n 5 "$T/err")"
fi

# A trace without stacks: each allocation function its own one-frame trace.
if build/alloctapd -q -f binary -o "$T/n.atz" -- "$FX" 2>"$T/err"; then
	"$R" export --heaptrack -o "$T/n.ht" "$T/n.atz" 2>"$T/err" || fail_run "export --heaptrack (no stacks)"
	htp "$T/n.ht" "$T/n.txt" || fail "heaptrack_print reads the file without stacks" "$(head -n 5 "$T/htp.err")"
	"$R" summary --json "$T/n.atz" >"$T/n.json"
	check_eq "no stacks: MOST CALLS: one entry per allocation function, its calls as summary's" \
		"$(awk '/^MOST CALLS/{on=1; next} /^$/{if (on && prev == "") exit} on && / calls to allocation functions /{n=$1; getline; print $0 " " n} {prev=$0}' "$T/n.txt" | sort | tr '\n' ' ')" \
		"$(python3 -c 'import json,sys; s=json.load(sys.stdin); print(" ".join(sorted(f"{k} {v}" for k, v in s["calls"].items() if k != "free")), end=" ")' <"$T/n.json")"
	check_eq "no stacks: the file's traces are one node each, from a root" \
		"$(grep '^t ' "$T/n.ht" | awk '$3 != "0"' | wc -l)" "0"
else
	fail "alloctapd traces the fixture without stacks" "$(tail -n 5 "$T/err")"
fi

# A trace taken by attaching, no restart: alloc_paced keeps 100 blocks, waits while alloctapd
# attaches, then keeps 50 more and makes 200 temporaries. heaptrack_print sees what the trace
# saw: 250 calls, 200 temporaries, the 50 blocks leaked, nothing of the blocks from before.
"$PACED" malloc:100:64 touch:"$T/ready" wait:"$T/go" malloc:50:128:1000 pair:200:32:100 &
pid=$!
for i in $(seq 200); do [ -e "$T/ready" ] && break; sleep 0.05; done
dpid=
if [ -e "$T/ready" ]; then
	build/alloctapd -v --stacks -f binary -o "$T/att.atz" --pid "$pid" 2>"$T/att.err" &
	dpid=$!
	wait_for "$T/att.err" recording 10 || fail "alloctapd attaches" "$(tail -n 5 "$T/att.err")"
fi
touch "$T/go"
wait "$pid"
[ -n "$dpid" ] && wait "$dpid"
"$R" export --heaptrack -o "$T/att.ht.gz" "$T/att.atz" 2>"$T/err" || fail_run "export --heaptrack (attached)"
htp "$T/att.ht.gz" "$T/att.txt" || fail "heaptrack_print reads the attached trace's file" "$(head -n 5 "$T/htp.err")"
check_eq "attached: heaptrack_print's calls, temporaries and leak are the trace's after the attach" \
	"$(grep -E '^(calls to allocation functions|temporary memory allocations|total memory leaked):' "$T/att.txt" |
		sed 's/ (.*//' | tr '\n' '|')" \
	"calls to allocation functions: 250|temporary memory allocations: 200|total memory leaked: 6.40K|"

# Inlined frames (tests/fixtures/cxx_sites.cc, C++ containers inlined into main): each ip of the
# program is one i line, its frames innermost first (heaptrack's frame, then its inlined
# frames), each function, file and line as llvm-symbolizer gives them at the return address
# less one; heaptrack_print reads it and prints the inlined frames.
if build/alloctapd -q --stacks -f binary -o "$T/cxx.atz" -- build/fixtures/cxx_sites 4 2>"$T/err" &&
	build/bench/atz_tool mappings "$T/cxx.atz" >"$T/cxx.mappings"; then
	"$R" export --heaptrack -o "$T/cxx.ht" "$T/cxx.atz" 2>"$T/err" || fail_run "export --heaptrack (C++)"
	check "cxx: each ip's frames, inlined ones after the innermost, as llvm-symbolizer gives them" \
		python3 - build/fixtures/cxx_sites "$T/cxx.ht" "$T/cxx.mappings" <<'PY'
import os, subprocess, sys
binary, ht, maps_file = os.path.realpath(sys.argv[1]), sys.argv[2], sys.argv[3]
strings, ips = [''], []
for line in open(ht, encoding='utf-8'):
    k, _, rest = line.rstrip('\n').partition(' ')
    if k == 's':
        size, _, text = rest.partition(' ')
        assert len(text) == int(size, 16), line
        strings.append(text)
    elif k == 'i':
        f = [int(x, 16) for x in rest.split(' ')]
        frames = [(strings[f[i]], strings[f[i + 1]].rsplit('/', 1)[-1], f[i + 2])
                  for i in range(2, len(f), 3)]
        ips.append((f[0], strings[f[1]], frames))
maps = [l.split() for l in open(maps_file)]
loads = [(int(f[1], 16), int(f[2], 16), int(f[4], 16)) for f in
         (l.split() for l in subprocess.run(['readelf', '-lW', binary], capture_output=True,
                                            text=True, check=True).stdout.splitlines())
         if f and f[0] == 'LOAD']
def vaddr(pc):
    for pid, rng, off, bid, path in reversed(maps):
        start, end = (int(x, 16) for x in rng.split('-'))
        if start <= pc < end and os.path.realpath(path) == binary:
            o = pc - start + int(off, 16)
            return next(o - lo + va for lo, va, size in loads if lo <= o < lo + size)
own = [(ip, frames) for ip, module, frames in ips
       if os.path.realpath(module) == binary and frames and all(p for _, p, _ in frames)]
assert len(own) >= 5 and any(len(f) > 3 for ip, f in own), 'few inline chains: %r' % own
out = subprocess.run(['llvm-symbolizer', '--obj=' + binary, '--inlining', '--demangle'] +
                     ['0x%x' % (vaddr(ip) - 1) for ip, f in own], capture_output=True,
                     text=True, check=True).stdout.strip('\n').split('\n\n')
for (ip, frames), block in zip(own, out):
    b = block.split('\n')
    want = [(b[i], b[i + 1].split(':')[0].rsplit('/', 1)[-1], int(b[i + 1].split(':')[1]))
            for i in range(0, len(b), 2)]
    assert frames == want, '0x%x: %r, llvm-symbolizer %r' % (ip, frames, want)
print(len(own), 'ips')
PY
	htp "$T/cxx.ht" "$T/cxx.txt" || fail "heaptrack_print reads the C++ file" "$(head -n 5 "$T/htp.err")"
	check_eq "cxx: heaptrack_print prints the inlined vector<int>::push_back with its line" \
		"$(grep -A1 -m1 '^ *std::vector<>::push_back(int const&)$' "$T/cxx.txt" | tail -n 1 |
			grep -cE '^ *at .*/stl_vector\.h:[0-9]+$')" 1
else
	fail "alloctapd traces cxx_sites" "$(tail -n 5 "$T/err")"
fi

# heaptrack_gui (Debian's heaptrack-gui) under Xvfb opens the file: its window names it, it is
# still running 5 s after (it crashed while reading files whose allocation infos were not first
# allocated in their order, which heaptrack_print reads), its reader said nothing.
gui_opens() { # gui_opens FILE: 0 when heaptrack_gui shows FILE and lives on
	local x g d i shown=
	[ -s "$1" ] || return 1
	exec 5< <(Xvfb -displayfd 1 -screen 0 1400x900x24 2>/dev/null)
	x=$!
	read -r -t 10 d <&5 || { kill "$x" 2>/dev/null; return 1; }
	DISPLAY=:$d heaptrack_gui "$1" >"$T/gui.log" 2>&1 &
	g=$!
	for i in $(seq 40); do
		sleep 0.5
		DISPLAY=:$d xdotool search --name "^Heaptrack - ${1##*/}( |$)" >/dev/null 2>&1 && shown=1 && break
	done
	[ -n "$shown" ] && sleep 5 && kill -0 "$g" 2>/dev/null
	local alive=$?
	kill "$g" 2>/dev/null
	wait "$g" 2>/dev/null
	kill "$x" 2>/dev/null
	exec 5<&-
	[ "$alive" -eq 0 ] &&
		! grep -q 'failed to parse\|unexpected non-hex\|out of bounds\|Failed to open' "$T/gui.log"
}
if ! command -v heaptrack_gui >/dev/null || ! command -v Xvfb >/dev/null || ! command -v xdotool >/dev/null; then
	fail "heaptrack_gui, Xvfb and xdotool are installed" "apt-get install heaptrack-gui xvfb xdotool"
else
	for f in t.ht s.ht n.ht att.ht.gz cxx.ht; do
		if gui_opens "$T/$f"; then ok "heaptrack_gui opens $f and lives on"; else
			fail "heaptrack_gui opens $f and lives on" "$(tail -n 5 "$T/gui.log")"; fi
	done
fi

# Two processes: refused without --pid (a heaptrack file is one process), one with it.
printf '10 10 malloc(32)=0x1000\n10 10 malloc(64)=0x2000\n20 20 malloc(16)=0x1000\n10 10 free(0x1000)\n20 20 calloc(2,8)=0x3000\n' >"$T/two.log"
check_err "two processes, no --pid: refused, both pids named" 1 \
	"alloctap-report: $T/two.log: events of processes 10 and 20: a heaptrack file holds one process; choose one with --pid PID" \
	"$R" export --heaptrack -o "$T/two.ht" "$T/two.log"
run_cmd "$R" export --heaptrack --pid 20 -o "$T/two.ht" "$T/two.log"
check_eq "--pid 20: its allocations only" "$rc:$(grep '^[a+-] ' "$T/two.ht" | tr '\n' '|')" \
	"0:a 10 1|+ 0|a 10 2|+ 1|"
htp "$T/two.ht" "$T/two.txt"
check_eq "--pid 20: heaptrack_print: 2 calls, 32B leaked" \
	"$(grep -E '^(calls to allocation functions|total memory leaked):' "$T/two.txt" | tr '\n' '|')" \
	"calls to allocation functions: 2 (2000/s)|total memory leaked: 32B|"

# Bad command lines and outputs.
check_err "bad -o: a folder that does not exist" 1 \
	"alloctap-report: cannot open $T/none/x.ht: No such file or directory" \
	"$R" export --heaptrack -o "$T/none/x.ht" "$T/two.log"
check_err_match "--heaptrack with --pprof: one output format" 2 \
	"export needs one output format: --folded, --pprof or --heaptrack" \
	"$R" export --heaptrack --pprof "$T/two.log"
check_err_match "--heaptrack with --weight: refused" 2 \
	"--weight goes with --folded: a heaptrack file holds every allocation" \
	"$R" export --heaptrack --weight alloc-bytes "$T/two.log"
run_cmd "$R" export --heaptrack --pid 20 -o /dev/full "$T/two.log"
check_eq "a full disk: exit 1, said" "$rc:$(grep -c 'No space left on device' "$T/err")" "1:1"
finish
