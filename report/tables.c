/* tables.c: summary, sizes and timeline outputs (tables.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "finish.h"
#include "sitetext.h"
#include "tables.h"
#include "units.h"

/* Sites of one process (proc; SIZE_MAX: all), ordered by a value (most first), then text,
 * then pid. */
struct order {
	const struct rep_heap *h;
	const struct rep_site *sites;
	uint64_t (*value)(const struct rep_site *);
};
static struct order order_by;

static int by_value(const void *a, const void *b)
{
	const struct rep_site *x = &order_by.sites[*(const uint32_t *)a];
	const struct rep_site *y = &order_by.sites[*(const uint32_t *)b];
	uint64_t vx = order_by.value(x), vy = order_by.value(y);
	size_t lx, ly;

	if (vx != vy)
		return vx > vy ? -1 : 1;
	const char *tx = rep_heap_site_text(order_by.h, x, &lx);
	const char *ty = rep_heap_site_text(order_by.h, y, &ly);
	int c = memcmp(tx, ty, lx < ly ? lx : ly);
	if (c || lx != ly)
		return c ? c : (lx > ly) - (lx < ly);
	return (x->pid > y->pid) - (x->pid < y->pid); /* the same site in two processes */
}

uint32_t *rep_sorted_sites(const struct rep_heap *h, size_t proc,
			      uint64_t (*value)(const struct rep_site *), size_t *n)
{
	const struct rep_site *sites;
	size_t count = rep_heap_sites(h, &sites);
	uint32_t *idx = malloc((count ? count : 1) * sizeof(*idx));

	*n = 0;
	if (!idx)
		return NULL;
	for (size_t i = 0; i < count; i++)
		if ((proc == SIZE_MAX || sites[i].proc == proc) && value(&sites[i]))
			idx[(*n)++] = (uint32_t)i;
	order_by = (struct order){ h, sites, value };
	qsort(idx, *n, sizeof(*idx), by_value);
	return idx;
}

static uint64_t live_bytes_of(const struct rep_site *s)
{
	return s->live_bytes;
}

/* Writes a row's site leaf first, its shared root frames left out, and a newline. */
static void put_site(FILE *out, const struct rep_heap *h, const struct rep_site *s,
		     size_t shared)
{
	rep_put_site(out, h, s, shared);
	fputc('\n', out);
}

static void heading(FILE *out, const struct rep_proc *p, size_t nprocs)
{
	if (nprocs > 1)
		fprintf(out, "== process %" PRIu32 "\n", p->pid);
}

/* Whether p has an RSS sample: a record of 0 bytes is none (alloctapd wrote one for a process
 * that had exited and was not reaped yet, and a process shorter than the sampling period had
 * no other). */
static int has_rss(const struct rep_proc *p)
{
	return p->rss_samples && p->rss_peak_bytes;
}

static void put_seconds(FILE *out, uint64_t ns)
{
	fprintf(out, "%" PRIu64 ".%06" PRIu64 " s", ns / 1000000000u, ns % 1000000000u / 1000u);
}

