#!/usr/bin/env bash
# alloctap-report export --folded: usage and errors; exact folded lines for a text log, the
# same log in binary and munged, by count and by bytes; a 2.0 trace with stacks whose objects
# are not here (lines computed from its independent listings); and, from real traces taken with
# alloctapd --stacks, the fixtures' known call chains (a chain through a shared library,
# a recursion deeper than 128 frames: truncated stacks). Every output is also read back by an
# independent parser (python3): one line per stack, frames separated by ';', a space, a
# positive integer; lines sorted, no stack twice.
. "$(dirname "$0")/lib.sh"
R=build/alloctap-report
need_built "$R" build/alloctap-munge

# folded_ok NAME FILE: the independent parser accepts FILE.
folded_ok() {
	check "$1: folded lines an independent parser accepts" python3 - "$2" <<'PY'
import sys
lines = open(sys.argv[1], 'rb').read().split(b'\n')
assert lines[-1] == b'', 'no final newline'
stacks = []
for n, line in enumerate(lines[:-1], 1):
    stack, sep, weight = line.rpartition(b' ')
    assert sep and weight.isdigit() and int(weight) > 0, 'line %d: weight %r' % (n, weight)
    frames = stack.split(b';')
    assert all(frames), 'line %d: an empty frame' % n
    assert all(b < 0x80 and b >= 0x20 for b in stack), 'line %d: control bytes' % n
    stacks.append(stack)
assert stacks == sorted(stacks), 'not sorted'
assert len(set(stacks)) == len(stacks), 'a stack twice'
assert stacks, 'no line'
PY
}

# --- usage ----------------------------------------------------------------------------------
run_cmd "$R" --help
if [ "$rc" -eq 0 ] && grep -q "^Usage: alloctap-report COMMAND \[OPTIONS\] TRACE" "$T/out" &&
	grep -q -- "--weight" "$T/out" && [ ! -s "$T/err" ]; then
	ok "--help: usage on stdout, exit 0"
else
	fail_run "--help: usage on stdout, exit 0" "exit $rc"
fi
echo "alloctap-report 0.5.0" >"$T/want_version"
check_cmd "--version" 0 "$T/want_version" "" -- "$R" --version

usage_case() {
	local what=$1 msg=$2
	shift 2
	check_err "usage error: $what" 2 "alloctap-report: $msg
Try 'alloctap-report --help'." "$R" "$@"
}
printf '1 1 malloc(8)=0x10\n' >"$T/one.log"
usage_case "no command" "no command: summary, peak, leaks, top, sizes, timeline, lifetimes, layout, diff, export or html"
usage_case "unknown command" "unknown command flame (summary, peak, leaks, top, sizes, timeline, lifetimes, layout, diff, export or html)" flame "$T/one.log"
usage_case "no --folded" "export needs one output format: --folded, --pprof or --heaptrack" export "$T/one.log"
usage_case "no TRACE" "export needs a TRACE (a file, or - for standard input)" export --folded
usage_case "two TRACEs" "export: one operand too many: b" export --folded a b
usage_case "bad --weight" "--weight needs alloc-count, alloc-bytes, peak-bytes, leak-bytes, temp-count, heaptrack-temp-count or churn, not: bytes" \
	export --folded --weight bytes "$T/one.log"
usage_case "--weight without its value" "missing argument for option --weight" \
	export --folded "$T/one.log" --weight
usage_case "unknown option" "unknown option --flame" export --flame "$T/one.log"
usage_case "top: bad --by" "--by needs leak-bytes, live-bytes, peak-bytes, alloc-bytes, alloc-count, temp-count, heaptrack-temp-count or churn, not: calls" \
	top --by calls "$T/one.log"
usage_case "peak: bad --min-percent" "--min-percent needs a whole percent from 0 to 100, not: 0.5" \
	peak --min-percent 0.5 "$T/one.log"
usage_case "peak: bad --depth" "--depth needs a count of levels (0: all), not: -1" \
	peak --depth -1 "$T/one.log"
usage_case "--bottom-up with leaks" "--depth and --bottom-up go with peak, not with leaks" \
	leaks --bottom-up "$T/one.log"
usage_case "top: --limit 0" "--limit needs a count of sites above 0, not: 0" top --limit 0 "$T/one.log"
usage_case "--by elsewhere" "--by and --limit go with top, not with leaks" leaks --by leak-bytes "$T/one.log"
usage_case "--bytes elsewhere" "--bytes goes with summary, peak, leaks, top, sizes, timeline, layout, diff and html (their byte figures exact; JSON and CSV are exact always), not with lifetimes" \
	lifetimes --bytes "$T/one.log"

# --- input errors ---------------------------------------------------------------------------
check_err "missing file: named, with the reason, exit 1" 1 \
	"alloctap-report: $T/none.log: No such file or directory" \
	"$R" export --folded "$T/none.log"
check_err "a directory: named, exit 1" 1 \
	"alloctap-report: $T:1: read error: Is a directory" "$R" export --folded "$T"
printf '1 1 malloc(8)=0x10\nthis is not a log\n' >"$T/garbage.log"
check_err_match "garbage text, --strict: FILE:LINE, exit 1" 1 "^alloctap-report: $T/garbage.log:2: " \
	"$R" export --strict --folded "$T/garbage.log"
