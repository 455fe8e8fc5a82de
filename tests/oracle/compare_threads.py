#!/usr/bin/env python3
"""compare_threads.py: compares, thread by thread, two logalloc raw logs of the same run.

Usage: compare_threads.py [--name NAME] [--context N] TRACED_LOG ORACLE_LOG

TRACED_LOG is alloctapd's log, ORACLE_LOG the preload tracer's. Both recorded the same
processes, so pids and tids are the same in both. Each log is split by (pid, tid); each thread's
sequence of calls (function, arguments, result) must be identical, in order.

Prints one summary line ("NAME: N calls compared (traced T, oracle O), P processes, H threads,
M mismatching threads"); then the lines only one log has, counted by class: where they are
(whole processes or threads, a thread's start, inside a thread, a thread's end) and, for frees
only in the traced log, what they free as far as the lines common to both logs tell: a live
block, a block the program had freed (a double free to any checker) or one it never received;
then each mismatching thread's first differing line with context and its runs of such lines.
Exit status 0 when every thread is identical, 1 when not, 2 on a usage or input error.
"""
import collections
import difflib
import re
import sys

LINE = re.compile(r"^(\d+) (\d+) ([a-z_]+)\(([^)]*)\)(?:=(0x[0-9a-f]+))?$")
DIFF_LIMIT = 60000  # beyond this many differing lines per side, counts only
PLACE = {"start": "at a thread's start", "middle": "inside a thread", "end": "at a thread's end"}


def read_log(path):
    """Returns {(pid, tid): [line, ...]} and the list of (key, line) in file order."""
    threads = collections.OrderedDict()
    order = []
    with open(path, encoding="ascii", errors="replace") as f:
        for n, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            m = LINE.match(line)
            if not m:
                raise ValueError("%s:%d: not a raw logalloc line: %r" % (path, n, line[:80]))
            key = (int(m.group(1)), int(m.group(2)))
            threads.setdefault(key, []).append(line)
            order.append((key, line))
    return threads, order


def common_prefix(a, b):
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def common_suffix(a, b, start):
    n = min(len(a), len(b)) - start
    i = 0
    while i < n and a[-1 - i] == b[-1 - i]:
        i += 1
    return i