int rep_write_summary(FILE *out, const struct rep_heap *h)
{
	const struct rep_proc *procs;
	size_t n = rep_heap_procs(h, &procs);
	int times = rep_heap_has_times(h);
	char b[REP_BYTES_SIZE];

	if (!n)
		fprintf(out, "events: 0\n");
	for (size_t i = 0; i < n; i++) {
		const struct rep_proc *p = &procs[i];
		heading(out, p, n);
		fprintf(out, "events: %" PRIu64 "\n", p->events);
		fprintf(out, "duration: ");
		if (times)
			put_seconds(out, p->last_time_ns - p->first_time_ns);
		else
			fputs("unknown (the trace has no times)", out);
		fputc('\n', out);
		for (unsigned f = 0; f < AT_FUNC_COUNT; f++)
			if (p->calls[f])
				fprintf(out, "calls %s: %" PRIu64 "\n", at_func_name[f], p->calls[f]);
		fprintf(out, "peak live bytes: %s in %" PRIu64 " blocks", rep_bytes(p->peak_bytes, b),
			p->peak_blocks);
		if (times && p->peak_bytes) {
			fputs(" at ", out);
			put_seconds(out, p->peak_time_ns);
		}
		fputc('\n', out);
		if (has_rss(p) && rep_heap_rss_positional(h)) {
			fprintf(out, "peak rss bytes: %s after event %" PRIu64 "\n",
				rep_bytes(p->rss_peak_bytes, b), p->rss_peak_events);
		} else if (has_rss(p)) {
			fprintf(out, "peak rss bytes: %s at ", rep_bytes(p->rss_peak_bytes, b));
			put_seconds(out, p->rss_peak_time_ns);
			fputc('\n', out);
		} else {
			fprintf(out, "peak rss bytes: unknown (the trace has no RSS records of it)\n");
		}
		fprintf(out, "final live bytes: %s in %" PRIu64 " blocks\n",
			rep_bytes(p->live_bytes, b), p->live_blocks);
		fprintf(out, "temporary allocations: %" PRIu64 "\n", p->temps);
		fprintf(out, "failed allocations: %" PRIu64 "\n", p->failed);
		fprintf(out, "frees of blocks not live: %" PRIu64 "\n", p->unknown_frees);
		fprintf(out, "temporary allocations as heaptrack_print counts them: %" PRIu64 "\n",
			p->heaptrack_temps);
	}
	return rep_finish_output(out);
}

/* A figure that only a trace with times knows: v, or null. */
static void key_time(struct rep_json *j, const char *key, uint64_t v, int known)
{
	rep_json_key(j, key);
	if (known)
		rep_json_u64(j, v);
	else
		rep_json_null(j);
}

/* The keys of one process or of the whole selection (times: the trace's times, for the RSS
 * peak's time too). */
static void json_figures(struct rep_json *j, const struct rep_proc *p, int times)
{
	rep_json_key_u64(j, "events", p->events);
	key_time(j, "duration_ns", p->last_time_ns - p->first_time_ns, times);
	rep_json_key(j, "calls");
	rep_json_object(j);
	for (unsigned f = 0; f < AT_FUNC_COUNT; f++)
		if (p->calls[f])
			rep_json_key_u64(j, at_func_name[f], p->calls[f]);
	rep_json_object_end(j);
	rep_json_key_u64(j, "peak_live_bytes", p->peak_bytes);
	rep_json_key_u64(j, "peak_live_blocks", p->peak_blocks);
	key_time(j, "peak_live_time_ns", p->peak_time_ns, times);
	key_time(j, "peak_rss_bytes", p->rss_peak_bytes, has_rss(p));
	key_time(j, "peak_rss_time_ns", p->rss_peak_time_ns, has_rss(p) && times);
	rep_json_key_u64(j, "final_live_bytes", p->live_bytes);
	rep_json_key_u64(j, "final_live_blocks", p->live_blocks);
	rep_json_key_u64(j, "temporary_allocations", p->temps);
	rep_json_key_u64(j, "failed_allocations", p->failed);
	rep_json_key_u64(j, "unknown_frees", p->unknown_frees);
	rep_json_key_u64(j, "heaptrack_temporary_allocations", p->heaptrack_temps);
}

int rep_write_summary_json(FILE *out, const struct rep_heap *h)
{
	const struct rep_proc *procs;
	size_t n = rep_heap_procs(h, &procs);
	int times = rep_heap_has_times(h);
	struct rep_proc all = { 0 };
	struct rep_json j;

	for (size_t i = 0; i < n; i++) {
		const struct rep_proc *p = &procs[i];
		all.events += p->events;
		for (unsigned f = 0; f < AT_FUNC_COUNT; f++)
			all.calls[f] += p->calls[f];
		all.temps += p->temps;
		all.heaptrack_temps += p->heaptrack_temps;
		all.failed += p->failed;
		all.unknown_frees += p->unknown_frees;
		all.rss_samples += p->rss_samples;
		if (!all.first_time_ns || (p->first_time_ns && p->first_time_ns < all.first_time_ns))
			all.first_time_ns = p->first_time_ns;
		if (p->last_time_ns > all.last_time_ns)
			all.last_time_ns = p->last_time_ns;
	}
	rep_heap_live(h, &all.live_bytes, &all.live_blocks);
	rep_heap_peak(h, &all.peak_bytes, &all.peak_blocks, &all.peak_time_ns);
	rep_heap_rss_peak(h, &all.rss_peak_bytes, &all.rss_peak_time_ns);
	rep_json_init(&j, out);
	rep_json_object(&j);
	rep_json_key_u64(&j, "processes", n);
	json_figures(&j, &all, times);
	rep_json_key(&j, "per_process");
	rep_json_array(&j);
	for (size_t i = 0; i < n; i++) {
		rep_json_object(&j);
		rep_json_key_u64(&j, "pid", procs[i].pid);
		json_figures(&j, &procs[i], times);
		rep_json_object_end(&j);
	}
	rep_json_array_end(&j);
	rep_json_object_end(&j);
	rep_json_done(&j);
	return rep_finish_output(out);
}

