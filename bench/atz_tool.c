/* atz_tool.c: converts and times logs through lib/source.c and lib/sink.c, for the atz tests
 * (tests/atz_cli.sh) and benchmark (bench/atz_bench.sh). Not an installed program.
 *
 *   atz_tool encode [-l LEVEL] [-V MAJOR[.MINOR]] [-F EVENTS] IN OUT
 *                          any log (text or .atz) -> .atz (munged if IN is), format MAJOR.MINOR
 *                          (2.3, the default, keeps times, stacks and mappings; -V 1 writes 1.0,
 *                          -V 2.1 the 2.1 model, which the benchmark compares); -F: encoded by
 *                          2 threads into lz4 frames of EVENTS records at most (a power of 2),
 *                          as alloctapd's encoders write (2.5, with 2.6 frames, when IN has
 *                          stacks; a flush every 500 events cuts frames short too)
 *   atz_tool decode IN OUT any log -> text (raw or munged as IN is)
 *   atz_tool time [-l LEVEL] [-V MAJOR[.MINOR]] [-t | -r UNIT] [-s STACKS] IN
 *                          encode, format as text, decode and parse IN in memory, best of 9;
 *                          prints "EVENTS ATZ_BYTES CONTENT_BYTES BYTES/EVENT ENCODE_NS
 *                          TEXT_NS DECODE_M/S PARSE_M/S". -t gives the events synthetic times
 *                          (below), -r UNIT keeps their own, counted in units of UNIT ns (1:
 *                          as recorded; 1000: the bytes a microsecond clock would take);
 *                          without either the events are written without times. -s STACKS
 *                          synthetic stacks of 20 frames
 *   atz_tool synth [-l LEVEL] [-V 2.MINOR] [-t | -T STEP] [-s STACKS] IN OUT
 *                          IN's events as a 2.x trace (2.3 unless -V says) with synthetic times (-t; -T: exactly
 *                          STEP ns apart, event k at 10^12 + k * STEP ns) and STACKS
 *                          synthetic stacks of 20 frames, after the three mappings their
 *                          addresses fall in (-s): input shaped like a --stacks recording;
 *                          -m N adds N mapping records of process 1 after those three (each
 *                          its own range and object, /alloctap-synth/objK.so, no build-id),
 *                          -P PATH names PATH as the object of the second of the three,
 *                          where the stacks' 2nd to 4th frames lie
 *   atz_tool threads [-V 2.MINOR] [-k] N OUT
 *                          a trace (2.3 unless -V says) of N threads of process 1000 (tids 1
 *                          to N), each making one malloc(16), at 32-byte steps, and ending
 *                          right after it (an END record in 2.3; nothing says so before; -k:
 *                          never, so the writer ends states itself past the reader's limit):
 *                          the many-threads input whose memory tests/atz_cli.sh measures
 *   atz_tool times IN      "TIME STACK" per event (0 0 when the trace has none)
 *   atz_tool stacks [-O] IN
 *                          for every event with a stack, in event order:
 *                          "FUNC FLAGS PC0 PC1 ..." (FLAGS complete, truncated or incomplete,
 *                          incomplete when both bits are set; PCs 0x-prefixed lowercase hex,
 *                          innermost first); -O prints each PC as OBJECT+0xOFFSET (basename
 *                          and file offset, through the mapping records met before the stack;
 *                          the raw address when none holds it), as stack_oracle --objects
 *   atz_tool header IN     the trace's version and filter: "version M.N[ min-size M][
 *                          sample-bytes N]"
 *   atz_tool mappings IN   every mapping record: "PID START-END OFFSET BUILDID PATH" (START,
 *                          END, OFFSET 0x-prefixed lowercase hex; BUILDID lowercase hex, "-"
 *                          when the object has none)
 *
 * IN and OUT may be "-". Exit: 0 ok, 1 data or I/O error, 2 usage. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "atz.h"
#include "atz_relay.h"
#include "display.h"
#include "prim.h"
#include "sink.h"
#include "source.h"

static int usage(void)
{
	fprintf(stderr,
		"usage: atz_tool encode [-l LEVEL] [-V MAJOR[.MINOR]] [-F EVENTS] IN OUT\n"
		"       atz_tool decode IN OUT\n"
		"       atz_tool time [-l LEVEL] [-V MAJOR[.MINOR]] [-t | -r UNIT] [-s STACKS] IN\n"
		"       atz_tool synth [-l LEVEL] [-V 2.MINOR] [-t | -T STEP] [-s STACKS] [-m N] [-P PATH]\n"
		"                      IN OUT\n"
		"       atz_tool threads [-V 2.MINOR] [-k] N OUT\n"
		"       atz_tool times IN\n"
		"       atz_tool stacks [-O] IN\n"
		"       atz_tool mappings IN\n"
		"       atz_tool header IN\n"
		"LEVEL: lz4 level, <= 0 fast (default), >= 3 LZ4HC. MAJOR.MINOR: format 2.3 (default),\n"
		"2.2, 2.1, 2.0, 1.1 or 1.0 (MAJOR alone: 2.3 or 1.0).\n"
		"IN/OUT may be '-'. Exit status: 0 ok, 1 data or I/O error, 2 usage error.\n");
	return 2;
}

/* -V's minor version, or -1: the default of the command. */
static int want_minor = -1;
/* -F's frame size in events (encode), 0: one frame by the caller's thread. */
static unsigned frame_events;

