/* atz_tool.c: converts and times logs through lib/source.c and lib/atz.c, for the atz tests
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
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "atz.h"
#include "display.h"
#include "output.h"
#include "source.h"
#include "text.h"

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

static int open_out(const char *path)
{
	if (strcmp(path, "-") == 0)
		return 1;
	return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
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

static int encode_one(void *ctx, const struct at_event *ev)
{
	if (at_atz_append(ctx, ev) < 0) {
		at_error("write: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int cmd_encode(const char *in, const char *out, int level)
{
	struct at_source src;
	struct at_event ev;
	int status = 1;

	if (at_source_open(&src, in) < 0) {
		at_error("%s: %s", in, strerror(errno));
		return 1;
	}
	/* The first event settles whether text is raw or munged. */
	int rc = at_source_next(&src, &ev);
	if (rc < 0) {
		at_source_report(&src);
		at_source_close(&src);
		return 1;
	}
	int fd = open_out(out);
	if (fd < 0) {
		at_error("%s: %s", out, strerror(errno));
		at_source_close(&src);
		return 1;
	}
	struct at_atz_options opt = { .flags = src.munged == 1 ? AT_ATZ_FLAG_MUNGED : 0,
				      .host = "atz_tool", .start_ns = 1, .level = level };
	struct at_atz_writer *w = at_atz_writer_open(fd, out, &opt);
	if (!w) {
		at_error("%s: %s", out, strerror(errno));
		goto cleanup;
	}
	if (rc > 0 && (encode_one(w, &ev) < 0 || drain(&src, encode_one, w))) {
		at_atz_writer_close(w);
		goto cleanup;
	}
	if (at_atz_writer_close(w) < 0) {
		at_error("%s: %s", out, strerror(errno));
		goto cleanup;
	}
	status = 0;
cleanup:
	if (fd != 1)
		close(fd);
	at_source_close(&src);
	return status;
}

struct text_sink {
	struct at_output out;
	const struct at_source *src; /* text decides raw or munged at its first pointer */
};

static int print_one(void *ctx, const struct at_event *ev)
{
	struct text_sink *t = ctx;
	char *d = at_output_reserve(&t->out, AT_LINE_MAX);
	at_output_commit(&t->out, t->src->munged == 1 ? at_format_munged(d, ev)
							  : at_format_raw(d, ev));
	return 0;
}

static int cmd_decode(const char *in, const char *out)
{
	struct at_source src;
	struct text_sink t;
	int status;

	if (at_source_open(&src, in) < 0) {
		at_error("%s: %s", in, strerror(errno));
		return 1;
	}
	if (at_output_open(&t.out, out) < 0) {
		at_error("%s: %s", out, strerror(errno));
		at_source_close(&src);
		return 1;
	}
	t.src = &src;
	status = drain(&src, print_one, &t);
	if (at_output_close(&t.out) < 0) {
		at_error("%s: %s", t.out.name, strerror(t.out.err));
		status = 1;
	}
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

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Seconds to read every event of the text file at path through lib/source.c. */
static double time_text_parse(const char *path, size_t expect)
{
	struct at_source src;
	struct at_event ev;
	size_t n = 0;
	double t0 = now_s();

	if (at_source_open(&src, path) < 0)
		return -1;
	while (at_source_next(&src, &ev) > 0)
		n++;
	at_source_close(&src);
	return n == expect ? now_s() - t0 : -1;
}

/* Prints one line: events, atz bytes, content bytes, atz bytes/event, encode ns/event,
 * text format+write ns/event, decode Mevents/s, text parse Mevents/s (best of 9 runs each,
 * everything in memory: memfds, the text input in the page cache). */
static int cmd_time(const char *in, int level)
{
	struct at_source src;
	struct event_array a = { 0 };
	double enc = 1e9, dec = 1e9, fmt = 1e9, parse = 1e9;
	struct at_atz_stats st = { 0 };
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
		struct at_atz_options opt = { .host = "bench", .start_ns = 1, .level = level };
		double t0 = now_s();
		struct at_atz_writer *w = at_atz_writer_open(fd, "<memfd>", &opt);
		for (size_t i = 0; w && i < a.n; i++)
			at_atz_append(w, &a.v[i]);
		if (w)
			at_atz_writer_stats(w, &st);
		if (!w || at_atz_writer_close(w) < 0)
			goto cleanup;
		double t1 = now_s();
		enc = t1 - t0 < enc ? t1 - t0 : enc;
		size = lseek(fd, 0, SEEK_END);

		struct at_output out;
		int null = memfd_create("text", MFD_CLOEXEC);
		at_output_open_fd(&out, null, "<memfd>");
		t0 = now_s();
		for (size_t i = 0; i < a.n; i++) {
			char *d = at_output_reserve(&out, AT_LINE_MAX);
			at_output_commit(&out, at_format_raw(d, &a.v[i]));
		}
		at_output_close(&out);
		t1 = now_s();
		close(null);
		fmt = t1 - t0 < fmt ? t1 - t0 : fmt;

		lseek(fd, 0, SEEK_SET);
		t0 = now_s();
		struct at_atz_reader *r = at_atz_reader_open(fd, "<memfd>", NULL, 0);
		struct at_event ev;
		uint64_t n = 0, check = 0;
		while (at_atz_next(r, &ev) > 0) {
			n++;
			check += ev.result;
		}
		t1 = now_s();
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
		return cmd_encode(argv[i], argv[i + 1], level);
	if (strcmp(cmd, "decode") == 0 && argc - i == 2)
		return cmd_decode(argv[i], argv[i + 1]);
	if (strcmp(cmd, "time") == 0 && argc - i == 1)
		return cmd_time(argv[i], level);
	return usage();
}
