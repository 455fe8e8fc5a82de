/* test_munge_pipeline.c: unit tests of munge/pipeline.c: whole inputs munged by one or two
 * threads, every line's outcome in order, stopping at a dropped line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../munge/munge.h"
#include "../../munge/pipeline.h"
#include "linereader.h"
#include "output.h"

#define NOOPT { 0, 0, 0, 0, 0 }

#define PIPE_N 10000 /* lines per phase: several batches */

struct outcomes {
	uint64_t lines, ignored, first_ignored_at;
	int stop_on_ignored;
};

static int count_outcome(void *arg, uint64_t lineno, const char *line, size_t len, int result,
			 const char *why)
{
	struct outcomes *o = arg;

	(void)line;
	(void)len;
	assert_int_equal(lineno, o->lines + 1); /* every line, in order */
	o->lines++;
	if (result == AT_MUNGE_IGNORED) {
		assert_string_equal(why, "Malformed input");
		if (!o->ignored++)
			o->first_ignored_at = lineno;
		return o->stop_on_ignored;
	}
	return 0;
}

/* A memfd holding text. */
static int memfd_with(const char *text, size_t len)
{
	int fd = memfd_create("munge-in", 0);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

/* N mallocs, a 2 MiB garbage line, N frees in order from another thread, N more mallocs: the
 * frees release #1..#N in order and the last mallocs take them back in the same order. */
static char *pipeline_input(size_t *len, char **want, size_t *want_len)
{
	size_t cap = (size_t)PIPE_N * 3 * 48 + (3u << 20);
	char *in = malloc(cap), *out = malloc(cap);
	size_t n = 0, w = 0;

	assert_non_null(in);
	assert_non_null(out);
	for (unsigned i = 0; i < PIPE_N; i++) {
		n += (size_t)sprintf(in + n, "1 1 malloc(%u)=0x%x\n", i, 16 * (i + 1));
		w += (size_t)sprintf(out + w, "1 1 malloc(%u)=#%u\n", i, i + 1);
	}
	memset(in + n, 'x', 2u << 20);
	n += 2u << 20;
	in[n++] = '\n';
	for (unsigned i = 0; i < PIPE_N; i++) {
		n += (size_t)sprintf(in + n, "1 2 free(0x%x)\n", 16 * (i + 1));
		w += (size_t)sprintf(out + w, "1 2 free(#%u)\n", i + 1);
	}
	for (unsigned i = 0; i < PIPE_N; i++) {
		n += (size_t)sprintf(in + n, "1 1 malloc(7)=0x%x\n", 16 * (PIPE_N + i + 1));
		w += (size_t)sprintf(out + w, "1 1 malloc(7)=#%u\n", i + 1);
	}
	*len = n;
	*want = out;
	*want_len = w;
	return in;
}

/* Runs the pipeline on text; returns its code, the output in *got. */
static int run_pipeline(const char *text, size_t len, int threads, struct outcomes *o,
			char **got, size_t *got_len)
{
	struct at_linereader r;
	struct at_output out;
	struct at_munge m;
	struct at_munge_options opt = NOOPT;
	int in_fd = memfd_with(text, len), out_fd = memfd_create("munge-out", 0), err = 0;

	assert_true(out_fd >= 0);
	assert_int_equal(at_linereader_open_fd(&r, in_fd, "memfd", NULL, 0), 0);
	assert_int_equal(at_output_open_fd(&out, out_fd, "memfd"), 0);
	at_munge_init(&m, &opt);
	int rc = at_munge_run(&m, &r, &out, threads, count_outcome, o, &err);
	assert_int_equal(at_output_flush(&out), 0);
	off_t size = lseek(out_fd, 0, SEEK_CUR);
	*got = malloc((size_t)size + 1);
	assert_non_null(*got);
	assert_int_equal(pread(out_fd, *got, (size_t)size, 0), size);
	*got_len = (size_t)size;
	at_output_close(&out);
	at_linereader_close(&r);
	at_munge_free(&m);
	close(in_fd);
	close(out_fd);
	return rc;
}

static void test_pipeline(void **state)
{
	(void)state;
	size_t len, want_len;
	char *want, *in = pipeline_input(&len, &want, &want_len);

	for (int threads = 1; threads <= 2; threads++) {
		struct outcomes o = { 0, 0, 0, 0 };
		char *got;
		size_t got_len;
		assert_int_equal(run_pipeline(in, len, threads, &o, &got, &got_len),
				 AT_PIPELINE_DONE);
		assert_int_equal(o.lines, 3 * PIPE_N + 1);
		assert_int_equal(o.ignored, 1);
		assert_int_equal(o.first_ignored_at, PIPE_N + 1);
		assert_int_equal(got_len, want_len);
		assert_memory_equal(got, want, want_len);
		free(got);

		/* stopping at the garbage line (--strict): only the lines before it come out */
		struct outcomes s = { 0, 0, 0, 1 };
		assert_int_equal(run_pipeline(in, len, threads, &s, &got, &got_len),
				 AT_PIPELINE_STOPPED);
		assert_int_equal(s.lines, PIPE_N + 1);
		size_t first = (size_t)(strstr(want, "1 2 free(") - want);
		assert_int_equal(got_len, first);
		assert_memory_equal(got, want, first);
		free(got);
	}
	free(in);
	free(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pipeline),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