check_eq "garbage text, --strict: nothing on stdout" "$(wc -c <"$T/out")" 0
check_err_match "garbage text: FILE:LINE, line skipped, exit 3" 3 \
	"^alloctap-report: $T/garbage.log:2: Malformed input; line skipped$" \
	"$R" export --folded "$T/garbage.log"
check_eq "garbage text: the other line exported" "$(cat "$T/out")" "malloc 1"
head -c 3000 /dev/urandom | sed '1s/^/\x04\x22\x4d\x18/' >"$T/garbage.atz"
check_err_match "garbage binary: named, exit 1" 1 "^alloctap-report: $T/garbage.atz: " \
	"$R" export --folded "$T/garbage.atz"
run_cmd "$R" export --folded -q "$T/none.log"
check_eq "-q: errors still said" "$rc:$(grep -c . "$T/err")" "1:1"
run_cmd "$R" export --folded -qq "$T/none.log"
check_eq "-qq: nothing said, exit 1" "$rc:$(grep -c . "$T/err")" "1:0"

# --- a text log: stacks of one frame, the function -----------------------------------------
cat >"$T/app.log" <<'LOG'
10 10 malloc(16)=0x1000
10 10 calloc(4,8)=0x2000
10 11 malloc(100)=0x3000
10 10 realloc(0x1000,64)=0x1000
10 10 free(0x2000)
11 12 memalign(64,200)=0x4000
11 12 posix_memalign(16,48)=0x5000
11 12 aligned_alloc(32,96)=0x6000

11 12 valloc(4096)=0x7000
11 12 malloc(7)=0x0
11 12 free(0x0)
10 10 free(0x1000)
10 11 realloc(0x3000,0)=0x0
LOG
cat >"$T/want_count" <<'OUT'
aligned_alloc 1
calloc 1
malloc 3
memalign 1
posix_memalign 1
realloc 2
valloc 1
OUT
cat >"$T/want_bytes" <<'OUT'
aligned_alloc 96
calloc 32
malloc 123
memalign 200
posix_memalign 48
realloc 64
valloc 4096
OUT
check_cmd "text log: one line per function, calls counted (failed ones too)" 0 \
	"$T/want_count" "" -- "$R" export --folded "$T/app.log"
folded_ok "text log" "$T/out"
check_cmd "text log --weight alloc-count: the default" 0 "$T/want_count" "" -- \
	"$R" export --folded --weight alloc-count "$T/app.log"
check_cmd "text log --weight alloc-bytes: bytes asked" 0 "$T/want_bytes" "" -- \
	"$R" export --folded --weight alloc-bytes "$T/app.log"
check_cmd "text log on standard input" 0 "$T/want_count" "" -- \
	bash -c "'$R' export --folded - <'$T/app.log'"
# the munge drops failed calls and free(0x0), as logalloc's does: their lines go
grep -v '0x0' "$T/app.log" >"$T/ok.log"
sed -e 's/^malloc 3$/malloc 2/' -e 's/^realloc 2$/realloc 1/' "$T/want_count" >"$T/want_ok"
build/alloctap-munge -qq "$T/ok.log" -o "$T/ok.munged"
check_cmd "munged text log: the same lines" 0 "$T/want_ok" "" -- \
	"$R" export --folded "$T/ok.munged"
build/alloctap-munge -qq --keep-pointers --format binary "$T/app.log" -o "$T/app.atz"
check_cmd "binary trace without stacks: the same lines" 0 "$T/want_count" "" -- \
	"$R" export --folded "$T/app.atz"
check_cmd "binary trace without stacks, by bytes" 0 "$T/want_bytes" "" -- \
	"$R" export --folded --weight alloc-bytes "$T/app.atz"
build/alloctap-munge -qq --format binary "$T/ok.log" -o "$T/ok.munged.atz"
check_cmd "munged binary trace: the same lines" 0 "$T/want_ok" "" -- \
	"$R" export --folded "$T/ok.munged.atz"
run_cmd "$R" export --folded -v "$T/app.log"
check_eq "-v: the number of distinct stacks" "$(cat "$T/err")" \
	"alloctap-report: $T/app.log: 7 distinct sites"
check_err "a full disk: a write error, exit 1" 1 \
	"alloctap-report: <stdout>: write error: No space left on device" \
	bash -c "'$R' export --folded '$T/app.log' >/dev/full"
# a reader that goes away (| head): the report stops quietly, killed by SIGPIPE (141) as cat
awk 'BEGIN { for (i = 1; i <= 20000; i++) printf "1 1 malloc(8)=0x%x\n1 1 free(0x%x)\n", 16 * i, 16 * i }' \
	>"$T/pairs.log"
"$R" timeline --churn 16 "$T/pairs.log" 2>"$T/err" | head -n 1 >"$T/out"
status=("${PIPESTATUS[@]}")
check_eq "timeline (8 MB of text) | head -n 1: quiet, killed by SIGPIPE (141)" \
	"${status[*]}:$(cat "$T/out"):$(wc -c <"$T/err")" \
	"141 0:== snapshot 1 after 2 events: 0 B live in 0 blocks:0" "$(head -n 3 "$T/err")"