def runs(a, b):
    """Runs of lines in a only and in b only: [(side, a_index, b_index, lines)]; side is
    'traced' or 'oracle'; None when the middle is too large to align."""
    p = common_prefix(a, b)
    s = common_suffix(a, b, p)
    ma, mb = a[p:len(a) - s], b[p:len(b) - s]
    if not ma and not mb:
        return []
    if len(ma) > DIFF_LIMIT or len(mb) > DIFF_LIMIT:
        return None
    out = []
    sm = difflib.SequenceMatcher(None, ma, mb, autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op in ("delete", "replace"):
            out.append(("traced", p + i1, p + j1, ma[i1:i2]))
        if op in ("insert", "replace"):
            out.append(("oracle", p + i1, p + j1, mb[j1:j2]))
    return out


def func_of(line):
    return LINE.match(line).group(3)


def arg0_of(line):
    return LINE.match(line).group(4).split(",")[0]


def result_of(line):
    return LINE.match(line).group(5)


def classify_extra_frees(order, extra):
    """For the traced log in file order: what each extra line in `extra` (file-order indexes)
    that is a free frees, judged by the lines common to both logs before it: "a live block",
    "a block the program had freed" or "a block the program never received".
    Returns {line_index: text}."""
    live = collections.defaultdict(set)
    seen = collections.defaultdict(set)
    verdict = {}
    for idx, (key, line) in enumerate(order):
        pid = key[0]
        f = func_of(line)
        if idx in extra:
            if f == "free":
                a = arg0_of(line)
                verdict[idx] = ("a live block" if a in live[pid] else
                                "a block the program had freed" if a in seen[pid] else
                                "a block the program never received")
            continue
        if f == "free" or f == "realloc":
            live[pid].discard(arg0_of(line))
        res = result_of(line)
        if res and res != "0x0":
            live[pid].add(res)
            seen[pid].add(res)
    return verdict


def where(side, ai, bi, a, b):
    """Where a run of lines found only on `side` sits in the thread: start, middle or end."""
    other_len, other_at = (len(b), bi) if side == "traced" else (len(a), ai)
    if other_at == 0:
        return "start"
    if other_at >= other_len:
        return "end"
    return "middle"


def describe_counts(c):
    return ", ".join("%s x%d" % (f, k) for f, k in c.most_common())


def describe(lines):
    return describe_counts(collections.Counter(func_of(x) for x in lines))


def show_first_difference(key, a, b, ctx, out):
    i = common_prefix(a, b)
    out.append("  pid %d tid %d: traced %d lines, oracle %d; first difference at call %d:"
               % (key[0], key[1], len(a), len(b), i + 1))
    lo = max(0, i - ctx)
    for label, seq in (("traced", a), ("oracle", b)):
        out.append("    %s:" % label)
        for k in range(lo, min(len(seq), i + ctx + 1)):
            out.append("      %s %7d  %s" % (">" if k == i else " ", k + 1, seq[k]))
        if i >= len(seq):
            out.append("      > %7d  (end of thread)" % (i + 1))


def main(argv):
    name, ctx, files = "logs", 3, []
    it = iter(argv[1:])
    for arg in it:
        if arg == "--name":
            name = next(it, "logs")
        elif arg == "--context":
            ctx = int(next(it, "3"))
        else:
            files.append(arg)
    if len(files) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        traced, order = read_log(files[0])
        oracle, _ = read_log(files[1])
    except (OSError, ValueError) as e:
        print("compare_threads: %s" % e, file=sys.stderr)
        return 2

    keys = list(traced)
    keys += [k for k in oracle if k not in traced]
    traced_pids = {k[0] for k in traced}
    oracle_pids = {k[0] for k in oracle}
    out, mismatching = [], 0
    classes = collections.defaultdict(collections.Counter)  # (side, where, what) -> funcs
    extra_index = {}  # traced file-order index of a line only in the traced log -> (where, func)
    position = collections.defaultdict(list)
    for idx, (key, _) in enumerate(order):
        position[key].append(idx)
    for key in keys:
        a, b = traced.get(key, []), oracle.get(key, [])
        if a == b:
            continue
        mismatching += 1
        show_first_difference(key, a, b, ctx, out)
        if not a or not b:
            side = "traced" if a else "oracle"
            whole = "process" if key[0] not in (oracle_pids if a else traced_pids) else "thread"
            for line in a or b:
                classes[(side, "in whole %ses" % whole if whole == "process" else "in whole threads", "")][func_of(line)] += 1
            out.append("    the whole %s is only in the %s log (%s)" % (whole, side, describe(a or b)))
            continue
        r = runs(a, b)
        if r is None:
            out.append("    too different to align (> %d lines each side)" % DIFF_LIMIT)
            classes[("traced", "in threads too different to align", "")]["lines"] += len(a)
            continue
        for side, ai, bi, lines in r:
            w = where(side, ai, bi, a, b)
            out.append("    %d lines only in the %s log %s (call %d): %s"
                       % (len(lines), side, PLACE[w], (ai if side == "traced" else bi) + 1,
                          describe(lines)))
            for k, line in enumerate(lines):
                if side == "traced":
                    extra_index[position[key][ai + k]] = (w, func_of(line))
                else:
                    classes[("oracle", PLACE[w], "")][func_of(line)] += 1
    verdict = classify_extra_frees(order, extra_index)
    for idx, (w, f) in extra_index.items():
        what = ", frees of " + verdict[idx] if f == "free" else ""
        classes[("traced", PLACE[w], what)][f] += 1

    compared = sum(max(len(traced.get(k, [])), len(oracle.get(k, []))) for k in keys)
    print("%s: %d calls compared (traced %d, oracle %d), %d processes, %d threads, "
          "%d mismatching threads" % (name, compared, sum(map(len, traced.values())),
                                      sum(map(len, oracle.values())),
                                      len(traced_pids | oracle_pids), len(keys), mismatching))
    for (side, w, what), funcs in sorted(classes.items()):
        print("  %d lines only in the %s log, %s%s: %s"
              % (sum(funcs.values()), side, w, what, describe_counts(funcs)))
    for line in out:
        print(line)
    return 1 if mismatching else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
