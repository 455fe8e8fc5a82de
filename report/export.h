/* export.h: `alloctap-report export --folded`: a trace's allocations aggregated by site.
 *
 * Each allocation event adds its weight (report/weight.h, x->weight) to the line of its site
 * (report/sites.h); frees weigh nothing and make no line. */
#ifndef ALLOCTAP_REPORT_EXPORT_H
#define ALLOCTAP_REPORT_EXPORT_H

#include <stdint.h>
#include <stdio.h>

#include "event.h"
#include "sites.h"

/* An event, with the id of its stack (0: none). 0, or -1 with errno set: ENOENT when no
 * record of that stack came before it, ENOMEM. */
int rep_export_event(struct rep_sites *x, const struct at_event *ev, uint32_t stack);

/* Writes the folded lines, sorted by stack text; lines of weight 0 are left out. Called once,
 * at the end. 0, or -1 with errno set. */
int rep_export_write(struct rep_sites *x, FILE *out);

#endif