/* The minor version a trace of major version major gets: -V's, else 0 for 1.x and dflt for
 * 2.x. */
static unsigned minor_for(unsigned major, unsigned dflt)
{
	return want_minor >= 0 ? (unsigned)want_minor : major == 1 ? 0 : dflt;
}

/* Reads every event of src; calls back per event. Returns 0 or 1 (error reported). */
static int drain(struct at_source *src, int (*each)(void *ctx, const struct at_event *ev),
		 void *ctx)
{
	struct at_event ev;
	int rc;

	while ((rc = at_source_next(src, &ev)) != 0) {
		if (rc < 0) {
			at_source_report(src);
			return 1;
		}
		if (each(ctx, &ev) < 0)
			return 1;
	}
	return 0;
}

/* An event to the sink; text sinks print pointers as the source has them. -1 stops drain (the
 * error is reported when the sink closes). */
struct to_sink {
	struct at_sink *sink;
	const struct at_source *src; /* text decides raw or munged at its first pointer */
	struct at_stack_relay relay; /* a trace's stack and mapping records, passed on */
	unsigned flush_every;        /* -F: a flush every so many events (0: none) */
	unsigned put;
};

static int put_one(void *ctx, const struct at_event *ev)
{
	struct to_sink *t = ctx;
	struct at_event out = *ev;

	at_sink_set_munged(t->sink, t->src->munged == 1);
	out.stack = at_stack_relay_id(&t->relay, ev->stack);
	if (t->relay.failed || at_sink_put(t->sink, &out) < 0)
		return -1;
	if (t->flush_every && ++t->put % t->flush_every == 0)
		return at_sink_flush(t->sink);
	return 0;
}

/* The queue of 2 encoders whose frames hold events records at most (a power of 2): 4 times
 * as many (sink_thread.c cuts frames of 1 / (2 x encoders) of the queue). */
static unsigned frames_log2(unsigned events)
{
	unsigned log2 = 2;

	while ((1u << log2) < events * 4u)
		log2++;
	return log2;
}

/* Closes the sink; 1 after reporting its error, else status. */
static int close_sink(struct at_sink *sink, int status)
{
	if (at_sink_close(sink) < 0) {
		at_error("%s: %s", at_sink_name(sink), strerror(at_sink_error(sink)));
		return 1;
	}
	return status;
}

/* encode (format AT_SINK_ATZ, version major) or decode (AT_SINK_TEXT) from in to out. A
 * trace's stack and mapping records go along (into a 2.x output). */
static int convert(const char *in, const char *out, enum at_sink_format format, int level,
		   unsigned major)
{
	static struct to_sink t;
	struct at_source src;
	struct at_sink sink;
	struct at_event ev;
	int status = 1, rc = 1;

	if (at_source_open(&src, in) < 0) {
		at_error("%s: %s", in, strerror(errno));
		return 1;
	}
	/* A trace's header says raw or munged; text settles it at the first event (text has no
	 * stack records to come before it). */
	if (src.kind == AT_SOURCE_TEXT) {
		rc = at_source_next(&src, &ev);
		if (rc < 0) {
			at_source_report(&src);
			at_source_close(&src);
			return 1;
		}
	}
	struct at_sink_options opt = {
		.format = format, .munged = src.munged == 1,
		.atz = { .host = "atz_tool", .start_ns = 1, .level = level, .major = major,
			 .flags = at_stack_relay_flags(&src),
			 .minor = minor_for(major, at_stack_relay_minor(&src)) },
	};
	t.sink = &sink;
	t.src = &src;
	t.flush_every = 0;
	if (frame_events && format == AT_SINK_ATZ) {
		if (!(opt.atz.flags & AT_ATZ_FLAG_NO_STACKS))
			opt.atz.minor = AT_ATZ_PYTHON_MINOR; /* whose frames go on from each other */
		t.flush_every = 500;
	}
	at_stack_relay_attach(&t.relay, &src, &sink);
	if (at_sink_open(&sink, out, AT_SINK_TRUNCATE) == 0 && at_sink_start(&sink, &opt) == 0 &&
	    (!t.flush_every || at_sink_thread_start(&sink, frames_log2(frame_events),
						   2 | AT_SINK_FRAME_EACH_RUN) == 0))
		status = (src.kind == AT_SOURCE_TEXT && rc > 0 && put_one(&t, &ev) < 0) ||
			 drain(&src, put_one, &t);
	status = close_sink(&sink, status);
	at_source_close(&src);
	return status;
}

