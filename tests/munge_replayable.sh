#!/usr/bin/env bash
# munge_replayable.sh: what alloctap-munge writes without a complaint, alloctap-replay reads.
#
# Thousands of generated logs are munged to text and to binary, with and without --strict:
# random events as test_munge_munge.c makes them, valid lines with bytes changed and random
# text as test_lib_source.c makes them, coherent logs that munge without a drop, all with the
# odd spellings the reference accepts (spaces, signs, hex, leading zeros, missing results,
# CRs), and munged logs with slots past a replay's, kept as they are with --keep-pointers.
# Each output of a munge that exits 0 without a "not replayable" warning must replay without
# an error; --strict never exits 0 with one; and every outcome (clean, warned, refused) must
# happen often enough to mean something. MUNGE_REPLAYABLE_LOGS sets how many logs (2000).
source "$(dirname "$0")/lib.sh"
M=$ROOT/build/alloctap-munge
R=$ROOT/build/alloctap-replay
need_built "$M" "$R"
LOGS=${MUNGE_REPLAYABLE_LOGS:-2000}

mkdir "$T/logs"
python3 - "$T/logs" "$LOGS" <<'EOF'
import random, sys

out, count = sys.argv[1], int(sys.argv[2])
rng = random.Random(20240611)
FUNCS = [("malloc", 1), ("calloc", 2), ("realloc", 2), ("free", 1), ("memalign", 2),
         ("posix_memalign", 2), ("aligned_alloc", 2), ("valloc", 1), ("jemalloc_stats", 0)]
POOL = [0x10, 0x20, 0x30, 0x40, 0x7f0000001000, 0x7f0000002000, 0x55aa00, 0x55bb00, 0x1,
        0xffffffffffffffff, 0x8000000000000000, 0x123456789abc, 0x60, 0x70, 0x80, 0x90, 0xa0,
        0xb0, 0xc0, 0xd0, 0xe0, 0xf0, 0x100, 0x110]
ALPHABET = "0123456789abcdefx#(),= \r\n\t-+mallocfreJ_"
PIECES = ["1 2 ", "malloc(", "free(", "realloc(", "calloc(", "0x", "#", ",", ")", "=",
          "=0x1f", "\n", "\r\n", "jemalloc_stats()", "18446744073709551616"]

def size():
    return rng.getrandbits(64) if rng.random() < 0.2 else rng.randrange(4096)

def spell(n):
    """A size as the reference copies it: usually plain, sometimes odd."""
    r = rng.random()
    if r < 0.90:
        return str(n)
    return rng.choice([" %d" % n, "%d " % n, "+%d" % n, "0%d" % n, "0x%x" % n, "-%d" % n,
                       "", "%d0000000000000000000000" % n, "%d\t" % n])

def event_line(pids):
    """A raw line like test_munge_munge.c's random_event, its sizes now and then odd."""
    pid = rng.choice(pids)
    tid = pid + rng.randrange(4)
    name, nargs = rng.choice(FUNCS)
    args = [spell(size()) for _ in range(nargs)]
    if name in ("free", "realloc"):
        args[0] = "0x0" if rng.random() < 0.1 else "0x%x" % rng.choice(POOL)
    returns = name not in ("free", "jemalloc_stats")
    has_result = rng.random() >= 0.05 if returns else rng.random() < 0.03
    line = "%d %d %s(%s)" % (pid, tid, name, ",".join(args))
    if has_result:
        line += "=0x%x" % (0 if rng.random() < 0.04 else rng.choice(POOL))
    return line

def mutated(line):
    """A valid line with one byte changed, as test_lib_source.c does."""
    if not line or rng.random() >= 0.25:
        return line
    k = rng.randrange(len(line))
    return line[:k] + rng.choice(ALPHABET) + line[k + 1:]

def coherent_lines():
    """A log that munges without a drop (allocations of fresh addresses, frees and reallocs of
    live ones), now and then an odd spelling or a missing result."""
    live, lines, nxt = [], [], 0x1000
    odd = rng.random() < 0.5
    for _ in range(rng.randrange(5, 80)):
        tid = 100 + rng.randrange(3)
        r = rng.random()
        if live and r < 0.35:
            p = live.pop(rng.randrange(len(live)))
            lines.append("100 %d free(0x%x)" % (tid, p))
        elif live and r < 0.5:
            p = live.pop(rng.randrange(len(live)))
            nxt += 0x40
            lines.append("100 %d realloc(0x%x,%s)=0x%x" % (tid, p, spell(size()) if odd else size(), nxt))
            live.append(nxt)
        elif r < 0.55:
            lines.append("100 %d jemalloc_stats()" % tid)
        else:
            name, nargs = rng.choice([f for f in FUNCS if f[0] not in ("free", "realloc", "jemalloc_stats")])
            nxt += 0x40
            args = ",".join(spell(size()) if odd else str(size()) for _ in range(nargs))
            if odd and rng.random() < 0.05:
                lines.append("100 %d %s(%s)" % (tid, name, args))
            else:
                lines.append("100 %d %s(%s)=0x%x" % (tid, name, args, nxt))
                live.append(nxt)
    return lines

