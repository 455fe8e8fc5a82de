/* top.c: alloctap-report top: sites ranked by one weight, leaf first (top.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "finish.h"
#include "json.h"
#include "tables.h"
#include "top.h"

/* The weight the sites are ranked by (rep_sorted_sites takes a function of the site alone). */
static enum rep_weight ranked_by;

static uint64_t ranked_weight(const struct rep_site *s)
{
	return rep_site_weight(s, ranked_by);
}

/* The weights' names on the command line, and what each one is. */
static const char *const weight_names[] = {
	[REP_WEIGHT_ALLOC_COUNT] = "alloc-count",
	[REP_WEIGHT_ALLOC_BYTES] = "alloc-bytes",
	[REP_WEIGHT_PEAK_BYTES] = "peak-bytes",
	[REP_WEIGHT_LEAK_BYTES] = "leak-bytes",
	[REP_WEIGHT_TEMP_COUNT] = "temp-count",
};
static const char *const weight_meanings[] = {
	[REP_WEIGHT_ALLOC_COUNT] = "allocation calls",
	[REP_WEIGHT_ALLOC_BYTES] = "bytes allocated (asked)",
	[REP_WEIGHT_PEAK_BYTES] = "bytes live at the heap peak",
	[REP_WEIGHT_LEAK_BYTES] = "bytes live at the end",
	[REP_WEIGHT_TEMP_COUNT] = "temporary allocations (freed by the next call of their thread)",
};

static int counts_bytes(enum rep_weight w)
{
	return w == REP_WEIGHT_ALLOC_BYTES || w == REP_WEIGHT_PEAK_BYTES ||
	       w == REP_WEIGHT_LEAK_BYTES;
}

void rep_human_bytes(uint64_t bytes, int exact, char *buf, size_t size)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	unsigned u = 0;
	uint64_t scale = 1024;

	if (exact || bytes < 1024) {
		snprintf(buf, size, exact ? "%" PRIu64 : "%" PRIu64 " B", bytes);
		return;
	}
	while (u + 1 < sizeof(units) / sizeof(units[0]) && bytes / scale >= 1024) {
		scale *= 1024;
		u++;
	}
	uint64_t whole = bytes / scale, tenths = bytes % scale * 10 / scale;
	snprintf(buf, size, "%" PRIu64 ".%" PRIu64 " %s", whole, tenths, units[u]);
}

/* ---- a stack's frames ---------------------------------------------------------------------- */

#define MAX_FRAMES 512

/* The frames of a folded site text, root first (each a pointer into the text and a length). */
struct frames {
	const char *at[MAX_FRAMES];
	size_t len[MAX_FRAMES];
	size_t n;
};

static void split_frames(const char *text, size_t len, struct frames *f)
{
	size_t start = 0;

	f->n = 0;
	for (size_t i = 0; i <= len && f->n < MAX_FRAMES; i++) {
		if (i < len && text[i] != ';')
			continue;
		f->at[f->n] = text + start;
		f->len[f->n++] = i - start;
		start = i + 1;
	}
}

/* How many root frames every listed site shares, leaving each at least its allocation
 * function and one frame. */
static size_t shared_root(const struct rep_heap *h, const struct rep_site *sites,
			  const uint32_t *idx, size_t n)
{
	struct frames first, other;
	size_t len, shared;

	if (n == 0)
		return 0;
	const char *text = rep_heap_site_text(h, &sites[idx[0]], &len);
	split_frames(text, len, &first);
	shared = first.n > 2 ? first.n - 2 : 0;
	for (size_t k = 1; k < n && shared; k++) {
		text = rep_heap_site_text(h, &sites[idx[k]], &len);
		split_frames(text, len, &other);
		size_t same = 0;
		while (same < shared && same + 2 <= other.n && first.len[same] == other.len[same] &&
		       memcmp(first.at[same], other.at[same], first.len[same]) == 0)
			same++;
		shared = same;
	}
	return shared;
}

