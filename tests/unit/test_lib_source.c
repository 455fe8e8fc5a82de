/* test_lib_source.c: unit tests of lib/source.c (format detection and the event-pull API). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "atz.h"
#include "output.h"
#include "source.h"
#include "text.h"

static int memfd_with(const void *p, size_t n)
{
	int fd = memfd_create("src", 0);
	assert_true(fd >= 0);
	if (n)
		assert_int_equal(write(fd, p, n), (ssize_t)n);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* Reads every event of text; formats each back (raw or munged as the source decided) into
 * out; returns the count. Errors are recorded as "E<line>:<why>\n" in out, and reading goes on
 * unless fatal. */
static size_t read_all(const char *text, size_t n, char *out, struct at_source *s)
{
	int fd = memfd_with(text, n);
	struct at_event ev;
	size_t count = 0, len = 0;
	int rc;

	assert_int_equal(at_source_open_fd(s, fd, "t.log"), 0);
	out[0] = 0;
	while ((rc = at_source_next(s, &ev)) != 0) {
		if (rc < 0) {
			len += (size_t)sprintf(out + len, "E%llu:%s\n", (unsigned long long)s->lineno,
					       s->why);
			if (s->fatal)
				break;
			continue;
		}
		len += s->munged == 1 ? at_format_munged(out + len, &ev) : at_format_raw(out + len, &ev);
		out[len] = 0;
		count++;
	}
	at_source_close(s);
	close(fd);
	return count;
}

static void test_text_kinds(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
		int munged;
	} cases[] = {
		{ "1 2 malloc(32)=0x10\n1 2 free(0x10)\n", "1 2 malloc(32)=0x10\n1 2 free(0x10)\n", 0 },
		{ "1 1 malloc(32)=#1\n1 1 free(#1)\n", "1 1 malloc(32)=#1\n1 1 free(#1)\n", 1 },
		/* no pointer in the first line: decided by the second */
		{ "1 1 jemalloc_stats()\n1 1 malloc(8)=#3\n",
		  "1 1 jemalloc_stats()\n1 1 malloc(8)=#3\n", 1 },
		{ "5 5 jemalloc_stats()\n5 6 calloc(1,2)=0xab\n",
		  "5 5 jemalloc_stats()\n5 6 calloc(1,2)=0xab\n", 0 },
		/* CRLF, surrounding blanks, no final newline, the old format without a tid */
		{ "1 2 malloc(3)=0x1\r\n  7 valloc(4096)=0x1000  \n1 2 free(0x1)",
		  "1 2 malloc(3)=0x1\n7 7 valloc(4096)=0x1000\n1 2 free(0x1)\n", 0 },
		/* a malloc without a result keeps has_result 0 */
		{ "1 1 malloc(3)\n1 1 realloc(0x0,5)=0x20\n", "1 1 malloc(3)\n1 1 realloc(0x0,5)=0x20\n",
		  0 },
		{ "", "", -1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct at_source s;
		char out[1024];
		read_all(cases[i].in, strlen(cases[i].in), out, &s);
		assert_string_equal(out, cases[i].out);
		assert_int_equal(s.kind, AT_SOURCE_TEXT);
		assert_int_equal(s.munged, cases[i].munged);
	}
}

static void test_text_errors(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "1 1 malloc(3)=0x1\n1 1 mallocx(3)=0x2\n1 1 free(0x1)\n",
		  "1 1 malloc(3)=0x1\nE2:unknown function\n1 1 free(0x1)\n" },
		{ "1 1 malloc(3,4)=0x1\n", "E1:wrong number of arguments for this function\n" },
		{ "1 1 free(0x1)=0x2\n", "E1:free and jemalloc_stats take no result\n" },
		{ "1 1 malloc(-3)=0x1\n",
		  "E1:bad size or alignment argument (expected a decimal number)\n" },
		{ "1 1 malloc(3)=\n", "E1:bad result (expected 0x and hex digits)\n" },
		{ "1 1 malloc(3)=0x10000000000000000\n", "E1:bad result (expected 0x and hex digits)\n" },
		{ "4294967296 1 malloc(3)=0x1\n", "E1:bad process number (decimal, 0 to 4294967295)\n" },
		{ "1 x malloc(3)=0x1\n", "E1:bad thread number (decimal, 0 to 4294967295)\n" },
		{ "1 1 malloc(3)=0x1\n\n1 1 free(0x1)\n", "1 1 malloc(3)=0x1\nE2:empty line\n"
							   "1 1 free(0x1)\n" },
		{ "garbage\n", "E1:Malformed input\n" },
		{ "\x01\xff\x00\x10(\n", "E1:Malformed input\n" },
		/* decided raw: a munged line later is an error, and the reverse */
		{ "1 1 malloc(3)=0x1\n1 1 free(#1)\n",
		  "1 1 malloc(3)=0x1\nE2:bad pointer argument (expected 0x and hex digits)\n" },
		{ "1 1 malloc(3)=#1\n1 1 free(0x1)\n",
		  "1 1 malloc(3)=#1\nE2:expected a slot (#N) as the pointer argument\n" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct at_source s;
		char out[1024];
		const char *in = cases[i].in;
		size_t n = i == 10 ? 6 : strlen(in);
		read_all(in, n, out, &s);
		assert_string_equal(out, cases[i].out);
	}
}