/* ---- stacks and mappings: the records of a trace as lines ------------------------------ */

/* The mappings met so far (a later one of the same pid replaces those it overlaps). */
struct mapping_table {
	struct at_mapping *v;
	size_t n, cap;
};

/* The stacks of the current input frame, by id (ids start over in each frame); with objects,
 * each stack's pcs become object offsets as its record is read (objects[i] names pcs[i]'s
 * object: a basename kept in names, or NULL for a pc no mapping holds). */
struct stack_table {
	struct at_stack *v;
	const char *(*objects)[AT_STACK_MAX_FRAMES];
	size_t n, cap;
	int failed;
	int by_object;
	struct mapping_table maps;
};

static void keep_mapping(void *arg, const struct at_mapping *m)
{
	struct stack_table *t = arg;
	struct mapping_table *mt = &t->maps;
	size_t kept = 0;

	for (size_t i = 0; i < mt->n; i++) /* drop what the new one covers */
		if (mt->v[i].pid != m->pid || mt->v[i].end <= m->start || m->end <= mt->v[i].start)
			mt->v[kept++] = mt->v[i];
	mt->n = kept;
	if (mt->n == mt->cap) {
		size_t cap = mt->cap ? mt->cap * 2 : 64;
		struct at_mapping *v = realloc(mt->v, cap * sizeof(*v));
		if (!v) {
			t->failed = 1;
			return;
		}
		mt->v = v;
		mt->cap = cap;
	}
	const char *slash = strrchr(m->path, '/');
	struct at_mapping copy = *m;
	copy.path = strdup(slash ? slash + 1 : m->path); /* names live until the end */
	if (!copy.path) {
		t->failed = 1;
		return;
	}
	mt->v[mt->n++] = copy;
}

/* Rewrites s's pcs as offsets in their objects; objects[i] gets the object's basename. */
static void to_objects(const struct mapping_table *mt, struct at_stack *s,
		       const char *objects[AT_STACK_MAX_FRAMES])
{
	for (unsigned i = 0; i < s->count; i++) {
		objects[i] = NULL;
		for (size_t k = 0; k < mt->n; k++) {
			const struct at_mapping *m = &mt->v[k];
			if (m->pid == s->pid && s->pcs[i] >= m->start && s->pcs[i] < m->end) {
				s->pcs[i] = s->pcs[i] - m->start + m->offset;
				objects[i] = m->path;
				break;
			}
		}
	}
}

static void keep_stack(void *arg, const struct at_stack *s)
{
	struct stack_table *t = arg;

	if (s->id == 1)
		t->n = 0;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct at_stack *v = realloc(t->v, cap * sizeof(*v));
		if (!v) {
			t->failed = 1;
			return;
		}
		t->v = v;
		if (t->by_object) {
			void *o = realloc(t->objects, cap * sizeof(*t->objects));
			if (!o) {
				t->failed = 1;
				return;
			}
			t->objects = o;
		}
		t->cap = cap;
	}
	t->v[t->n] = *s;
	if (t->by_object)
		to_objects(&t->maps, &t->v[t->n], t->objects[t->n]);
	t->n++;
}

static const char *stack_flags_name(unsigned flags)
{
	return flags & AT_STACK_INCOMPLETE ? "incomplete"
	     : flags & AT_STACK_TRUNCATED ? "truncated" : "complete";
}

static int print_stack(void *ctx, const struct at_event *ev)
{
	struct stack_table *t = ctx;

	if (t->failed) {
		at_error("out of memory for the stack table");
		return -1;
	}
	if (!ev->stack)
		return 0;
	const struct at_stack *s = &t->v[ev->stack - 1]; /* the reader checked the id */
	printf("%s %s", at_func_name[ev->func], stack_flags_name(s->flags));
	for (unsigned i = 0; i < s->count; i++) {
		const char *object = t->by_object ? t->objects[ev->stack - 1][i] : NULL;
		if (object)
			printf(" %s+0x%" PRIx64, object, s->pcs[i]);
		else
			printf(" 0x%" PRIx64, s->pcs[i]);
	}
	putchar('\n');
	return 0;
}