uint64_t rep_bucket_min(unsigned k)
{
	return k == 0 ? 0 : UINT64_C(1) << (k - 1);
}

uint64_t rep_bucket_max(unsigned k)
{
	return k == 0 ? 0 : k == 64 ? UINT64_MAX : (UINT64_C(1) << k) - 1;
}

void rep_bucket_label(unsigned k, char *buf, size_t size)
{
	if (k == 0)
		snprintf(buf, size, "0");
	else if (k == 64)
		snprintf(buf, size, "%" PRIu64 "-%" PRIu64, UINT64_C(1) << 63, UINT64_MAX);
	else
		snprintf(buf, size, "%" PRIu64 "-%" PRIu64, UINT64_C(1) << (k - 1),
			 (UINT64_C(1) << k) - 1);
}

int rep_write_sizes(FILE *out, const struct rep_heap *h)
{
	const struct rep_size_bucket *b = rep_heap_size_buckets(h);
	const struct rep_site *sites;
	uint32_t top[REP_SIZE_BUCKETS];
	size_t ntop = 0, shared;
	char bytes[REP_BYTES_SIZE];

	rep_heap_sites(h, &sites);
	for (unsigned k = 0; k < REP_SIZE_BUCKETS; k++)
		if (b[k].count)
			top[ntop++] = b[k].top_site;
	shared = rep_shared_callers(h, sites, top, ntop);
	fprintf(out, "%-41s %10s %14s  %s\n", "size (bytes asked)", "calls", "bytes",
		"site of most bytes");
	for (unsigned k = 0; k < REP_SIZE_BUCKETS; k++) {
		char range[48];
		if (!b[k].count)
			continue;
		rep_bucket_label(k, range, sizeof(range));
		fprintf(out, "%-41s %10" PRIu64 " %14s  ", range, b[k].count,
			rep_bytes(b[k].bytes, bytes));
		put_site(out, h, &sites[b[k].top_site], shared);
	}
	if (ntop)
		rep_put_called_from(out, h, &sites[top[0]], shared, 69);
	return rep_finish_output(out);
}

int rep_write_sizes_json(FILE *out, const struct rep_heap *h)
{
	const struct rep_size_bucket *b = rep_heap_size_buckets(h);
	const struct rep_site *sites;
	struct rep_json j;

	rep_heap_sites(h, &sites);
	rep_json_init(&j, out);
	rep_json_object(&j);
	rep_json_key(&j, "buckets");
	rep_json_array(&j);
	for (unsigned k = 0; k < REP_SIZE_BUCKETS; k++) {
		if (!b[k].count)
			continue;
		const struct rep_site *s = &sites[b[k].top_site];
		rep_json_object(&j);
		rep_json_key_u64(&j, "min", rep_bucket_min(k));
		rep_json_key_u64(&j, "max", rep_bucket_max(k));
		rep_json_key_u64(&j, "calls", b[k].count);
		rep_json_key_u64(&j, "bytes", b[k].bytes);
		rep_json_key(&j, "top_site");
		rep_json_object(&j);
		rep_json_key_u64(&j, "pid", s->pid);
		rep_json_key(&j, "stack");
		rep_json_site(&j, h, s);
		rep_json_object_end(&j);
		rep_json_object_end(&j);
	}
	rep_json_array_end(&j);
	rep_json_object_end(&j);
	rep_json_done(&j);
	return rep_finish_output(out);
}