static void test_long_line(void **state)
{
	(void)state;
	size_t n = 3u << 20;
	char *in = malloc(n + 64);
	memcpy(in, "1 1 malloc(", 11);
	memset(in + 11, '7', n);
	strcpy(in + 11 + n, ")=0x1\n1 1 free(0x1)\n");
	struct at_source s;
	char out[1024];
	read_all(in, strlen(in), out, &s);
	assert_string_equal(out, "E1:bad size or alignment argument (expected a decimal number)\n"
				 "1 1 free(0x1)\n");
	free(in);
}

/* The same events through a binary file give the same events, with the munged flag. */
static void test_binary(void **state)
{
	(void)state;
	const struct at_event ev[] = {
		{ 1, 1, AT_MALLOC, 1, { 32, 0 }, 1, 0, 0 },
		{ 1, 2, AT_REALLOC, 1, { 1, 64 }, 1, 0, 0 },
		{ 1, 2, AT_FREE, 0, { 1, 0 }, 0, 0, 0 },
	};
	for (unsigned munged = 0; munged < 2; munged++) {
		int fd = memfd_create("src", 0);
		struct at_atz_options opt = { .flags = munged ? AT_ATZ_FLAG_MUNGED : 0 };
		struct at_output o;
		assert_int_equal(at_output_open_fd(&o, fd, "b.atz"), 0);
		struct at_atz_writer *w = at_atz_writer_open(&o, &opt);
		for (size_t i = 0; i < 3; i++)
			assert_int_equal(at_atz_append(w, &ev[i]), 0);
		assert_int_equal(at_atz_writer_close(w), 0);
		at_output_close(&o);
		lseek(fd, 0, SEEK_SET);

		struct at_source s;
		struct at_event e;
		assert_int_equal(at_source_open_fd(&s, fd, "b.atz"), 0);
		assert_int_equal(s.kind, AT_SOURCE_BINARY);
		assert_int_equal(s.munged, (int)munged);
		for (size_t i = 0; i < 3; i++) {
			assert_int_equal(at_source_next(&s, &e), 1);
			assert_memory_equal(&e.arg, &ev[i].arg, sizeof(e.arg));
			assert_int_equal(e.result, ev[i].result);
			assert_int_equal(e.tid, ev[i].tid);
			assert_int_equal(e.func, ev[i].func);
		}
		assert_int_equal(at_source_next(&s, &e), 0);
		at_source_close(&s);
		close(fd);
	}
}

static unsigned stacks_seen, mappings_seen;

static void count_stack(void *arg, const struct at_stack *st)
{
	(void)arg;
	assert_int_equal(st->id, stacks_seen + 1);
	stacks_seen++;
}

static void count_mapping(void *arg, const struct at_mapping *m)
{
	(void)arg;
	assert_string_equal(m->path, "/lib/x.so");
	mappings_seen++;
}

/* Time and stack: a 2.0 trace gives them back and calls the stack and mapping callbacks
 * before the event that follows the records; a 1.1 trace and text give 0 (whatever the
 * caller's struct held) and never call them. */
