/* layout.h: where blocks lie (alloctap-report layout), watching a pass (heap.h).
 *
 * The live blocks of each process are kept in address order, with the pages (4096 bytes)
 * they touch counted: a page is in use while some live block has a byte in it (bytes asked:
 * a block of size 0 touches the page of its address). A block's pages are counted from its
 * nearest neighbours, in O(log n) whatever its size: exact while live blocks do not overlap,
 * which they do only when a trace lost events (the count is then an estimate). With annotate, every event is written
 * back as its trace line with a note in the manner of Compact Memory Traces' overhead.py:
 *
 *   allocation  "# prev P, gap G, next N, gap G, pages [A, B], K more pages"
 *   free        "# S bytes, allocated L lines ago, prev P, gap G, next N, gap G,
 *                pages [A, B], K fewer pages"
 *   realloc     the old block's "S bytes, allocated L lines ago", then the new block's
 *               neighbours and pages, and the pages gained or released by both together
 *
 * where prev is the nearest live block below (its address; the gap from its end to this
 * block's start), next the nearest above (the gap from this block's end to its start), both
 * "none" when there is none; a gap is negative when blocks overlap (a missed free); A and B
 * are the first and last page numbers (address / 4096) of the block. Without annotate, at the
 * end: the gaps to the neighbours of each block placed (log2 buckets) and the pages in use,
 * with the bytes live on them in units, or exact with --bytes (units.h). */
#ifndef ALLOCTAP_REPORT_LAYOUT_H
#define ALLOCTAP_REPORT_LAYOUT_H

#include <stdio.h>

#include "annotate.h"
#include "heap.h"

#define REP_PAGE_SHIFT 12

struct rep_layout_node;

/* The gaps of blocks placed to their neighbours, log2 buckets, plus "none" and "overlap". */
struct rep_gaps {
	uint64_t none, overlap, bucket[REP_SIZE_BUCKETS];
};

struct rep_layout {
	struct rep_watch w;           /* out, annotate, munged, the engine, the event */
	int failed;                   /* ENOMEM met in a watcher */
	struct rep_layout_node *nodes;/* a treap by (pid, addr) */
	size_t nnodes, cap, free_list, root;
	uint64_t made;                /* nodes made: their priorities come from it */
	uint64_t pages_now, pages_max, pages_max_seq, live_at_max;
	struct rep_gaps below, above;
	uint64_t placed;
	/* this event's note */
	int have_old, have_new;
	uint64_t old_size, old_ago;
	char where[160];              /* prev, next, pages of the block placed or freed */
	int64_t delta;                /* pages gained (< 0: released) */
	int json;                     /* the end's figures as JSON (below); set after start */
};

void rep_layout_start(struct rep_layout *l, struct rep_heap *h, FILE *out, int annotate,
		      const int *munged);
/* Applies ev to the pass (rep_heap_event), then writes its line when annotating. 0, or -1
 * with errno: as rep_heap_event, or ENOMEM. */
int rep_layout_event(struct rep_layout *l, const struct at_event *ev);
/* After the pass: the summary (without annotate); with json, one document:
 * {"blocks_placed", "gap_below", "gap_above" (each {"none", "overlap", "buckets": [{"min",
 * "max", "blocks"}]}: the gaps in bytes, log2 buckets that counted blocks), "page_bytes",
 * "pages_end", "live_bytes_end", "pages_max", "pages_max_after_event",
 * "live_bytes_at_pages_max"}. 0, or -1 with errno on a write error. */
int rep_layout_end(struct rep_layout *l);
void rep_layout_free(struct rep_layout *l);

#endif
