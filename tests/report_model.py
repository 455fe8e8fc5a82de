#!/usr/bin/env python3
"""report_model.py: an independent model of alloctap-report's figures, for the tests.

Written from the rules in doc/man/alloctap-report.1 (not from report/*.c): it reads a raw text
log ("PID TID func(args)=result" lines, no stacks, so a site is the function name), keeps the
live blocks in dicts, and prints what a command should print, in the program's format:

  report_model.py gen SEED N                    a random log of N events on stdout
  report_model.py json LOG [--pid P] [--from K --to K] [--step NS]
                                                 summary --json of the events K..K (0-based,
                                                 inclusive) only; times null, or with --step
                                                 event k at k * NS from the first
  report_model.py leaks LOG                     leaks
  report_model.py export WEIGHT LOG             export --folded --weight WEIGHT
  report_model.py tree LOG [end] [--min-percent P]
                                                 peak (or peak --at end), frames under P%
                                                 (1) left out
  report_model.py sizes LOG                     sizes
  report_model.py timeline LOG CHURN TOP        timeline --churn CHURN --top TOP
  report_model.py diff A B                      diff
  report_model.py top W LIMIT LOG [--bytes] [--at AT --step NS]
                                                 top --by W --limit LIMIT [--bytes] [--at AT]:
                                                 AT heap-peak, end or SECONDS (event k at
                                                 k * NS from the first)
  report_model.py top-json W LIMIT LOG [--at AT --step NS]
                                                 top --by W --limit LIMIT --json [--at AT]
  report_model.py leaks-json LOG                leaks --json (a site's stack: [its function])
  report_model.py leaks-csv LOG                 leaks --csv
  report_model.py sizes-json LOG                sizes --json
  report_model.py sizes-csv LOG                 sizes --csv
  report_model.py tree-json LOG [end] [--min-percent P]
                                                 peak --json (or peak --at end --json)
  report_model.py diff-json A B                 diff --json
  report_model.py diff-csv A B                  diff --csv
  report_model.py top-csv W LIMIT LOG [--at AT --step NS]
                                                 top --by W --limit LIMIT --csv [--at AT]
  report_model.py gen-tidy SEED N               a random log whose live blocks never overlap
  report_model.py lifetimes LOG                 lifetimes --annotate
  report_model.py layout LOG                    layout --annotate

The text outputs write byte figures in binary units, as the man page says ("512 B" under
1024, then KiB ... EiB with one decimal, rounded down; a change with its sign, "+1.2 MiB");
--bytes anywhere among the arguments models the commands' --bytes: exact integers ("N" in
columns, "N bytes" in sentences, "+N" for changes). Bucket labels are exact always.

The JSON outputs are printed as json.dumps(..., sort_keys=True) writes them (the tests load
the report's and print it the same way); CSV as Python's csv module writes it (RFC 4180: a
field quoted when it holds a comma, a quote, a CR or an LF; records ended by CRLF).

The annotations follow Compact Memory Traces' description of lifetimes.py and overhead.py
(the note at column 50: "# S bytes, allocated N lines ago"; "prev P, gap G, next N, gap G,
pages [A, B], K more pages"), with pages counted one by one here.
"""
import csv
from decimal import Decimal
import json
import random
import re
import sys

U64 = (1 << 64) - 1
LINE = re.compile(r'^(\d+) (\d+) ([a-z_]+)\(([^)]*)\)(?:=(0x[0-9a-f]+|0))?$')
FUNCS = ['malloc', 'calloc', 'realloc', 'free', 'memalign', 'posix_memalign', 'aligned_alloc',
         'valloc']


