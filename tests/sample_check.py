#!/usr/bin/env python3
"""sample_check.py: checks alloctap-report's estimates of a trace of tests/fixtures/sample_sites
taken with alloctapd --sample-bytes N against the fixture's known heap.

Usage: sample_check.py N TOP_CSV TRACE_TEXT

TOP_CSV is `alloctap-report top --by peak-bytes --csv` of the trace, TRACE_TEXT the trace as
text (atz_tool decode). Each site of the fixture holds n blocks of s bytes at the peak. alloctapd
samples each allocation independently (the points of a Poisson process in disjoint byte ranges
are independent) with p = 1 - exp(-s/N), so the number K of the site's blocks in the trace is
Binomial(n, p); the report counts each for round(s/p) bytes (pprof's scaling), so its estimate
at the peak is K * round(s/p) exactly. The check, per site: the estimate is such a multiple,
K equals the site's malloc lines in the trace, and K lies inside the interval of Binomial(n, p)
outside which the probability is at most ALPHA (1e-7: the exact tails, computed here); then the
events written: every line is a malloc of a site or the free of a block of one, and their
number, 2 * the sum of the K, inside the same kind of interval of its exact distribution (the
sum of the four binomials). Five checks at 1e-7 each per N: a correct alloctapd fails one of
them with probability below 1e-6 whatever the seed. Prints one line per check; exit 0 when
all hold, 1 otherwise.
"""
import math
import re
import sys

SITES = {"small": (20000, 64), "medium": (4000, 1024), "large": (400, 16384),
         "huge": (40, 262144)}
ALPHA = 1e-7


def binomial_pmf(n, p):
    """The probabilities of 0..n successes, in logs to keep the small ones."""
    out = []
    for k in range(n + 1):
        if p >= 1.0:
            out.append(1.0 if k == n else 0.0)
            continue
        lg = (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) +
              (k * math.log(p) if k else 0.0) + ((n - k) * math.log1p(-p) if n - k else 0.0))
        out.append(math.exp(lg))
    return out


def convolve(a, b):
    out = [0.0] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        if x < 1e-300:
            continue
        for j, y in enumerate(b):
            out[i + j] += x * y
    return out


def interval(pmf, alpha):
    """The smallest lo and largest hi such that P(X < lo) <= alpha/2 and P(X > hi) <= alpha/2."""
    lo, acc = 0, 0.0
    while lo < len(pmf) and acc + pmf[lo] <= alpha / 2:
        acc += pmf[lo]
        lo += 1
    hi, acc = len(pmf) - 1, 0.0
    while hi > 0 and acc + pmf[hi] <= alpha / 2:
        acc += pmf[hi]
        hi -= 1
    return lo, hi


def main(argv):
    if len(argv) != 4:
        sys.stderr.write("usage: sample_check.py N TOP_CSV TRACE_TEXT\n")
        return 2
    n_bytes = int(argv[1])
    est = {}
    with open(argv[2], encoding="utf-8") as f:
        for row in f.read().splitlines()[1:]:
            fields = row.split(",", 4)
            frames = fields[4].split(";")
            name = frames[1].split(" ")[0] if len(frames) > 1 else frames[0]
            est[name] = int(fields[2])
    sizes = {s: name for name, (_, s) in SITES.items()}
    mallocs = {name: 0 for name in SITES}
    frees = other = 0
    for line in open(argv[3], encoding="ascii"):
        m = re.match(r"^\d+ \d+ (\w+)\(([^)]*)\)", line)
        if m and m.group(1) == "malloc" and int(m.group(2)) in sizes:
            mallocs[sizes[int(m.group(2))]] += 1
        elif m and m.group(1) == "free":
            frees += 1
        else:
            other += 1
    failed = 0
    total_pmf = [1.0]
    for name, (n, s) in SITES.items():
        p = -math.expm1(-s / n_bytes)
        per = round(s / p)
        pmf = binomial_pmf(n, p)
        total_pmf = convolve(total_pmf, pmf)
        lo, hi = interval(pmf, ALPHA)
        value = est.get(name, 0)
        k = value // per
        ok = value % per == 0 and k == mallocs[name] and lo <= k <= hi
        failed += not ok
        print("%s %s: %d of %d blocks of %d bytes sampled (p %.5f, interval %d..%d), "
              "estimate %d bytes = %d x %d, truth %d (%+.1f%%)" %
              ("ok" if ok else "FAILED", name, mallocs[name], n, s, p, lo, hi, value, k, per,
               n * s, 100.0 * (value - n * s) / (n * s)))
    sampled = sum(mallocs.values())
    lo, hi = interval(total_pmf, ALPHA)
    ok = other == 0 and frees == sampled and lo <= sampled <= hi
    failed += not ok
    calls = 2 * sum(n for n, _ in SITES.values())
    print("%s events written: %d of %d calls (%.3f%%; %d allocations sampled, interval "
          "%d..%d; %d frees, %d other lines)" %
          ("ok" if ok else "FAILED", 2 * sampled, calls, 100.0 * 2 * sampled / calls, sampled,
           lo, hi, frees, other))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
