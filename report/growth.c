/* growth.c: how each site's live bytes grew, and the age of its live blocks (growth.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "finish.h"
#include "sitetext.h"
#include "growth.h"
#include "json.h"
#include "tables.h"
#include "units.h"

/* Room for n sites in the array *a of *cap (new entries zeroed). 0, or -1. */
static int grow_array(void **a, size_t *cap, size_t n, size_t size)
{
	if (n <= *cap)
		return 0;
	size_t c = *cap ? *cap : 64;
	while (c < n)
		c *= 2;
	void *p = realloc(*a, c * size);
	if (!p)
		return -1;
	memset((char *)p + *cap * size, 0, (c - *cap) * size);
	*a = p;
	*cap = c;
	return 0;
}

/* Every site's live bytes now, as the latest sample, labelled at. */
static void take_sample(struct rep_growth *g, struct rep_heap *h, uint64_t at)
{
	const struct rep_site *sites;
	size_t n = rep_heap_sites(h, &sites);
	uint64_t *keep = g->live[0];
	size_t keep_cap = g->cap[0];

	g->live[0] = g->live[1];
	g->cap[0] = g->cap[1];
	g->clock[0] = g->clock[1];
	g->live[1] = keep;
	g->cap[1] = keep_cap;
	if (grow_array((void **)&g->live[1], &g->cap[1], n, sizeof(uint64_t)) < 0) {
		g->failed = 1;
		return;
	}
	for (size_t i = 0; i < n; i++)
		g->live[1][i] = sites[i].live_bytes;
	g->clock[1] = at;
	g->samples++;
}

static void on_event(void *arg, struct rep_heap *h, const struct at_event *ev)
{
	struct rep_growth *g = arg;

	g->times = rep_heap_has_times(h);
	if (g->times && !g->first_time_ns) /* the engine's origin (its first event, of any process) */
		g->first_time_ns = ev->time_ns - rep_heap_time_of(h, ev);
	/* the clock before the event: its time, or the events applied */
	uint64_t now = g->times ? rep_heap_time_of(h, ev) : rep_heap_seq(h);
	if (now < g->next)
		return;
	uint64_t at = g->next;
	while (at <= now / 2)
		at *= 2; /* the last power of two at or before now */
	take_sample(g, h, at);
	g->next = at * 2;
}

/* The clock of a block's allocation: its time, or the events applied before it. */
static uint64_t block_clock(const struct rep_growth *g, const struct rep_block *b)
{
	if (!g->times)
		return b->seq - 1;
	return b->time_ns > g->first_time_ns ? b->time_ns - g->first_time_ns : 0;
}

static void on_block(void *arg, const struct rep_block *b, int released)
{
	struct rep_growth *g = arg;

	if (grow_array((void **)&g->alloc_sum, &g->sum_cap, (size_t)b->site + 1,
		       sizeof(rep_u128)) < 0) {
		g->failed = 1;
		return;
	}
	if (released)
		g->alloc_sum[b->site] -= block_clock(g, b);
	else
		g->alloc_sum[b->site] += block_clock(g, b);
}

void rep_growth_start(struct rep_growth *g, struct rep_heap *h)
{
	g->next = 1;
	rep_heap_on_event(h, on_event, g);
	rep_heap_on_block(h, on_block, g);
}

