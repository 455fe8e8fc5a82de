/* html_data.h: the data of the html page's moment and window views, gathered in one pass.
 *
 * The x axis (ns from the trace's first event, or the event number on a trace without times)
 * is cut into at most REP_HTML_COLS columns of one width, which doubles (neighbours merging
 * in pairs) when an x falls past the last column. Per site the collector keeps, sparsely, the
 * columns where it changed: its live bytes and blocks at the column's end, the allocations
 * and bytes allocated in it, and its temporaries (report/heap.h's rule: a block freed by the
 * next event of the thread that allocated it) counted in the column of their free. It keeps
 * too what each site held at its process's heap peak and at the end, exactly.
 *
 * A site is the heap engine's site (heap.h) where it has a stack; a site without one (a trace
 * taken without --stacks, a text log) is split by allocation size into log2 classes, so the
 * page shows the allocation function, then the size class, then nothing deeper.
 *
 * The page keeps the top REP_HTML_SITES sites by each of three figures (the most bytes live
 * at once, allocations, bytes allocated); the others are folded into one "other sites" entry,
 * so every total of the page stays exact. Frames are interned: a frame is its function, and
 * its file:line where known. Memory grows with the sites and the columns where they change,
 * never with the events. */
#ifndef ALLOCTAP_REPORT_HTML_DATA_H
#define ALLOCTAP_REPORT_HTML_DATA_H

#include <stdint.h>
#include <stdio.h>

#include "heap.h"

#define REP_HTML_COLS 200  /* columns along the x axis, at most */
#define REP_HTML_SITES 200 /* sites kept by each figure; the rest fold into "other sites" */

struct rep_html_data;

/* A collector watching h's blocks (rep_heap_on_block; before the pass). NULL with errno. The
 * caller frees it with rep_html_data_free. */
struct rep_html_data *rep_html_data_new(struct rep_heap *h);
void rep_html_data_free(struct rep_html_data *d);
/* The x of the event about to be applied: the page's tick calls it for each event, before. */
void rep_html_data_event(struct rep_html_data *d, uint64_t x);
/* Ends the pass (after rep_heap_finish's events, before writing). */
void rep_html_data_finish(struct rep_html_data *d);
/* The sum of every site's bytes at its process's heap peak, and at the end. */
void rep_html_data_totals(const struct rep_html_data *d, uint64_t *peak, uint64_t *end);
/* Writes the data as one JSON object (every '<' escaped, so it may sit inside a script
 * element): {"width","ncols","frames":[[name,where]...],"sites":[{"pid","s":[frame ids, root
 * first],"peak":[bytes,blocks],"end":[bytes,blocks],"c":[col,live,blocks,allocs,bytes,temps,
 * temp_bytes, ...]}...]} with the folded sites last, as one site of the frame "other sites".
 * 0, or -1 with errno (ENOMEM). */
int rep_html_data_write(FILE *out, struct rep_html_data *d);

#endif