"$R" timeline -v --churn 16 "$T/pairs.log" 2>"$T/err" | head -n 1 >/dev/null
status=("${PIPESTATUS[@]}")
check_eq "| head -n 1 with -v: said once, nothing of a write error" \
	"${status[0]}:$(grep -c 'write error\|Broken pipe' "$T/err"):$(grep -c 'the reader went away; output stopped$' "$T/err")" \
	"141:0:1" "$(head -n 3 "$T/err")"

# --- a 2.0 trace with stacks and mappings (tests/data/atz/synth-v2.atz) -----------------------
# Its objects are not on this machine (or, for libc.so.6, not with its build-id): every frame
# is OBJECT+0xFILEOFFSET. The expected lines are computed from the trace's independent listings
# (atz_tool's synth-v2.stacks and synth-v2.mappings, kept with it).
G=tests/data/atz/synth-v2
python3 - "$G.stacks" "$G.mappings" >"$T/want_synth" <<'PY'
import sys, collections
maps = []
for line in open(sys.argv[2]):
    pid, rng, off, bid, path = line.split()
    start, end = (int(x, 16) for x in rng.split('-'))
    maps.append((start, end, int(off, 16), path.rsplit('/', 1)[-1]))
def frame(pc):
    for start, end, off, base in reversed(maps):
        if start <= pc < end:
            return '%s+0x%x' % (base, pc - start + off)
    return '[unknown]'
weights = collections.Counter()
for line in open(sys.argv[1]):
    func, flags, *pcs = line.split()
    frames = [frame(int(pc, 16)) for pc in reversed(pcs[1:])]
    root = {'complete': [], 'incomplete': ['[incomplete]'], 'truncated': ['[truncated]']}[flags]
    weights[';'.join(root + frames + [func])] += 1
for stack in sorted(weights, key=lambda s: s.encode()):
    print(stack, weights[stack])
PY
run_cmd "$R" export --folded "$G.atz"
check_file_eq "2.0 trace with stacks: exact folded lines, unusable objects as OBJECT+0xOFFSET" \
	"$T/out" "$T/want_synth"
check_eq "2.0 trace with stacks: each unusable object said once" \
	"$rc $(wc -l <"$T/err") $(grep -c '^alloctap-report: /usr/bin/synth: cannot open: No such file or directory; its frames are shown as synth+0xOFFSET$' "$T/err") $(grep -c '^alloctap-report: /usr/lib/libsynth.so: cannot open' "$T/err") $(grep -c '^alloctap-report: /usr/lib/x86_64-linux-gnu/libc.so.6: ' "$T/err")" \
	"0 3 1 1 1"
folded_ok "2.0 trace with stacks" "$T/out"
run_cmd "$R" export --folded -q "$G.atz"
check_eq "2.0 trace with stacks, -q: no warning" "$rc $(wc -c <"$T/err")" "0 0"

# --- real traces with stacks ----------------------------------------------------------------
D=build/alloctapd
FX=build/fixtures
need_bpf "$D"
need_built "$FX/unwind_chain" "$FX/unwind_recursion"

# traced NAME COMMAND...: alloctapd --stacks -f binary -o $T/NAME.atz -- COMMAND.
traced() {
	local name=$1
	shift
	if "$D" --stacks -f binary -o "$T/$name.atz" -- "$@" >/dev/null 2>"$T/$name.err"; then
		ok "$name: traced with --stacks"
	else
		fail "$name: traced with --stacks" "$(tail -n 5 "$T/$name.err")"
	fi
}

# The chain: main -> chain_outer -> chain_middle (lib) -> chain_inner (lib) -> chain_leaf ->
# malloc(16 + r), calloc(4, 8 + r), realloc(p, 64 + r), r = 0..7. Every frame below main is
# named, from the program's and the library's own symbols and DWARF; the C library's frames
# above main (from _start) are the same on every line.
traced chain "$FX/unwind_chain" 8
run_cmd "$R" export --folded "$T/chain.atz"
cp "$T/out" "$T/chain.count"
prefix=$(sed -n '1s/;main;.*//p' "$T/chain.count")
check "chain: the root frame is _start" bash -c "[[ '$prefix' == _start\;* ]]"
calls="main;chain_outer;chain_middle;chain_inner;chain_leaf"
printf '%s\n' "$prefix;$calls;calloc 8" "$prefix;$calls;malloc 8" \
	"$prefix;$calls;realloc 8" >"$T/want_chain"
check_file_eq "chain: exact folded lines by count" "$T/chain.count" "$T/want_chain"
check_eq "chain: no problem reported" "$rc:$(cat "$T/err")" "0:"
folded_ok "chain" "$T/chain.count"
run_cmd "$R" export --folded --weight alloc-bytes "$T/chain.atz"
printf '%s\n' "$prefix;$calls;calloc 368" "$prefix;$calls;malloc 156" \
	"$prefix;$calls;realloc 540" >"$T/want_chain_bytes"
check_file_eq "chain: exact folded lines by bytes" "$T/out" "$T/want_chain_bytes"

head -c $(($(wc -c <"$T/chain.atz") - 9)) "$T/chain.atz" >"$T/cut.atz"
check_err_match "chain trace cut short, --strict: named, said truncated, exit 1" 1 \
	"^alloctap-report: $T/cut.atz: truncated" "$R" export --strict --folded "$T/cut.atz"
check_err_match "chain trace cut short: the events before the cut exported, exit 3" 3 \
	"^alloctap-report: $T/cut.atz: truncated after [0-9]* events: .*; the report covers the [0-9]* events before it$" \
	"$R" export --folded "$T/cut.atz"

