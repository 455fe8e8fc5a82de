/* diff.h: alloctap-report diff A B: per site, the allocations, the bytes live at the heap peak
 * and at the end (leaks) in two traces, and their differences.
 *
 * Sites are matched by their folded text (the same stack and function), whatever their
 * processes: a site's figures are summed over the processes of its trace. One row per site
 * seen in either trace: "ALLOCS_A ALLOCS_B DELTA PEAK_A PEAK_B DELTA LEAK_A LEAK_B DELTA SITE",
 * the largest change of peak bytes first (then of allocations, then by text); sites whose
 * figures are all equal are left out. The text's byte figures (PEAK, LEAK and their changes)
 * are in units, or exact with --bytes (units.h); JSON and CSV's are exact. */
#ifndef ALLOCTAP_REPORT_DIFF_H
#define ALLOCTAP_REPORT_DIFF_H

#include <stdio.h>

#include "heap.h"
#include "json.h"

/* The rows as text (above); with JSON, one document: {"sites": [{"allocs_a", "allocs_b",
 * "allocs_change", "peak_a", "peak_b", "peak_change", "leak_a", "leak_b", "leak_change",
 * "stack": [{"function"}, ...] leaf first}]}, each change B - A exactly; with CSV, the header
 * "allocs_a,allocs_b,allocs_change,peak_a,peak_b,peak_change,leak_a,leak_b,leak_change,stack"
 * and a record per row, the stack leaf first, frames separated by ';'. The same rows in the
 * same order in each. 0, or -1 with errno (ENOMEM, or a write error). */
int rep_write_diff(FILE *out, const struct rep_heap *a, struct rep_sites *xa,
		   const struct rep_heap *b, struct rep_sites *xb, enum rep_format format);

#endif
