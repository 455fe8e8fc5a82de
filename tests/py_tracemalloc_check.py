#!/usr/bin/env python3
"""py_tracemalloc_check.py: the bytes alloctapd --stacks saw live per Python traceback, against
tracemalloc's, for tests/fixtures/py_tracemalloc.py (tests/python_frames.sh).

Usage: py_tracemalloc_check.py TRACEMALLOC_JSON LEAKS_JSON
       py_tracemalloc_check.py --native-only LEAKS_JSON

TRACEMALLOC_JSON is what the fixture wrote (its tracemalloc snapshot, each traceback innermost
first); LEAKS_JSON is `alloctap-report leaks --json` of the trace: per site the bytes live at the
end and its stack, a list of frames {"function", "file", "line", "kind"}, the allocation
function first. A Python frame is one of kind "python" (a native frame has no kind); its file
is a Python source (.py) or a name CPython gives code that has none ("<frozen
importlib._bootstrap>", "<string>"), and one the trace leaves unnamed has none, which no
traceback of tracemalloc's matches. A site's traceback is its Python frames, in order, as
(file, line); native frames are dropped.

Compared: tracemalloc's traces over 512 bytes (smaller ones are pymalloc's, out of malloc's
sight) whose innermost frame is in the fixture's files, and alloctap's sites whose innermost
Python frame is, less those through the fixture's call of its snapshot (what the oracle itself
leaves malloc'd); both summed per traceback, cut to the fixture's nframe (tracemalloc's limit).
Matched bytes are the sum over tracebacks of the smaller of the two; the check passes when they
are at least 99% of each side's bytes. Prints a one-line summary, and on failure the 10
tracebacks that differ most with both byte counts. Exit 0 on pass, 1 on failure.

--native-only: the trace has stacks (a site of two frames or more) and no Python frame at all,
as for an interpreter whose Python frames alloctapd does not read. Exit 0 when so, 1 otherwise.
"""
import json
import os
import re
import sys

FIXTURE_FILES = {"py_tracemalloc.py", "py_tracemalloc_mod.py"}
PYMALLOC_MAX = 512
NEED = 0.99
SHOWN = 10
# where the evaluation loop is still in a stack, the Python frames of its run were not spliced in
EVAL_LOOP = re.compile(r"^_PyEval_EvalFrameDefault|^PyEval_EvalFrameEx$")
# a Python frame the trace does not name, as the report writes a frame without a name
UNNAMED = re.compile(r"^python\+0x[0-9a-f]+$")


def is_python(frame):
    return frame.get("kind") == "python"


def in_fixture(filename):
    return os.path.basename(filename) in FIXTURE_FILES


def show(tb):
    """A traceback as one line, innermost first, files by their base names."""
    return " < ".join("%s:%s" % (os.path.basename(f or "(unnamed)"), line)
                       for f, line in tb) or "(none)"


def sites(leaks):
    """Every site of every process of a leaks --json document: (bytes, stack)."""
    for p in leaks["processes"]:
        for s in p["sites"]:
            yield s["bytes"], s["stack"]


def from_tracemalloc(doc, skip):
    """Bytes per traceback (a tuple of (file, line), innermost first) but those through the
    frame skip, and the nframe limit."""
    nframe = doc["nframe"]
    out = {}
    for t in doc["traces"]:
        tb = tuple((f, line) for f, line in t["traceback"])
        if t["size"] <= PYMALLOC_MAX or not tb or not in_fixture(tb[0][0]):
            continue
        if skip in tb:
            continue
        if t["total_nframe"] > len(tb) and len(tb) < nframe:
            sys.exit("tracemalloc's traceback %s is cut at %d of %d frames, under its limit %d"
                     % (show(tb), len(tb), t["total_nframe"], nframe))
        out[tb] = out.get(tb, 0) + t["size"]
    return out, nframe


def from_alloctap(leaks, nframe, skip):
    """Bytes per traceback of the fixture's sites but those through the frame skip; and, for
    the diagnosis, the bytes of sites
    with no Python frame that still show the evaluation loop (Python frames missing) and of
    sites with a Python frame left unnamed."""
    out, unspliced, unnamed = {}, 0, 0
    for nbytes, stack in sites(leaks):
        tb = tuple((f.get("file"), f.get("line")) for f in stack if is_python(f))[:nframe]
        if any(UNNAMED.match(f.get("function") or "") for f in stack):
            unnamed += nbytes
        if not tb:
            if any(EVAL_LOOP.match(f.get("function") or "") for f in stack):
                unspliced += nbytes
            continue
        if in_fixture(tb[0][0] or "") and skip not in tb:
            out[tb] = out.get(tb, 0) + nbytes
    return out, unspliced, unnamed


def percent(part, whole):
    return 100.0 * part / whole if whole else 0.0


def compare(tm_path, leaks_path):
    with open(tm_path) as f:
        doc = json.load(f)
    with open(leaks_path) as f:
        leaks = json.load(f)
    # what runs under the fixture's call of its snapshot is the oracle's own
    skip = tuple(doc["snapshot_call"])
    tm, nframe = from_tracemalloc(doc, skip)
    at, unspliced, unnamed = from_alloctap(leaks, nframe, skip)
    tm_bytes, at_bytes = sum(tm.values()), sum(at.values())
    matched = sum(min(b, at.get(tb, 0)) for tb, b in tm.items())
    ok = tm_bytes > 0 and matched >= NEED * tm_bytes and matched >= NEED * at_bytes
    print("python %s: tracemalloc %d bytes in %d tracebacks, alloctap %d bytes in %d; "
          "matched %d bytes: %.2f%% of tracemalloc's, %.2f%% of alloctap's: %s"
          % (doc["python"], tm_bytes, len(tm), at_bytes, len(at), matched,
             percent(matched, tm_bytes), percent(matched, at_bytes), "pass" if ok else "FAIL"))
    if ok:
        return 0
    if tm_bytes == 0:
        print("tracemalloc saw nothing of the fixture's over %d bytes: is %s the fixture's?"
              % (PYMALLOC_MAX, tm_path))
    if at_bytes == 0:
        print("no site of the trace has a Python frame in the fixture's files; %d bytes live at "
              "the end are in sites with no Python frame that show the evaluation loop (Python "
              "frames not recorded)" % unspliced)
    if unnamed:
        print("%d bytes live at the end are in sites with a Python frame the trace leaves "
              "unnamed (python+0x...: no NAMES record for its value)" % unnamed)
    diffs = [tb for tb in set(tm) | set(at) if tm.get(tb, 0) != at.get(tb, 0)]
    diffs.sort(key=lambda tb: (-abs(tm.get(tb, 0) - at.get(tb, 0)), show(tb)))
    print("the %d tracebacks of %d that differ most (innermost first):"
          % (min(SHOWN, len(diffs)), len(diffs)))
    print("%12s %12s  traceback" % ("tracemalloc", "alloctap"))
    for tb in diffs[:SHOWN]:
        print("%12d %12d  %s" % (tm.get(tb, 0), at.get(tb, 0), show(tb)))
    return 1


def native_only(leaks_path):
    with open(leaks_path) as f:
        leaks = json.load(f)
    stacks = python = 0
    for _, stack in sites(leaks):
        stacks += len(stack) >= 2
        python += any(is_python(f) for f in stack)
    print("%d sites with stacks, %d with Python frames" % (stacks, python))
    return 0 if stacks and not python else 1


def main(argv):
    if len(argv) == 3 and argv[1] == "--native-only":
        return native_only(argv[2])
    if len(argv) == 3:
        return compare(argv[1], argv[2])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
