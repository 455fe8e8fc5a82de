/* diff.c: two traces' sites side by side (diff.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "finish.h"
#include "diff.h"

struct row {
	int64_t entry; /* in a's folded table (b's texts are interned there too) */
	uint64_t allocs[2], peak[2], leak[2];
};

/* Adds the figures of every site of h into rows[entry][side], entries of table x. */
static int add_sites(const struct rep_heap *h, struct rep_sites *x, struct rep_sites *names,
		     struct row **rows, size_t *nrows, int side)
{
	const struct rep_site *sites;
	size_t n = rep_heap_sites(h, &sites);

	for (size_t i = 0; i < n; i++) {
		size_t len;
		const char *text = rep_folded_text(x->folded, sites[i].entry, &len);
		int64_t e = rep_folded_intern(names->folded, text, len);
		if (e < 0)
			return -1;
		if ((size_t)e >= *nrows) {
			size_t cap = *nrows ? *nrows : 64;
			while (cap <= (size_t)e)
				cap *= 2;
			struct row *r = realloc(*rows, cap * sizeof(*r));
			if (!r)
				return -1;
			memset(r + *nrows, 0, (cap - *nrows) * sizeof(*r));
			for (size_t k = *nrows; k < cap; k++)
				r[k].entry = (int64_t)k;
			*rows = r;
			*nrows = cap;
		}
		struct row *r = &(*rows)[e];
		r->allocs[side] += sites[i].allocs;
		r->peak[side] = rep_sat_add(r->peak[side], sites[i].peak_bytes);
		r->leak[side] = rep_sat_add(r->leak[side], sites[i].live_bytes);
	}
	return 0;
}

static uint64_t distance(const uint64_t v[2])
{
	return v[0] > v[1] ? v[0] - v[1] : v[1] - v[0];
}

static struct rep_sites *sort_names;

static int by_change(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;
	uint64_t da = distance(a->peak), db = distance(b->peak);
	size_t la, lb;

	if (da != db)
		return da > db ? -1 : 1;
	da = distance(a->allocs);
	db = distance(b->allocs);
	if (da != db)
		return da > db ? -1 : 1;
	const char *ta = rep_folded_text(sort_names->folded, a->entry, &la);
	const char *tb = rep_folded_text(sort_names->folded, b->entry, &lb);
	int c = memcmp(ta, tb, la < lb ? la : lb);
	return c ? c : (la > lb) - (la < lb);
}

static void put_triple(FILE *out, const uint64_t v[2])
{
	fprintf(out, " %12" PRIu64 " %12" PRIu64 " %+13" PRId64, v[0], v[1],
		(int64_t)(v[1] - v[0]));
}

int rep_write_diff(FILE *out, const struct rep_heap *a, struct rep_sites *xa,
		   const struct rep_heap *b, struct rep_sites *xb)
{
	struct row *rows = NULL;
	size_t nrows = 0, kept = 0;

	if (add_sites(a, xa, xa, &rows, &nrows, 0) < 0 || add_sites(b, xb, xa, &rows, &nrows, 1) < 0) {
		free(rows);
		errno = ENOMEM;
		return -1;
	}
	for (size_t i = 0; i < nrows; i++)
		if (distance(rows[i].allocs) || distance(rows[i].peak) || distance(rows[i].leak))
			rows[kept++] = rows[i];
	sort_names = xa;
	if (kept) /* rows is NULL when no site was seen, which qsort must not get */
		qsort(rows, kept, sizeof(*rows), by_change);
	fprintf(out, " %12s %12s %13s %12s %12s %13s %12s %12s %13s  %s\n", "allocs A", "allocs B",
		"change", "peak A", "peak B", "change", "leak A", "leak B", "change", "site");
	if (!kept)
		fputs("(no site differs)\n", out);
	for (size_t i = 0; i < kept; i++) {
		size_t len;
		const char *text = rep_folded_text(xa->folded, rows[i].entry, &len);
		put_triple(out, rows[i].allocs);
		put_triple(out, rows[i].peak);
		put_triple(out, rows[i].leak);
		fprintf(out, "  %.*s\n", (int)len, text);
	}
	free(rows);
	return rep_finish_output(out);
}