# The chain's library, changed since the trace: reported once, its frames object+offset.
mkdir -p "$T/fx"
cp "$FX/unwind_chain" "$FX/unwind_chain_lib.so" "$T/fx/" # the program finds it in its folder
traced moved "$T/fx/unwind_chain" 2
printf 'int changed_since_the_trace = 1;\n' >"$T/changed.c"
cc -O2 -g -shared -fPIC -DUNWIND_CHAIN_LIBRARY -Wl,--build-id=sha1 \
	-Wl,-soname,unwind_chain_lib.so -o "$T/fx/unwind_chain_lib.so" \
	tests/fixtures/unwind_chain.c "$T/changed.c"
run_cmd "$R" export --folded "$T/moved.atz"
check_eq "changed library: reported once, naming both build-ids" \
	"$(grep -c "^alloctap-report: $T/fx/unwind_chain_lib.so: build-id [0-9a-f]* in the trace, [0-9a-f]* on disk: the object changed; its frames are shown as unwind_chain_lib.so+0xOFFSET\$" "$T/err"):$(wc -l <"$T/err")" "1:1"
check "changed library: its frames as unwind_chain_lib.so+0x..., the program's named" \
	bash -c "grep -q ';main;chain_outer;unwind_chain_lib.so+0x[0-9a-f]*;unwind_chain_lib.so+0x[0-9a-f]*;chain_leaf;malloc 2\$' '$T/out' && ! grep -q 'chain_middle\|chain_inner' '$T/out'"
rm -f "$T/fx/unwind_chain_lib.so"
run_cmd "$R" export --folded -q "$T/moved.atz"
check "missing library, -q: no message, frames as unwind_chain_lib.so+0x..." \
	bash -c "[ $rc -eq 0 ] && [ ! -s '$T/err' ] && grep -q ';chain_outer;unwind_chain_lib.so+0x' '$T/out'"

# A trace whose mapping record names a FIFO, or a device: the symbolizer must refuse them
# before any open that has an effect (a writer waiting on the FIFO released, a device's open
# run). inotify sees every open but O_PATH's; the report must not block either.
A=build/bench/atz_tool
need_built "$A"
mkfifo "$T/fifo"
mknod "$T/chardev" c 1 3 # /dev/null's numbers, in a folder only this test uses
printf '1 1 malloc(8)=0x10\n1 1 free(0x10)\n' >"$T/one.log"
( exec 3>"$T/fifo" && echo released >"$T/released" ) &
writer=$!
for obj in fifo chardev; do
	"$A" synth -t -s 1 -P "$T/$obj" "$T/one.log" "$T/$obj.atz"
	python3 - "$T/$obj" "$R" export --folded "$T/$obj.atz" >"$T/opens" 2>"$T/err" <<'PY'
import ctypes, os, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(os.O_NONBLOCK)
if fd < 0 or libc.inotify_add_watch(fd, sys.argv[1].encode(), 0x20) < 0:  # IN_OPEN
    sys.exit('inotify: ' + os.strerror(ctypes.get_errno()))
try:
    run = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         timeout=20)
except subprocess.TimeoutExpired:
    sys.exit('the report blocked for 20 s')
sys.stderr.buffer.write(run.stderr)
try:
    opened = len(os.read(fd, 65536)) // 16
except BlockingIOError:
    opened = 0
print(run.returncode, opened)
PY
	kind=$([ "$obj" = fifo ] && echo "a FIFO" || echo "a character device")
	check_eq "a mapping record naming $kind: never opened, said, frames as $obj+0x..." \
		"$(cat "$T/opens"):$(grep -c "^alloctap-report: $T/$obj: cannot open: $kind, not a regular file; its frames are shown as $obj+0xOFFSET\$" "$T/err")" \
		"0 0:1"
done
check_eq "a mapping record naming a FIFO: its waiting writer not released" \
	"$(cat "$T/released" 2>/dev/null)" ""
kill "$writer" 2>/dev/null
wait "$writer" 2>/dev/null

# 40,000 mapping records (each its own object, none holding a frame of the stacks) cost a
# report nothing it can feel: a mapping is put and found in O(log n), an object in O(1). Each
# record once scanned every earlier one: 18 s of CPU here; now 0.05 s. The bound is on user CPU
# time, which other tracers' uprobes on this machine do not inflate as they do wall time. The
# lines are those of the same trace without them.
python3 tests/report_model.py gen 5 2000 >"$T/maps.log"
"$A" synth -t -s 200 "$T/maps.log" "$T/maps0.atz"
"$A" synth -t -s 200 -m 40000 "$T/maps.log" "$T/maps40k.atz"
"$R" export --folded -q "$T/maps0.atz" >"$T/want_maps"
check_eq "40,000 mapping records: all in the trace" \
	"$("$A" mappings "$T/maps40k.atz" | wc -l)" 40003
TIMEFORMAT=%U
{ time timeout 120 "$R" export --folded -q "$T/maps40k.atz" >"$T/maps.out" 2>&1; } 2>"$T/cpu"
rc=$?
check_file_eq "40,000 mapping records: the folded lines of the trace without them" \
	"$T/maps.out" "$T/want_maps"