static void print_mapping(void *arg, const struct at_mapping *m)
{
	(void)arg;
	printf("%" PRIu32 " 0x%" PRIx64 "-0x%" PRIx64 " 0x%" PRIx64 " ", m->pid, m->start, m->end,
	       m->offset);
	for (unsigned i = 0; i < m->build_id_len; i++)
		printf("%02x", m->build_id[i]);
	printf("%s %s\n", m->build_id_len ? "" : "-", m->path);
}

static int count_event(void *ctx, const struct at_event *ev)
{
	(void)ctx;
	(void)ev;
	return 0;
}

/* stacks (one line per event with a stack; by_object: pcs as object offsets) or mappings
 * (one line per mapping record). */
static int cmd_records(const char *in, int stacks, int by_object)
{
	struct stack_table table = { .by_object = by_object };
	struct at_source src;

	if (at_source_open(&src, in) < 0) {
		at_error("%s: %s", in, strerror(errno));
		return 1;
	}
	if (stacks)
		at_source_on_stack(&src, keep_stack, &table);
	if (!stacks)
		at_source_on_mapping(&src, print_mapping, NULL);
	else if (by_object)
		at_source_on_mapping(&src, keep_mapping, &table);
	int status = drain(&src, stacks ? print_stack : count_event, &table);
	at_source_close(&src);
	for (size_t i = 0; i < table.maps.n; i++)
		free((char *)table.maps.v[i].path);
	free(table.maps.v);
	free(table.objects);
	free(table.v);
	if (fflush(stdout) != 0) {
		at_error("standard output: %s", strerror(errno));
		status = 1;
	}
	return status;
}

/* ---- time: in-memory encode and decode ------------------------------------------------- */

struct event_array {
	struct at_event *v;
	size_t n, cap;
};

static int collect_one(void *ctx, const struct at_event *ev)
{
	struct event_array *a = ctx;
	if (a->n == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 1 << 16;
		a->v = realloc(a->v, a->cap * sizeof(*a->v));
		if (!a->v)
			return -1;
	}
	a->v[a->n++] = *ev;
	return 0;
}

/* Seconds to read every event of the text file at path through lib/source.c. */
static double time_text_parse(const char *path, size_t expect)
{
	struct at_source src;
	struct at_event ev;
	size_t n = 0;
	double t0 = at_now_seconds();

	if (at_source_open(&src, path) < 0)
		return -1;
	while (at_source_next(&src, &ev) > 0)
		n++;
	at_source_close(&src);
	return n == expect ? at_now_seconds() - t0 : -1;
}

/* ---- synthetic times and stacks (time -t, -s) ----------------------------------------- */

static uint64_t synth_state = 0x9E3779B97F4A7C15ull;

static uint64_t synth_rnd(void)
{
	synth_state ^= synth_state << 13;
	synth_state ^= synth_state >> 7;
	synth_state ^= synth_state << 17;
	return synth_state;
}

/* Times as a recorder sees them: 50 to 1550 ns apart, one event in 8 stamped up to 400 ns
 * early (another CPU's clock), so times sometimes go backwards. */
static uint64_t synth_step; /* -T: events exactly this far apart instead */

/* -r UNIT: the events keep their own times, divided by this (0: -r not given). */
static uint64_t real_unit;

/* The events' own times in units of real_unit ns (a coarser clock's counts), or none (0) when
 * real_unit is 0: the trace is then written without times. */
static void scale_times(struct event_array *a)
{
	for (size_t i = 0; i < a->n; i++)
		a->v[i].time_ns = real_unit ? a->v[i].time_ns / real_unit : 0;
}

static void synth_times(struct event_array *a)
{
	uint64_t t = 1000000000000ull;

	for (size_t i = 0; i < a->n; i++) {
		if (synth_step) {
			a->v[i].time_ns = t + i * synth_step;
			continue;
		}
		t += 50 + synth_rnd() % 1500;
		a->v[i].time_ns = t - (synth_rnd() % 8 == 0 ? synth_rnd() % 400 : 0);
	}
}

#define SYNTH_FRAMES 20

/* n call stacks of 20 frames, as a program's look: malloc's entry in libc, a few frames in a
 * library, the program's own, and main, __libc_start_call_main and _start outermost. Stack k
 * shares its outer frames with stack k / 2 and differs in its 1 to 6 innermost callers. */
static struct at_stack *synth_shapes(unsigned n)
{
	struct at_stack *v = calloc(n, sizeof(*v));

