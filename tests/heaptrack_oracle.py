"""heaptrack_oracle.py: reading heaptrack_print's output and alloctap-report's beside it, per
function of the fixture service (tests/fixtures/heap_service.c), for tests/report_heaptrack.sh
and tests/report_export_heaptrack.sh.

A site is named by its first frame, from the leaf, that is one of the fixture's functions."""
import json
import re

FIX = ['remember_session', 'cache_insert', 'request_buffer', 'scratch_copy', 'spike', 'warm_up']

# heaptrack_print's sections and the line that opens each entry
SECTIONS = {
    'MOST CALLS TO ALLOCATION FUNCTIONS':
        r'(?P<calls>\d+) calls to allocation functions with (?P<peak>\S+) peak consumption from',
    'PEAK MEMORY CONSUMERS': r'(?P<peak>\S+) peak memory consumed over (?P<calls>\d+) calls from',
    'MEMORY LEAKS': r'(?P<leaked>\S+) leaked over (?P<calls>\d+) calls from',
    'MOST TEMPORARY ALLOCATIONS':
        r'(?P<temps>\d+) temporary allocations of (?P<calls>\d+) allocations in total \(\S+\) from',
}


def site(frames):
    """The first frame, from the leaf, that is one of the fixture's functions; None if none."""
    return next((f for f in frames if f in FIX), None)


def frame_name(f):
    """A JSON frame's function (a frame object, or a name)."""
    return f if isinstance(f, str) else (f.get('function') or f.get('name') or '')


def alloctap(path):
    """alloctap-report top --json (the file at path): the value per fixture function."""
    out = {f: 0 for f in FIX}
    for p in json.load(open(path))['processes']:
        for s in p['sites']:
            f = site([frame_name(x) for x in s['stack']])
            if f:
                out[f] += s['value']
    return out


def flame(path):
    """Folded stacks, root;...;leaf VALUE, a frame 'function' or 'function (file...)'
    (heaptrack_print -F, alloctap-report export --folded): the values per fixture function."""
    out = {f: 0 for f in FIX}
    for line in open(path):
        stack, _, value = line.rstrip('\n').rpartition(' ')
        frames = [re.sub(r' \([^)]*\)$', '', x) for x in stack.rstrip(';').split(';')]
        f = site(list(reversed(frames)))
        if f:
            out[f] += int(value)
    return out


def sections(lines):
    """heaptrack_print's text (its lines): per section, per fixture function, the entry's
    figures (text), its "at" line, and its first caller's function and "at" line ("caller")."""
    out, name = {s: {} for s in SECTIONS}, None
    for i, line in enumerate(lines):
        if line in SECTIONS:
            name = line
            continue
        m = name and re.fullmatch(SECTIONS[name], line)
        if m and i + 1 < len(lines) and lines[i + 1] in FIX:
            f = lines[i + 1]
            if f in out[name]:
                raise SystemExit(f'{name}: {f} twice (a function that calls the allocator at '
                                 'two lines)')
            e = m.groupdict()
            e['at'] = lines[i + 2].strip() if i + 2 < len(lines) else None
            callers = [j for j in range(i + 3, len(lines)) if lines[j].startswith('    ') and
                       not lines[j].startswith('     ')]
            j = callers[0] if callers else None
            e['caller'] = (lines[j].strip(), lines[j + 1].strip()) if j and j + 1 < len(lines) \
                else None
            out[name][f] = e
    return out


def human(n):
    """A byte figure as heaptrack_print writes it: 320B, 2.05K, 16.78M (powers of 1000)."""
    if n < 1000:
        return f'{n}B'
    for unit in 'KMGTPE':
        n /= 1000
        if n < 1000 or unit == 'E':
            return f'{n:.2f}{unit}'
