#!/usr/bin/env python3
"""filter_log.py: the calls of a raw logalloc log that alloctapd --min-size N records.

Usage: filter_log.py --min-size N LOG > FILTERED

The rule (doc/DESIGN.md, "Filtered traces"), applied here to the LD_PRELOAD oracle's log so that
tests/daemon_filter.sh can compare alloctapd's filtered trace with it call for call:

- an allocation (malloc, calloc, memalign, posix_memalign, aligned_alloc, valloc) is kept when
  its size as the log writes it (calloc's n*size, saturated to 2^64 - 1) is at least N; its
  block, when it got one, is then known;
- free(p) is kept when p is a known block, which it ends;
- realloc(p, n)=q is kept when p is a known block or n is at least N; p then ends unless the
  call failed (q is 0 and n is not), and q, when not 0, is known.

Blocks are known per process (pid): a child made by fork does not know its parent's blocks.

Whether a block is known depends on the other threads' calls before, in the order the calls
ran. The oracle writes each thread's lines in buffers, so the file is in that order thread by
thread only; with ORACLE_SEQ=1 its lines carry the numbers that give it back ("ENTRY EFFECT PID
TID ..."), and the rule is applied in their order, each part of a call at the moment alloctapd's
program applies it: a free's block ends at its entry, an allocation's block is known at its
return, a realloc's old block ends at its entry (and is known again at its return when the
call failed) and its new one is known at its return. A log without the numbers is taken in file
order. The lines are written without the numbers, in file order.
"""
import re
import sys

LINE = re.compile(r"^(?:(\d+) (\d+) )?((\d+) (\d+) ([a-z_]+)\(([^)]*)\)(?:=(0x[0-9a-f]+))?)$")
ALLOCS = {"malloc", "calloc", "memalign", "posix_memalign", "aligned_alloc", "valloc"}
U64 = (1 << 64) - 1


def size_of(func, args):
    """The bytes an allocation line asks for."""
    if func == "calloc":
        return min(args[0] * args[1], U64)
    return args[-1]


class Call:
    """One line: its call's parts, and whether the filter keeps it."""

    def __init__(self, line):
        m = LINE.match(line)
        if not m:
            raise ValueError("not a raw logalloc line: %r" % line[:80])
        self.text = m.group(3)
        self.pid, self.func = int(m.group(4)), m.group(6)
        self.args = [int(a, 0) for a in m.group(7).split(",") if a]
        self.result = int(m.group(8), 16) if m.group(8) else 0
        self.numbered = m.group(1) is not None
        self.entry = int(m.group(1)) if self.numbered else 0
        self.effect = int(m.group(2)) if self.numbered else 0
        self.kept = False
        self.old_known = False


def at_entry(call, min_size, known):
    """The part of call alloctapd's program applies at its entry: the decision for a free or a
    realloc, and the end of the old block."""
    blocks = known.setdefault(call.pid, set())
    if call.func == "free":
        call.kept = call.args[0] in blocks
        blocks.discard(call.args[0])
    elif call.func == "realloc":
        old, size = call.args
        call.old_known = old != 0 and old in blocks
        call.kept = call.old_known or size >= min_size
        blocks.discard(old)


def at_return(call, min_size, known):
    """The part applied at its return: the decision for an allocation, the new block known."""
    blocks = known.setdefault(call.pid, set())
    if call.func in ALLOCS:
        call.kept = size_of(call.func, call.args) >= min_size
        if call.kept and call.result:
            blocks.add(call.result)
    elif call.func == "realloc" and call.kept:
        old, size = call.args
        if call.result:
            blocks.add(call.result)
        elif call.old_known and size:
            blocks.add(old)  # it failed: the old block stays


def main(argv):
    if len(argv) != 4 or argv[1] != "--min-size":
        sys.stderr.write("usage: filter_log.py --min-size N LOG\n")
        return 2
    min_size, known = int(argv[2]), {}
    with open(argv[3], encoding="ascii") as f:
        calls = [Call(raw.rstrip("\n")) for raw in f]
    if any(c.numbered != calls[0].numbered for c in calls):
        sys.stderr.write("filter_log.py: %s: some lines numbered, some not\n" % argv[3])
        return 1
    steps = []
    for i, c in enumerate(calls):
        steps.append((c.entry, 0, i, at_entry))
        steps.append((c.effect, 1, i, at_return))
    if not calls or not calls[0].numbered:
        steps.sort(key=lambda s: (s[2], s[1]))  # file order: each call's entry, then return
    else:
        steps.sort(key=lambda s: (s[0], s[1]))
    for _, _, i, part in steps:
        part(calls[i], min_size, known)
    for c in calls:
        if c.kept:
            sys.stdout.write(c.text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
