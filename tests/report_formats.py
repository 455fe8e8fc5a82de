#!/usr/bin/env python3
"""report_formats.py: an alloctap-report command's --json (or --csv) output against its text.

  report_formats.py COMMAND TEXT JSON [--units]
  report_formats.py COMMAND-csv CSV JSON

reads the command's text output (or its --csv output) and its --json output and compares every
figure, site and frame the two hold: the JSON's exact integers must be the text's figures
(bytes, blocks, counts; times as the text rounds them), a JSON stack leaf first the text's
folded site (root first, ';') reversed; each CSV record (read by Python's csv module, every
record ended by CRLF) the JSON's figures, its stack leaf first with ';' between frames. The
text is the command's with --bytes (its byte figures exact); with --units, the command's
default text, its byte figures the JSON's written in binary units as the man page says
("512 B" under 1024, then KiB ... EiB with one decimal, rounded down; a change signed).
Prints what differs and exits 1, or "same" and exits 0. COMMAND: peak, leaks, sizes,
timeline, lifetimes, layout, diff; with -csv: leaks, sizes, timeline, diff, top.
"""
import csv
import io
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_model import human  # noqa: E402 (binary units, as the man page says)


UNITS = '--units' in sys.argv
# a byte figure of the text: exact digits, or in units ("512 B", "990.3 KiB")
FIG = r'\d+(?:\.\d)?(?: (?:[KMGTPE]i)?B)?'


def col(n):
    """A byte figure in a column."""
    return human(n) if UNITS else str(n)


def said(n):
    """A byte figure in a sentence."""
    return human(n) if UNITS else '%d bytes' % n


def change(n):
    """A change of bytes, signed."""
    return ('-' if n < 0 else '+') + human(abs(n)) if UNITS else '%+d' % n


def folded(stack):
    """A JSON stack (frame objects, or strings, leaf first) as folded text, root first."""
    return ';'.join((f['function'] if isinstance(f, dict) else f) for f in reversed(stack))


def word(f):
    """A JSON frame as the text names it: its function, and (file's base name:line) when the
    frame has both."""
    if 'file' in f and 'line' in f:
        return '%s (%s:%d)' % (f['function'], f['file'].rsplit('/', 1)[-1], f['line'])
    return f['function']


def leaf_first(stacks):
    """JSON stacks (leaf first) as the text writes a list of them: each leaf first, ' < '
    between frames, the root frames they all share (each keeping its leaf and one frame) left
    out and said once after them: (rows, the called-from line or None)."""
    roots = [[word(f) for f in reversed(s)] for s in stacks]
    if not roots:
        return [], None
    shared = max(len(roots[0]) - 2, 0)
    for r in roots[1:]:
        same = 0
        while same < shared and same + 2 <= len(r) and r[same] == roots[0][same]:
            same += 1
        shared = same
    rows = [' < '.join(reversed(r[shared:])) for r in roots]
    callers = list(reversed(roots[0][:shared]))  # leaf first: at most 12 said, the rest counted
    called = ('every site above is called from: ' + ' < '.join(callers[:12]) +
              (' < (%d frames more, to the root: --json gives them)' % (len(callers) - 12)
               if len(callers) > 12 else '') if shared else None)
    return rows, called


def csv_stack(stack):
    """A JSON stack as a CSV field: the text's words, leaf first, ';' between them."""
    return ';'.join(word(f) for f in stack)