static void test_times_stacks_mappings(void **state)
{
	(void)state;
	struct at_event ev[] = {
		{ 1, 1, AT_MALLOC, 1, { 32, 0 }, 0x10, 1000, 1 },
		{ 1, 1, AT_FREE, 0, { 0x10, 0 }, 0, 990, 0 },
	};
	struct at_stack st = { .id = 1, .pid = 1, .count = 2, .pcs = { 0x1000, 0x2000 } };
	struct at_mapping m = { .pid = 1, .start = 0x1000, .end = 0x3000, .path = "/lib/x.so" };

	for (unsigned major = 1; major <= 2; major++) {
		int fd = memfd_create("src", 0);
		struct at_atz_options opt = { .major = major };
		struct at_output o;
		assert_int_equal(at_output_open_fd(&o, fd, "b.atz"), 0);
		struct at_atz_writer *w = at_atz_writer_open(&o, &opt);
		assert_int_equal(at_atz_append_mapping(w, &m), major == 2 ? 0 : -1);
		assert_int_equal(at_atz_append_stack(w, &st), major == 2 ? 0 : -1);
		for (size_t i = 0; i < 2; i++)
			assert_int_equal(at_atz_append(w, &ev[i]), 0);
		assert_int_equal(at_atz_writer_close(w), 0);
		at_output_close(&o);
		lseek(fd, 0, SEEK_SET);

		struct at_source s;
		struct at_event e;
		stacks_seen = mappings_seen = 0;
		assert_int_equal(at_source_open_fd(&s, fd, "b.atz"), 0);
		at_source_on_stack(&s, count_stack, NULL);
		at_source_on_mapping(&s, count_mapping, NULL);
		for (size_t i = 0; i < 2; i++) {
			memset(&e, 0x5a, sizeof(e));
			assert_int_equal(at_source_next(&s, &e), 1);
			assert_int_equal(e.time_ns, major == 2 ? ev[i].time_ns : 0);
			assert_int_equal(e.stack, major == 2 ? ev[i].stack : 0);
			assert_int_equal(stacks_seen, major == 2 ? 1 : 0);
			assert_int_equal(mappings_seen, major == 2 ? 1 : 0);
		}
		assert_int_equal(at_source_next(&s, &e), 0);
		at_source_close(&s);
		close(fd);
	}

	static const char text[] = "1 1 malloc(32)=0x10\n1 1 free(0x10)\n";
	int fd = memfd_with(text, sizeof(text) - 1);
	struct at_source s;
	struct at_event e;
	stacks_seen = mappings_seen = 0;
	assert_int_equal(at_source_open_fd(&s, fd, "t.log"), 0);
	at_source_on_stack(&s, count_stack, NULL);
	at_source_on_mapping(&s, count_mapping, NULL);
	for (int i = 0; i < 2; i++) {
		memset(&e, 0x5a, sizeof(e));
		assert_int_equal(at_source_next(&s, &e), 1);
		assert_int_equal(e.time_ns, 0);
		assert_int_equal(e.stack, 0);
	}
	assert_int_equal(at_source_next(&s, &e), 0);
	assert_int_equal(stacks_seen + mappings_seen, 0);
	at_source_close(&s);
	close(fd);
}

/* Binary errors are fatal and carry the reader's message. */
static void test_binary_errors(void **state)
{
	(void)state;
	static const uint8_t junk[] = { 0x04, 0x22, 0x4d, 0x18, 0x64, 0x40, 0xa7, 0xff, 0xff, 0xff, 0x7f };
	int fd = memfd_with(junk, sizeof(junk));
	struct at_source s;
	struct at_event e;

	assert_int_equal(at_source_open_fd(&s, fd, "j.atz"), 0);
	assert_int_equal(s.kind, AT_SOURCE_BINARY);
	assert_int_equal(s.munged, -1); /* no header could be read */
	assert_int_equal(at_source_next(&s, &e), -1);
	assert_true(s.fatal);
	assert_int_equal(at_atz_reader_status(s.atz), AT_ATZ_ERR_CORRUPT);
	assert_int_equal(at_source_next(&s, &e), -1);
	at_source_close(&s);
	close(fd);

	/* fewer than 4 bytes: text */
	fd = memfd_with("\x04\x22", 2);
	assert_int_equal(at_source_open_fd(&s, fd, "short"), 0);
	assert_int_equal(s.kind, AT_SOURCE_TEXT);
	assert_int_equal(at_source_next(&s, &e), -1);
	assert_string_equal(s.why, "Malformed input");
	at_source_close(&s);
	close(fd);

	errno = 0;
	assert_int_equal(at_source_open(&s, "/nonexistent/x.log"), -1);
	assert_int_equal(errno, ENOENT);
}