def munged_lines():
    """A munged log (for --keep-pointers): slots now and then past the last a replay has,
    now and then an allocation without a result."""
    lines = []
    for _ in range(rng.randrange(3, 40)):
        name, nargs = rng.choice(FUNCS)
        slot = lambda: rng.choice([rng.randrange(1, 50), (1 << 28) - 1, 1 << 28, rng.getrandbits(40)]) \
            if rng.random() < 0.1 else rng.randrange(1, 50)
        args = [str(size()) for _ in range(nargs)]
        if name in ("free", "realloc"):
            args[0] = "#%d" % slot()
        line = "1 %d %s(%s)" % (rng.randrange(1, 3), name, ",".join(args))
        if name not in ("free", "jemalloc_stats") and rng.random() >= 0.03:
            line += "=#%d" % slot()
        lines.append(line)
    return lines

def random_text():
    s = []
    n = rng.randrange(1, 300)
    while sum(map(len, s)) < n:
        s.append(rng.choice(ALPHABET) if rng.random() < 0.5 else rng.choice(PIECES))
    return "".join(s)

for i in range(count):
    kind = i % 7
    name = "%s/%05d.log" % (out, i)
    if kind == 6:
        text = "\n".join(munged_lines()) + "\n"
        name = "%s/%05d.mlog" % (out, i)
    elif kind == 5:
        text = random_text()
    else:
        if kind < 2:
            lines = coherent_lines()
        else:
            pids = [100] if kind < 4 else [100, 101, 102]
            lines = [event_line(pids) for _ in range(rng.randrange(5, 60))]
        if kind == 3:
            lines = [mutated(l) for l in lines]
        end = "\r\n" if rng.random() < 0.1 else "\n"
        text = end.join(lines) + end
    with open(name, "w", newline="") as f:
        f.write(text)
EOF

# Runs one munge ($1: --format, $2: --strict or "") of log $3 (a munged *.mlog with
# --keep-pointers) and replays what it wrote when it exited 0 without a warning. Sets result to
# "clean", "refused" (exit 1), "warned" (exit 0 with a warning) or "BAD ..." when the property
# breaks. (No subshells: thousands of runs.)
munge_and_replay() {
	local fmt=$1 strict=$2 log=$3 out=$T/out.$1 keep= err=
	[[ $log == *.mlog ]] && keep=--keep-pointers
	if ! "$M" -q $strict $keep --format "$fmt" "$log" -o "$out" 2>"$T/munge.err"; then
		result=refused
		return
	fi
	IFS= read -r -d '' err <"$T/munge.err"
	if [[ $err == *"not replayable"* ]]; then
		result=warned
		[ -n "$strict" ] && result="BAD --strict exited 0 with a warning: $err"
	elif ! "$R" -q "$out" >/dev/null 2>"$T/replay.err"; then
		IFS= read -r -d '' err <"$T/replay.err"
		result="BAD munge $strict --format $fmt exited 0 without a complaint, then replay: $err"
	else
		result=clean
	fi
}

declare -A seen
bad=0
first_bad=
for log in "$T"/logs/*; do
	for fmt in text binary; do
		for strict in "" --strict; do
			munge_and_replay $fmt "$strict" "$log"
			seen["$fmt$strict ${result%% *}"]=$((${seen["$fmt$strict ${result%% *}"]:-0} + 1))
			if [[ $result == BAD* ]]; then
				bad=$((bad + 1))
				[ -z "$first_bad" ] && first_bad="$log: $result"$'\n'"$(head -c 600 "$log")"
			fi
		done
	done
done
if [ $bad -eq 0 ]; then
	ok "$LOGS generated logs: every munge output written without a complaint replays"
else
	fail "$LOGS generated logs: every munge output written without a complaint replays" \
		"$bad runs broke it; the first:" "$first_bad"
fi
for fmt in text binary; do
	check "--format $fmt: some munges were clean (${seen["$fmt clean"]:-0}, --strict ${seen["$fmt--strict clean"]:-0}), some refused by --strict (${seen["$fmt--strict refused"]:-0})" \
		test "${seen["$fmt clean"]:-0}" -gt $((LOGS / 10)) -a "${seen["$fmt--strict clean"]:-0}" -gt $((LOGS / 10)) -a "${seen["$fmt--strict refused"]:-0}" -gt $((LOGS / 10))
done
check "text: lines written with a warning were there (${seen["text warned"]:-0})" \
	test "${seen["text warned"]:-0}" -gt $((LOGS / 20))
check "binary: events written with a warning were there (${seen["binary warned"]:-0})" \
	test "${seen["binary warned"]:-0}" -gt $((LOGS / 20))
finish