def seconds(ns, decimals=6):
    return '%d.%0*d s' % (ns // 10**9, decimals, ns % 10**9 // 10**(9 - decimals))


def label(lo, hi):
    return '0' if hi == 0 else '%d-%d' % (lo, hi)


def peak(text, doc):
    want = []
    for p in doc['processes']:
        if len(doc['processes']) > 1:
            want.append('== process %d' % p['pid'])
        what = {'heap-peak': 'heap peak', 'rss-peak': 'RSS peak', 'end': 'end'}.get(doc['at'])
        want.append('live at %s: %s in %d blocks' % (
            what or seconds(doc['time_ns']), said(p['bytes']), p['blocks']))

        if doc['bottom_up']:
            want[-1] += ' (bottom-up: each allocation function, then its callers)'
        key = 'callers' if doc['bottom_up'] else 'callees'

        def walk(name, node, depth):
            want.append('%s %d %s%s' % (said(node['bytes']), node['blocks'], '  ' * depth, name))
            for c in node[key]:
                walk(word(c), c, depth + 1)
        if p['bytes']:
            walk('all', p, 0)
        if p['left_out']['frames']:
            want.append('(%d frames under %d%% left out, %s; --min-percent 0 shows them)'
                        % (p['left_out']['frames'], doc['min_percent'],
                           said(p['left_out']['bytes'])))
        if p['left_out']['deeper']:
            want.append('(%d frames deeper than %d levels left out, their bytes in the frames '
                        'above them; --depth 0 shows them)' % (p['left_out']['deeper'],
                                                             doc['depth']))
    got = []
    for line in text:
        m = re.match(r'^ *[0-9.]+% +(\d+ bytes|' + FIG + r') +(\d+) blocks  (.*)$', line)
        got.append('%s %s %s' % m.groups() if m else line)
    return got, want


def leaks(text, doc):
    times = doc['clock'] == 'ns'
    clock = (lambda c: seconds(c)) if times else (lambda c: '%d events' % c)
    want = []
    for p in doc['processes']:
        if len(doc['processes']) > 1:
            want.append('== process %d' % p['pid'])
        want.append('live at the end: %s in %d blocks, %d sites; growth since %s, of %s' % (
            said(p['live_bytes']), p['live_blocks'], len(p['sites']), clock(doc['since']),
            clock(doc['end'])))
        if p['sites']:
            want.append('header')
        rows, called = leaf_first([s['stack'] for s in p['sites']])
        for s, row in zip(p['sites'], rows):
            age = seconds(s['mean_age'], 3) if times else '%d ev' % s['mean_age']
            want.append('%s %d %s %s %s %s' % (col(s['bytes']), s['blocks'], change(s['growth']),
                                                age, s['kind'], row))
        if called:
            want.append(called)
    got = []
    for line in text:
        m = re.match(r'^ *(' + FIG + r') +(\d+) +([+-]' + FIG +
                     r') +(\d+\.\d{3} s|\d+ ev)  (\w+) *  (.*)$', line)
        if m:
            got.append('%s %s %s %s %s %s' % m.groups())
        else:
            got.append('header' if line.lstrip().startswith('bytes') else line.lstrip())
    return got, want


def sizes(text, doc):
    rows, called = leaf_first([b['top_site']['stack'] for b in doc['buckets']])
    want = ['header'] + ['%s %d %s %s' % (label(b['min'], b['max']), b['calls'], col(b['bytes']),
                                          row)
                         for b, row in zip(doc['buckets'], rows)] + ([called] if called else [])
    got = ['header'] + ['%s %s %s %s' % m.groups() if m else line.lstrip()
                        for line in text[1:]
                        for m in [re.match(r'^(\S+) +(\d+) +(' + FIG + r')  (.*)$', line)]]
    return got, want


def timeline(text, doc):
    want, series = [], []
    for s in doc['snapshots']:
        at = ('at ' + seconds(s['time_ns'])) if s['time_ns'] is not None else \
            'after %d events' % s['events']
        rss = ', RSS %s' % said(s['rss_bytes']) if s['rss_bytes'] else ''
        want.append('== snapshot %d %s: %s live in %d blocks%s' % (
            s['snapshot'], at, said(s['live_bytes']), s['live_blocks'], rss))
        want.append('header')
        rows, called = leaf_first([x['stack'] for x in s['sites']])
        for x, row in zip(s['sites'], rows):
            want.append('%s %d %d %d %d %d %d %s' % (
                col(x['live_bytes']), x['live_blocks'], x['allocs'], x['frees'], x['allocs_all'],
                x['frees_all'], x['pid'], row))
        if called:
            want.append(called)
        series.append('%s %s %s' % (seconds(s['time_ns']) if s['time_ns'] is not None
                                    else str(s['events']), col(s['live_bytes']),
                                    col(s['rss_bytes']) if s['rss_bytes'] else '-'))
    want.append('== series (%s, live bytes, RSS bytes)' % (
        'seconds' if doc['every_ns'] else 'event'))
    want += series
    got, in_series = [], False
    for line in text:
        m = re.match(r'^ *(' + FIG + r') +(\d+) +(\d+) +(\d+) +(\d+) +(\d+) +(\d+)  (.*)$', line)
        in_series = in_series or line.startswith('== series')
        if m and not in_series:
            got.append(' '.join(m.groups()))
        elif in_series and UNITS:  # in units, the series is in columns
            got.append(' '.join(line.split()))
        else:
            got.append('header' if line.lstrip().startswith('live bytes') else line.lstrip())
    return got, want


def table(lines):
    """A lifetimes table's cells: {(row label, column label): blocks}."""
    cols = lines[0].split()[3:]
    cells = {}
    for line in lines[1:]:
        f = line.split()
        for c, v in zip(cols, f[1:]):
            if v != '0':
                cells[(f[0], c)] = int(v)
    return cells


def lifetimes(text, doc):
    want = ['blocks freed: %d; still live at the end: %d; temporary: %d' % (
        doc['blocks_freed'], doc['still_live'], doc['temporary'])]
    got = text[:1]
    parts = '\n'.join(text[1:]).split('== ')[1:]
    for key, what in (('by_events', 'events'), ('by_ns', 'ns')):
        cells = {(label(c['lifetime_min'], c['lifetime_max']),
                  label(c['size_min'], c['size_max'])): c['blocks'] for c in doc[key]}
        if cells:
            want.append('%s %s' % (what, sorted(cells.items())))
    for part in parts:
        lines = part.split('\n')
        what = lines[0].split()[2]
        got.append('%s %s' % (what, sorted(table([x for x in lines[1:] if x]).items())))
    if doc['timed'] != sum(c['blocks'] for c in doc['by_ns']) or \
            doc['blocks_freed'] != sum(c['blocks'] for c in doc['by_events']):
        want.append('the cells add up to blocks_freed and timed')
    return got, want


def layout(text, doc):
    want = ['blocks placed: %d' % doc['blocks_placed']]
    for key, what in (('gap_below', 'below'), ('gap_above', 'above')):
        g = doc[key]
        want.append('== gap to the block %s (bytes), blocks placed' % what)
        want += ['none %d' % g['none']] if g['none'] else []
        want += ['overlap %d' % g['overlap']] if g['overlap'] else []
        want += ['%s %d' % (label(b['min'], b['max']), b['blocks']) for b in g['buckets']]
    want.append('pages in use (%d bytes): %d at the end, for %s live' % (
        doc['page_bytes'], doc['pages_end'], said(doc['live_bytes_end'])))
    want.append('most pages in use: %d after event %d, for %s live' % (
        doc['pages_max'], doc['pages_max_after_event'], said(doc['live_bytes_at_pages_max'])))
    got = [re.sub(r' \([0-9.]+% of their bytes\)$', '', ' '.join(x.split()))
           if not x.startswith('==') else x for x in text]
    return got, want


def diff(text, doc):
    want = ['header'] + [' '.join(['%d %d %+d' % (s['allocs_a'], s['allocs_b'], s['allocs_change'])] +
                                  ['%s %s %s' % (col(s[k + '_a']), col(s[k + '_b']),
                                                 change(s[k + '_change']))
                                   for k in ('peak', 'leak')]) + ' ' + folded(s['stack'])
                         for s in doc['sites']]
    if not doc['sites']:
        want.append('(no site differs)')
    row = re.compile(r'^ +(\d+) +(\d+) +([+-]\d+)' + r' +(%s) +(%s) +([+-]%s)' % (FIG, FIG, FIG) * 2 +
                     r'  (.*)$')
    got = ['header'] + [' '.join(m.groups()) if m else x
                        for x in text[1:] for m in [row.match(x)]]
    return got, want


# CSV against JSON: the header, then each record's fields as the JSON's figures.
CSV = {
    'leaks-csv': lambda doc: [[p['pid'], s['bytes'], s['blocks'], s['growth'], s['mean_age'],
                               s['kind'], csv_stack(s['stack'])]
                              for p in doc['processes'] for s in p['sites']],
    'sizes-csv': lambda doc: [[b['min'], b['max'], b['calls'], b['bytes'], b['top_site']['pid'],
                               csv_stack(b['top_site']['stack'])]
                              for b in doc['buckets']],
    'top-csv': lambda doc: [[p['pid'], k + 1, s['value'], p['total'], csv_stack(s['stack'])]
                            for p in doc['processes'] for k, s in enumerate(p['sites'])],
    'diff-csv': lambda doc: [[s[k + x] for k in ('allocs', 'peak', 'leak')
                              for x in ('_a', '_b', '_change')] +
                             [';'.join(f['function'] for f in s['stack'])]
                             for s in doc['sites']],
}


def timeline_csv(doc):
    rows = []
    for s in doc['snapshots']:
        head = [s['snapshot'], s['time_ns'], s['events'], s['live_bytes'], s['live_blocks'],
                s['rss_bytes']]
        rows += [head + [x['pid'], x['live_bytes'], x['live_blocks'], x['allocs'], x['frees'],
                         x['allocs_all'], x['frees_all'],
                         csv_stack(x['stack'])] for x in s['sites']]
        if not s['sites']:
            rows.append(head + [None] * 8)
    return rows


CSV['timeline-csv'] = timeline_csv


def main(argv):
    cmd = argv[1]
    with open(argv[2], newline='') as f:
        first = f.read()
    with open(argv[3]) as f:
        doc = json.load(f)
    if cmd.endswith('-csv'):
        if not first.endswith('\r\n') or '\n' in first.replace('\r\n', ''):
            print('records not ended by CRLF')
            return 1
        got = list(csv.reader(io.StringIO(first, newline='')))[1:]
        want = [['' if v is None else str(v) for v in r] for r in CSV[cmd](doc)]
    else:
        got, want = globals()[cmd](first.rstrip('\n').split('\n'), doc)
    if got == want:
        print('same')
        return 0
    for i in range(max(len(got), len(want))):
        g = got[i] if i < len(got) else None
        w = want[i] if i < len(want) else None
        if g != w:
            print('line %d: %r, from the JSON %r' % (i + 1, g, w))
            break
    return 1


if __name__ == '__main__':
    sys.exit(main(sys.argv))