check "40,000 mapping records: under 3 s of CPU (took $(cat "$T/cpu") s, exit $rc)" \
	awk -v s="$(cat "$T/cpu")" -v rc="$rc" 'BEGIN { exit !(rc == 0 && s + 0 < 3) }'
# 200,000 processes, one malloc each, then 200,000 frees interleaved over them: finding an
# event's process is one hash lookup. It was a scan of every process seen: 100,000 pids took
# 18 s of CPU, this about 80 s; now well under a second. Exact: every process once, in order
# of first event, its block allocated and freed.
python3 -c '
import sys
n = 200000
w = sys.stdout.write
for p in range(1, n + 1): w("%d %d malloc(16)=0x%x\n" % (p, p, 0x1000 + 16 * p))
for p in range(n, 0, -1): w("%d %d free(0x%x)\n" % (p, p, 0x1000 + 16 * p))
' >"$T/pids.log"
{ time timeout 120 "$R" summary "$T/pids.log" >"$T/pids.out" 2>"$T/pids.err"; } 2>"$T/cpu"
rc=$?
check_eq "200,000 processes: each reported once, in order, its block freed" \
	"$(grep -c '^== process ' "$T/pids.out"):$(grep -c '^peak live bytes: 16 B in 1 blocks$' "$T/pids.out"):$(grep -c '^final live bytes: 0 B in 0 blocks$' "$T/pids.out"):$(grep -c '^calls free: 1$' "$T/pids.out"):$(grep -m1 '^== process ' "$T/pids.out"):$(grep '^== process ' "$T/pids.out" | tail -n 1)" \
	"200000:200000:200000:200000:== process 1:== process 200000" "$(head -c 500 "$T/pids.err")"
check "200,000 processes: under 10 s of CPU (took $(cat "$T/cpu") s, exit $rc)" \
	awk -v s="$(cat "$T/cpu")" -v rc="$rc" 'BEGIN { exit !(rc == 0 && s + 0 < 10) }'
# Byte figures past 64 bits saturate at 18446744073709551615 ("that many or more"), never wrap:
# two blocks of 2^64 - 1 bytes, a calloc of 2^64 bytes, two of 16. The sums once wrapped (final
# live bytes 29, leaks 30) while the peak stayed at the first block. Freeing the three large
# blocks brings the figures back to exact.
printf '1 1 malloc(18446744073709551615)=0x1000\n1 1 malloc(18446744073709551615)=0x2000\n1 1 calloc(4294967296,4294967296)=0x3000\n1 1 malloc(16)=0x4000\n1 1 malloc(16)=0x5000\n' >"$T/sat.log"
run_cmd "$R" summary --bytes "$T/sat.log"
check_eq "saturated sums: summary --bytes" "$(grep 'live bytes' "$T/out")" \
	"peak live bytes: 18446744073709551615 in 5 blocks
final live bytes: 18446744073709551615 in 5 blocks" "$(cat "$T/err")"
run_cmd "$R" summary "$T/sat.log"
check_eq "saturated sums: summary in units (EiB, the last unit)" "$(grep 'live bytes' "$T/out")" \
	"peak live bytes: 15.9 EiB in 5 blocks
final live bytes: 15.9 EiB in 5 blocks" "$(cat "$T/err")"
run_cmd "$R" leaks --bytes "$T/sat.log"
# growth is signed and clamped at 2^63 - 1; calloc's block came after the sample at 2 events
check_eq "saturated sums: leaks --bytes" "$(cat "$T/out")" \
	"live at the end: 18446744073709551615 bytes in 5 blocks, 2 sites; growth since 2 events, of 5 events
       bytes   blocks       growth       mean age  kind     site
18446744073709551615        1 +9223372036854775807           3 ev  growing  calloc
18446744073709551615        4           +0           3 ev  steady   malloc" "$(cat "$T/err")"
run_cmd "$R" leaks "$T/sat.log"
check_eq "saturated sums: leaks in units, in their columns (2^63 - 1 is 7.9 EiB)" "$(cat "$T/out")" \
	"live at the end: 15.9 EiB in 5 blocks, 2 sites; growth since 2 events, of 5 events
       bytes   blocks       growth       mean age  kind     site
    15.9 EiB        1     +7.9 EiB           3 ev  growing  calloc
    15.9 EiB        4         +0 B           3 ev  steady   malloc" "$(cat "$T/err")"
printf '1 1 free(0x1000)\n1 1 free(0x2000)\n1 1 free(0x3000)\n' >>"$T/sat.log"
run_cmd "$R" summary --json "$T/sat.log"
check "saturated sums: exact again once the large blocks are freed" \
	grep -q '"peak_live_bytes":18446744073709551615,"peak_live_blocks":5,.*"final_live_bytes":32,"final_live_blocks":2,' "$T/out"
# A library without a build-id (--build-id=none): named while its file is the one traced
# (unchanged since the trace began); rebuilt differently at the same path, it is reported once
# and its frames are unwind_chain_lib.so+0x..., never the new file's names.
mkdir -p "$T/nb"
cp "$FX/unwind_chain" "$T/nb/"
nobid_lib() {
	cc -O2 -g -shared -fPIC -DUNWIND_CHAIN_LIBRARY -Wl,--build-id=none \
		-Wl,-soname,unwind_chain_lib.so -o "$T/nb/unwind_chain_lib.so" "$@"
}
nobid_lib tests/fixtures/unwind_chain.c
check "no build-id: the library has no GNU build-id note" \
	bash -c "! readelf -n '$T/nb/unwind_chain_lib.so' | grep -q 'Build ID'"
