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
"""
import re
import sys

LINE = re.compile(r"^(\d+) (\d+) ([a-z_]+)\(([^)]*)\)(?:=(0x[0-9a-f]+))?$")
ALLOCS = {"malloc", "calloc", "memalign", "posix_memalign", "aligned_alloc", "valloc"}
U64 = (1 << 64) - 1


def size_of(func, args):
    """The bytes an allocation line asks for."""
    if func == "calloc":
        return min(args[0] * args[1], U64)
    return args[-1]


def keep(line, min_size, known):
    """Whether alloctapd --min-size min_size records this line; updates known."""
    m = LINE.match(line)
    if not m:
        raise ValueError("not a raw logalloc line: %r" % line[:80])
    pid, func = int(m.group(1)), m.group(3)
    args = [int(a, 0) for a in m.group(4).split(",") if a]
    result = int(m.group(5), 16) if m.group(5) else 0
    blocks = known.setdefault(pid, set())
    if func in ALLOCS:
        if size_of(func, args) < min_size:
            return False
        if result:
            blocks.add(result)
        return True
    if func == "free":
        if args[0] in blocks:
            blocks.discard(args[0])
            return True
        return False
    if func == "realloc":
        old, size = args
        old_known = old != 0 and old in blocks
        if not old_known and size < min_size:
            return False
        if old_known and (result or not size):
            blocks.discard(old)
        if result:
            blocks.add(result)
        return True
    return False  # a marker (jemalloc_stats) is no call


def main(argv):
    if len(argv) != 4 or argv[1] != "--min-size":
        sys.stderr.write("usage: filter_log.py --min-size N LOG\n")
        return 2
    min_size, known = int(argv[2]), {}
    with open(argv[3], encoding="ascii") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if keep(line, min_size, known):
                sys.stdout.write(line + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
