/* latency.c: per-call time histograms and their report (no allocation). */
#include <inttypes.h>
#include <stdlib.h>

#include "display.h"
#include "latency.h"
#include "prim.h"

#define CELLS_BYTES ((size_t)AT_FUNC_COUNT * RP_LAT_CLASSES * sizeof(struct rp_lat_cell))

int rp_latency_init(struct rp_latency *l, int by_size)
{
	l->by_size = by_size;
	l->cell = at_map(CELLS_BYTES, AT_MAP_NORESERVE);
	return l->cell ? 0 : -1;
}

void rp_latency_fini(struct rp_latency *l)
{
	at_unmap(l->cell, CELLS_BYTES);
	l->cell = NULL;
}

uint64_t rp_lat_bucket_low(unsigned b)
{
	if (b < RP_LAT_SUB)
		return b;
	unsigned e = b / RP_LAT_SUB + RP_LAT_SUB_BITS - 1;
	return (uint64_t)(RP_LAT_SUB + b % RP_LAT_SUB) << (e - RP_LAT_SUB_BITS);
}

void rp_latency_merge(struct rp_latency *into, const struct rp_latency *from)
{
	for (size_t i = 0; i < (size_t)AT_FUNC_COUNT * RP_LAT_CLASSES; i++) {
		const struct rp_lat_cell *f = &from->cell[i];
		struct rp_lat_cell *t = &into->cell[i];

		if (!f->count)
			continue;
		t->count += f->count;
		t->sum += f->sum;
		if (f->max > t->max)
			t->max = f->max;
		for (unsigned b = 0; b < RP_LAT_BUCKETS; b++)
			t->bucket[b] += f->bucket[b];
	}
}

uint64_t rp_lat_percentile(const struct rp_lat_cell *c, double q)
{
	if (!c->count)
		return 0;
	uint64_t rank = (uint64_t)(q * (double)c->count);
	if ((double)rank < q * (double)c->count)
		rank++;
	if (rank < 1)
		rank = 1;
	uint64_t seen = 0;
	for (unsigned b = 0; b < RP_LAT_BUCKETS; b++) {
		seen += c->bucket[b];
		if (seen >= rank)
			return rp_lat_bucket_low(b);
	}
	return c->max;
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double rp_clock_cost_ns(void)
{
	double runs[9];
	volatile uint64_t sink = 0;

	for (int r = 0; r < 9; r++) {
		uint64_t t0 = rp_clock_ns();
		for (int i = 0; i < 10000; i++)
			sink += rp_clock_ns();
		runs[r] = (double)(rp_clock_ns() - t0) / 10000.0;
	}
	(void)sink;
	qsort(runs, 9, sizeof(runs[0]), compare_doubles);
	return runs[4];
}

/* " LOW-HIGH" bytes of a size class ("0" for the class of size 0), or nothing without sizes. */
static void append_class(struct at_message *m, const struct rp_latency *l, unsigned cls)
{
	if (!l->by_size)
		return;
	if (cls == 0)
		at_message_append(m, " 0");
	else if (cls == 64)
		at_message_append(m, " %" PRIu64 "-%" PRIu64, UINT64_C(1) << 63, UINT64_MAX);
	else
		at_message_append(m, " %" PRIu64 "-%" PRIu64, UINT64_C(1) << (cls - 1),
				  (UINT64_C(1) << cls) - 1);
}

static void report_cell(const struct rp_latency *l, unsigned f, unsigned cls)
{
	const struct rp_lat_cell *c = rp_lat_cell_of(l, f, cls);
	struct at_message m = { .len = 0 };

	at_message_append(&m, "latency %s", at_func_name[f]);
	append_class(&m, l, cls);
	at_message_append(&m,
			  ": count=%" PRIu64 " mean=%.1f p50=%" PRIu64 " p90=%" PRIu64
			  " p99=%" PRIu64 " p99.9=%" PRIu64 " max=%" PRIu64 "\n",
			  c->count, (double)c->sum / (double)c->count, rp_lat_percentile(c, 0.5),
			  rp_lat_percentile(c, 0.9), rp_lat_percentile(c, 0.99),
			  rp_lat_percentile(c, 0.999), c->max);
	at_message_emit(0, &m);
	if (at_display_level < 3)
		return;
	for (unsigned b = 0; b < RP_LAT_BUCKETS; b++) {
		if (!c->bucket[b])
			continue;
		m.len = 0;
		at_message_append(&m, "  histogram %s", at_func_name[f]);
		append_class(&m, l, cls);
		at_message_append(&m, " %" PRIu64 ": %" PRIu64 "\n", rp_lat_bucket_low(b),
				  c->bucket[b]);
		at_message_emit(0, &m);
	}
}

void rp_latency_report(const struct rp_latency *l)
{
	struct at_message m = { .len = 0 };

	at_message_append(&m,
			  "latency clock: CLOCK_MONOTONIC (vDSO), %.1f ns per read, not subtracted; "
			  "times in ns, percentiles within 1/16\n",
			  rp_clock_cost_ns());
	at_message_emit(0, &m);
	for (unsigned f = 0; f < AT_FUNC_COUNT; f++)
		for (unsigned cls = 0; cls < RP_LAT_CLASSES; cls++)
			if (rp_lat_cell_of(l, f, cls)->count)
				report_cell(l, f, cls);
}
