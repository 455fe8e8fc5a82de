/* html.h: alloctap-report html: one self-contained page (no network: its style, script and
 * data are inline) of a pass (heap.h). Its script (report/html/page.js, embedded at build
 * time) draws from the page's data: the curve of live bytes and RSS over time (or events, on a
 * trace without times) with axes, ticks and units, where a click picks a moment and a dragged
 * range a window; for the choice, flame graphs of what is live, of allocations (count or
 * bytes), of temporaries and of leaks, with search, tooltips and zoom; a sortable table of
 * sites, bottom-up (by the function that allocates) or top-down (by frame, inclusive). Static
 * tables written here follow: the summary, and the sites holding most at the heap peak, the
 * leaks, the sites of most allocations and of most temporaries, each leaf first with its
 * lines, the callers they share said once.
 *
 * Each series (live bytes after each event, RSS at each record) is kept in REP_HTML_POINTS
 * buckets of x (ns from the first event, or the event number on a trace without times, where
 * an RSS record's x is the number of events read before it) of a width that doubles,
 * neighbours merging in pairs, when an x falls past the last bucket: a bucket holds the
 * largest value and the last one, so no peak and no drop is lost, in bounded memory whatever
 * the trace. The moment and window views come from html_data.h's columns. */
#ifndef ALLOCTAP_REPORT_HTML_H
#define ALLOCTAP_REPORT_HTML_H

#include <stdio.h>

#include "heap.h"
#include "html_data.h"

#define REP_HTML_POINTS 1024

struct rep_html_bucket {
	uint64_t most, last;
	int used;
};

struct rep_html_series {
	struct rep_html_bucket b[REP_HTML_POINTS];
	uint64_t width;       /* of a bucket, in x units */
	uint64_t xmax;        /* the largest x seen */
};

struct rep_html {
	struct rep_html_series live, rss;
	uint64_t last_x;     /* the last event's x: its sample (what it left live) comes next */
	int seen;
	int times;           /* x is a time (else the event number) */
	const char *title;
	struct rep_html_data *data; /* NULL: it could not be made (the page then fails) */
};

/* Watches h's events and blocks for the series and the columns (before the pass). The caller
 * ends with rep_html_free. */
void rep_html_start(struct rep_html *w, struct rep_heap *h, const char *title);
void rep_html_free(struct rep_html *w);
/* A point at an RSS record, after rep_heap_rss took it. */
void rep_html_rss(struct rep_html *w, struct rep_heap *h, const struct at_rss *m);
/* Writes the page (after the pass). 0, or -1 with errno. */
int rep_write_html(FILE *out, struct rep_html *w, const struct rep_heap *h);

#endif