def gen(seed, n):
    rnd = random.Random(seed)
    live = {}  # pid -> list of addresses
    next_addr = {1001: 0x10000, 1002: 0x20000, 1003: 0x30000}
    out = []
    for _ in range(n):
        pid = rnd.choice([1001, 1001, 1002, 1003])
        tid = pid + rnd.choice([0, 0, 1, 2])
        blocks = live.setdefault(pid, [])

        def fresh():
            if blocks and rnd.random() < 0.03:
                return rnd.choice(blocks)  # an address still live: a missed free
            next_addr[pid] += rnd.choice([16, 32, 48, 4096])
            return next_addr[pid]

        r = rnd.random()
        size = rnd.choice([0, 1, 7, 8, 24, 100, 1000, 4096, 70000, 1 << 20])
        if r < 0.30 or (r < 0.55 and not blocks):
            func = rnd.choice(['malloc', 'malloc', 'calloc', 'memalign', 'posix_memalign',
                               'aligned_alloc', 'valloc'])
            res = 0 if rnd.random() < 0.03 else fresh()
            if func == 'calloc':
                args = '%d,%d' % (rnd.choice([1, 3, 10]), size)
            elif func in ('memalign', 'posix_memalign', 'aligned_alloc'):
                args = '%d,%d' % (rnd.choice([16, 64, 4096]), size)
            else:
                args = '%d' % size
            if res and res not in blocks:
                blocks.append(res)
            out.append('%d %d %s(%s)=%s' % (pid, tid, func, args, hex(res) if res else '0'))
        elif r < 0.75:
            p = rnd.choice(blocks) if blocks and rnd.random() < 0.95 else rnd.choice([0, 0x999])
            if p in blocks:
                blocks.remove(p)
            out.append('%d %d free(%s)' % (pid, tid, hex(p) if p else '0'))
        else:
            p = rnd.choice(blocks) if blocks and rnd.random() < 0.9 else 0
            k = rnd.random()
            if k < 0.05 and p:
                out.append('%d %d realloc(%s,0)=0' % (pid, tid, hex(p)))
                blocks.remove(p)
                continue
            if k < 0.10:
                out.append('%d %d realloc(%s,%d)=0' % (pid, tid, hex(p) if p else '0', size))
                continue
            res = p if p and k < 0.3 else fresh()
            if p in blocks:
                blocks.remove(p)
            if res not in blocks:
                blocks.append(res)
            out.append('%d %d realloc(%s,%d)=%s' % (pid, tid, hex(p) if p else '0', size,
                                                    hex(res)))
    return '\n'.join(out) + '\n'


def gen_tidy(seed, n):
    """Blocks laid out one after another (16-byte aligned, sometimes a page apart), never
    reused while live; realloc in place only to shrink."""
    rnd = random.Random(seed)
    top = {1001: 0x7f0000000000, 1002: 0x7e0000000000}
    live = {1001: {}, 1002: {}}
    out = []
    for _ in range(n):
        pid = rnd.choice([1001, 1001, 1002])
        tid = pid + rnd.choice([0, 1])
        blocks = live[pid]
        size = rnd.choice([0, 1, 8, 24, 100, 1000, 4000, 4096, 9000, 70000])

        def place(size):
            a = (top[pid] + 15) & ~15
            top[pid] = a + size + rnd.choice([0, 0, 16, 4096, 3 * 4096])
            return a
        r = rnd.random()
        if r < 0.45 or not blocks:
            func = rnd.choice(['malloc', 'malloc', 'calloc', 'memalign'])
            res = place(size)
            if func == 'calloc':
                args = '1,%d' % size
            elif func == 'memalign':
                args = '16,%d' % size
            else:
                args = '%d' % size
            blocks[res] = size
            out.append('%d %d %s(%s)=%s' % (pid, tid, func, args, hex(res)))
        elif r < 0.8:
            p = rnd.choice(sorted(blocks))
            del blocks[p]
            out.append('%d %d free(%s)' % (pid, tid, hex(p)))
        else:
            p = rnd.choice(sorted(blocks))
            old = blocks.pop(p)
            if rnd.random() < 0.1:
                out.append('%d %d realloc(%s,0)=0' % (pid, tid, hex(p)))
                continue
            res = p if size <= old and rnd.random() < 0.5 else place(size)
            blocks[res] = size
            out.append('%d %d realloc(%s,%d)=%s' % (pid, tid, hex(p), size, hex(res)))
    return '\n'.join(out) + '\n'


def raw_line(pid, tid, func, args, res):
    ptr_first = func in ('free', 'realloc')
    text = ','.join(hex(a) if (k == 0 and ptr_first) else str(a) for k, a in enumerate(args))
    line = '%d %d %s(%s)' % (pid, tid, func, text)
    return line if func == 'free' else line + '=' + hex(res)


def annotated(line, note):
    if not note:
        return line
    return line + ' ' * (50 - len(line) if len(line) < 49 else 1) + '# ' + note