int rep_write_sizes_csv(FILE *out, const struct rep_heap *h)
{
	static const char *const header[] = { "min", "max", "calls", "bytes", "top_site_pid",
					      "top_site_stack", NULL };
	const struct rep_size_bucket *b = rep_heap_size_buckets(h);
	const struct rep_site *sites;
	struct rep_csv c;
	size_t len;

	rep_heap_sites(h, &sites);
	rep_csv_init(&c, out);
	rep_csv_header(&c, header);
	for (unsigned k = 0; k < REP_SIZE_BUCKETS; k++) {
		if (!b[k].count)
			continue;
		const struct rep_site *s = &sites[b[k].top_site];
		const char *text = rep_heap_site_text(h, s, &len);
		rep_csv_u64(&c, rep_bucket_min(k));
		rep_csv_u64(&c, rep_bucket_max(k));
		rep_csv_u64(&c, b[k].count);
		rep_csv_u64(&c, b[k].bytes);
		rep_csv_u64(&c, s->pid);
		rep_csv_stack(&c, text, len);
		rep_csv_end(&c);
	}
	return rep_finish_output(out);
}

/* ---- timeline ------------------------------------------------------------------------- */

static uint64_t since_of(const struct rep_site *s)
{
	return s->live_bytes || s->since_allocs || s->since_frees;
}

/* A snapshot's figures: its time (every), the events applied, the live bytes and blocks, the
 * RSS (0: none). */
struct snap {
	uint64_t at_ns, event, live, blocks, rss;
};

static void snapshot_text(struct rep_timeline *t, struct rep_heap *h, const struct snap *n,
			  const uint32_t *idx, size_t count)
{
	const struct rep_site *sites;
	char b[REP_BYTES_SIZE];

	rep_heap_sites(h, &sites);
	fprintf(t->out, "== snapshot %" PRIu64 " %s ", t->snapshots, t->every_ns ? "at" : "after");
	if (t->every_ns)
		put_seconds(t->out, n->at_ns);
	else
		fprintf(t->out, "%" PRIu64 " events", n->event);
	fprintf(t->out, ": %s live in %" PRIu64 " blocks", rep_bytes_said(n->live, b), n->blocks);
	if (n->rss)
		fprintf(t->out, ", RSS %s", rep_bytes_said(n->rss, b));
	fputc('\n', t->out);
	if (t->series)
		fprintf(t->series, "%" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
			t->every_ns ? n->at_ns : n->event, n->live, n->rss);
	fprintf(t->out, "%12s %8s %10s %10s %10s %10s %8s  %s\n", "live bytes", "blocks", "allocs",
		"frees", "allocs all", "frees all", "pid", "site");
	size_t shown = count < t->top ? count : t->top;
	size_t shared = rep_shared_callers(h, sites, idx, shown);
	for (size_t k = 0; k < shown; k++) {
		const struct rep_site *s = &sites[idx[k]];
		fprintf(t->out, "%12s %8" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64
			" %10" PRIu64 " %8" PRIu32 "  ", rep_bytes(s->live_bytes, b), s->live_blocks,
			s->since_allocs, s->since_frees, s->allocs, s->frees, s->pid);
		put_site(t->out, h, s, shared);
	}
	if (shown)
		rep_put_called_from(t->out, h, &sites[idx[0]], shared, 85);
}

static void snapshot_json(struct rep_timeline *t, struct rep_heap *h, const struct snap *n,
			  const uint32_t *idx, size_t count)
{
	struct rep_json *j = &t->json;
	const struct rep_site *sites;

	rep_heap_sites(h, &sites);
	rep_json_object(j);
	rep_json_key_u64(j, "snapshot", t->snapshots);
	rep_json_key(j, "time_ns");
	if (t->every_ns)
		rep_json_u64(j, n->at_ns);
	else
		rep_json_null(j);
	rep_json_key_u64(j, "events", n->event);
	rep_json_key_u64(j, "live_bytes", n->live);
	rep_json_key_u64(j, "live_blocks", n->blocks);
	rep_json_key(j, "rss_bytes");
	if (n->rss)
		rep_json_u64(j, n->rss);
	else
		rep_json_null(j);
	rep_json_key(j, "sites");
	rep_json_array(j);
	for (size_t k = 0; k < count && k < t->top; k++) {
		const struct rep_site *s = &sites[idx[k]];
		rep_json_object(j);
		rep_json_key_u64(j, "pid", s->pid);
		rep_json_key_u64(j, "live_bytes", s->live_bytes);
		rep_json_key_u64(j, "live_blocks", s->live_blocks);
		rep_json_key_u64(j, "allocs", s->since_allocs);
		rep_json_key_u64(j, "frees", s->since_frees);
		rep_json_key_u64(j, "allocs_all", s->allocs);
		rep_json_key_u64(j, "frees_all", s->frees);
		rep_json_key(j, "stack");
		rep_json_site(j, h, s);
		rep_json_object_end(j);
	}
	rep_json_array_end(j);
	rep_json_object_end(j);
}

