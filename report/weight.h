/* weight.h: what one allocation event weighs in a report. */
#ifndef ALLOCTAP_REPORT_WEIGHT_H
#define ALLOCTAP_REPORT_WEIGHT_H

#include <stdint.h>

#include "event.h"

enum rep_weight {
	REP_WEIGHT_ALLOC_COUNT = 0, /* allocation calls */
	REP_WEIGHT_ALLOC_BYTES,     /* bytes asked */
	/* weights of a whole pass (report/heap.h), not of one event: */
	REP_WEIGHT_PEAK_BYTES,      /* bytes live at the process's heap peak */
	REP_WEIGHT_LEAK_BYTES,      /* bytes live at the end */
	REP_WEIGHT_TEMP_COUNT,      /* temporary allocations */
	REP_WEIGHT_HEAPTRACK_TEMP_COUNT, /* temporary allocations by heaptrack_print's rule */
	REP_WEIGHT_CHURN,           /* bytes of the site's blocks released again (heap.h) */
	REP_WEIGHT_LIVE_BYTES,      /* bytes live at the pass's chosen moment (heap.h) */
};

/* "alloc-count", "alloc-bytes", "peak-bytes", "leak-bytes", "temp-count",
 * "heaptrack-temp-count", "churn" or "live-bytes": 0 (w set), or -1 for any other name. */
int rep_weight_parse(const char *name, enum rep_weight *w);

/* Whether the event is an allocation call: every function of the family but free (and the
 * jemalloc_stats marker). A failed allocation (result 0) is one too: it was called. */
int rep_is_allocation(const struct at_event *ev);

/* What ev weighs: 0 for frees, markers and the weights of a whole pass; otherwise 1 for
 * REP_WEIGHT_ALLOC_COUNT, and for
 * REP_WEIGHT_ALLOC_BYTES the size asked: malloc(n) and valloc(n) n, calloc(n, m) n*m (UINT64_MAX
 * when it overflows), realloc(p, n) n, memalign, aligned_alloc and posix_memalign (align,
 * n) n. */
uint64_t rep_event_weight(const struct at_event *ev, enum rep_weight w);

#endif
