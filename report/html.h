/* html.h: alloctap-report html: one self-contained page (no network: its style, script and
 * charts are inline) of a pass (heap.h): the summary; the live bytes and the RSS over time,
 * as SVG line charts; each process's heap peak as an SVG flame graph (a click on a frame zooms
 * to it, a click on the root zooms out; a frame's tooltip gives its line while it has one);
 * the sites holding most at the peak, the leaks, the sites of most allocations and of most
 * temporary allocations, each leaf first with its lines, the callers they share said once.
 *
 * Each series (live bytes after each event, RSS at each record) is kept in REP_HTML_POINTS
 * buckets of x (time, or event number without times) of a width that doubles, neighbours
 * merging in pairs, when an x falls past the last bucket: a bucket holds the largest value
 * and the last one, so no peak and no drop is lost, in bounded memory whatever the trace. */
#ifndef ALLOCTAP_REPORT_HTML_H
#define ALLOCTAP_REPORT_HTML_H

#include <stdio.h>

#include "heap.h"

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
	const char *title;
};

/* Watches h's events for the series (before the pass). */
void rep_html_start(struct rep_html *w, struct rep_heap *h, const char *title);
/* A point at an RSS record, after rep_heap_rss took it. */
void rep_html_rss(struct rep_html *w, struct rep_heap *h, const struct at_rss *m);
/* Writes the page (after the pass). 0, or -1 with errno. */
int rep_write_html(FILE *out, struct rep_html *w, const struct rep_heap *h);

#endif
