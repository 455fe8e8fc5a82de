/* lifetimes.h: how long blocks live (alloctap-report lifetimes), watching a pass (heap.h).
 *
 * A block's lifetime runs from the event that allocated it to the free or realloc of its
 * address that released it: in events (lines of the trace: 1 when the very next event freed
 * it) and, when the trace has times, in ns. With annotate, every event is written back as its
 * trace line, each free and realloc of a live block followed by the note
 * "# S bytes, allocated N lines ago" (Compact Memory Traces' lifetimes.py), then ", T ns"
 * when the trace has times. Without it, at the end: histograms of lifetimes (log2 buckets of
 * events, and of ns) against the size asked (log2 buckets), the blocks still live at the end,
 * and the temporary allocations (as heaptrack documents them: freed, or released by a
 * realloc, by the very next event of their thread). */
#ifndef ALLOCTAP_REPORT_LIFETIMES_H
#define ALLOCTAP_REPORT_LIFETIMES_H

#include <stdio.h>

#include "annotate.h"
#include "heap.h"

struct rep_lifetimes {
	struct rep_watch w;            /* out, annotate, munged, the engine, the event */
	char note[128];
	uint64_t by_events[REP_SIZE_BUCKETS][REP_SIZE_BUCKETS]; /* [lifetime][size] */
	uint64_t by_ns[REP_SIZE_BUCKETS][REP_SIZE_BUCKETS];
	uint64_t freed, timed;
	int json;                      /* the end's figures as JSON (below); set after start */
};

/* Watches h's blocks; writes to out. */
void rep_lifetimes_start(struct rep_lifetimes *l, struct rep_heap *h, FILE *out, int annotate,
			 const int *munged);
/* Applies ev to the pass (rep_heap_event), then writes its line when annotating. 0, or -1
 * with errno as rep_heap_event. */
int rep_lifetimes_event(struct rep_lifetimes *l, const struct at_event *ev);
/* After the pass: the histograms (without annotate); with json, one document:
 * {"blocks_freed", "still_live", "temporary", "by_events": [CELL...], "timed" (the blocks
 * freed whose lifetime in ns is known), "by_ns": [CELL...]}, a CELL {"lifetime_min",
 * "lifetime_max", "size_min", "size_max", "blocks"} for each log2 bucket of lifetime and of
 * size that counted blocks, by lifetime then size. 0, or -1 with errno on a write error. */
int rep_lifetimes_end(struct rep_lifetimes *l);

#endif