def annotate(events, layout):
    blocks = {}  # (pid, addr) -> (size, line)
    pages = {}   # (pid, page) -> blocks touching it
    out = []

    def span(addr, size):
        return addr >> 12, (addr + max(size, 1) - 1) >> 12

    def where(pid, addr, size):
        below = [(a, blocks[(p, a)][0]) for (p, a) in blocks if p == pid and a < addr]
        above = [a for (p, a) in blocks if p == pid and a > addr]
        w = []
        if below:
            a, sz = max(below)
            w.append('prev %s, gap %d' % (hex(a), addr - (a + sz)))
        else:
            w.append('prev none')
        if above:
            w.append('next %s, gap %d' % (hex(min(above)), min(above) - (addr + size)))
        else:
            w.append('next none')
        w.append('pages [%d, %d]' % span(addr, size))
        return ', '.join(w)

    def touch(pid, addr, size, d):
        first, last = span(addr, size)
        changed = 0
        for pg in range(first, last + 1):
            c = pages.get((pid, pg), 0) + d
            if (d > 0 and c == 1) or (d < 0 and c == 0):
                changed += 1
            if c:
                pages[(pid, pg)] = c
            else:
                pages.pop((pid, pg), None)
        return changed * d

    for line_no, (pid, tid, func, args, res) in enumerate(events, 1):
        old = None
        place = None
        delta = 0
        if func in ('free', 'realloc'):
            failed = func == 'realloc' and res == 0 and args[1] != 0
            if args[0] and not failed and (pid, args[0]) in blocks:
                size, at = blocks.pop((pid, args[0]))
                old = (size, line_no - at)
                place = where(pid, args[0], size)
                delta += touch(pid, args[0], size, -1)
        if func != 'free' and res:
            size = asked(func, args)
            if (pid, res) in blocks:  # a block still live at that address: released first
                osize, _ = blocks.pop((pid, res))
                delta += touch(pid, res, osize, -1)
            place = where(pid, res, size)
            blocks[(pid, res)] = (size, line_no)
            delta += touch(pid, res, size, +1)
        note = ''
        if old:
            note = '%d bytes, allocated %d lines ago' % old
        if layout and place:
            note = (note + ', ' if note else '') + '%s, %d %s pages' % (
                place, abs(delta), 'fewer' if delta < 0 else 'more')
        out.append(annotated(raw_line(pid, tid, func, args, res), note))
    print('\n'.join(out))


def parse(path):
    events = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            m = LINE.match(line.rstrip('\n'))
            assert m, '%s:%d: %r' % (path, n, line)
            args = [int(a, 0) for a in m.group(4).split(',')] if m.group(4) else []
            res = int(m.group(5), 16) if m.group(5) and m.group(5) != '0' else 0
            events.append((int(m.group(1)), int(m.group(2)), m.group(3), args, res))
    return events


def asked(func, args):
    if func == 'calloc':
        return min(args[0] * args[1], U64)
    if func in ('malloc', 'valloc'):
        return args[0]
    return args[1]  # realloc, memalign, posix_memalign, aligned_alloc


class Site:
    def __init__(self):
        self.allocs = self.bytes = self.frees = self.temps = 0
        self.ht_temps = 0  # by heaptrack_print's rule
        self.churn = 0  # bytes of its blocks released: freed, by a realloc, or replaced
        self.moment = 0  # live bytes at top --at's moment (set by at_moment)
        self.since_allocs = self.since_frees = 0
        self.live = self.blocks = 0
        self.peak = self.peak_blocks = 0
        self.end = None
        self.alloc_sum = 0  # the allocation clocks of its live blocks, summed


class Proc:
    def __init__(self, pid):
        self.pid = pid
        self.first = self.last = self.peak_at = 0
        self.events = 0
        self.calls = {}
        self.failed = self.temps = self.unknown = 0
        self.ht_temps = 0
        self.ht_last = None  # (function, size) of its last allocation, no release since
        self.live = self.blocks = self.peak = self.peak_blocks = 0
        self.sites = {}  # function -> Site


