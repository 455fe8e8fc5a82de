#!/usr/bin/env python3
"""thread_ends.py: checks the END records of a trace of the thread_serial fixture.

Reads `atz_spec_reader.py --ends` output on stdin (events as text, "END PID TID" where an END
record stands). Usage: thread_ends.py THREADS. Checks that THREADS threads other than the
process's main thread (tid != pid) made calls, that each has exactly one END, after its last
event (no event of it follows), that the threads with state never number more than 3 at once
(the main thread, the ending thread, the next), and prints "EVENTS N" (the event lines).
Exit status: 0 ok, 1 with the first thing wrong on stderr."""
import sys


def main():
    want = int(sys.argv[1])
    ended, live, workers = {}, set(), set()
    most, events = 0, 0
    for n, line in enumerate(sys.stdin, 1):
        w = line.split()
        key = (w[1], w[2]) if w[0] == "END" else (w[0], w[1])
        if w[0] == "END":
            ended[key] = ended.get(key, 0) + 1
            live.discard(key)
            continue
        events += 1
        if key in ended:
            sys.exit("line %d: an event of thread %s %s after its END" % (n, *key))
        if key[0] != key[1]:
            workers.add(key)
        live.add(key)
        most = max(most, len(live))
    if len(workers) != want:
        sys.exit("%d threads made calls, not %d" % (len(workers), want))
    for key in workers:
        if ended.get(key) != 1:
            sys.exit("thread %s %s: %d END records, not 1" % (*key, ended.get(key, 0)))
    if most > 3:
        sys.exit("%d threads had state at once, not at most 3" % most)
    print("EVENTS %d" % events)


main()