/* The snapshot's own fields of a CSV record. */
static void snapshot_fields(struct rep_timeline *t, const struct snap *n)
{
	rep_csv_u64(&t->csv, t->snapshots);
	if (t->every_ns)
		rep_csv_u64(&t->csv, n->at_ns);
	else
		rep_csv_empty(&t->csv);
	rep_csv_u64(&t->csv, n->event);
	rep_csv_u64(&t->csv, n->live);
	rep_csv_u64(&t->csv, n->blocks);
	if (n->rss)
		rep_csv_u64(&t->csv, n->rss);
	else
		rep_csv_empty(&t->csv);
}

static void snapshot_csv(struct rep_timeline *t, struct rep_heap *h, const struct snap *n,
			 const uint32_t *idx, size_t count)
{
	const struct rep_site *sites;
	size_t len;

	rep_heap_sites(h, &sites);
	if (count == 0 || t->top == 0) { /* the snapshot alone, its site fields empty */
		snapshot_fields(t, n);
		for (int i = 0; i < 8; i++)
			rep_csv_empty(&t->csv);
		rep_csv_end(&t->csv);
	}
	for (size_t k = 0; k < count && k < t->top; k++) {
		const struct rep_site *s = &sites[idx[k]];
		snapshot_fields(t, n);
		rep_csv_u64(&t->csv, s->pid);
		rep_csv_u64(&t->csv, s->live_bytes);
		rep_csv_u64(&t->csv, s->live_blocks);
		rep_csv_u64(&t->csv, s->since_allocs);
		rep_csv_u64(&t->csv, s->since_frees);
		rep_csv_u64(&t->csv, s->allocs);
		rep_csv_u64(&t->csv, s->frees);
		const char *text = rep_heap_site_text(h, s, &len);
		rep_csv_stack(&t->csv, text, len);
		rep_csv_end(&t->csv);
	}
}

/* One snapshot: its time (or event), the live bytes, the top sites. */
static void snapshot(struct rep_timeline *t, struct rep_heap *h, uint64_t at_ns, uint64_t event)
{
	const struct rep_site *sites;
	struct snap n = { .at_ns = at_ns, .event = event, .rss = rep_heap_rss_now(h) };
	size_t count;

	rep_heap_live(h, &n.live, &n.blocks);
	rep_heap_sites(h, &sites);
	t->snapshots++;
	uint32_t *idx = rep_sorted_sites(h, SIZE_MAX, since_of, &count);
	if (!idx) {
		t->failed = errno;
		return;
	}
	/* the sites holding most bytes; ties and sites with nothing live after */
	order_by = (struct order){ h, sites, live_bytes_of };
	qsort(idx, count, sizeof(*idx), by_value);
	if (t->format == REP_FORMAT_JSON)
		snapshot_json(t, h, &n, idx, count);
	else if (t->format == REP_FORMAT_CSV)
		snapshot_csv(t, h, &n, idx, count);
	else
		snapshot_text(t, h, &n, idx, count);
	free(idx);
	rep_heap_reset_since(h);
	if (t->flush && fflush(t->out) != 0)
		t->failed = errno ? errno : EIO;
}

