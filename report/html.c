/* html.c: the self-contained HTML report (html.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "finish.h"
#include "sitetext.h"
#include "html.h"
#include "tree.h"
#include "units.h"

/* One sample (x, y) into its bucket, the buckets widening until x fits. */
static void add_sample(struct rep_html_series *s, uint64_t x, uint64_t y)
{
	while (x / s->width >= REP_HTML_POINTS) {
		for (size_t i = 0; i < REP_HTML_POINTS / 2; i++) {
			struct rep_html_bucket a = s->b[2 * i], c = s->b[2 * i + 1];
			s->b[i] = (struct rep_html_bucket){
				a.most > c.most ? a.most : c.most, c.used ? c.last : a.last,
				a.used || c.used };
		}
		memset(&s->b[REP_HTML_POINTS / 2], 0, sizeof(s->b) / 2);
		s->width *= 2;
	}
	struct rep_html_bucket *b = &s->b[x / s->width];
	b->most = !b->used || y > b->most ? y : b->most;
	b->last = y;
	b->used = 1;
	s->xmax = x > s->xmax ? x : s->xmax;
}

static void on_event(void *arg, struct rep_heap *h, const struct at_event *ev)
{
	struct rep_html *w = arg;
	uint64_t live, blocks;

	rep_heap_live(h, &live, &blocks); /* before ev: after the event before it */
	if (w->seen)
		add_sample(&w->live, w->last_x, live);
	w->seen = 1;
	w->times |= ev->time_ns != 0;
	w->last_x = ev->time_ns ? rep_heap_time_of(h, ev) : rep_heap_events(h) + 1;
	if (w->data)
		rep_html_data_event(w->data, w->last_x);
}

/* An RSS record's x: its time, or where it is placed by position (heap.h), the number of
 * events read before it, on the axis of the events' numbers. */
static uint64_t rss_x(const struct rep_heap *h, const struct at_rss *m)
{
	struct at_event at = { .time_ns = m->time_ns };

	return rep_heap_rss_positional(h) ? rep_heap_events(h) : rep_heap_time_of(h, &at);
}

void rep_html_rss(struct rep_html *w, struct rep_heap *h, const struct at_rss *m)
{
	add_sample(&w->rss, rss_x(h, m), rep_heap_rss_now(h));
}

void rep_html_start(struct rep_html *w, struct rep_heap *h, const char *title)
{
	memset(w, 0, sizeof(*w));
	w->live.width = w->rss.width = 1;
	w->title = title;
	w->data = rep_html_data_new(h);
	rep_heap_on_event(h, on_event, w);
}

void rep_html_free(struct rep_html *w)
{
	rep_html_data_free(w->data);
	w->data = NULL;
}

/* The page's style and script (report/html/page.css, page.js), embedded by html_assets.c. */
extern const char rep_html_css[], rep_html_js[];

static void put_bytes(FILE *out, uint64_t v)
{
	fprintf(out, "%" PRIu64, v);
}

static void row(FILE *out, const char *name, uint64_t v)
{
	fprintf(out, "<tr><th>%s</th><td class=\"n\">", name);
	put_bytes(out, v);
	fputs("</td></tr>\n", out);
}

/* A row of a byte figure, in units unless --bytes (units.h). */
static void row_bytes(FILE *out, const char *name, uint64_t v)
{
	char b[REP_BYTES_SIZE];

	fprintf(out, "<tr><th>%s</th><td class=\"n\">%s</td></tr>\n", name, rep_bytes(v, b));
}

static void put_summary(FILE *out, const struct rep_heap *h)
{
	const struct rep_proc *procs;
	size_t n = rep_heap_procs(h, &procs);
	uint64_t peak, blocks, at, live, rss, rss_at, temps = 0;

	rep_heap_peak(h, &peak, &blocks, &at);
	rep_heap_live(h, &live, &blocks);
	rep_heap_rss_peak(h, &rss, &rss_at);
	for (size_t i = 0; i < n; i++)
		temps += procs[i].temps;
	fputs("<h2>Summary</h2><table>\n", out);
	row(out, "events", rep_heap_events(h));
	row(out, "processes", n);
	row_bytes(out, "peak live bytes", peak);
	row_bytes(out, "final live bytes", live);
	row(out, "final live blocks", blocks);
	row(out, "temporary allocations", temps);
	if (rss)
		row_bytes(out, "peak RSS bytes", rss);
	else
		fputs("<tr><th>peak RSS bytes</th><td>unknown (no RSS records)</td></tr>\n", out);
	fputs("</table>\n", out);
}