	for (unsigned k = 0; v && k < n; k++) {
		struct at_stack *s = &v[k];
		s->pid = 1;
		s->count = SYNTH_FRAMES;
		if (k == 0) {
			s->pcs[0] = 0x7f3a1c0a5e10;
			for (unsigned j = 1; j < SYNTH_FRAMES - 3; j++)
				s->pcs[j] = j < 4 ? 0x7f3a1d000000 + synth_rnd() % 0x400000
						  : 0x55d0c4200000 + synth_rnd() % 0x300000;
			s->pcs[17] = 0x55d0c4201234;
			s->pcs[18] = 0x7f3a1c029d90;
			s->pcs[19] = 0x55d0c4200a45;
			continue;
		}
		*s = v[k / 2];
		s->flags = k % 5 == 4 ? AT_STACK_INCOMPLETE : 0;
		unsigned changed = 1 + (unsigned)(synth_rnd() % 6);
		for (unsigned j = 1; j <= changed; j++)
			s->pcs[j] = j < 4 ? 0x7f3a1d000000 + synth_rnd() % 0x400000
					  : 0x55d0c4200000 + synth_rnd() % 0x300000;
	}
	return v;
}

/* Gives every call but free and jemalloc_stats one of the shapes (the low ones far more
 * often), numbered by first appearance; the stacks in id order go to *stacks. */
static int synth_stacks(struct event_array *a, unsigned n, struct at_stack **stacks)
{
	struct at_stack *shape = synth_shapes(n), *by_id = calloc(n, sizeof(*by_id));
	uint32_t *id_of = calloc(n, sizeof(*id_of));
	uint32_t ids = 0;

	if (!shape || !by_id || !id_of) {
		free(shape);
		free(by_id);
		free(id_of);
		return -1;
	}
	for (size_t i = 0; i < a->n; i++) {
		if (!at_func_returns_pointer(a->v[i].func))
			continue;
		double u = (double)(synth_rnd() >> 11) / 9007199254740992.0;
		unsigned k = (unsigned)(n * u * u * u);
		if (!id_of[k]) {
			id_of[k] = ++ids;
			by_id[ids - 1] = shape[k];
			by_id[ids - 1].id = ids;
		}
		a->v[i].stack = id_of[k];
	}
	free(shape);
	free(id_of);
	*stacks = by_id;
	return 0;
}

/* Seconds to write the events of a through a sink of options opt on fd, each stack record
 * before the first event that refers to it; its counters in st. -1 on a write error
 * (reported). */
/* Puts the events of a into sink, each stack before the first event that refers to it. */
static void put_events(struct at_sink *sink, const struct event_array *a,
		       const struct at_stack *stacks)
{
	uint32_t put = 0;

	for (size_t i = 0; i < a->n; i++) {
		while (a->v[i].stack > put) {
			struct at_sink_record r = { .kind = AT_SINK_STACK, .stack = &stacks[put++] };
			at_sink_put_record(sink, &r);
		}
		at_sink_put(sink, &a->v[i]);
	}
}

static double time_sink(int fd, const struct at_sink_options *opt, const struct event_array *a,
			const struct at_stack *stacks, struct at_sink_stats *st)
{
	struct at_sink sink;
	double t0 = at_now_seconds();

	if (at_sink_open_fd(&sink, fd, "<memfd>") == 0 && at_sink_start(&sink, opt) == 0)
		put_events(&sink, a, stacks);
	if (st)
		at_sink_stats(&sink, st);
	if (close_sink(&sink, 0))
		return -1;
	return at_now_seconds() - t0;
}

/* Prints one line: events, atz bytes, content bytes, atz bytes/event, encode ns/event,
 * text format+write ns/event, decode Mevents/s, text parse Mevents/s (best of 9 runs each,
 * everything in memory: memfds, the text input in the page cache). */
