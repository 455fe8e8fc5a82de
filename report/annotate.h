/* annotate.h: a trace written back line by line with a note after some lines, as Compact
 * Memory Traces' lifetimes.py and overhead.py annotate theirs: the note starts at column 50
 * (after at least one space) with "# ". */
#ifndef ALLOCTAP_REPORT_ANNOTATE_H
#define ALLOCTAP_REPORT_ANNOTATE_H

#include <stdio.h>

#include "event.h"
#include "heap.h"

#define REP_NOTE_COLUMN 50

/* Writes ev as the trace writes it (raw, or munged with slots), then the note when it is not
 * empty, then a newline. */
void rep_put_annotated(FILE *out, const struct at_event *ev, int munged, const char *note);

/* What a watcher of the pass that may write the trace back keeps: where, whether, in which
 * form (the source's munged flag: 1 once its lines are munged), the engine, and the event
 * being applied (the engine's block callbacks see only blocks). */
struct rep_watch {
	FILE *out;
	int annotate;
	const int *munged;
	struct rep_heap *h;
	const struct at_event *ev;
};

/* Sets w up and registers fn (with arg) as h's block watcher. */
void rep_watch_start(struct rep_watch *w, struct rep_heap *h, FILE *out, int annotate,
		     const int *munged, rep_heap_block_fn fn, void *arg);
/* Applies ev to the pass with w->ev set during it. 0, or -1 with errno as rep_heap_event;
 * *selected says whether the engine took the event (its process, its window). */
int rep_watch_event(struct rep_watch *w, const struct at_event *ev, int *selected);

#endif