/* A series as "series":{"width":W,"xmax":X,"b":[bucket,most,last,...]} (its used buckets). */
static void put_series_json(FILE *out, const char *name, const struct rep_html_series *s)
{
	int first = 1;

	fprintf(out, "\"%s\":{\"width\":%" PRIu64 ",\"xmax\":%" PRIu64 ",\"b\":[", name,
		s->width, s->xmax);
	for (size_t i = 0; i < REP_HTML_POINTS; i++) {
		if (!s->b[i].used)
			continue;
		fprintf(out, "%s%zu,%" PRIu64 ",%" PRIu64, first ? "" : ",", i, s->b[i].most,
			s->b[i].last);
		first = 0;
	}
	fputs("]}", out);
}

/* The page's data, inside a script element the page's script reads: the trace's figures,
 * the series and the columns (html_data.h). 0, or -1 with errno. */
static int put_data(FILE *out, const struct rep_html *w, const struct rep_heap *h)
{
	uint64_t peak, blocks, at, live, live_blocks, rss, rss_at, dpeak, dend;
	const struct rep_proc *procs;
	size_t n = rep_heap_procs(h, &procs);

	rep_heap_peak(h, &peak, &blocks, &at);
	rep_heap_live(h, &live, &live_blocks);
	rep_heap_rss_peak(h, &rss, &rss_at);
	rep_html_data_totals(w->data, &dpeak, &dend);
	fprintf(out, "<script type=\"application/json\" id=\"alloctap-data\">{\"times\":%d,"
		"\"exact\":%d,\"events\":%" PRIu64 ",\"processes\":%zu,\"peak\":%" PRIu64
		",\"final\":%" PRIu64 ",\"final_blocks\":%" PRIu64 ",\"peak_sum\":%" PRIu64
		",\"rss_records\":%d,", w->times, rep_units_exact(), rep_heap_events(h), n, peak,
		live, live_blocks, dpeak, rss != 0);
	if (w->times || n == 1) /* the peak's x: its time, or its event's number */
		fprintf(out, "\"peak_x\":%" PRIu64 ",", w->times ? at : procs[0].peak_seq);
	fputs("\n", out);
	put_series_json(out, "live", &w->live);
	fputs(",\n", out);
	put_series_json(out, "rss", &w->rss);
	fputs(",\n\"data\":", out);
	if (rep_html_data_write(out, w->data) < 0)
		return -1;
	fputs("}</script>\n", out);
	return 0;
}

/* Sites ordered by one figure, most first; the top 20 with it non-zero. */
static const struct rep_site *order_sites;
static uint64_t (*order_value)(const struct rep_site *);

static int by_value(const void *a, const void *b)
{
	uint64_t x = order_value(&order_sites[*(const uint32_t *)a]);
	uint64_t y = order_value(&order_sites[*(const uint32_t *)b]);

	return x != y ? (x > y ? -1 : 1) : (*(const uint32_t *)a > *(const uint32_t *)b) -
						 (*(const uint32_t *)a < *(const uint32_t *)b);
}

static uint64_t peak_of(const struct rep_site *s) { return s->peak_bytes; }
static uint64_t leak_of(const struct rep_site *s) { return s->live_bytes; }
static uint64_t allocs_of(const struct rep_site *s) { return s->allocs; }
static uint64_t temps_of(const struct rep_site *s) { return s->temps; }

/* Site s leaf first, its shared root frames left out (or, called_from 1, the line that says
 * them), as HTML text. 0, or -1 with errno (ENOMEM). */
static int put_site_xml(FILE *out, const struct rep_heap *h, const struct rep_site *s,
			size_t shared, int called_from)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	if (!m)
		return -1;
	if (called_from)
		rep_put_called_from(m, h, s, shared, 0);
	else
		rep_put_site(m, h, s, shared);
	if (fclose(m) != 0) {
		free(text);
		return -1;
	}
	while (len && text[len - 1] == '\n')
		len--;
	rep_put_xml_text(out, text, len);
	free(text);
	return 0;
}