static int cmd_time(const char *in, int level, unsigned major, int times, unsigned nstacks)
{
	struct at_stack *stacks = NULL;
	struct at_source src;
	struct event_array a = { 0 };
	double enc = 1e9, dec = 1e9, fmt = 1e9, parse = 1e9;
	struct at_sink_stats st = { 0 };
	int status = 1;
	off_t size = 0;
	int fd = memfd_create("atz", MFD_CLOEXEC);

	if (fd < 0 || at_source_open(&src, in) < 0) {
		at_error("%s: %s", in, strerror(errno));
		return 1;
	}
	int bad = drain(&src, collect_one, &a);
	int munged = src.munged == 1; /* a munged trace is written munged, as munge writes it */
	at_source_close(&src);
	if (bad || a.n == 0)
		goto cleanup;
	if (times && !real_unit)
		synth_times(&a);
	else
		scale_times(&a);
	if (nstacks && synth_stacks(&a, nstacks, &stacks) < 0)
		goto cleanup;
	for (int run = 0; run < 9; run++) {
		if (ftruncate(fd, 0) < 0 || lseek(fd, 0, SEEK_SET) < 0)
			goto cleanup;
		struct at_sink_options bin = { .format = AT_SINK_ATZ, .munged = munged,
					       .atz = { .host = "bench", .start_ns = 1, .level = level,
							.major = major,
							.minor = minor_for(major, AT_ATZ_V2_MINOR),
							.flags = (times ? 0 : AT_ATZ_FLAG_NO_TIMES) |
								 (nstacks ? 0 : AT_ATZ_FLAG_NO_STACKS) } };
		struct at_sink_options text = { .format = AT_SINK_TEXT, .munged = munged };
		double t = time_sink(fd, &bin, &a, stacks, &st);
		if (t < 0)
			goto cleanup;
		enc = t < enc ? t : enc;
		size = lseek(fd, 0, SEEK_END);
		int null = memfd_create("text", MFD_CLOEXEC);
		t = time_sink(null, &text, &a, stacks, NULL);
		close(null);
		fmt = t >= 0 && t < fmt ? t : fmt;

		lseek(fd, 0, SEEK_SET);
		double t0 = at_now_seconds();
		struct at_atz_reader *r = at_atz_reader_open(fd, "<memfd>", NULL, 0);
		struct at_event ev;
		uint64_t n = 0, check = 0;
		while (at_atz_next(r, &ev) > 0) {
			n++;
			check += ev.result;
		}
		double t1 = at_now_seconds();
		if (n != a.n || at_atz_reader_status(r)) {
			at_error("decode gave %" PRIu64 " of %zu events: %s", n, a.n, at_atz_reader_message(r));
			at_atz_reader_close(r);
			goto cleanup;
		}
		at_atz_reader_close(r);
		dec = t1 - t0 < dec ? t1 - t0 : dec;
		(void)check;
		double tp = time_text_parse(in, a.n);
		if (tp > 0 && tp < parse)
			parse = tp;
	}
	printf("%zu %lld %" PRIu64 " %.3f %.1f %.1f %.1f %.1f\n", a.n, (long long)size,
	       st.content_bytes, (double)size / (double)a.n, enc * 1e9 / (double)a.n,
	       fmt * 1e9 / (double)a.n, (double)a.n / dec / 1e6, (double)a.n / parse / 1e6);
	status = 0;
cleanup:
	free(a.v);
	free(stacks);
	close(fd);
	return status;
}

/* The mappings the synthetic stacks' addresses fall in (synth_shapes). */
static const struct at_mapping synth_mappings[] = {
	{ .pid = 1, .build_id_len = 20,
	  .build_id = { 0x4a, 0x91, 0x2c, 0x07, 0xe3, 0x55, 0x18, 0xb0, 0x6f, 0xd2,
			0x33, 0x8e, 0x41, 0xc9, 0x0a, 0x7b, 0x95, 0x26, 0xf8, 0x5d },
	  .start = 0x7f3a1c000000, .end = 0x7f3a1c200000, .offset = 0x28000,
	  .path = "/usr/lib/x86_64-linux-gnu/libc.so.6" },
	{ .pid = 1, .start = 0x7f3a1d000000, .end = 0x7f3a1d400000, .offset = 0,
	  .path = "/usr/lib/libsynth.so" },
	{ .pid = 1, .build_id_len = 4, .build_id = { 0xde, 0xad, 0xbe, 0xef },
	  .start = 0x55d0c4200000, .end = 0x55d0c4500000, .offset = 0x1000,
	  .path = "/usr/bin/synth" },
};

/* What synth adds to the mapping records: extra ones, and another object for the second. */
struct synth_maps {
	unsigned extra;        /* mapping records added after the three */
	const char *object;    /* NULL: libsynth.so */
};

/* The three mappings (the second naming maps->object if given), then maps->extra more, each
 * of its own range and object. 0, or -1 with errno from the sink. */
static int put_synth_mappings(struct at_sink *sink, const struct synth_maps *maps)
{
	char path[64];

	for (size_t i = 0; i < sizeof(synth_mappings) / sizeof(synth_mappings[0]); i++) {
		struct at_mapping m = synth_mappings[i];
		if (i == 1 && maps->object)
			m.path = maps->object;
		struct at_sink_record r = { .kind = AT_SINK_MAPPING, .mapping = &m };
		if (at_sink_put_record(sink, &r) < 0)
			return -1;
	}
	for (unsigned k = 0; k < maps->extra; k++) {
		struct at_mapping m = { .pid = 1, .start = 0x100000000ull + (uint64_t)k * 0x10000,
					.end = 0x100000000ull + (uint64_t)k * 0x10000 + 0x8000,
					.path = path };
		snprintf(path, sizeof(path), "/alloctap-synth/obj%u.so", k);
		struct at_sink_record r = { .kind = AT_SINK_MAPPING, .mapping = &m };
		if (at_sink_put_record(sink, &r) < 0)
			return -1;
	}
	return 0;
}

