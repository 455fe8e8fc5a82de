/* atz_tool.c: converts and times logs through lib/source.c and lib/sink.c, for the atz tests
 * (tests/atz_cli.sh) and benchmark (bench/atz_bench.sh). Not an installed program.
 *
 *   atz_tool encode [-l LEVEL] IN OUT   any log (text or .atz) -> .atz (munged if IN is)
 *   atz_tool decode IN OUT              any log -> text (raw or munged as IN is)
 *   atz_tool time [-l LEVEL] IN         encode, format as text, decode and parse IN in memory,
 *                                       best of 9; prints "EVENTS ATZ_BYTES CONTENT_BYTES
 *                                       BYTES/EVENT ENCODE_NS TEXT_NS DECODE_M/S PARSE_M/S"
 *
 * IN and OUT may be "-". Exit: 0 ok, 1 data or I/O error, 2 usage. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "atz.h"
#include "display.h"
#include "prim.h"
#include "sink.h"
#include "source.h"

static int usage(void)
{
	fprintf(stderr,
		"usage: atz_tool encode [-l LEVEL] IN OUT\n"
		"       atz_tool decode IN OUT\n"
		"       atz_tool time [-l LEVEL] IN\n"
		"LEVEL: lz4 level, <= 0 fast (default), >= 3 LZ4HC.\n"
		"IN/OUT may be '-'. Exit status: 0 ok, 1 data or I/O error, 2 usage error.\n");
	return 2;
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
};

static int put_one(void *ctx, const struct at_event *ev)
{
	struct to_sink *t = ctx;

	at_sink_set_munged(t->sink, t->src->munged == 1);
	return at_sink_put(t->sink, ev);
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

/* encode (format AT_SINK_ATZ) or decode (AT_SINK_TEXT) from in to out. */
static int convert(const char *in, const char *out, enum at_sink_format format, int level)
{
	struct at_source src;
	struct at_sink sink;
	struct at_event ev;
	int status = 1;

	if (at_source_open(&src, in) < 0) {
		at_error("%s: %s", in, strerror(errno));
		return 1;
	}
	/* The first event settles whether text is raw or munged (a trace's header says it). */
	int rc = at_source_next(&src, &ev);
	if (rc < 0) {
		at_source_report(&src);
		at_source_close(&src);
		return 1;
	}
	struct at_sink_options opt = {
		.format = format, .munged = src.munged == 1,
		.atz = { .host = "atz_tool", .start_ns = 1, .level = level },
	};
	struct to_sink t = { &sink, &src };
	if (at_sink_open(&sink, out, AT_SINK_TRUNCATE) == 0 && at_sink_start(&sink, &opt) == 0)
		status = rc > 0 && (put_one(&t, &ev) < 0 || drain(&src, put_one, &t));
	status = close_sink(&sink, status);
	at_source_close(&src);
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

/* Seconds to write the events of a through a sink of options opt on fd; its counters in st.
 * -1 on a write error (reported). */
static double time_sink(int fd, const struct at_sink_options *opt, const struct event_array *a,
			struct at_sink_stats *st)
{
	struct at_sink sink;
	double t0 = at_now_seconds();

	if (at_sink_open_fd(&sink, fd, "<memfd>") == 0 && at_sink_start(&sink, opt) == 0)
		for (size_t i = 0; i < a->n; i++)
			at_sink_put(&sink, &a->v[i]);
	if (st)
		at_sink_stats(&sink, st);
	if (close_sink(&sink, 0))
		return -1;
	return at_now_seconds() - t0;
}

/* Prints one line: events, atz bytes, content bytes, atz bytes/event, encode ns/event,
 * text format+write ns/event, decode Mevents/s, text parse Mevents/s (best of 9 runs each,
 * everything in memory: memfds, the text input in the page cache). */
static int cmd_time(const char *in, int level)
{
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
	at_source_close(&src);
	if (bad || a.n == 0)
		goto cleanup;
	for (int run = 0; run < 9; run++) {
		if (ftruncate(fd, 0) < 0 || lseek(fd, 0, SEEK_SET) < 0)
			goto cleanup;
		struct at_sink_options bin = { .format = AT_SINK_ATZ,
					       .atz = { .host = "bench", .start_ns = 1, .level = level } };
		static const struct at_sink_options text = { .format = AT_SINK_TEXT };
		double t = time_sink(fd, &bin, &a, &st);
		if (t < 0)
			goto cleanup;
		enc = t < enc ? t : enc;
		size = lseek(fd, 0, SEEK_END);
		int null = memfd_create("text", MFD_CLOEXEC);
		t = time_sink(null, &text, &a, NULL);
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
			at_error("decode gave %" PRIu64 " of %zu events", n, a.n);
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
	close(fd);
	return status;
}

int main(int argc, char **argv)
{
	int level = 0;

	at_program_name = "atz_tool";
	if (argc < 2)
		return usage();
	const char *cmd = argv[1];
	int i = 2;
	if (i + 1 < argc && strcmp(argv[i], "-l") == 0) {
		level = atoi(argv[i + 1]);
		i += 2;
	}
	if (strcmp(cmd, "encode") == 0 && argc - i == 2)
		return convert(argv[i], argv[i + 1], AT_SINK_ATZ, level);
	if (strcmp(cmd, "decode") == 0 && argc - i == 2)
		return convert(argv[i], argv[i + 1], AT_SINK_TEXT, 0);
	if (strcmp(cmd, "time") == 0 && argc - i == 1)
		return cmd_time(argv[i], level);
	return usage();
}
