/* top_csv.h: alloctap-report top --csv: the sites top ranks (top.h), as CSV records (csv.h). */
#ifndef ALLOCTAP_REPORT_TOP_CSV_H
#define ALLOCTAP_REPORT_TOP_CSV_H

#include <stdio.h>

#include "heap.h"
#include "top.h"

/* A header "pid,rank,value,process_total,stack", then per process (in turn) its o->limit sites
 * of most o->by, in top's order (most first, then by text), sites of 0 left out: rank from
 * 1, the exact value, the process's total of the weight (saturated), the stack leaf first,
 * frames separated by ';'. 0, or -1 with errno when a write fails or memory runs out. */
int rep_write_top_csv(FILE *out, const struct rep_heap *h, const struct rep_top_options *o);

#endif