static uint64_t rng_state = 99;
static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* 10,000 random texts built from the characters of log lines: every line ends as an event or
 * as an error with its line number, the count of both adds up, nothing crashes (ASan). */
static void test_random_text(void **state)
{
	(void)state;
	static const char alphabet[] = "0123456789abcdefx#(),= \r\n\t-+mallocfreJ_";
	static const char *const pieces[] = { "1 2 ", "malloc(", "free(", "realloc(", "calloc(",
					      "0x", "#", ",", ")", "=", "=0x1f", "\n", "\r\n",
					      "jemalloc_stats()", "18446744073709551616" };
	char text[400];
	uint64_t all_events = 0, all_errors = 0;

	for (unsigned i = 0; i < 10000; i++) {
		size_t n = 0, len = 1 + rnd() % 300;
		while (i % 2 && n + 60 < sizeof(text)) { /* valid lines, sometimes one byte changed */
			static const char *const forms[] = { "%u %u malloc(%u)=0x%x\n",
							     "%u %u free(0x%x)\n",
							     "%u %u realloc(0x%x,%u)=0x%x\n",
							     "%u %u calloc(%u,%u)=#%u\n" };
			unsigned f = (unsigned)(rnd() % 4);
			unsigned a = (unsigned)rnd(), b = (unsigned)rnd() % 5000, c = (unsigned)rnd();
			int m = f == 1 ? sprintf(text + n, forms[f], a % 9, b, c)
					: sprintf(text + n, forms[f], a % 9, b, c, a, b);
			if (rnd() % 4 == 0)
				text[n + rnd() % (unsigned)m] = alphabet[rnd() % (sizeof(alphabet) - 1)];
			n += (size_t)m;
			if (n > len)
				break;
		}
		while (n < len) {
			if (rnd() & 1) {
				text[n++] = alphabet[rnd() % (sizeof(alphabet) - 1)];
			} else {
				const char *p = pieces[rnd() % (sizeof(pieces) / sizeof(pieces[0]))];
				size_t m = strlen(p);
				if (n + m > len)
					break;
				memcpy(text + n, p, m);
				n += m;
			}
		}
		int fd = memfd_with(text, n);
		struct at_source s;
		struct at_event ev;
		uint64_t lines = 0, events = 0, errors = 0;
		int rc;
		assert_int_equal(at_source_open_fd(&s, fd, "r.log"), 0);
		while ((rc = at_source_next(&s, &ev)) != 0) {
			assert_false(s.fatal);
			assert_int_equal(s.lineno, ++lines);
			if (rc > 0) {
				char out[AT_LINE_MAX];
				assert_true(ev.func < AT_FUNC_COUNT);
				(void)(s.munged == 1 ? at_format_munged(out, &ev) : at_format_raw(out, &ev));
				events++;
			} else {
				assert_non_null(s.why);
				errors++;
			}
		}
		assert_int_equal(events + errors, lines);
		all_events += events;
		all_errors += errors;
		at_source_close(&s);
		close(fd);
	}
	/* both outcomes were reached */
	assert_true(all_events > 0);
	assert_true(all_errors > 1000);
	printf("random text: %llu events, %llu line errors\n", (unsigned long long)all_events,
	       (unsigned long long)all_errors);
}

/* ---- following a trace that grows ------------------------------------------------------- */

#define FOLLOW_EVENTS 3000

/* A trace of FOLLOW_EVENTS mallocs, flushed every 500 (several lz4 blocks), into *len bytes
 * (the caller frees them). */
static uint8_t *follow_trace(size_t *len)
{
	int fd = memfd_create("src", 0);
	struct at_atz_options opt = { 0 };
	struct at_output o;

	assert_int_equal(at_output_open_fd(&o, fd, "g.atz"), 0);
	struct at_atz_writer *w = at_atz_writer_open(&o, &opt);
	for (uint64_t i = 0; i < FOLLOW_EVENTS; i++) {
		struct at_event ev = { 1, 1, AT_MALLOC, 1, { 1 + (i * 2654435761u) % 4093, 0 },
				       0x1000 + 64 * i, 1000 + 37 * i * i, 0 };
		assert_int_equal(at_atz_append(w, &ev), 0);
		if (i % 500 == 499)
			assert_int_equal(at_atz_flush(w), 0);
	}
	assert_int_equal(at_atz_writer_close(w), 0);
	at_output_close(&o);
	off_t n = lseek(fd, 0, SEEK_END);
	uint8_t *p = malloc((size_t)n);
	assert_int_equal(pread(fd, p, (size_t)n, 0), n);
	close(fd);
	*len = (size_t)n;
	return p;
}