class Model:
    """The whole pass: processes in order of appearance."""

    def __init__(self, events, index=None, step=None, churn=0, top=10):
        self.step = step
        self.snapshots = []
        self.series = []
        acc = last_live = applied = 0
        index = index if index is not None else list(range(len(events)))
        self.procs = {}
        self.order = []
        self.live = self.blocks = self.peak = self.peak_blocks = 0
        self.buckets = {}  # bucket -> [count, bytes, {site: bytes}]
        self.series = []
        blocks = {}      # (pid, addr) -> (size, func)
        last = {}        # (pid, tid) -> address its last event allocated
        self.peak_at = 0
        # leaks' growth: every site's live bytes at each power of two of the clock (event time
        # from the first event with --step, else events applied), the last two kept
        self.samples = []  # [(clock, {(pid, func): live})], at most two
        nxt = 1
        self.end_clock = 0
        for k, (pid, tid, func, args, res) in zip(index, events):
            clk = k * step if step is not None else applied
            if clk >= nxt:
                at = nxt
                while at <= clk // 2:
                    at *= 2
                self.samples = (self.samples + [(at, {(q.pid, f): t.live
                                                      for q in self.procs.values()
                                                      for f, t in q.sites.items()})])[-2:]
                nxt = at * 2
            self.end_clock = clk if step is not None else applied + 1
            if churn:
                acc += abs(self.live - last_live)
                last_live = self.live
                if acc >= churn:
                    self.snapshot(applied, top)
                    acc = 0
            applied += 1
            if pid not in self.procs:
                self.procs[pid] = Proc(pid)
                self.procs[pid].first = k
                self.order.append(pid)
            p = self.procs[pid]
            p.last = k
            p.events += 1
            p.calls[func] = p.calls.get(func, 0) + 1
            # heaptrack's temporary: a free or a (successful) realloc of the block the
            # thread's previous event allocated
            releases = func == 'free' or (func == 'realloc' and (res != 0 or args[1] == 0))
            if releases and args[0] and last.get((pid, tid)) == args[0] \
                    and (pid, args[0]) in blocks:
                f = blocks[(pid, args[0])][1]
                p.sites[f].temps += 1
                p.temps += 1
            last[(pid, tid)] = res if func != 'free' else 0

            def release(addr):
                size, f, born = blocks.pop((pid, addr))
                s = p.sites[f]
                s.alloc_sum -= born
                s.live -= size
                s.blocks -= 1
                s.churn += size
                s.frees += 1
                s.since_frees += 1
                p.live -= size
                p.blocks -= 1
                self.live -= size
                self.blocks -= 1

            if func in ('free', 'realloc'):
                failed_realloc = func == 'realloc' and res == 0 and args[1] != 0
                if args[0] and not failed_realloc:
                    if (pid, args[0]) in blocks:
                        # heaptrack_print's temporary: a live block of the site and size of
                        # the process's last allocation, no release in between; heaptrack
                        # sees no realloc that returned NULL
                        size0, f0, _ = blocks[(pid, args[0])]
                        if res != 0 or func == 'free':
                            if p.ht_last == (f0, size0):
                                p.sites[f0].ht_temps += 1
                                p.ht_temps += 1
                            p.ht_last = None
                        release(args[0])
                    else:
                        p.unknown += 1
                if func == 'free':
                    continue
            size = asked(func, args)
            s = p.sites.setdefault(func, Site())
            s.allocs += 1
            s.since_allocs += 1
            s.bytes += size
            b = self.buckets.setdefault(size.bit_length(), [0, 0, {}])
            b[0] += 1
            b[1] += size
            b[2][(pid, func)] = b[2].get((pid, func), 0) + size
            if res == 0:
                if not (func == 'realloc' and args[1] == 0):
                    p.failed += 1
                continue
            if (pid, res) in blocks:
                release(res)
            blocks[(pid, res)] = (size, func, clk)
            p.ht_last = (func, size)
            s.alloc_sum += clk
            s.live += size
            s.blocks += 1
            p.live += size
            p.blocks += 1
            self.live += size
            self.blocks += 1
            if self.live > self.peak:
                self.peak, self.peak_blocks = self.live, self.blocks
                self.peak_at = k
            if p.live > p.peak:
                p.peak, p.peak_blocks = p.live, p.blocks
                p.peak_at = k
                for t in p.sites.values():
                    t.peak, t.peak_blocks = t.live, t.blocks
        if churn:
            self.snapshot(applied, top)

    def snapshot(self, applied, top):
        o = self.snapshots
        o.append('== snapshot %d after %d events: %s live in %d blocks' % (
            len(self.series) + 1, applied, said(self.live), self.blocks))
        # the series: exact figures separated by a space; in units, in columns of 10
        self.series.append('%d %*s %*s' % (applied, 0 if EXACT else 10, col(self.live),
                                           0 if EXACT else 10, '-'))
        o.append('%12s %8s %10s %10s %10s %10s %8s  %s' % (
            'live bytes', 'blocks', 'allocs', 'frees', 'allocs all', 'frees all', 'pid', 'site'))
        rows = []
        for p in self.procs.values():
            for f, s in p.sites.items():
                if s.live or s.since_allocs or s.since_frees:
                    rows.append((-s.live, f, p.pid, s))
        rows.sort(key=lambda r: r[:3])
        for _, f, pid, s in rows[:top]:
            o.append('%12s %8d %10d %10d %10d %10d %8d  %s' % (
                col(s.live), s.blocks, s.since_allocs, s.since_frees, s.allocs, s.frees, pid, f))
        for p in self.procs.values():
            for s in p.sites.values():
                s.since_allocs = s.since_frees = 0

    def timeline(self):
        print('\n'.join(self.snapshots))
        print('== series (event, live bytes, RSS bytes)')
        print('\n'.join(self.series))

    def proc_list(self):
        return [self.procs[pid] for pid in self.order]


def figures(o, p_events, duration, calls, peak, peak_blocks, peak_time, live, blocks, temps,
            failed, unknown, ht_temps):
    o.append('"events":%d,"duration_ns":%s,"calls":{%s},"peak_live_bytes":%d,'
             '"peak_live_blocks":%d,"peak_live_time_ns":%s,"peak_rss_bytes":null,'
             '"peak_rss_time_ns":null,'
             '"final_live_bytes":%d,"final_live_blocks":%d,"temporary_allocations":%d,'
             '"failed_allocations":%d,"unknown_frees":%d,'
             '"heaptrack_temporary_allocations":%d' % (
                 p_events, duration,
                 ','.join('"%s":%d' % (f, calls[f]) for f in FUNCS if calls.get(f)),
                 peak, peak_blocks, peak_time, live, blocks, temps, failed, unknown,
                 ht_temps))