static int put_top(FILE *out, const struct rep_heap *h, const char *title, const char *unit,
		   uint64_t (*value)(const struct rep_site *))
{
	const struct rep_site *sites;
	size_t n = rep_heap_sites(h, &sites), k = 0;
	uint32_t *idx = malloc((n ? n : 1) * sizeof(*idx));
	char b[REP_BYTES_SIZE];

	if (!idx)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (value(&sites[i]))
			idx[k++] = (uint32_t)i;
	order_sites = sites;
	order_value = value;
	qsort(idx, k, sizeof(*idx), by_value);
	fprintf(out, "<h2>%s</h2>\n", title);
	if (!k)
		fputs("<p>none</p>\n", out);
	else
		fprintf(out, "<table><tr><th>%s</th><th>pid</th><th>site</th></tr>\n", unit);
	size_t shown = k < 20 ? k : 20, shared = rep_shared_callers(h, sites, idx, shown);
	int rc = 0;
	for (size_t i = 0; i < shown && rc == 0; i++) {
		const struct rep_site *s = &sites[idx[i]];
		if (strcmp(unit, "bytes") == 0)
			rep_bytes(value(s), b);
		else
			snprintf(b, sizeof(b), "%" PRIu64, value(s));
		fprintf(out, "<tr><td class=\"n\">%s</td><td class=\"n\">%" PRIu32
			"</td><td class=\"s\">", b, s->pid);
		rc = put_site_xml(out, h, s, shared, 0);
		fputs("</td></tr>\n", out);
	}
	if (shared && rc == 0) {
		fputs("<tr><td></td><td></td><td class=\"s\">", out);
		rc = put_site_xml(out, h, &sites[idx[0]], shared, 1);
		fputs("</td></tr>\n", out);
	}
	if (k)
		fputs("</table>\n", out);
	free(idx);
	return rc;
}

/* The page's frame: the places its script fills. */
static const char app[] =
	"<h2>Live bytes and RSS over <span id=\"xname\"></span></h2>\n"
	"<p class=\"hint\">Click the curve to choose a moment, drag to choose a window; "
	"<button id=\"at-peak\">heap peak</button> <button id=\"at-all\">whole trace"
	"</button> <span id=\"choice\"></span></p>\n"
	"<div id=\"chart\"></div>\n"
	"<h2 id=\"flame-title\"></h2>\n<div class=\"bar\"><select id=\"view\">"
	"<option value=\"live\">live at the moment (bytes)</option>"
	"<option value=\"bytes\">allocations in the window (bytes)</option>"
	"<option value=\"allocs\">allocations in the window (count)</option>"
	"<option value=\"temps\">temporaries in the window (count)</option>"
	"<option value=\"leaks\">leaks: live at the end (bytes)</option></select> "
	"<input id=\"search\" placeholder=\"search a frame\" size=\"30\"> "
	"<span id=\"found\"></span></div>\n<div id=\"flame\"></div>\n"
	"<div id=\"tip\"></div>\n"
	"<h2>Sites <select id=\"table-kind\"><option value=\"bottomup\">bottom-up: by the "
	"function that allocates</option><option value=\"topdown\">top-down: by function, "
	"inclusive</option></select></h2>\n<div id=\"table\"></div>\n";

int rep_write_html(FILE *out, struct rep_html *w, const struct rep_heap *h)
{
	uint64_t live, blocks;

	if (!w->data) {
		errno = ENOMEM;
		return -1;
	}
	rep_html_data_finish(w->data);
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>alloctap-report: ", out);
	rep_put_xml_text(out, w->title, strlen(w->title));
	fprintf(out, "</title><style>%s</style></head><body>\n<h1>alloctap-report: ", rep_html_css);
	rep_put_xml_text(out, w->title, strlen(w->title));
	fputs("</h1>\n", out);
	if (rep_heap_sample_bytes(h)) /* alloctapd --sample-bytes: every figure estimated */
		fprintf(out, "<p class=\"estimate\">Estimated from a sample of the allocations, 1 in "
			"%" PRIu64 " bytes on average: every heap figure on this page is an estimate "
			"(events and RSS as recorded).</p>\n", rep_heap_sample_bytes(h));
	put_summary(out, h);
	rep_heap_live(h, &live, &blocks);
	if (w->seen)
		add_sample(&w->live, w->last_x, live); /* after the last event */
	fputs(app, out);
	if (put_top(out, h, "Sites holding most at the heap peak", "bytes", peak_of) < 0 ||
	    put_top(out, h, "Leaks: live at the end", "bytes", leak_of) < 0 ||
	    put_top(out, h, "Sites of most allocations", "calls", allocs_of) < 0 ||
	    put_top(out, h, "Sites of most temporary allocations", "temporaries", temps_of) < 0 ||
	    put_data(out, w, h) < 0)
		return -1;
	fprintf(out, "<script>%s</script>\n</body></html>\n", rep_html_js);
	return rep_finish_output(out);
}
