/* heaptrack.c: one process of a pass as heaptrack's data file (heaptrack.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "display.h"
#include "finish.h"
#include "folded.h"
#include "heaptrack.h"
#include "sites.h"
#include "stacks.h"

/* The markers of a cut stack, after the allocation functions among the extra ips. */
enum { MARK_TRUNCATED = AT_FUNC_COUNT, MARK_INCOMPLETE };

/* Writes n bytes to the file, through gzip when asked; the first failure is kept in t->err. */
static void put(struct rep_heaptrack *t, const void *p, size_t n)
{
	if (t->err || !n)
		return;
	if (!t->gz) {
		if (fwrite(p, 1, n, t->out) != n)
			t->err = errno ? errno : EIO;
		return;
	}
	t->z.next_in = (unsigned char *)p;
	t->z.avail_in = (uInt)n;
	while (t->z.avail_in && !t->err) {
		t->z.next_out = t->zbuf;
		t->z.avail_out = sizeof(t->zbuf);
		if (deflate(&t->z, Z_NO_FLUSH) == Z_STREAM_ERROR)
			t->err = EIO;
		size_t got = sizeof(t->zbuf) - t->z.avail_out;
		if (got && fwrite(t->zbuf, 1, got, t->out) != got)
			t->err = errno ? errno : EIO;
	}
}