traced nobid "$T/nb/unwind_chain" 2
run_cmd "$R" export --folded "$T/nobid.atz"
check "no build-id, unchanged: no problem reported, its frames named" \
	bash -c "[ $rc -eq 0 ] && [ ! -s '$T/err' ] && grep -q ';main;chain_outer;chain_middle;chain_inner;chain_leaf;malloc 2\$' '$T/out'"
# the rebuild puts a function of its own first: the library's code moves
printf 'int moved_by_the_rebuild(int x)\n{\n\treturn x * x + (x >> 3) - 7 * (x & 5);\n}\nint moved_too(int x)\n{\n\treturn moved_by_the_rebuild(x) * 3 + moved_by_the_rebuild(x + 1);\n}\n' >"$T/moved.c"
nobid_lib -O0 "$T/moved.c" tests/fixtures/unwind_chain.c
run_cmd "$R" export --folded "$T/nobid.atz"
check_eq "no build-id, rebuilt at its path: reported once, naming the change's time" \
	"$(grep -c "^alloctap-report: $T/nb/unwind_chain_lib.so: no build-id, and the file changed at 20[0-9-]* [0-9:.]* UTC, after the trace began (20[0-9-]* [0-9:.]* UTC): it may not be the one traced; its frames are shown as unwind_chain_lib.so+0xOFFSET\$" "$T/err"):$(wc -l <"$T/err")" "1:1"
check "no build-id, rebuilt: its frames as unwind_chain_lib.so+0x..., not the new file's names" \
	bash -c "grep -q ';main;chain_outer;unwind_chain_lib.so+0x[0-9a-f]*;unwind_chain_lib.so+0x[0-9a-f]*;chain_leaf;malloc 2\$' '$T/out' && ! grep -q 'chain_middle\|chain_inner' '$T/out'"

# Too few file descriptors: an object or its debug file that cannot be opened for want of
# descriptors is said, naming the limit; never are names silently fewer. The program is
# stripped, its debug file under a --debug-dir of ours (chain_leaf, static, is named only from
# it). For each limit, every frame of the output is one of the full run's, or OBJECT+0x... of
# an object a warning names with "(a limit of this process, not a fault of the object)".
mkdir -p "$T/sd"
cp "$FX/unwind_chain" "$FX/unwind_chain_lib.so" "$T/sd/"
bid=$(readelf -n "$T/sd/unwind_chain" | sed -n 's/^ *Build ID: *//p')
mkdir -p "$T/dbg/.build-id/${bid:0:2}"
objcopy --only-keep-debug "$T/sd/unwind_chain" "$T/dbg/.build-id/${bid:0:2}/${bid:2}.debug"
strip --strip-all "$T/sd/unwind_chain"
traced stripped "$T/sd/unwind_chain" 2
run_cmd "$R" export --folded --debug-dir "$T/dbg" "$T/stripped.atz"
cp "$T/out" "$T/stripped.full"
# (libc's debug file is not under that --debug-dir: its unnamed frames are said, no problem)
check "stripped program, its debug file by build-id: chain_leaf named, no problem" \
	bash -c "[ -n '$bid' ] && [ $rc -eq 0 ] && ! grep -v '^alloctap-report: [^ ]*/libc.so.6: [0-9]* frames\\? left unnamed (libc.so.6+0xOFFSET): ' '$T/err' && grep -q ';main;chain_outer;chain_middle;chain_inner;chain_leaf;malloc 2\$' '$T/stripped.full'"
# limited FULL OPTION VALUE REPORT-ARGS...: the report under ulimit OPTION VALUE; prints what
# is wrong, nothing when all is right: it failed with an error said, or every frame is one of
# the full run's (FULL) or an offset of an object said to be unreadable for want of resources.
limited() {
	local full=$1 opt=$2 value=$3
	shift 3
	(ulimit "$opt" "$value" && exec "$R" export --folded "$@") >"$T/lim.out" 2>"$T/lim.err"
	local st=$?
	[ $st -ne 0 ] && { [ -s "$T/lim.err" ] || echo "exit $st, no message"; } && return
	python3 - "$full" "$T/lim.out" "$T/lim.err" <<'PY'
import sys, re
full = {f for line in open(sys.argv[1]) for f in line.rsplit(' ', 1)[0].split(';')}
said = set()
for line in open(sys.argv[3]):
    m = re.match(r'alloctap-report: .*/([^/]*): .*a limit of this process, not a fault of the object\); its frames are shown as (.*)\+0xOFFSET$', line)
    if m:
        said.add(m.group(2))
for line in open(sys.argv[2]):
    for f in line.rsplit(' ', 1)[0].split(';'):
        if f not in full and not any(f.startswith(o + '+0x') for o in said):
            print('frame %s: not in the full run, its object not said' % f)
            sys.exit(0)
PY
}
limits_ok=""
for n in 4 5 6 7 8 9 10 11 12 16; do
	why=$(limited "$T/stripped.full" -n $n --debug-dir "$T/dbg" "$T/stripped.atz")
	[ -z "$why" ] || limits_ok="$limits_ok ulimit -n $n: $why;"