/* Writes frames [skip, n) leaf first, joined by sep. */
static void put_leaf_first(FILE *out, const struct frames *f, size_t skip, const char *sep)
{
	for (size_t i = f->n; i > skip; i--)
		fprintf(out, "%s%.*s", i == f->n ? "" : sep, (int)f->len[i - 1], f->at[i - 1]);
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
			 enum rep_weight w)
{
	rep_u128 t = 0;

	for (size_t i = 0; i < nsites; i++)
		if (sites[i].proc == proc)
			t += rep_site_weight(&sites[i], w);
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
	struct frames f;
	size_t len;

	fprintf(out, "%14s %7s  %s\n", counts_bytes(o->by) ? "bytes" : "count", "share",
		"site: the allocation function, then its callers");
	for (size_t k = 0; k < shown; k++) {
		uint64_t v = rep_site_weight(&sites[idx[k]], o->by);
		const char *text = rep_heap_site_text(h, &sites[idx[k]], &len);

		split_frames(text, len, &f);
		put_value(out, v, o);
		put_share(out, v, total);
		put_leaf_first(out, &f, shared, " < ");
		fputc('\n', out);
	}
	if (shared == 0 || shown == 0)
		return;
	split_frames(rep_heap_site_text(h, &sites[idx[0]], &len), len, &f);
	f.n = shared;
	fprintf(out, "%24s  every site above is called from: ", "");
	put_leaf_first(out, &f, 0, " < ");
	fputc('\n', out);
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
	fprintf(out, "sites by %s, %s: %zu of %zu shown\n", weight_names[o->by],
		weight_meanings[o->by], shown, count);
	if (shown)
		write_rows(out, h, sites, idx, shown, shared_root(h, sites, idx, shown),
			   total_of(sites, nsites, proc, o->by), o);
	free(idx);
	return 0;
}

/* ---- JSON ------------------------------------------------------------------------------------ */

/* A JSON string of the n bytes at s: quotes, backslashes and control characters escaped. */
static void put_json_string(FILE *out, const char *s, size_t n)
{
	rep_json_put_string(out, s, n);
}

static int write_process_json(FILE *out, const struct rep_heap *h, size_t proc,
			      const struct rep_proc *p, const struct rep_top_options *o)
{
	const struct rep_site *sites;
	size_t nsites = rep_heap_sites(h, &sites), count, len;
	uint32_t *idx = rep_sorted_sites(h, proc, ranked_weight, &count);
	struct frames f;

	if (!idx)
		return -1;
	rep_u128 total = total_of(sites, nsites, proc, o->by);
	fprintf(out, "{\"pid\": %" PRIu32 ", \"total\": %" PRIu64 ", \"sites\": [", p->pid,
		rep_sat_u64(total));
	for (size_t k = 0; k < count && k < o->limit; k++) {
		const char *text = rep_heap_site_text(h, &sites[idx[k]], &len);

		split_frames(text, len, &f);
		fprintf(out, "%s{\"value\": %" PRIu64 ", \"stack\": [", k ? ", " : "",
			rep_site_weight(&sites[idx[k]], o->by));
		for (size_t i = f.n; i > 0; i--) {
			fputs(i == f.n ? "" : ", ", out);
			put_json_string(out, f.at[i - 1], f.len[i - 1]);
		}
		fputs("]}", out);
	}
	fputs("]}", out);
	free(idx);
	return 0;
}

int rep_write_top(FILE *out, const struct rep_heap *h, const struct rep_top_options *o)
{
	const struct rep_proc *procs;
	size_t n = rep_heap_procs(h, &procs);

	ranked_by = o->by;
	if (o->json)
		fprintf(out, "{\"by\": \"%s\", \"processes\": [", weight_names[o->by]);
	for (size_t i = 0; i < n; i++) {
		if (o->json && i)
			fputs(", ", out);
		if ((o->json ? write_process_json(out, h, i, &procs[i], o)
			     : write_process_text(out, h, i, &procs[i], n, o)) < 0)
			return -1;
	}
	if (o->json)
		fputs("]}\n", out);
	return rep_finish_output(out);
}