/* A formatted line (or part of one). */
__attribute__((format(printf, 2, 3))) static void putf(struct rep_heaptrack *t, const char *fmt,
							 ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		put(t, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

/* The index of string s[0..n) (0 for none or empty), its s line written when new; newlines
 * and carriage returns, which would end the line, become '_'. 0 on ENOMEM (kept in t->err). */
static uint64_t string_id(struct rep_heaptrack *t, const char *s, size_t n)
{
	size_t before = rep_folded_count(t->strings);

	if (!s || !n)
		return 0;
	int64_t e = rep_folded_intern(t->strings, s, n);
	if (e < 0) {
		t->err = ENOMEM;
		return 0;
	}
	if (rep_folded_count(t->strings) > before) {
		putf(t, "s %zx ", n);
		for (size_t i = 0; i < n; i++) {
			char c = s[i] == '\n' || s[i] == '\r' ? '_' : s[i];
			put(t, &c, 1);
		}
		put(t, "\n", 1);
	}
	return (uint64_t)e + 1;
}

static uint64_t cstring_id(struct rep_heaptrack *t, const char *s)
{
	return s ? string_id(t, s, strlen(s)) : 0;
}

/* Grows a by-id array of uint32_t to hold index i (new entries 0): 0, or -1 (t->err). */
static int room(struct rep_heaptrack *t, uint32_t **a, size_t *cap, size_t i)
{
	if (i < *cap)
		return 0;
	size_t n = *cap ? *cap : 256;
	while (n <= i)
		n *= 2;
	uint32_t *p = realloc(*a, n * sizeof(*p));
	if (!p) {
		t->err = ENOMEM;
		return -1;
	}
	memset(p + *cap, 0, (n - *cap) * sizeof(*p));
	*a = p;
	*cap = n;
	return 0;
}

/* One frame's " FUNCTION FILE LINE" (its strings first). */
static void put_frame(struct rep_heaptrack *t, const struct rep_frame *f)
{
	uint64_t fn = cstring_id(t, f->function), file = cstring_id(t, f->file);

	putf(t, " %" PRIx64 " %" PRIx64 " %" PRIx32, fn, file, f->line);
}

/* The ip of location id, its i line (and its strings) written when new: 0 on failure. */
static uint32_t location_ip(struct rep_heaptrack *t, uint32_t id)
{
	const struct rep_frames *fr = &t->x->frames;

	if (room(t, &t->ip_of, &t->ip_cap, id) < 0)
		return 0;
	if (t->ip_of[id])
		return t->ip_of[id];
	const struct rep_location *l = rep_frames_location(fr, id);
	uint64_t module = l->mapping ? cstring_id(t, fr->mappings[l->mapping - 1].path) : 0;
	/* the strings go before the i line that names them */
	for (uint32_t k = 0; k < l->count && rep_frames_line(fr, l, 0)->function; k++) {
		const struct rep_frame *f = rep_frames_line(fr, l, k);
		cstring_id(t, f->function);
		cstring_id(t, f->file);
	}
	putf(t, "i %" PRIx64 " %" PRIx64, l->value, module);
	for (uint32_t k = 0; k < l->count && rep_frames_line(fr, l, 0)->function; k++)
		put_frame(t, rep_frames_line(fr, l, k));
	put(t, "\n", 1);
	t->ip_of[id] = ++t->nips;
	return t->ip_of[id];
}

/* The ip of an allocation function or a marker (no address, no module): 0 on failure. */
static uint32_t extra_ip(struct rep_heaptrack *t, unsigned e)
{
	if (t->extra_ip[e])
		return t->extra_ip[e];
	const char *name = e < AT_FUNC_COUNT ? at_func_name[e]
					     : e == MARK_TRUNCATED ? "[truncated]" : "[incomplete]";
	uint64_t fn = cstring_id(t, name);
	putf(t, "i 0 0 %" PRIx64 "\n", fn);
	t->extra_ip[e] = ++t->nips;
	return t->extra_ip[e];
}

/* The trace node of ip under parent, its t line written when new: 0 on failure. */
static uint32_t node(struct rep_heaptrack *t, uint32_t parent, uint32_t ip)
{
	int is_new;

	if (!ip)
		return 0;
	uint64_t *v = rep_u64map_slot(&t->nodes, (uint64_t)parent << 32 | ip, &is_new);
	if (!v) {
		t->err = ENOMEM;
		return 0;
	}
	if (is_new) {
		*v = ++t->ntraces;
		putf(t, "t %" PRIx32 " %" PRIx32 "\n", ip, parent);
	}
	return (uint32_t)*v;
}

/* The last trace node of site i: its first stack's locations from the root (after a marker
 * of a cut stack), or the node of its allocation function alone. 0 on failure. */
static uint32_t site_trace(struct rep_heaptrack *t, uint32_t i)
{
	const struct rep_site *sites;

	rep_heap_sites(t->h, &sites);
	if (room(t, &t->trace_of, &t->trace_cap, i) < 0)
		return 0;
	if (t->trace_of[i])
		return t->trace_of[i];
	const struct rep_site *s = &sites[i];
	size_t n = 0;
	unsigned flags = 0;
	const uint32_t *locs = s->stack ? rep_stacks_locations(t->x->stacks, s->stack, &n, &flags)
					: NULL;
	uint32_t at = 0;
	if (!locs || !n)
		return t->trace_of[i] = node(t, 0, extra_ip(t, t->x->origins[s->key].func));
	if (flags & AT_STACK_TRUNCATED)
		at = node(t, at, extra_ip(t, MARK_TRUNCATED));
	else if (flags & AT_STACK_INCOMPLETE)
		at = node(t, at, extra_ip(t, MARK_INCOMPLETE));
	for (size_t k = 0; k < n && !t->err; k++)
		at = node(t, at, location_ip(t, locs[k]));
	return t->trace_of[i] = at;
}

/* The info of (site, size), its a line written when new (just before its first +, so that
 * infos are first allocated in their order, as heaptrack_gui needs). 0 on failure (t->err). */
static uint64_t info(struct rep_heaptrack *t, uint32_t site, uint64_t size)
{
	char key[12];
	size_t before = rep_folded_count(t->infos);

	memcpy(key, &site, 4);
	memcpy(key + 4, &size, 8);
	int64_t e = rep_folded_intern(t->infos, key, sizeof(key));
	if (e < 0) {
		t->err = ENOMEM;
		return 0;
	}
	if (rep_folded_count(t->infos) > before) {
		uint32_t trace = site_trace(t, site);
		putf(t, "a %" PRIx64 " %" PRIx32 "\n", size, trace);
	}
	return (uint64_t)e;
}

/* A c line when ns reaches a later millisecond than the last one written. After a pause
 * longer than heaptrack's 10 ms tick, a c line at the tick after the last one ends the
 * interval of what came before it, as heaptrack's timer would (heaptrack_gui draws each
 * interval's most at its end). */
static void time_line(struct rep_heaptrack *t, uint64_t ns)
{
	uint64_t ms = ns / 1000000;

	if (t->timed && ms <= t->ms)
		return;
	if (t->timed && ms > t->ms + REP_HEAPTRACK_TICK_MS)
		putf(t, "c %" PRIx64 "\n", t->ms + REP_HEAPTRACK_TICK_MS);
	t->timed = 1;
	t->ms = ms;
	putf(t, "c %" PRIx64 "\n", ms);
}

/* The block watcher: a + or - line, its time before it. */
static void on_block(void *arg, const struct rep_block *b, int released)
{
	struct rep_heaptrack *t = arg;

	if (t->err)
		return;
	if (t->cur && t->cur->time_ns)
		time_line(t, rep_heap_time_of(t->h, t->cur));
	uint64_t i = info(t, b->site, b->size);
	if (!t->err)
		putf(t, "%c %" PRIx64 "\n", released ? '-' : '+', i);
}

int rep_heaptrack_start(struct rep_heaptrack *t, FILE *out, int gz, struct rep_heap *h,
			struct rep_sites *x, const char *trace, int have_pid, uint32_t pid)
{
	t->out = out;
	t->gz = gz;
	t->h = h;
	t->x = x;
	t->trace = trace;
	t->have_pid = t->pid_given = have_pid;
	t->pid = pid;
	t->strings = rep_folded_new();
	t->infos = rep_folded_new();
	if (!t->strings || !t->infos)
		return -1;
	if (gz && deflateInit2(&t->z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		t->gz = 0;
		errno = ENOMEM;
		return -1;
	}
	rep_heap_on_block(h, on_block, t);
	putf(t, "v %x %x\n", REP_HEAPTRACK_VERSION, REP_HEAPTRACK_FILE_VERSION);
	putf(t, "I %x 0\n", REP_HEAPTRACK_PAGE);
	return 0;
}

/* The trace's name as the reader says it: "<stdin>" for "-". */
static const char *trace_name(const struct rep_heaptrack *t)
{
	return t->trace && strcmp(t->trace, "-") != 0 ? t->trace : "<stdin>";
}

/* The X line, at the first event of the process: the trace and the pid, and for a sampled
 * trace that its figures are estimates (each sampled block one allocation of the bytes it
 * stands for, report/sample.h: bytes scaled, counts not). */
static void debuggee(struct rep_heaptrack *t)
{
	put(t, "X alloctap trace ", 17);
	for (const char *c = trace_name(t); *c; c++)
		put(t, *c == '\n' || *c == '\r' ? "_" : c, 1);
	putf(t, ", pid %" PRIu32, t->pid);
	if (rep_heap_sample_bytes(t->h)) /* sizes are what each sampled block stands for */
		putf(t, ", estimated from a sample of 1 in %" PRIu64 " bytes: bytes scaled, "
		     "allocation counts the sample's", rep_heap_sample_bytes(t->h));
	put(t, "\n", 1);
}

int rep_heaptrack_event(struct rep_heaptrack *t, const struct at_event *ev)
{
	if (!t->have_pid) {
		t->have_pid = 1;
		t->pid = ev->pid;
	} else if (ev->pid != t->pid && !t->pid_given) {
		at_error("%s: events of processes %" PRIu32 " and %" PRIu32 ": a heaptrack file "
			 "holds one process; choose one with --pid PID", trace_name(t), t->pid,
			 ev->pid);
		errno = ECANCELED;
		return -1;
	}
	if (ev->pid == t->pid && !t->named) {
		t->named = 1;
		debuggee(t);
	}
	t->cur = ev;
	int rc = rep_heap_event(t->h, ev);
	t->cur = NULL;
	if (rc == 0 && t->err) {
		errno = t->err;
		return -1;
	}
	return rc;
}

void rep_heaptrack_rss(struct rep_heaptrack *t, const struct at_rss *m)
{
	if (t->err || !t->have_pid || m->pid != t->pid)
		return;
	if (m->time_ns && rep_heap_events_read(t->h) && !rep_heap_rss_positional(t->h)) {
		struct at_event ev = { .time_ns = m->time_ns };
		time_line(t, rep_heap_time_of(t->h, &ev));
	}
	putf(t, "R %" PRIx64 "\n", m->bytes / REP_HEAPTRACK_PAGE +
				      (m->bytes % REP_HEAPTRACK_PAGE != 0));
}

int rep_heaptrack_end(struct rep_heaptrack *t)
{
	putf(t, "# strings: %zu\n# ips: %" PRIu32 "\n", rep_folded_count(t->strings), t->nips);
	while (t->gz && !t->err) {
		t->z.next_in = NULL;
		t->z.avail_in = 0;
		t->z.next_out = t->zbuf;
		t->z.avail_out = sizeof(t->zbuf);
		int rc = deflate(&t->z, Z_FINISH);
		size_t got = sizeof(t->zbuf) - t->z.avail_out;
		if (got && fwrite(t->zbuf, 1, got, t->out) != got)
			t->err = errno ? errno : EIO;
		if (rc == Z_STREAM_END)
			break;
		if (rc != Z_OK && rc != Z_BUF_ERROR)
			t->err = EIO;
	}
	if (t->err) {
		errno = t->err;
		return -1;
	}
	return rep_finish_output(t->out);
}

void rep_heaptrack_free(struct rep_heaptrack *t)
{
	if (t->gz)
		deflateEnd(&t->z);
	t->gz = 0;
	rep_folded_free(t->strings);
	rep_folded_free(t->infos);
	rep_u64map_free(&t->nodes);
	free(t->ip_of);
	free(t->trace_of);
	t->strings = t->infos = NULL;
	t->ip_of = t->trace_of = NULL;
}