/* The writer's side: the trace's bytes given chunk bytes at each wait, stop_at bytes at most
 * (then the wait says stop), the write end closed after the last when close_after. */
struct grower {
	const uint8_t *p;
	size_t len, off, chunk, stop_at;
	int wfd, close_after;
	unsigned waits;
};

static int grow(void *arg, int fd)
{
	struct grower *g = arg;

	(void)fd;
	g->waits++;
	if (g->off >= g->stop_at || g->off >= g->len)
		return 1;
	size_t n = g->len - g->off < g->chunk ? g->len - g->off : g->chunk;
	assert_int_equal(write(g->wfd, g->p + g->off, n), (ssize_t)n);
	g->off += n;
	if (g->off == g->len && g->close_after)
		close(g->wfd);
	return 0;
}

/* Followed in chunks through a regular file and through a pipe, the trace gives every event
 * and ends at its end mark, never asking past it; a wait that stops before the end leaves a
 * trace cut short; text is not followed. */
static void test_follow(void **state)
{
	(void)state;
	size_t len;
	uint8_t *trace = follow_trace(&len);
	const struct {
		int pipe;
		size_t chunk, stop_at;
		uint64_t events; /* read before the end, or before the cut */
		int end;         /* the last at_source_next */
	} cases[] = {
		{ 0, 100, SIZE_MAX, FOLLOW_EVENTS, 0 },
		{ 1, 64, SIZE_MAX, FOLLOW_EVENTS, 0 },
		{ 0, 1, SIZE_MAX, FOLLOW_EVENTS, 0 },
		{ 0, 100, 400, 0, -1 }, /* stopped: some events at most, then cut short */
	};
	assert_true(len > 1000);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		char path[] = "/tmp/alloctap_follow_XXXXXX";
		int fds[2], rfd;
		if (cases[c].pipe) {
			assert_int_equal(pipe(fds), 0);
			rfd = fds[0];
		} else {
			rfd = mkstemp(path);
			assert_true(rfd >= 0);
			fds[1] = open(path, O_WRONLY | O_APPEND);
			assert_true(fds[1] >= 0);
			unlink(path);
		}
		struct grower g = { trace, len, 0, cases[c].chunk, cases[c].stop_at, fds[1],
				    cases[c].pipe, 0 };
		struct at_source s;
		struct at_event e;
		uint64_t n = 0;
		int rc;
		assert_int_equal(at_source_open_follow(&s, rfd, "g.atz", grow, &g), 0);
		assert_int_equal(s.kind, AT_SOURCE_BINARY);
		while ((rc = at_source_next(&s, &e)) == 1) {
			assert_int_equal(e.result, 0x1000 + 64 * n);
			n++;
		}
		assert_int_equal(rc, cases[c].end);
		if (cases[c].end == 0) {
			assert_int_equal(n, cases[c].events);
			assert_int_equal(g.off, len);
			assert_true(g.waits >= len / cases[c].chunk);
		} else {
			assert_true(n < FOLLOW_EVENTS);
			assert_int_equal(at_atz_reader_status(s.atz), AT_ATZ_ERR_TRUNCATED);
		}
		at_source_close(&s);
		close(rfd);
		if (!cases[c].pipe || g.off < len)
			close(fds[1]);
	}
	free(trace);

	/* text: refused before any wait */
	struct grower g = { (const uint8_t *)"1 1 malloc 32 = 0x10\n", 21, 0, 21, SIZE_MAX, -1, 0, 0 };
	int fd = memfd_with(g.p, g.len);
	struct at_source s;
	assert_int_equal(at_source_open_follow(&s, fd, "t.log", grow, &g), -1);
	assert_int_equal(errno, ENOTSUP);
	assert_int_equal(g.waits, 0);
	at_source_close(&s);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_kinds),
		cmocka_unit_test(test_text_errors),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_binary),
		cmocka_unit_test(test_binary_errors),
		cmocka_unit_test(test_times_stacks_mappings),
		cmocka_unit_test(test_random_text),
		cmocka_unit_test(test_follow),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