done
check_eq "too few descriptors: never fewer names silently, at every limit from 4 to 16" "$limits_ok" ""
# The same with too little memory (address space from 30 to 60 MB), on the chain's trace with
# the system's debug files: libc's (libc6-dbg), compressed, is what runs short. libdw reports
# its want of memory as "invalid DWARF", or exits with its own message.
run_cmd "$R" export --folded "$T/chain.atz"
cp "$T/out" "$T/chain.full"
limits_ok=""
for ((kb = 30000; kb <= 60000; kb += 1000)); do
	why=$(limited "$T/chain.full" -v $kb "$T/chain.atz")
	[ -z "$why" ] || limits_ok="$limits_ok ulimit -v $kb: $why;"
done
check_eq "too little memory: never other names silently, at every limit from 30 to 60 MB" "$limits_ok" ""

# A folder whose name holds terminal escapes (ESC [31m, ESC ]0;...BEL): the daemon's -v lines
# and the report's warning name it escaped (\x1b), and no raw control byte reaches stderr.
E="$T/esc"$'\033[31m\033]0;title\a'
mkdir -p "$E"
cp "$FX/unwind_chain" "$FX/unwind_chain_lib.so" "$E/"
if "$D" -v --stacks -f binary -o "$T/esc.atz" -- "$E/unwind_chain" 1 >/dev/null 2>"$T/esc.err"; then
	ok "escapes in a path: traced with -v"
else
	fail "escapes in a path: traced with -v" "$(tail -n 5 "$T/esc.err" | cat -v)"
fi
check "escapes in a path: alloctapd -v names it escaped, no control byte" bash -c \
	"grep -qF 'launched $T/esc\\x1b[31m\\x1b]0;title\\x07/unwind_chain as pid' '$T/esc.err' &&
	 ! LC_ALL=C grep -q '[[:cntrl:]]' '$T/esc.err'"
rm -f "$E/unwind_chain_lib.so"
run_cmd "$R" export --folded "$T/esc.atz"
check_eq "escapes in a path: the report's warning names it escaped, no control byte" \
	"$rc $(grep -cxF "alloctap-report: $T/esc\x1b[31m\x1b]0;title\x07/unwind_chain_lib.so: cannot open: No such file or directory; its frames are shown as unwind_chain_lib.so+0xOFFSET" "$T/err") $(LC_ALL=C grep -c '[[:cntrl:]]' "$T/err")" \
	"0 1 0"

# C++: frames named from DWARF carry their qualified names, as the symbol table's demangled
# ("std::vector<int, std::allocator<int> >::push_back(int const&)", not "push_back"), inlined
# ones too. The expected lines are llvm-symbolizer's, for every pc of every stack (atz_tool's
# listings; a return address looked up at pc - 1), the leaf named after the event.
need_built build/bench/atz_tool "$FX/cxx_sites"
traced cxx "$FX/cxx_sites" 4
build/bench/atz_tool stacks "$T/cxx.atz" >"$T/cxx.stacks"
build/bench/atz_tool mappings "$T/cxx.atz" >"$T/cxx.mappings"
check "cxx: llvm-symbolizer's names for every stack" bash -c \
	"python3 - '$FX/cxx_sites' '$T/cxx.stacks' '$T/cxx.mappings' >'$T/want_cxx' <<'PY'
import sys, subprocess, collections
binary, stacks_file, maps_file = sys.argv[1:4]
loads = []  # (file offset, virtual address, file size) of each PT_LOAD
for line in subprocess.run(['readelf', '-lW', binary], capture_output=True, text=True,
                           check=True).stdout.splitlines():
    f = line.split()
    if f and f[0] == 'LOAD':
        loads.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
maps = []
for line in open(maps_file):
    pid, rng, off, bid, path = line.split()
    start, end = (int(x, 16) for x in rng.split('-'))
    maps.append((start, end, int(off, 16), path))
def vaddr(pc):
    for start, end, off, path in reversed(maps):
        if start <= pc < end:
            assert path.endswith('/cxx_sites'), 'pc %x in %s' % (pc, path)
            o = pc - start + off
            for lo, va, size in loads:
                if lo <= o < lo + size:
                    return o - lo + va
    raise AssertionError('pc %x in no mapping of the program' % pc)
stacks = [line.split() for line in open(stacks_file)]
addrs = sorted({vaddr(int(pc, 16)) - 1 for s in stacks for pc in s[3:]})
out = subprocess.run(['llvm-symbolizer', '--obj=' + binary, '--inlining', '--demangle']
                     + ['0x%x' % a for a in addrs], capture_output=True, text=True,
                     check=True).stdout.split('\n\n')
assert len(out) >= len(addrs), 'llvm-symbolizer: %d answers, %d addresses' % (len(out), len(addrs))
chains = {a: block.strip('\n').split('\n')[0::2] for a, block in zip(addrs, out)}
weights = collections.Counter()
for func, flags, *pcs in stacks:
    frames = []
    for pc in reversed(pcs[1:]):
        frames += reversed(chains[vaddr(int(pc, 16)) - 1])
    root = {'complete': [], 'incomplete': ['[incomplete]'], 'truncated': ['[truncated]']}[flags]
    weights[';'.join(root + frames + [func])] += 1
for stack in sorted(weights, key=lambda s: s.encode()):
    print(stack, weights[stack])