/* synth: IN's events with synthetic times (-t) and stacks (-s N, with the mappings their
 * addresses fall in, and those maps adds), as a 2.x trace: test and benchmark input shaped
 * like a recording with --stacks. */
static int cmd_synth(const char *in, const char *out, int level, int times, unsigned nstacks,
		     const struct synth_maps *maps)
{
	struct at_stack *stacks = NULL;
	struct event_array a = { 0 };
	struct at_source src;
	struct at_sink sink;
	int status = 1;

	if (at_source_open(&src, in) < 0) {
		at_error("%s: %s", in, strerror(errno));
		return 1;
	}
	int bad = drain(&src, collect_one, &a);
	int munged = src.munged == 1;
	at_source_close(&src);
	if (bad)
		goto cleanup;
	if (times)
		synth_times(&a);
	if (nstacks && synth_stacks(&a, nstacks, &stacks) < 0)
		goto cleanup;
	struct at_sink_options opt = {
		.format = AT_SINK_ATZ, .munged = munged,
		.atz = { .host = "atz_tool", .start_ns = 1, .level = level,
			 .minor = minor_for(2, AT_ATZ_V2_MINOR),
			 .flags = (times ? 0 : AT_ATZ_FLAG_NO_TIMES) |
				  (nstacks ? 0 : AT_ATZ_FLAG_NO_STACKS) },
	};
	status = 0;
	if (at_sink_open(&sink, out, AT_SINK_TRUNCATE) == 0 && at_sink_start(&sink, &opt) == 0) {
		if (nstacks)
			put_synth_mappings(&sink, maps);
		put_events(&sink, &a, stacks);
	}
	status = close_sink(&sink, status);
cleanup:
	free(a.v);
	free(stacks);
	return status;
}

/* threads: n threads of one process, one malloc each, each ended after it (2.3) unless keep. */
static int cmd_threads(const char *n_text, const char *out, int keep)
{
	char *end;
	unsigned long long n = strtoull(n_text, &end, 10);
	struct at_output o;

	if (*end || n == 0 || n > UINT32_MAX)
		return usage();
	if (at_output_open(&o, out) < 0) {
		at_error("%s: %s", out, strerror(errno));
		return 1;
	}
	struct at_atz_options opt = { .host = "atz_tool", .start_ns = 1,
				      .minor = minor_for(2, AT_ATZ_V2_MINOR),
				      .flags = AT_ATZ_FLAG_NO_TIMES | AT_ATZ_FLAG_NO_STACKS };
	struct at_atz_writer *w = at_atz_writer_open(&o, &opt);
	int rc = w ? 0 : -1;
	for (uint32_t tid = 1; rc == 0 && tid <= n; tid++) {
		struct at_event ev = { .pid = 1000, .tid = tid, .func = AT_MALLOC, .has_result = 1,
				       .arg = { 16, 0 }, .result = 0x10000000ull + 32ull * tid };
		rc = at_atz_append(w, &ev) < 0 || (!keep && at_atz_end_thread(w, 1000, tid) < 0) ? -1
												 : 0;
	}
	if (w && at_atz_writer_close(w) < 0)
		rc = -1;
	if (rc < 0)
		at_error("%s: %s", out, strerror(errno));
	if (at_output_close(&o) < 0 && rc == 0) {
		at_error("%s: %s", out, strerror(errno));
		rc = -1;
	}
	return rc < 0 ? 1 : 0;
}

static int print_time(void *ctx, const struct at_event *ev)
{
	(void)ctx;
	printf("%" PRIu64 " %" PRIu32 "\n", ev->time_ns, ev->stack);
	return 0;
}

/* times: "TIME STACK" per event. */
static int cmd_times(const char *in)
{
	struct at_source src;

	if (at_source_open(&src, in) < 0) {
		at_error("%s: %s", in, strerror(errno));
		return 1;
	}
	int status = drain(&src, print_time, NULL);
	at_source_close(&src);
	if (fflush(stdout) != 0) {
		at_error("standard output: %s", strerror(errno));
		status = 1;
	}
	return status;
}