static void on_event(void *arg, struct rep_heap *h, const struct at_event *ev)
{
	struct rep_timeline *t = arg;
	uint64_t live, blocks;

	if (t->failed)
		return;
	if (t->every_ns) {
		if (!ev->time_ns) {
			t->failed = ENOTSUP;
			return;
		}
		uint64_t at = rep_heap_time_of(h, ev);
		if (at > t->last_ns)
			t->last_ns = at;
		if (at >= t->next_ns) {
			/* one snapshot for the first boundary passed: the periods after it, up to this
			 * event, had no event and would repeat it (so there are never more snapshots
			 * than events, whatever SECONDS) */
			snapshot(t, h, t->next_ns, rep_heap_events(h));
			uint64_t k = at / t->every_ns + 1;
			t->next_ns = k > UINT64_MAX / t->every_ns ? UINT64_MAX : k * t->every_ns;
		}
		return;
	}
	rep_heap_live(h, &live, &blocks);
	t->churn = rep_sat_add(t->churn, live > t->last_live ? live - t->last_live : t->last_live - live);
	t->last_live = live;
	if (t->churn >= t->churn_bytes) {
		snapshot(t, h, 0, rep_heap_events(h));
		t->churn = 0;
	}
}

/* The start of the machine-readable outputs: JSON's opening, CSV's header. */
static void timeline_open(struct rep_timeline *t)
{
	static const char *const header[] = { "snapshot", "time_ns", "events", "live_bytes",
		"live_blocks", "rss_bytes", "pid", "site_live_bytes", "site_live_blocks", "allocs",
		"frees", "allocs_all", "frees_all", "stack", NULL };

	if (t->format == REP_FORMAT_CSV) {
		rep_csv_init(&t->csv, t->out);
		rep_csv_header(&t->csv, header);
		return;
	}
	rep_json_init(&t->json, t->out);
	rep_json_object(&t->json);
	rep_json_key(&t->json, "every_ns");
	if (t->every_ns)
		rep_json_u64(&t->json, t->every_ns);
	else
		rep_json_null(&t->json);
	rep_json_key(&t->json, "churn_bytes");
	if (t->churn_bytes)
		rep_json_u64(&t->json, t->churn_bytes);
	else
		rep_json_null(&t->json);
	rep_json_key(&t->json, "snapshots");
	rep_json_array(&t->json);
}

int rep_timeline_start(struct rep_timeline *t, struct rep_heap *h)
{
	t->next_ns = t->every_ns;
	if (t->format != REP_FORMAT_TEXT) {
		timeline_open(t);
	} else {
		t->series = tmpfile();
		if (!t->series)
			return -1;
	}
	rep_heap_on_event(h, on_event, t);
	return 0;
}

/* The figures of a line of the series, live bytes and RSS (0: "-"), and the newline: exact,
 * separated by a space; in units, right-aligned in columns as wide as the widest. */
static void put_series_bytes(FILE *out, uint64_t live, uint64_t rss)
{
	char l[REP_BYTES_SIZE], r[REP_BYTES_SIZE];
	int w = rep_units_exact() ? 0 : 10;

	fprintf(out, " %*s %*s\n", w, rep_bytes(live, l), w, rss ? rep_bytes(rss, r) : "-");
}

int rep_timeline_end(struct rep_timeline *t, struct rep_heap *h)
{
	char line[64];

	if (t->failed) {
		if (t->series)
			fclose(t->series);
		t->series = NULL;
		errno = t->failed;
		return -1;
	}
	snapshot(t, h, t->last_ns, rep_heap_events(h)); /* the end */
	if (t->format == REP_FORMAT_JSON) {
		rep_json_array_end(&t->json);
		rep_json_object_end(&t->json);
		rep_json_done(&t->json);
	}
	if (!t->series)
		return rep_finish_output(t->out);
	fprintf(t->out, "== series (%s, live bytes, RSS bytes)\n", t->every_ns ? "seconds" : "event");
	rewind(t->series);
	while (fgets(line, sizeof(line), t->series)) {
		uint64_t a, b, c;
		if (sscanf(line, "%" SCNu64 " %" SCNu64 " %" SCNu64, &a, &b, &c) != 3)
			continue;
		if (t->every_ns)
			put_seconds(t->out, a);
		else
			fprintf(t->out, "%" PRIu64, a);
		put_series_bytes(t->out, b, c);
	}
	fclose(t->series);
	t->series = NULL;
	return rep_finish_output(t->out);
}
