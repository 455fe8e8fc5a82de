/* top.c: alloctap-report top: sites ranked by one weight, leaf first (top.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "finish.h"
#include "json.h"
#include "sitetext.h"
#include "span.h"
#include "tables.h"
#include "top.h"
#include "units.h"

/* The ranking's options (rep_sorted_sites takes a function of the site alone). */
static const struct rep_top_options *ranked_by;

static uint64_t ranked_weight(const struct rep_site *s)
{
	return rep_top_weight(s, ranked_by);
}

uint64_t rep_top_weight(const struct rep_site *s, const struct rep_top_options *o)
{
	if (o->by == REP_WEIGHT_LIVE_BYTES && o->at == REP_AT_PEAK)
		return rep_site_weight(s, REP_WEIGHT_PEAK_BYTES);
	return rep_site_weight(s, o->by);
}

/* The weights' names on the command line, and what each one is. */
static const char *const weight_names[] = {
	[REP_WEIGHT_ALLOC_COUNT] = "alloc-count",
	[REP_WEIGHT_ALLOC_BYTES] = "alloc-bytes",
	[REP_WEIGHT_PEAK_BYTES] = "peak-bytes",
	[REP_WEIGHT_LEAK_BYTES] = "leak-bytes",
	[REP_WEIGHT_TEMP_COUNT] = "temp-count",
	[REP_WEIGHT_HEAPTRACK_TEMP_COUNT] = "heaptrack-temp-count",
	[REP_WEIGHT_CHURN] = "churn",
	[REP_WEIGHT_LIVE_BYTES] = "live-bytes",
};
static const char *const weight_meanings[] = {
	[REP_WEIGHT_ALLOC_COUNT] = "allocation calls",
	[REP_WEIGHT_ALLOC_BYTES] = "bytes allocated (asked)",
	[REP_WEIGHT_PEAK_BYTES] = "bytes live at the heap peak",
	[REP_WEIGHT_LEAK_BYTES] = "bytes live at the end",
	[REP_WEIGHT_TEMP_COUNT] = "temporary allocations (freed by the next call of their thread)",
	[REP_WEIGHT_HEAPTRACK_TEMP_COUNT] = "temporary allocations as heaptrack_print counts them "
					    "(released right after an allocation of their site "
					    "and size)",
	[REP_WEIGHT_CHURN] = "bytes allocated and released again (freed or reallocated)",
	[REP_WEIGHT_LIVE_BYTES] = "bytes live at", /* and the moment (meaning_of) */
};

static int counts_bytes(enum rep_weight w)
{
	return w == REP_WEIGHT_ALLOC_BYTES || w == REP_WEIGHT_PEAK_BYTES ||
	       w == REP_WEIGHT_LEAK_BYTES || w == REP_WEIGHT_CHURN || w == REP_WEIGHT_LIVE_BYTES;
}

/* What o->by is, in words, into buf (size bytes): its meaning, by live-bytes with the moment
 * ("the end", "the heap peak", "the RSS peak" or "S s", the seconds exact). Returns buf. */
static const char *meaning_of(const struct rep_top_options *o, char *buf, size_t size)
{
	char secs[32];

	if (o->by != REP_WEIGHT_LIVE_BYTES)
		snprintf(buf, size, "%s", weight_meanings[o->by]);
	else if (o->at == REP_AT_TIME)
		snprintf(buf, size, "%s %s s", weight_meanings[o->by], rep_seconds_text(o->at_ns, secs));
	else
		snprintf(buf, size, "%s the %s", weight_meanings[o->by],
			 o->at == REP_AT_PEAK ? "heap peak" : o->at == REP_AT_RSS_PEAK ? "RSS peak" : "end");
	return buf;
}

/* ---- text ------------------------------------------------------------------------------------ */

static void put_value(FILE *out, uint64_t v, const struct rep_top_options *o)
{
	char buf[32];

	if (counts_bytes(o->by))
		rep_human_bytes(v, o->exact, buf, sizeof(buf));
	else
		snprintf(buf, sizeof(buf), "%" PRIu64, v);
	fprintf(out, "%14s", buf);
}

/* The total of the weight over process proc's sites. */
static rep_u128 total_of(const struct rep_site *sites, size_t nsites, size_t proc,
			 const struct rep_top_options *o)
{
	rep_u128 t = 0;

	for (size_t i = 0; i < nsites; i++)
		if (sites[i].proc == proc)
			t += rep_top_weight(&sites[i], o);
	return t;
}

static void put_share(FILE *out, uint64_t v, rep_u128 total)
{
	unsigned tenths = total ? (unsigned)((rep_u128)v * 1000 / total) : 0;

	fprintf(out, " %5u.%u%%  ", tenths / 10, tenths % 10);
}