/* header: the trace's version and filter, "version M.N[ min-size M][ sample-bytes N]". */
static int cmd_header(const char *in)
{
	struct at_source src;

	if (at_source_open(&src, in) < 0) {
		at_error("%s: %s", in, strerror(errno));
		return 1;
	}
	const struct at_atz_header *h = at_source_header(&src);
	int status = h ? 0 : 1;
	if (h) {
		printf("version %u.%u", h->major, h->minor);
		if (h->min_size)
			printf(" min-size %llu", (unsigned long long)h->min_size);
		if (h->sample_bytes)
			printf(" sample-bytes %llu", (unsigned long long)h->sample_bytes);
		printf("\n");
	} else {
		at_error("%s: no trace header (a text log)", in);
	}
	at_source_close(&src);
	return status;
}

/* -V MAJOR or MAJOR.MINOR: 1.0, 1.1, 2.0, 2.1, 2.2 or 2.3. 0, or -1 for anything else. */
static int parse_version(const char *s, unsigned *major)
{
	char *end;
	unsigned long m = strtoul(s, &end, 10);

	if (m < 1 || m > 2)
		return -1;
	*major = (unsigned)m;
	if (*end == 0)
		return 0;
	unsigned long n = strtoul(end + 1, &end, 10);
	if (s[1] != '.' || !isdigit((unsigned char)s[2]) || *end ||
	    n > (m == 1 ? AT_ATZ_V1_MINOR : AT_ATZ_V2_MINOR))
		return -1;
	want_minor = (int)n;
	return 0;
}

int main(int argc, char **argv)
{
	int level = 0, times = 0, by_object = 0, keep_threads = 0;
	unsigned major = 0, nstacks = 0;
	struct synth_maps maps = { 0 };

	at_program_name = "atz_tool";
	if (argc < 2)
		return usage();
	const char *cmd = argv[1];
	int i = 2;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (strcmp(argv[i], "-t") == 0)
			times = 1;
		else if (strcmp(argv[i], "-k") == 0)
			keep_threads = 1;
		else if (strcmp(argv[i], "-O") == 0)
			by_object = 1;
		else if (i + 1 < argc && strcmp(argv[i], "-l") == 0)
			level = atoi(argv[++i]);
		else if (i + 1 < argc && strcmp(argv[i], "-T") == 0)
			times = 1, synth_step = strtoull(argv[++i], NULL, 10);
		else if (i + 1 < argc && strcmp(argv[i], "-r") == 0) {
			times = 1, real_unit = strtoull(argv[++i], NULL, 10);
			if (!real_unit)
				return usage();
		}
		else if (i + 1 < argc && strcmp(argv[i], "-V") == 0) {
			if (parse_version(argv[++i], &major) < 0)
				return usage();
		}
		else if (i + 1 < argc && strcmp(argv[i], "-F") == 0) {
			frame_events = (unsigned)strtoul(argv[++i], NULL, 10);
			if (!frame_events || frame_events > (1u << 20) ||
			    (frame_events & (frame_events - 1)))
				return usage();
		}
		else if (i + 1 < argc && strcmp(argv[i], "-s") == 0)
			nstacks = (unsigned)atoi(argv[++i]);
		else if (i + 1 < argc && strcmp(argv[i], "-m") == 0)
			maps.extra = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (i + 1 < argc && strcmp(argv[i], "-P") == 0)
			maps.object = argv[++i];
		else
			return usage();
	}
	if (nstacks > 1000000)
		return usage();
	if (strcmp(cmd, "encode") == 0 && argc - i == 2)
		return convert(argv[i], argv[i + 1], AT_SINK_ATZ, level, major);
	if (strcmp(cmd, "decode") == 0 && argc - i == 2)
		return convert(argv[i], argv[i + 1], AT_SINK_TEXT, 0, 0);
	if (strcmp(cmd, "time") == 0 && argc - i == 1)
		return cmd_time(argv[i], level, major, times, nstacks);
	if (strcmp(cmd, "synth") == 0 && argc - i == 2)
		return cmd_synth(argv[i], argv[i + 1], level, times, nstacks, &maps);
	if (strcmp(cmd, "threads") == 0 && argc - i == 2)
		return cmd_threads(argv[i], argv[i + 1], keep_threads);
	if (strcmp(cmd, "times") == 0 && argc - i == 1)
		return cmd_times(argv[i]);
	if (strcmp(cmd, "stacks") == 0 && argc - i == 1)
		return cmd_records(argv[i], 1, by_object);
	if (strcmp(cmd, "mappings") == 0 && argc - i == 1)
		return cmd_records(argv[i], 0, 0);
	if (strcmp(cmd, "header") == 0 && argc - i == 1)
		return cmd_header(argv[i]);
	return usage();
}