def ns(m, k):
    """Event k's time from the first event, as JSON."""
    return 'null' if m.step is None else str(k * m.step)


def cmd_json(m):
    ps = m.proc_list()
    calls = {}
    for p in ps:
        for f, c in p.calls.items():
            calls[f] = calls.get(f, 0) + c
    o = ['{"processes":%d,' % len(ps)]
    span = 'null' if m.step is None or not ps else \
        str((max(p.last for p in ps) - min(p.first for p in ps)) * m.step)
    figures(o, sum(p.events for p in ps), span, calls, m.peak, m.peak_blocks,
            ns(m, m.peak_at) if m.peak else ns(m, 0), m.live, m.blocks,
            sum(p.temps for p in ps), sum(p.failed for p in ps), sum(p.unknown for p in ps),
            sum(p.ht_temps for p in ps))
    o.append(',"per_process":[')
    for i, p in enumerate(ps):
        o.append('%s{"pid":%d,' % (',' if i else '', p.pid))
        span = 'null' if m.step is None else str((p.last - p.first) * m.step)
        figures(o, p.events, span, p.calls, p.peak, p.peak_blocks,
                ns(m, p.peak_at) if p.peak else ns(m, 0), p.live, p.blocks, p.temps,
                p.failed, p.unknown, p.ht_temps)
        o.append('}')
    o.append(']}')
    print(''.join(o))


def heading(p, ps):
    if len(ps) > 1:
        print('== process %d' % p.pid)


def growth_rows(m, p):
    """leaks' rows of process p: (live, blocks, growth, age, kind, func), in leaks' order."""
    end = m.end_clock
    mid = None
    for clock, live in reversed(m.samples):
        if clock <= end // 2:
            mid = (clock, live)
            break
    rows = []
    for f, s in p.sites.items():
        if not s.live:
            continue
        then = mid[1].get((p.pid, f), 0) if mid else 0
        growth = s.live - then
        mean = s.alloc_sum // s.blocks if s.blocks else end
        age = end - mean if end > mean else 0
        if age * 10 < end:
            kind = 'young'
        elif growth > 0 and growth > s.live // 4:
            kind = 'growing'
        else:
            kind = 'steady'
        rank = {'growing': 3, 'steady': 2, 'young': 1}[kind]
        v = min(growth if kind == 'growing' else s.live, (1 << 62) - 1)
        rows.append(((-rank, -v, f), (s.live, s.blocks, growth, age, kind, f)))
    rows.sort(key=lambda r: r[0])
    return (mid[0] if mid else 0), [r[1] for r in rows]