PY"
run_cmd "$R" export --folded "$T/cxx.atz"
check_file_eq "cxx: exact folded lines, every frame named as llvm-symbolizer names it" \
	"$T/out" "$T/want_cxx"
check_eq "cxx: the containers' allocations apart: vector, list<long>, list<double>, map" \
	"$(grep -c ';std::__new_allocator<int>::allocate(unsigned long, void const\*);operator new(unsigned long);malloc 3$' "$T/out"):$(grep -c ';std::__cxx11::list<long, std::allocator<long> >::push_back(long&&);' "$T/out"):$(grep -c ';std::__cxx11::list<double, std::allocator<double> >::push_back(double&&);' "$T/out"):$(grep -c ';main;(anonymous namespace)::index_of(int);std::map<int, long, ' "$T/out")" \
	"1:1:1:1"
folded_ok "cxx" "$T/out"

# pprof: a location where functions were inlined has a line per function, inlined ones first,
# each with its file and line: for every location of the program's own code, the chain
# llvm-symbolizer gives at its return address less one (names, files' base names, lines)
if command -v go >/dev/null; then
	run_cmd "$R" export --pprof -o "$T/cxx.pb.gz" "$T/cxx.atz"
	HOME=$T go tool pprof -raw "$T/cxx.pb.gz" >"$T/cxx.raw" 2>&1
	check "cxx: pprof's locations, each line of an inline chain as llvm-symbolizer gives it" \
		python3 - "$FX/cxx_sites" "$T/cxx.raw" <<'PY'
import os, re, subprocess, sys
binary, raw = os.path.realpath(sys.argv[1]), open(sys.argv[2]).read()
maps = {m[0]: (int(m[1], 16), int(m[2], 16)) for m in re.findall(
    r"^(\d+): 0x([0-9a-f]+)/0x[0-9a-f]+/0x([0-9a-f]+) " + re.escape(binary) + " ", raw, re.M)}
assert len(maps) == 1, 'the program is one mapping: %r' % maps
loads = [(int(f[1], 16), int(f[2], 16), int(f[4], 16)) for f in
         (l.split() for l in subprocess.run(['readelf', '-lW', binary], capture_output=True,
                                            text=True, check=True).stdout.splitlines())
         if f and f[0] == 'LOAD']
line_re = re.compile(r"^ +(?:\d+: 0x([0-9a-f]+) M=(\d+) )?(.*?) (\S*):(\d+) s=\d+(?:\((.*)\))?$")
locs, cur = [], None
for line in raw.split('\n'):
    m = line_re.match(line)
    if not m:
        cur = None
        continue
    addr, mid, short, path, lineno, full = m.groups()
    if addr is not None:
        cur = None
        if mid in maps:
            cur = {'addr': int(addr, 16), 'lines': []}
            locs.append(cur)
    if cur is not None:
        cur['lines'].append((full or short, path.rsplit('/', 1)[-1], int(lineno)))
named = [l for l in locs if all(p for _, p, _ in l['lines'])]
assert len(named) >= 5 and any(len(l['lines']) > 3 for l in named), 'few inline chains: %r' % named
(start, off), = maps.values()
def vaddr(pc):
    o = pc - start + off
    return next(o - lo + va for lo, va, size in loads if lo <= o < lo + size)
out = subprocess.run(['llvm-symbolizer', '--obj=' + binary, '--inlining', '--demangle'] +
                     ['0x%x' % (vaddr(l['addr']) - 1) for l in named], capture_output=True,
                     text=True, check=True).stdout.strip('\n').split('\n\n')
for l, block in zip(named, out):
    b = block.split('\n')
    want = [(b[i], b[i + 1].split(':')[0].rsplit('/', 1)[-1], int(b[i + 1].split(':')[1]))
            for i in range(0, len(b), 2)]
    assert l['lines'] == want, '0x%x: %r, llvm-symbolizer %r' % (l['addr'], l['lines'], want)
print(len(named), 'locations')
PY
else
	fail "cxx: pprof's inline chains" "go is not installed (make deps installs golang-go)"
fi

# Recursion 200 deep: allocate(32) at depth 0 and allocate(d) in recurse(d) for d = 8, 16,
# ..., 200. A stack of main, d' = 201 - d recurse frames, allocate and malloc, plus the C
# library's frames above main, has more than 128 frames for d <= 72: those ten are cut to
# [truncated], 126 recurse frames, allocate, malloc, and make one line.
traced deep "$FX/unwind_recursion" 200
run_cmd "$R" export --folded --weight alloc-bytes "$T/deep.atz"
folded_ok "recursion" "$T/out"
rprefix=$(grep -m1 ';main;' "$T/out" | sed 's/;main;.*//')
{
	printf '[truncated]'
	for ((i = 0; i < 126; i++)); do printf ';recurse'; done
	printf ';allocate;malloc 392\n'
	for ((d = 80; d <= 200; d += 8)); do
		printf '%s;main' "$rprefix"
		for ((i = 0; i < 201 - d; i++)); do printf ';recurse'; done
		printf ';allocate;malloc %d\n' "$d"
	done
} | LC_ALL=C sort >"$T/want_deep"
check_file_eq "recursion: exact folded lines by bytes, truncated ones as one" "$T/out" "$T/want_deep"

finish
