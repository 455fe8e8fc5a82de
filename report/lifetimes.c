/* lifetimes.c: lifetimes of blocks, annotated or as histograms (lifetimes.h). */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "finish.h"
#include "annotate.h"
#include "json.h"
#include "lifetimes.h"
#include "tables.h"

/* Whether ev released b by its own pointer: a free or realloc of b's address. */
static int released_by(const struct at_event *ev, const struct rep_block *b)
{
	return ev && at_func_takes_pointer(ev->func) && ev->pid == b->pid &&
	       ev->arg[0] == b->addr;
}

static void on_block(void *arg, const struct rep_block *b, int released)
{
	struct rep_lifetimes *l = arg;

	if (!released || !released_by(l->w.ev, b))
		return;
	uint64_t ago = rep_heap_seq(l->w.h) - b->seq;
	unsigned size = rep_bucket_of(b->size);
	int timed = l->w.ev->time_ns && b->time_ns;
	uint64_t ns = timed && l->w.ev->time_ns > b->time_ns ? l->w.ev->time_ns - b->time_ns : 0;

	l->freed++;
	l->by_events[rep_bucket_of(ago)][size]++;
	if (timed) {
		l->timed++;
		l->by_ns[rep_bucket_of(ns)][size]++;
	}
	if (!l->w.annotate)
		return;
	int n = snprintf(l->note, sizeof(l->note), "%" PRIu64 " bytes, allocated %" PRIu64
			 " lines ago", b->size, ago);
	if (timed && n > 0 && (size_t)n < sizeof(l->note))
		snprintf(l->note + n, sizeof(l->note) - (size_t)n, ", %" PRIu64 " ns", ns);
}

void rep_lifetimes_start(struct rep_lifetimes *l, struct rep_heap *h, FILE *out, int annotate,
			 const int *munged)
{
	memset(l, 0, sizeof(*l));
	rep_watch_start(&l->w, h, out, annotate, munged, on_block, l);
}

int rep_lifetimes_event(struct rep_lifetimes *l, const struct at_event *ev)
{
	int selected;

	l->note[0] = '\0';
	int rc = rep_watch_event(&l->w, ev, &selected);
	if (rc == 0 && l->w.annotate && selected)
		rep_put_annotated(l->w.out, ev, *l->w.munged == 1, l->note);
	return rc;
}

/* One table: rows of lifetime buckets, columns of size buckets, both only where counted. */
static void put_table(FILE *out, uint64_t t[REP_SIZE_BUCKETS][REP_SIZE_BUCKETS],
		      const char *unit)
{
	int cols[REP_SIZE_BUCKETS] = { 0 };
	char label[48];

	for (unsigned r = 0; r < REP_SIZE_BUCKETS; r++)
		for (unsigned c = 0; c < REP_SIZE_BUCKETS; c++)
			cols[c] |= t[r][c] != 0;
	fprintf(out, "%-24s", unit);
	for (unsigned c = 0; c < REP_SIZE_BUCKETS; c++)
		if (cols[c]) {
			rep_bucket_label(c, label, sizeof(label));
			fprintf(out, " %12s", label);
		}
	fputc('\n', out);
	for (unsigned r = 0; r < REP_SIZE_BUCKETS; r++) {
		uint64_t any = 0;
		for (unsigned c = 0; c < REP_SIZE_BUCKETS; c++)
			any |= t[r][c];
		if (!any)
			continue;
		rep_bucket_label(r, label, sizeof(label));
		fprintf(out, "%-24s", label);
		for (unsigned c = 0; c < REP_SIZE_BUCKETS; c++)
			if (cols[c])
				fprintf(out, " %12" PRIu64, t[r][c]);
		fputc('\n', out);
	}
}

/* One table's counted cells: [{"lifetime_min", "lifetime_max", "size_min", "size_max",
 * "blocks"}], by lifetime, then size. */
static void json_table(struct rep_json *j, uint64_t t[REP_SIZE_BUCKETS][REP_SIZE_BUCKETS])
{
	rep_json_array(j);
	for (unsigned r = 0; r < REP_SIZE_BUCKETS; r++)
		for (unsigned c = 0; c < REP_SIZE_BUCKETS; c++) {
			if (!t[r][c])
				continue;
			rep_json_object(j);
			rep_json_key_u64(j, "lifetime_min", rep_bucket_min(r));
			rep_json_key_u64(j, "lifetime_max", rep_bucket_max(r));
			rep_json_key_u64(j, "size_min", rep_bucket_min(c));
			rep_json_key_u64(j, "size_max", rep_bucket_max(c));
			rep_json_key_u64(j, "blocks", t[r][c]);
			rep_json_object_end(j);
		}
	rep_json_array_end(j);
}

static int write_json(struct rep_lifetimes *l, uint64_t live, uint64_t temps)
{
	struct rep_json j;

	rep_json_init(&j, l->w.out);
	rep_json_object(&j);
	rep_json_key_u64(&j, "blocks_freed", l->freed);
	rep_json_key_u64(&j, "still_live", live);
	rep_json_key_u64(&j, "temporary", temps);
	rep_json_key(&j, "by_events");
	json_table(&j, l->by_events);
	rep_json_key_u64(&j, "timed", l->timed);
	rep_json_key(&j, "by_ns");
	json_table(&j, l->by_ns);
	rep_json_object_end(&j);
	rep_json_done(&j);
	return rep_finish_output(l->w.out);
}

int rep_lifetimes_end(struct rep_lifetimes *l)
{
	const struct rep_proc *procs;
	size_t n = rep_heap_procs(l->w.h, &procs);
	uint64_t live = 0, temps = 0;

	if (l->w.annotate)
		return rep_finish_output(l->w.out);
	for (size_t i = 0; i < n; i++) {
		live += procs[i].live_blocks;
		temps += procs[i].temps;
	}
	if (l->json)
		return write_json(l, live, temps);
	fprintf(l->w.out, "blocks freed: %" PRIu64 "; still live at the end: %" PRIu64
		"; temporary: %" PRIu64 "\n", l->freed, live, temps);
	if (l->freed) {
		fputs("== lifetime in events (rows) by bytes asked (columns), blocks\n", l->w.out);
		put_table(l->w.out, l->by_events, "events \\ bytes");
	}
	if (l->timed) {
		fputs("== lifetime in ns (rows) by bytes asked (columns), blocks\n", l->w.out);
		put_table(l->w.out, l->by_ns, "ns \\ bytes");
	}
	return rep_finish_output(l->w.out);
}