def clock_text(c, times):
    return '%d.%06d s' % (c // 10**9, c % 10**9 // 1000) if times else '%d events' % c


def cmd_leaks(m):
    ps = m.proc_list()
    times = m.step is not None
    for p in ps:
        heading(p, ps)
        since, rows = growth_rows(m, p)
        print('live at the end: %s in %d blocks, %d sites; growth since %s, of %s' % (
            said(min(p.live, U64)), p.blocks, len(rows), clock_text(since, times),
            clock_text(m.end_clock, times)))
        if rows:
            print('%12s %8s %12s %14s  %-7s  %s' % ('bytes', 'blocks', 'growth', 'mean age',
                                                   'kind', 'site'))
        for live, blocks, growth, age, kind, f in rows:
            age_text = ('%d.%03d s' % (age // 10**9, age % 10**9 // 10**6)) if times \
                else '%d ev' % age
            print('%12s %8d %12s %14s  %-7s  %s' % (col(min(live, U64)), blocks, change(growth),
                                                    age_text, kind, f))


def cmd_leaks_json(m):
    out = []
    for p in m.proc_list():
        since, rows = growth_rows(m, p)
        out.append({'pid': p.pid, 'live_bytes': min(p.live, U64), 'live_blocks': p.blocks,
                    'sites': [{'bytes': min(live, U64), 'blocks': blocks, 'growth': growth,
                               'mean_age': age, 'kind': kind, 'stack': [{'function': f}]}
                              for live, blocks, growth, age, kind, f in rows]})
    since = growth_rows(m, m.proc_list()[0])[0] if m.proc_list() else 0
    print(json.dumps({'clock': 'ns' if m.step is not None else 'events', 'since': since,
                      'end': m.end_clock, 'processes': out}, sort_keys=True))


def csv_rows(header, rows):
    w = csv.writer(sys.stdout)
    w.writerow(header)
    w.writerows(rows)


def cmd_leaks_csv(m):
    rows = []
    for p in m.proc_list():
        for live, blocks, growth, age, kind, f in growth_rows(m, p)[1]:
            rows.append([p.pid, min(live, U64), blocks, growth, age, kind, f])
    age = 'mean_age_ns' if m.step is not None else 'mean_age_events'
    csv_rows(['pid', 'bytes', 'blocks', 'growth', age, 'kind', 'stack'], rows)


def cmd_export(m, weight):
    tot = {}
    for p in m.proc_list():
        for f, s in p.sites.items():
            v = {'alloc-count': s.allocs, 'alloc-bytes': s.bytes, 'peak-bytes': s.peak,
                 'leak-bytes': s.live, 'temp-count': s.temps,
                 'heaptrack-temp-count': s.ht_temps, 'churn': s.churn}[weight]
            tot[f] = min(tot.get(f, 0) + v, U64)
    for f in sorted(tot):
        if tot[f]:
            print('%s %d' % (f, tot[f]))


WEIGHTS = {'alloc-count': ('allocation calls', False),
           'alloc-bytes': ('bytes allocated (asked)', True),
           'peak-bytes': ('bytes live at the heap peak', True),
           'leak-bytes': ('bytes live at the end', True),
           'temp-count': ('temporary allocations (freed by the next call of their thread)', False),
           'heaptrack-temp-count': ('temporary allocations as heaptrack_print counts them '
                                    '(released right after an allocation of their site and '
                                    'size)', False),
           'churn': ('bytes allocated and released again (freed or reallocated)', True),
           'live-bytes': ('bytes live at', True)}  # and the moment (moment_words)


EXACT = '--bytes' in sys.argv


def col(n):
    """A byte figure in a column headed bytes."""
    return str(n) if EXACT else human(n)


def said(n):
    """A byte figure in a sentence."""
    return '%d bytes' % n if EXACT else human(n)


def change(n):
    """A change of bytes, with its sign."""
    return '%+d' % n if EXACT else ('-' if n < 0 else '+') + human(abs(n))


def site_weight(s, weight):
    return min({'alloc-count': s.allocs, 'alloc-bytes': s.bytes, 'peak-bytes': s.peak,
                'leak-bytes': s.live, 'temp-count': s.temps, 'heaptrack-temp-count': s.ht_temps,
                'churn': s.churn, 'live-bytes': s.moment}[weight], U64)


def at_moment(m, events, at, step):
    """Sets each site's moment: its live bytes at the heap peak (its process's), at the end,
    or SECONDS after the first event (event k at k * step ns): after the events stamped at or
    before it, replayed alone."""
    later = None
    if at not in ('heap-peak', 'end'):
        ns = int(Decimal(at) * 10**9)
        later = Model(events[:ns // step + 1])
    for p in m.proc_list():
        for f, s in p.sites.items():
            if at == 'heap-peak':
                s.moment = s.peak
            elif at == 'end':
                s.moment = s.live
            else:
                q = later.procs.get(p.pid)
                s.moment = q.sites[f].live if q and f in q.sites else 0


def moment_words(at):
    """The moment in top's heading, and in its JSON ("at", "time_ns")."""
    if at in ('heap-peak', 'end'):
        return {'heap-peak': 'the heap peak', 'end': 'the end'}[at], at, None
    return '%s s' % format(Decimal(at).normalize(), 'f'), 'time', int(Decimal(at) * 10**9)


def human(n):
    """Binary units, one decimal rounded down, as the man page says."""
    if n < 1024:
        return '%d B' % n
    for k, unit in enumerate(['KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB']):
        scale = 1024 ** (k + 1)
        if n // scale < 1024 or unit == 'EiB':
            return '%d.%d %s' % (n // scale, n % scale * 10 // scale, unit)


def top_rows(p, weight):
    return sorted(((site_weight(s, weight), f) for f, s in p.sites.items()
                   if site_weight(s, weight)), key=lambda r: (-r[0], r[1]))


def cmd_top(m, weight, limit, at='end'):
    ps = m.proc_list()
    meaning, is_bytes = WEIGHTS[weight]
    if weight == 'live-bytes':
        meaning += ' ' + moment_words(at)[0]
    for p in ps:
        heading(p, ps)
        rows = top_rows(p, weight)
        total = sum(site_weight(s, weight) for s in p.sites.values())
        shown = rows[:limit]
        print('sites by %s, %s: %d of %d shown' % (weight, meaning, len(shown), len(rows)))
        if not shown:
            continue
        print('%14s %7s  %s' % ('bytes' if is_bytes else 'count', 'share',
                                'site: the allocation function, then its callers'))
        for v, f in shown:
            text = col(v) if is_bytes else str(v)
            tenths = v * 1000 // total
            print('%14s %5d.%d%%  %s' % (text, tenths // 10, tenths % 10, f))


def cmd_top_json(m, weight, limit, at='end'):
    out = []
    for p in m.proc_list():
        rows = top_rows(p, weight)[:limit]
        out.append({'pid': p.pid, 'total': sum(site_weight(s, weight) for s in p.sites.values()),
                    'sites': [{'value': v, 'stack': [{'function': f}]} for v, f in rows]})
    doc = {'by': weight, 'processes': out}
    if weight == 'live-bytes':
        doc['at'], doc['time_ns'] = moment_words(at)[1:]
    print(json.dumps(doc, sort_keys=True))


def cmd_top_csv(m, weight, limit):
    rows = []
    for p in m.proc_list():
        total = sum(site_weight(s, weight) for s in p.sites.values())
        for k, (v, f) in enumerate(top_rows(p, weight)[:limit]):
            rows.append([p.pid, k + 1, v, min(total, U64), f])
    csv_rows(['pid', 'rank', 'value', 'process_total', 'stack'], rows)


def cmd_tree_json(m, end, min_percent=1):
    out = []
    for p in m.proc_list():
        total = p.live if end else p.peak
        blocks = p.blocks if end else p.peak_blocks
        rows = sorted(((s.live, s.blocks, f) if end else (s.peak, s.peak_blocks, f)
                       for f, s in p.sites.items()), key=lambda r: (-r[0], r[2]))
        frames, left, left_bytes = [], 0, 0
        for b, k, f in rows:
            if b and b * 100 < total * min_percent:
                left += 1
                left_bytes += b
            elif b:
                frames.append({'function': f, 'bytes': b, 'blocks': k, 'callees': []})
        out.append({'pid': p.pid, 'bytes': total, 'blocks': blocks, 'callees': frames,
                    'left_out': {'frames': left, 'bytes': left_bytes, 'deeper': 0}})
    print(json.dumps({'at': 'end' if end else 'heap-peak', 'time_ns': None,
                      'min_percent': min_percent, 'depth': 0, 'bottom_up': False,
                      'processes': out}, sort_keys=True))


def cmd_tree(m, end, min_percent=1):
    ps = m.proc_list()
    for p in ps:
        heading(p, ps)
        total = p.live if end else p.peak
        blocks = p.blocks if end else p.peak_blocks
        print('live at %s: %s in %d blocks' % ('end' if end else 'heap peak', said(total), blocks))
        if not total:
            continue
        print('%6.2f%% %18s %8d blocks  all' % (100.0, said(total), blocks))
        rows = sorted(((s.live, s.blocks, f) if end else (s.peak, s.peak_blocks, f)
                       for f, s in p.sites.items()), key=lambda r: (-r[0], r[2]))
        left, left_bytes = 0, 0
        for b, k, f in rows:
            if b and b * 100 < total * min_percent:
                left += 1
                left_bytes += b
            elif b:
                print('%6.2f%% %18s %8d blocks    %s' % (100.0 * b / total, said(b), k, f))
        if left:
            print('(%d frames under %d%% left out, %s; --min-percent 0 shows them)' % (
                left, min_percent, said(left_bytes)))


def cmd_sizes(m):
    print('%-41s %10s %14s  %s' % ('size (bytes asked)', 'calls', 'bytes', 'site of most bytes'))
    for k in sorted(m.buckets):
        count, total, by_site = m.buckets[k]
        rng = '0' if k == 0 else '%d-%d' % (1 << (k - 1), (1 << k) - 1)
        # the site of most bytes; of sites as big, the one that allocated first
        best = max(by_site.items(), key=lambda kv: (kv[1], -m.site_rank[kv[0]]))[0]
        print('%-41s %10d %14s  %s' % (rng, count, col(total), best[1]))


def size_buckets(m):
    """sizes' rows: (min, max, calls, bytes, (pid, function) of the site of most bytes)."""
    out = []
    for k in sorted(m.buckets):
        count, total, by_site = m.buckets[k]
        # the site of most bytes; of sites as big, the one that allocated first
        best = max(by_site.items(), key=lambda kv: (kv[1], -m.site_rank[kv[0]]))[0]
        lo, hi = (0, 0) if k == 0 else (1 << (k - 1), (1 << k) - 1)
        out.append((lo, hi, count, total, best))
    return out


def cmd_sizes_json(m):
    print(json.dumps({'buckets': [
        {'min': lo, 'max': hi, 'calls': count, 'bytes': total,
         'top_site': {'pid': best[0], 'stack': [{'function': best[1]}]}}
        for lo, hi, count, total, best in size_buckets(m)]}, sort_keys=True))


def cmd_sizes_csv(m):
    csv_rows(['min', 'max', 'calls', 'bytes', 'top_site_pid', 'top_site_stack'],
             [[lo, hi, count, total, best[0], best[1]]
              for lo, hi, count, total, best in size_buckets(m)])


def diff_rows(a, b):
    """diff's rows: (function, [allocs, peak, leak] of A, of B), in diff's order."""
    def totals(m):
        t = {}
        for p in m.proc_list():
            for f, s in p.sites.items():
                r = t.setdefault(f, [0, 0, 0])
                r[0] += s.allocs
                r[1] += s.peak
                r[2] += s.live
        return t
    ta, tb = totals(a), totals(b)
    rows = []
    for f in set(ta) | set(tb):
        x, y = ta.get(f, [0, 0, 0]), tb.get(f, [0, 0, 0])
        if x != y:
            rows.append((f, x, y))
    rows.sort(key=lambda r: (-abs(r[2][1] - r[1][1]), -abs(r[2][0] - r[1][0]), r[0]))
    return rows


DIFF_KEYS = ['allocs', 'peak', 'leak']


def cmd_diff_json(a, b):
    sites = []
    for f, x, y in diff_rows(a, b):
        d = {'stack': [{'function': f}]}
        for i, k in enumerate(DIFF_KEYS):
            d.update({k + '_a': x[i], k + '_b': y[i], k + '_change': y[i] - x[i]})
        sites.append(d)
    print(json.dumps({'sites': sites}, sort_keys=True))


def cmd_diff_csv(a, b):
    csv_rows([k + s for k in DIFF_KEYS for s in ('_a', '_b', '_change')] + ['stack'],
             [[v for i in range(3) for v in (x[i], y[i], y[i] - x[i])] + [f]
              for f, x, y in diff_rows(a, b)])


def cmd_diff(a, b):
    rows = diff_rows(a, b)
    print(' %12s %12s %13s %12s %12s %13s %12s %12s %13s  %s' % (
        'allocs A', 'allocs B', 'change', 'peak A', 'peak B', 'change', 'leak A', 'leak B',
        'change', 'site'))
    if not rows:
        print('(no site differs)')
    for f, x, y in rows:
        print(' %12d %12d %+13d' % (x[0], y[0], y[0] - x[0]) +
              ''.join(' %12s %12s %13s' % (col(x[i]), col(y[i]), change(y[i] - x[i]))
                      for i in (1, 2)) + '  ' + f)


def main(argv):
    cmd = argv[1]
    if cmd == 'gen-tidy':
        sys.stdout.write(gen_tidy(int(argv[2]), int(argv[3])))
        return
    if cmd in ('lifetimes', 'layout'):
        annotate(parse(argv[2]), cmd == 'layout')
        return
    if cmd == 'gen':
        sys.stdout.write(gen(int(argv[2]), int(argv[3])))
        return
    if cmd in ('diff', 'diff-json', 'diff-csv'):
        {'diff': cmd_diff, 'diff-json': cmd_diff_json, 'diff-csv': cmd_diff_csv}[cmd](
            Model(parse(argv[2])), Model(parse(argv[3])))
        return
    if cmd == 'export':
        cmd_export(Model(parse(argv[3])), argv[2])
        return
    if cmd == 'timeline':
        Model(parse(argv[2]), churn=int(argv[3]), top=int(argv[4])).timeline()
        return
    if cmd in ('top', 'top-json', 'top-csv'):
        events, opts = parse(argv[4]), argv[5:]
        at = opts[opts.index('--at') + 1] if '--at' in opts else 'end'
        step = int(opts[opts.index('--step') + 1]) if '--step' in opts else None
        m = Model(events)
        at_moment(m, events, at, step)
        if cmd == 'top':
            cmd_top(m, argv[2], int(argv[3]), at)
        elif cmd == 'top-json':
            cmd_top_json(m, argv[2], int(argv[3]), at)
        else:
            cmd_top_csv(m, argv[2], int(argv[3]))
        return
    events = parse(argv[2])
    index = list(range(len(events)))
    opts = argv[3:]
    if '--from' in opts:
        lo, hi = int(opts[opts.index('--from') + 1]), int(opts[opts.index('--to') + 1])
        events, index = events[lo:hi + 1], index[lo:hi + 1]
    if '--pid' in opts:
        pid = int(opts[opts.index('--pid') + 1])
        index = [k for k, e in zip(index, events) if e[0] == pid]
        events = [e for e in events if e[0] == pid]
    step = int(opts[opts.index('--step') + 1]) if '--step' in opts else None
    m = Model(events, index, step)
    rank = {}
    # sites in the order they were first allocated at, for ties in sizes
    for pid, tid, func, args, res in events:
        if func != 'free':
            rank.setdefault((pid, func), len(rank))
    m.site_rank = rank
    {'json': cmd_json, 'leaks': cmd_leaks, 'sizes': cmd_sizes, 'leaks-json': cmd_leaks_json,
     'leaks-csv': cmd_leaks_csv, 'sizes-json': cmd_sizes_json,
     'sizes-csv': cmd_sizes_csv}.get(cmd, lambda m: None)(m)
    if cmd in ('tree', 'tree-json'):
        mp = int(opts[opts.index('--min-percent') + 1]) if '--min-percent' in opts else 1
        (cmd_tree if cmd == 'tree' else cmd_tree_json)(m, 'end' in opts, mp)


if __name__ == '__main__':
    main(sys.argv)