int rep_growth_end(struct rep_growth *g, struct rep_heap *h)
{
	const struct rep_proc *procs;
	size_t n = rep_heap_procs(h, &procs);

	/* the last event's time (last_time_ns is 1 + it), or the events applied */
	g->end = rep_heap_has_times(h) ? 0 : rep_heap_seq(h);
	for (size_t i = 0; rep_heap_has_times(h) && i < n; i++)
		if (procs[i].last_time_ns > g->end + 1)
			g->end = procs[i].last_time_ns - 1;
	if (g->failed) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void rep_growth_free(struct rep_growth *g)
{
	free(g->live[0]);
	free(g->live[1]);
	free(g->alloc_sum);
	memset(g, 0, sizeof(*g));
}

/* ---- the verdict and the table ------------------------------------------------------------- */

enum kind { KIND_NONE, KIND_YOUNG, KIND_STEADY, KIND_GROWING };
static const char *const kind_names[] = { "-", "young", "steady", "growing" };

/* The sample at or before half the trace: its index in live[], or -1 (the start: nothing). */
static int mid_sample(const struct rep_growth *g)
{
	for (int k = 1; k >= 0; k--)
		if (g->samples >= 2 - k && g->clock[k] <= g->end / 2)
			return k;
	return -1;
}

/* The report's figures of one site. */
struct site_growth {
	uint64_t then;   /* its live bytes at T */
	int64_t growth;  /* bytes since T (saturated to the int64 range) */
	uint64_t age;    /* the mean age of its live blocks, on the clock */
	enum kind kind;
};

/* d, or INT64_MAX when it is more. */
static int64_t clamp(uint64_t d)
{
	return d > INT64_MAX ? INT64_MAX : (int64_t)d;
}

static struct site_growth growth_of(const struct rep_growth *g, const struct rep_site *s,
				    size_t index)
{
	struct site_growth r = { 0 };
	int k = mid_sample(g);
	uint64_t then = k >= 0 && index < g->cap[k] ? g->live[k][index] : 0;
	rep_u128 sum = index < g->sum_cap ? g->alloc_sum[index] : 0;

	r.then = then;
	if (!s->live_bytes)
		return r;
	r.growth = s->live_bytes >= then ? clamp(s->live_bytes - then) : -clamp(then - s->live_bytes);
	uint64_t mean = s->live_blocks ? (uint64_t)(sum / s->live_blocks) : g->end;
	r.age = g->end > mean ? g->end - mean : 0;
	if (r.age * 10 < g->end)
		r.kind = KIND_YOUNG;
	else if (r.growth > 0 && (uint64_t)r.growth > s->live_bytes / 4)
		r.kind = KIND_GROWING;
	else
		r.kind = KIND_STEADY;
	return r;
}

/* The order of leaks: the kind in the top bits, then growth for growing sites, bytes for the
 * others; 0 for a site with nothing live. */
static const struct rep_growth *order_growth;
static const struct rep_site *order_sites;

static uint64_t leak_order(const struct rep_site *s)
{
	size_t index = (size_t)(s - order_sites);
	struct site_growth r = growth_of(order_growth, s, index);
	uint64_t v = r.kind == KIND_GROWING ? (uint64_t)r.growth : s->live_bytes;
	uint64_t low = v < (UINT64_C(1) << 62) ? v : (UINT64_C(1) << 62) - 1;

	return r.kind == KIND_NONE ? 0 : (uint64_t)r.kind << 62 | low;
}

/* A point of the clock: "S.SSSSSS s" on a trace with times, else "N events". */
static void put_clock(FILE *out, uint64_t c, int times)
{
	if (times)
		fprintf(out, "%" PRIu64 ".%06" PRIu64 " s", c / 1000000000u,
			c % 1000000000u / 1000u);
	else
		fprintf(out, "%" PRIu64 " events", c);
}

static void put_age(FILE *out, uint64_t age, int times)
{
	char buf[40];

	if (times)
		snprintf(buf, sizeof(buf), "%" PRIu64 ".%03" PRIu64 " s", age / 1000000000u,
			 age % 1000000000u / 1000000u);
	else
		snprintf(buf, sizeof(buf), "%" PRIu64 " ev", age);
	fprintf(out, " %14s", buf);
}

/* The sites of process proc with something live, in leaks' order (above); *count of them,
 * the engine's sites in *sites. The caller frees the list; NULL with errno. */
static uint32_t *leak_sites(const struct rep_heap *h, const struct rep_growth *g, size_t proc,
			    const struct rep_site **sites, size_t *count)
{
	rep_heap_sites(h, sites);
	order_growth = g;
	order_sites = *sites;
	return rep_sorted_sites(h, proc, leak_order, count);
}

static int write_process(FILE *out, const struct rep_heap *h, const struct rep_growth *g,
			 size_t proc, const struct rep_proc *p, size_t nprocs)
{
	const struct rep_site *sites;
	size_t count;
	int times = rep_heap_has_times(h), k = mid_sample(g);
	char b[REP_BYTES_SIZE], c[REP_BYTES_SIZE];

	uint32_t *idx = leak_sites(h, g, proc, &sites, &count);
	if (!idx)
		return -1;
	if (nprocs > 1)
		fprintf(out, "== process %" PRIu32 "\n", p->pid);
	fprintf(out, "live at the end: %s in %" PRIu64 " blocks, %zu sites; growth since ",
		rep_bytes_said(p->live_bytes, b), p->live_blocks, count);
	put_clock(out, k >= 0 ? g->clock[k] : 0, times);
	fputs(", of ", out);
	put_clock(out, g->end, times);
	fputc('\n', out);
	if (count)
		fprintf(out, "%12s %8s %12s %14s  %-7s  %s\n", "bytes", "blocks", "growth", "mean age",
			"kind", "site");
	size_t shared = rep_shared_callers(h, sites, idx, count);
	for (size_t i = 0; i < count; i++) {
		const struct rep_site *s = &sites[idx[i]];
		struct site_growth r = growth_of(g, s, idx[i]);

		fprintf(out, "%12s %8" PRIu64 " %12s", rep_bytes(s->live_bytes, b), s->live_blocks,
			rep_bytes_change(r.growth, c));
		put_age(out, r.age, times);
		fprintf(out, "  %-7s  ", kind_names[r.kind]);
		rep_put_site(out, h, s, shared);
		fputc('\n', out);
	}
	if (count)
		rep_put_called_from(out, h, &sites[idx[0]], shared, 60);
	free(idx);
	return 0;
}

int rep_write_leaks_growth(FILE *out, const struct rep_heap *h, const struct rep_growth *g)
{
	const struct rep_proc *procs;
	size_t n = rep_heap_procs(h, &procs);

	for (size_t i = 0; i < n; i++)
		if (write_process(out, h, g, i, &procs[i], n) < 0)
			return -1;
	return rep_finish_output(out);
}

/* ---- JSON and CSV ------------------------------------------------------------------------- */

static int json_process(struct rep_json *j, const struct rep_heap *h, const struct rep_growth *g,
			size_t proc, const struct rep_proc *p)
{
	const struct rep_site *sites;
	size_t count;
	uint32_t *idx = leak_sites(h, g, proc, &sites, &count);

	if (!idx)
		return -1;
	rep_json_object(j);
	rep_json_key_u64(j, "pid", p->pid);
	rep_json_key_u64(j, "live_bytes", p->live_bytes);
	rep_json_key_u64(j, "live_blocks", p->live_blocks);
	rep_json_key(j, "sites");
	rep_json_array(j);
	for (size_t i = 0; i < count; i++) {
		const struct rep_site *s = &sites[idx[i]];
		struct site_growth r = growth_of(g, s, idx[i]);

		rep_json_object(j);
		rep_json_key_u64(j, "bytes", s->live_bytes);
		rep_json_key_u64(j, "blocks", s->live_blocks);
		rep_json_key(j, "growth");
		rep_json_change(j, r.then, s->live_bytes);
		rep_json_key_u64(j, "mean_age", r.age);
		rep_json_key_cstring(j, "kind", kind_names[r.kind]);
		rep_json_key(j, "stack");
		rep_json_site(j, h, s);
		rep_json_object_end(j);
	}
	rep_json_array_end(j);
	rep_json_object_end(j);
	free(idx);
	return 0;
}

int rep_write_leaks_json(FILE *out, const struct rep_heap *h, const struct rep_growth *g)
{
	const struct rep_proc *procs;
	size_t n = rep_heap_procs(h, &procs);
	int k = mid_sample(g);
	struct rep_json j;

	rep_json_init(&j, out);
	rep_json_object(&j);
	rep_json_key_cstring(&j, "clock", rep_heap_has_times(h) ? "ns" : "events");
	rep_json_key_u64(&j, "since", k >= 0 ? g->clock[k] : 0);
	rep_json_key_u64(&j, "end", g->end);
	rep_json_key(&j, "processes");
	rep_json_array(&j);
	for (size_t i = 0; i < n; i++)
		if (json_process(&j, h, g, i, &procs[i]) < 0)
			return -1;
	rep_json_array_end(&j);
	rep_json_object_end(&j);
	rep_json_done(&j);
	return rep_finish_output(out);
}

int rep_write_leaks_csv(FILE *out, const struct rep_heap *h, const struct rep_growth *g)
{
	static const char *const ns_header[] = { "pid", "bytes", "blocks", "growth", "mean_age_ns",
						  "kind", "stack", NULL };
	static const char *const ev_header[] = { "pid", "bytes", "blocks", "growth",
						  "mean_age_events", "kind", "stack", NULL };
	const struct rep_proc *procs;
	size_t n = rep_heap_procs(h, &procs);
	struct rep_csv c;

	rep_csv_init(&c, out);
	rep_csv_header(&c, rep_heap_has_times(h) ? ns_header : ev_header);
	for (size_t p = 0; p < n; p++) {
		const struct rep_site *sites;
		size_t count, len;
		uint32_t *idx = leak_sites(h, g, p, &sites, &count);

		if (!idx)
			return -1;
		for (size_t i = 0; i < count; i++) {
			const struct rep_site *s = &sites[idx[i]];
			struct site_growth r = growth_of(g, s, idx[i]);
			const char *text = rep_heap_site_text(h, s, &len);

			rep_csv_u64(&c, s->pid);
			rep_csv_u64(&c, s->live_bytes);
			rep_csv_u64(&c, s->live_blocks);
			rep_csv_change(&c, r.then, s->live_bytes);
			rep_csv_u64(&c, r.age);
			rep_csv_cstring(&c, kind_names[r.kind]);
			rep_csv_stack(&c, text, len);
			rep_csv_end(&c);
		}
		free(idx);
	}
	return rep_finish_output(out);
}
