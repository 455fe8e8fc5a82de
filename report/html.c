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
	w->last_x = ev->time_ns ? rep_heap_time_of(h, ev) : rep_heap_events(h) + 1;
}

void rep_html_rss(struct rep_html *w, struct rep_heap *h, const struct at_rss *m)
{
	struct at_event at = { .time_ns = m->time_ns };

	add_sample(&w->rss, rep_heap_time_of(h, &at), rep_heap_rss_now(h));
}

void rep_html_start(struct rep_html *w, struct rep_heap *h, const char *title)
{
	memset(w, 0, sizeof(*w));
	w->live.width = w->rss.width = 1;
	w->title = title;
	rep_heap_on_event(h, on_event, w);
}

static const char style[] =
	"body{font:14px sans-serif;margin:1em 2em;color:#222}"
	"table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 8px}"
	"td.n{text-align:right;font-family:monospace}td.s{font-family:monospace;font-size:12px;"
	"word-break:break-all}svg.flame text{font:11px monospace;pointer-events:none}"
	"svg.flame g.f{cursor:pointer}svg.chart{background:#fafafa;border:1px solid #ddd}";

/* Zoom: a click on a frame stretches it to the full width; frames outside it are hidden. */
static const char script[] =
	"function zoom(svg,g){var x0=+g.dataset.x,w0=+g.dataset.w,W=+svg.getAttribute('width');"
	"svg.querySelectorAll('g.f').forEach(function(e){var x=+e.dataset.x,w=+e.dataset.w;"
	"var nx=(x-x0)*W/w0,nw=w*W/w0,r=e.querySelector('rect'),t=e.querySelector('text');"
	"var show=x+w>x0+1e-6&&x<x0+w0-1e-6;e.style.display=show?'':'none';"
	"r.setAttribute('x',nx);r.setAttribute('width',nw);t.setAttribute('x',nx+3);"
	"t.style.display=nw>40?'':'none';});}"
	"document.querySelectorAll('svg.flame').forEach(function(svg){"
	"svg.querySelectorAll('g.f').forEach(function(g){g.addEventListener('click',function(){"
	"zoom(svg,g);});var t=g.querySelector('text'),w=+g.dataset.w;"
	"if(w<40)t.style.display='none';});});"
	"document.body.setAttribute('data-ready','1');";

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

/* One series as a step line: in each bucket, up (or down) to its largest value, then to its
 * last, held until the next bucket. */
static void put_series(FILE *out, const struct rep_html_series *s, const char *name,
		       const char *colour, double L, double W, double H, uint64_t xmax, uint64_t ymax)
{
	int any = 0;
	double last_y = H;

	for (size_t i = 0; i < REP_HTML_POINTS; i++) {
		const struct rep_html_bucket *b = &s->b[i];
		if (!b->used)
			continue;
		double x = L + W * (double)(i * s->width) / (double)xmax;
		double most = H - H * (double)b->most / (double)ymax;
		double last = H - H * (double)b->last / (double)ymax;
		if (!any)
			fprintf(out, "<polyline class=\"%s\" fill=\"none\" stroke=\"%s\" "
				"stroke-width=\"1.5\" points=\"", name, colour);
		else
			fprintf(out, "%.1f,%.1f ", x, last_y);
		fprintf(out, "%.1f,%.1f %.1f,%.1f ", x, most, x, last);
		last_y = last;
		any = 1;
	}
	if (any)
		fprintf(out, "%.1f,%.1f\"/>\n", L + W * (double)s->xmax / (double)xmax, last_y);
}

static void bounds(const struct rep_html_series *s, uint64_t *xmax, uint64_t *ymax)
{
	*xmax = s->xmax > *xmax ? s->xmax : *xmax;
	for (size_t i = 0; i < REP_HTML_POINTS; i++)
		*ymax = s->b[i].used && s->b[i].most > *ymax ? s->b[i].most : *ymax;
}

/* A chart of the live bytes, and of the RSS where the trace has it. */
static void put_chart(FILE *out, const struct rep_html *w, int times)
{
	const double W = 900, H = 240, L = 90, B = 20;
	uint64_t xmax = 1, ymax = 1;
	char b[REP_BYTES_SIZE];

	bounds(&w->live, &xmax, &ymax);
	bounds(&w->rss, &xmax, &ymax);
	fprintf(out, "<h2>Live bytes and RSS over %s</h2>\n<svg class=\"chart\" "
		"xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\">\n",
		times ? "time" : "events", W + L, H + B);
	put_series(out, &w->live, "live", "#36c", L, W, H, xmax, ymax);
	put_series(out, &w->rss, "rss", "#c33", L, W, H, xmax, ymax);
	fprintf(out, "<text x=\"2\" y=\"12\" font-size=\"11\">%s%s</text>"
		"<text x=\"2\" y=\"%.0f\" font-size=\"11\">0</text>"
		"<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\" text-anchor=\"end\">", rep_bytes(ymax, b),
		rep_units_exact() ? " B" : "", H,
		L + W, H + B - 4);
	if (times)
		fprintf(out, "%.6f s", (double)xmax / 1e9);
	else
		fprintf(out, "%" PRIu64 " events", xmax);
	fprintf(out, "</text><text x=\"100\" y=\"14\" font-size=\"12\" fill=\"#36c\">live "
		"bytes</text><text x=\"180\" y=\"14\" font-size=\"12\" fill=\"#c33\">%s</text>"
		"</svg>\n", w->rss.xmax || w->rss.b[0].used ? "RSS" : "RSS: no records");
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

int rep_write_html(FILE *out, struct rep_html *w, const struct rep_heap *h)
{
	const struct rep_proc *procs;
	size_t n = rep_heap_procs(h, &procs);

	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>alloctap-report: ", out);
	rep_put_xml_text(out, w->title, strlen(w->title));
	fprintf(out, "</title><style>%s</style></head><body>\n<h1>alloctap-report: ", style);
	rep_put_xml_text(out, w->title, strlen(w->title));
	fputs("</h1>\n", out);
	put_summary(out, h);
	uint64_t live, blocks;
	rep_heap_live(h, &live, &blocks);
	if (w->seen)
		add_sample(&w->live, w->last_x, live); /* after the last event */
	put_chart(out, w, rep_heap_has_times(h));
	for (size_t i = 0; i < n; i++) {
		char b[REP_BYTES_SIZE];
		fprintf(out, "<h2>Heap peak of process %" PRIu32 ": %s in %" PRIu64
			" blocks (click a frame to zoom, the root to zoom out)</h2>\n", procs[i].pid,
			rep_bytes_said(procs[i].peak_bytes, b), procs[i].peak_blocks);
		if (rep_write_flame_svg(out, h, i, REP_AT_PEAK) < 0)
			return -1;
	}
	if (put_top(out, h, "Sites holding most at the heap peak", "bytes", peak_of) < 0 ||
	    put_top(out, h, "Leaks: live at the end", "bytes", leak_of) < 0 ||
	    put_top(out, h, "Sites of most allocations", "calls", allocs_of) < 0 ||
	    put_top(out, h, "Sites of most temporary allocations", "temporaries", temps_of) < 0)
		return -1;
	fprintf(out, "<script>%s</script>\n</body></html>\n", script);
	return rep_finish_output(out);
}
