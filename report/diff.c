/* diff.c: two traces' sites side by side (diff.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "finish.h"
#include "diff.h"
#include "units.h"

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

/* A triple of byte figures: A and B as rep_bytes, the change as rep_bytes_change (units.h). */
static void put_bytes_triple(FILE *out, const uint64_t v[2])
{
	char a[REP_BYTES_SIZE], b[REP_BYTES_SIZE], c[REP_BYTES_SIZE];

	fprintf(out, " %12s %12s %13s", rep_bytes(v[0], a), rep_bytes(v[1], b),
		rep_bytes_change((int64_t)(v[1] - v[0]), c));
}

static void write_text(FILE *out, const struct row *rows, size_t kept, struct rep_sites *xa)
{
	fprintf(out, " %12s %12s %13s %12s %12s %13s %12s %12s %13s  %s\n", "allocs A", "allocs B",
		"change", "peak A", "peak B", "change", "leak A", "leak B", "change", "site");
	if (!kept)
		fputs("(no site differs)\n", out);
	for (size_t i = 0; i < kept; i++) {
		size_t len;
		const char *text = rep_folded_text(xa->folded, rows[i].entry, &len);
		put_triple(out, rows[i].allocs);
		put_bytes_triple(out, rows[i].peak);
		put_bytes_triple(out, rows[i].leak);
		fprintf(out, "  %.*s\n", (int)len, text);
	}
}

/* A figure's three keys: NAME_a, NAME_b, NAME_change. */
static void json_triple(struct rep_json *j, const char *name, const uint64_t v[2])
{
	char key[32];

	snprintf(key, sizeof(key), "%s_a", name);
	rep_json_key_u64(j, key, v[0]);
	snprintf(key, sizeof(key), "%s_b", name);
	rep_json_key_u64(j, key, v[1]);
	snprintf(key, sizeof(key), "%s_change", name);
	rep_json_key(j, key);
	rep_json_change(j, v[0], v[1]);
}

static void write_json(FILE *out, const struct row *rows, size_t kept, struct rep_sites *xa)
{
	struct rep_json j;

	rep_json_init(&j, out);
	rep_json_object(&j);
	rep_json_key(&j, "sites");
	rep_json_array(&j);
	for (size_t i = 0; i < kept; i++) {
		size_t len;
		const char *text = rep_folded_text(xa->folded, rows[i].entry, &len);
		rep_json_object(&j);
		json_triple(&j, "allocs", rows[i].allocs);
		json_triple(&j, "peak", rows[i].peak);
		json_triple(&j, "leak", rows[i].leak);
		rep_json_key(&j, "stack");
		rep_json_stack(&j, text, len);
		rep_json_object_end(&j);
	}
	rep_json_array_end(&j);
	rep_json_object_end(&j);
	rep_json_done(&j);
}

static void write_csv(FILE *out, const struct row *rows, size_t kept, struct rep_sites *xa)
{
	static const char *const header[] = { "allocs_a", "allocs_b", "allocs_change", "peak_a",
		"peak_b", "peak_change", "leak_a", "leak_b", "leak_change", "stack", NULL };
	struct rep_csv c;

	rep_csv_init(&c, out);
	rep_csv_header(&c, header);
	for (size_t i = 0; i < kept; i++) {
		const uint64_t *v[3] = { rows[i].allocs, rows[i].peak, rows[i].leak };
		size_t len;
		const char *text = rep_folded_text(xa->folded, rows[i].entry, &len);
		for (int k = 0; k < 3; k++) {
			rep_csv_u64(&c, v[k][0]);
			rep_csv_u64(&c, v[k][1]);
			rep_csv_change(&c, v[k][0], v[k][1]);
		}
		rep_csv_stack(&c, text, len);
		rep_csv_end(&c);
	}
}

int rep_write_diff(FILE *out, const struct rep_heap *a, struct rep_sites *xa,
		   const struct rep_heap *b, struct rep_sites *xb, enum rep_format format)
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
	if (format == REP_FORMAT_JSON)
		write_json(out, rows, kept, xa);
	else if (format == REP_FORMAT_CSV)
		write_csv(out, rows, kept, xa);
	else
		write_text(out, rows, kept, xa);
	free(rows);
	return rep_finish_output(out);
}