static void write_rows(FILE *out, const struct rep_heap *h, const struct rep_site *sites,
		       const uint32_t *idx, size_t shown, size_t shared, rep_u128 total,
		       const struct rep_top_options *o)
{
	fprintf(out, "%14s %7s  %s\n", counts_bytes(o->by) ? "bytes" : "count", "share",
		"site: the allocation function, then its callers");
	for (size_t k = 0; k < shown; k++) {
		uint64_t v = rep_top_weight(&sites[idx[k]], o);

		put_value(out, v, o);
		put_share(out, v, total);
		rep_put_site(out, h, &sites[idx[k]], shared);
		fputc('\n', out);
	}
	if (shown)
		rep_put_called_from(out, h, &sites[idx[0]], shared, 26);
}

static int write_process_text(FILE *out, const struct rep_heap *h, size_t proc,
			      const struct rep_proc *p, size_t nprocs,
			      const struct rep_top_options *o)
{
	const struct rep_site *sites;
	size_t nsites = rep_heap_sites(h, &sites), count;
	uint32_t *idx = rep_sorted_sites(h, proc, ranked_weight, &count);

	if (!idx)
		return -1;
	size_t shown = count < o->limit ? count : o->limit;
	if (nprocs > 1)
		fprintf(out, "== process %" PRIu32 "\n", p->pid);
	char meaning[160];

	fprintf(out, "sites by %s, %s: %zu of %zu shown\n", weight_names[o->by],
		meaning_of(o, meaning, sizeof(meaning)), shown, count);
	if (shown)
		write_rows(out, h, sites, idx, shown, rep_shared_callers(h, sites, idx, shown),
			   total_of(sites, nsites, proc, o), o);
	free(idx);
	return 0;
}

/* ---- JSON ------------------------------------------------------------------------------------ */

static int write_process_json(struct rep_json *j, const struct rep_heap *h, size_t proc,
			      const struct rep_proc *p, const struct rep_top_options *o)
{
	const struct rep_site *sites;
	size_t nsites = rep_heap_sites(h, &sites), count;
	uint32_t *idx = rep_sorted_sites(h, proc, ranked_weight, &count);

	if (!idx)
		return -1;
	rep_json_object(j);
	rep_json_key_u64(j, "pid", p->pid);
	rep_json_key_u64(j, "total", rep_sat_u64(total_of(sites, nsites, proc, o)));
	rep_json_key(j, "sites");
	rep_json_array(j);
	for (size_t k = 0; k < count && k < o->limit; k++) {
		rep_json_object(j);
		rep_json_key_u64(j, "value", rep_top_weight(&sites[idx[k]], o));
		rep_json_key(j, "stack");
		rep_json_site(j, h, &sites[idx[k]]);
		rep_json_object_end(j);
	}
	rep_json_array_end(j);
	rep_json_object_end(j);
	free(idx);
	return 0;
}

/* The JSON document's start: {"by": W, by live-bytes "at": A, "time_ns": T or null, then
 * "processes": [. */
/* The document's keys before "processes": "by", and for live-bytes its moment ("at") and time
 * ("time_ns": that of --at SECONDS, else null). */
static void put_json_head(struct rep_json *j, const struct rep_top_options *o)
{
	rep_json_key_cstring(j, "by", weight_names[o->by]);
	if (o->by != REP_WEIGHT_LIVE_BYTES)
		return;
	rep_json_key_cstring(j, "at", o->at == REP_AT_TIME	   ? "time"
				      : o->at == REP_AT_PEAK	   ? "heap-peak"
				      : o->at == REP_AT_RSS_PEAK ? "rss-peak"
								   : "end");
	rep_json_key(j, "time_ns");
	if (o->at == REP_AT_TIME)
		rep_json_u64(j, o->at_ns);
	else
		rep_json_null(j);
}

int rep_write_top(FILE *out, const struct rep_heap *h, const struct rep_top_options *o)
{
	const struct rep_proc *procs;
	size_t n = rep_heap_procs(h, &procs);
	struct rep_json j = { 0 };

	ranked_by = o;
	if (o->json) {
		rep_json_init(&j, out);
		rep_json_object(&j);
		put_json_head(&j, o);
		rep_json_key(&j, "processes");
		rep_json_array(&j);
	}
	for (size_t i = 0; i < n; i++)
		if ((o->json ? write_process_json(&j, h, i, &procs[i], o)
			     : write_process_text(out, h, i, &procs[i], n, o)) < 0)
			return -1;
	if (o->json) {
		rep_json_array_end(&j);
		rep_json_object_end(&j);
		rep_json_done(&j);
	}
	return rep_finish_output(out);
}
