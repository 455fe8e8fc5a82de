/* test_lib_linereader.c: unit tests of lib/linereader.c: the lines handed out (without '\n',
 * CR kept, a last line without '\n', empty lines, NUL bytes), lines shorter than, as long as
 * and longer than the initial buffer, input arriving in pieces, preloaded bytes, line numbers
 * and byte offsets, read errors, the line limit (an endless line is an error, not a buffer
 * growing without end), and the path-or-stdin rule of at_input_fd and open. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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

#include "linereader.h"

/* An in-memory file holding the n bytes at data, read from its start. */
static int memfile(const void *data, size_t n)
{
	int fd = memfd_create("input", MFD_CLOEXEC);
	const char *p = data;

	assert_true(fd >= 0);
	while (n) {
		ssize_t w = write(fd, p, n);
		assert_true(w > 0);
		p += w;
		n -= (size_t)w;
	}
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

/* The size of the buffer a reader starts with (the header leaves it to the implementation). */
static size_t initial_cap(void)
{
	struct at_linereader r;

	assert_int_equal(at_linereader_open_fd(&r, -1, "none", NULL, 0), 0);
	size_t cap = r.cap;
	at_linereader_close(&r);
	return cap;
}

struct want_line {
	const char *text;
	size_t len;
};

#define L(s) { s, sizeof(s) - 1 }

/* Reads r, whose input is total bytes, to its end: each line must be the next of want (n of
 * them), numbered from 1, and followed by the offset of the next line (after the '\n', or
 * the input's end for a last line without one); then 0, also when asked again. */
static void expect_lines(struct at_linereader *r, const char *what, const struct want_line *want,
			 size_t n, uint64_t total)
{
	const char *line;
	size_t len;
	uint64_t offset = 0;

	for (size_t i = 0; i < n; i++) {
		int rc = at_linereader_next(r, &line, &len);
		if (rc != 1)
			fail_msg("%s: line %zu: next gave %d, want 1", what, i + 1, rc);
		if (len != want[i].len || memcmp(line, want[i].text, len) != 0)
			fail_msg("%s: line %zu: %zu bytes \"%.*s\", want %zu \"%s\"", what,
				 i + 1, len, (int)(len < 60 ? len : 60), line, want[i].len,
				 want[i].text);
		offset += want[i].len + 1;
		if (offset > total)
			offset = total;
		if (r->lineno != i + 1 || r->bytes != offset)
			fail_msg("%s: line %zu: lineno %llu, bytes %llu, want bytes %llu", what,
				 i + 1, (unsigned long long)r->lineno, (unsigned long long)r->bytes,
				 (unsigned long long)offset);
	}
	if (r->bytes != total)
		fail_msg("%s: %llu bytes consumed, want %llu", what, (unsigned long long)r->bytes,
			 (unsigned long long)total);
	for (int again = 0; again < 2; again++) {
		int rc = at_linereader_next(r, &line, &len);
		if (rc != 0)
			fail_msg("%s: after the last line: next gave %d, want 0", what, rc);
		assert_int_equal(r->lineno, n);
	}
}

/* Short inputs: the exact lines, their numbers and the offsets (the '\n' counts, the last line
 * of an input without one ends at the input's end). */
static void test_short_inputs(void **state)
{
	(void)state;
	static const struct {
		const char *what;
		const char *input;
		size_t input_len;
		struct want_line lines[4];
		size_t n;
	} cases[] = {
		{ "empty input", "", 0, { { 0 } }, 0 },
		{ "one line", "a\n", 2, { L("a") }, 1 },
		{ "no final newline", "a", 1, { L("a") }, 1 },
		{ "a last line without newline", "1 1 malloc(8)=#1\n1 1 free(#1)", 29,
		  { L("1 1 malloc(8)=#1"), L("1 1 free(#1)") }, 2 },
		{ "one empty line", "\n", 1, { L("") }, 1 },
		{ "empty lines", "\n\n", 2, { L(""), L("") }, 2 },
		{ "empty lines between", "a\n\n\nb\n", 6, { L("a"), L(""), L(""), L("b") }, 4 },
		{ "blanks kept", " \t\n b \n", 7, { L(" \t"), L(" b ") }, 2 },
		{ "CRLF: the CR is kept", "a\r\nb\r\n", 6, { L("a\r"), L("b\r") }, 2 },
		{ "a CR alone is no line end", "a\rb\r", 4, { L("a\rb\r") }, 1 },
		{ "CRLF without final newline", "a\r\nb\r", 5, { L("a\r"), L("b\r") }, 2 },
		{ "NUL bytes are line bytes", "x\0y\n\0\n\0", 7,
		  { L("x\0y"), L("\0"), L("\0") }, 3 },
		{ "binary bytes", "\xff\xfe\n\x80", 4, { L("\xff\xfe"), L("\x80") }, 2 },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct at_linereader r;
		int fd = memfile(cases[c].input, cases[c].input_len);

		assert_int_equal(at_linereader_open_fd(&r, fd, "memfd", NULL, 0), 0);
		assert_string_equal(r.name, "memfd");
		assert_int_equal(r.lineno, 0);
		assert_int_equal(r.bytes, 0);
		expect_lines(&r, cases[c].what, cases[c].lines, cases[c].n, cases[c].input_len);
		at_linereader_close(&r);
		close(fd);
	}
}

/* Lines of lengths around and beyond the initial buffer, with and without a final newline,
 * between short lines: every byte of every line comes back. */
static void test_long_lines(void **state)
{
	(void)state;
	size_t cap = initial_cap();
	const size_t lens[] = { cap - 2, cap - 1, cap, cap + 1, 2 * cap, 5 * cap + 3 };

	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		for (int final_nl = 0; final_nl < 2; final_nl++) {
			size_t n = lens[k], total = 2 + n + 1 + 2 + n + (size_t)final_nl;
			char *in = malloc(total);
			assert_non_null(in);
			memcpy(in, "a\n", 2);
			for (size_t i = 0; i < n; i++)
				in[2 + i] = (char)('0' + i % 10);
			memcpy(in + 2 + n, "\nb\n", 3);
			memcpy(in + 5 + n, in + 2, n);
			if (final_nl)
				in[total - 1] = '\n';
			struct want_line want[] = { L("a"), { in + 2, n }, L("b"), { in + 2, n } };
			struct at_linereader r;
			int fd = memfile(in, total);
			char what[64];

			snprintf(what, sizeof(what), "lines of %zu bytes, final newline %d", n,
				 final_nl);
			assert_int_equal(at_linereader_open_fd(&r, fd, "memfd", NULL, 0), 0);
			expect_lines(&r, what, want, 4, total);
			at_linereader_close(&r);
			close(fd);
			free(in);
		}
	}
}

/* The line limit: with max_line lowered to four initial buffers, a line that fits below it
 * comes back whole, one that reaches it fails with EMSGSIZE (and the reason names the limit),
 * and an endless input (/dev/zero) fails the same way at the default limit. */
static void test_line_limit(void **state)
{
	(void)state;
	size_t cap = initial_cap(), limit = 4 * cap;
	const struct {
		size_t len;
		int fails;
	} cases[] = { { limit - 2, 0 }, { limit - 1, 0 }, { limit, 1 }, { 3 * limit, 1 } };

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		size_t n = cases[k].len;
		char *in = malloc(n + 1);
		assert_non_null(in);
		memset(in, 'x', n);
		in[n] = '\n';
		struct at_linereader r;
		const char *line;
		size_t len;
		int fd = memfile(in, n + 1);

		assert_int_equal(at_linereader_open_fd(&r, fd, "memfd", NULL, 0), 0);
		r.max_line = limit;
		errno = 0;
		int rc = at_linereader_next(&r, &line, &len);
		if (cases[k].fails) {
			assert_int_equal(rc, -1);
			assert_int_equal(errno, EMSGSIZE);
		} else {
			assert_int_equal(rc, 1);
			assert_int_equal(len, n);
			assert_memory_equal(line, in, n);
			assert_int_equal(at_linereader_next(&r, &line, &len), 0);
		}
		at_linereader_close(&r);
		close(fd);
		free(in);
	}
	assert_non_null(strstr(at_linereader_strerror(EMSGSIZE), "longer than 64 MiB"));
	assert_string_equal(at_linereader_strerror(EIO), strerror(EIO));

	struct at_linereader r;
	const char *line;
	size_t len;
	assert_int_equal(at_linereader_open(&r, "/dev/zero"), 0);
	assert_int_equal(r.max_line, AT_LINEREADER_MAX_LINE);
	assert_int_equal(at_linereader_next(&r, &line, &len), -1);
	assert_int_equal(errno, EMSGSIZE);
	at_linereader_close(&r);
}

/* Many short lines over several buffers: the unread part moves to the front, the lines that
 * straddle the buffer's end come back whole, and the buffer does not grow. */
static void test_many_lines(void **state)
{
	(void)state;
	size_t cap = initial_cap(), n = 0, len = 0, total = 3 * cap + 17;
	char *in = malloc(total);

	assert_non_null(in);
	while (len < total) {
		int w = snprintf(in + len, total - len, "%zu %zu malloc(%zu)=#%zu\n", n % 7, n,
				 n * 13, n + 1);
		if ((size_t)w >= total - len)
			break;
		len += (size_t)w;
		n++;
	}
	struct at_linereader r;
	int fd = memfile(in, len);
	const char *line;
	size_t got_len, i = 0;
	char want[64];

	assert_int_equal(at_linereader_open_fd(&r, fd, "memfd", NULL, 0), 0);
	while (at_linereader_next(&r, &line, &got_len) == 1) {
		int w = snprintf(want, sizeof(want), "%zu %zu malloc(%zu)=#%zu", i % 7, i, i * 13,
				 i + 1);
		if (got_len != (size_t)w || memcmp(line, want, got_len) != 0)
			fail_msg("line %zu: \"%.*s\", want \"%s\"", i + 1, (int)got_len, line,
				 want);
		i++;
		assert_int_equal(r.lineno, i);
	}
	assert_int_equal(i, n);
	assert_int_equal(r.bytes, len);
	assert_int_equal(r.cap, cap);
	at_linereader_close(&r);
	close(fd);
	free(in);
}

struct trickle {
	int fd;
	const char *data;
	size_t n, piece;
};

/* Writes the data in pieces of `piece` bytes, then closes the pipe. */
static void *trickle_in(void *arg)
{
	struct trickle *t = arg;

	for (size_t off = 0; off < t->n; off += t->piece) {
		size_t k = t->n - off < t->piece ? t->n - off : t->piece;
		if (write(t->fd, t->data + off, k) != (ssize_t)k)
			break;
	}
	close(t->fd);
	return NULL;
}

/* Input from a pipe that delivers 1, 3 or 4096 bytes per write: the same lines. */
static void test_pipe_in_pieces(void **state)
{
	(void)state;
	static const char in[] = "1 1 malloc(8)=#1\r\n\n1 1 free(#1)\nlast";
	const struct want_line want[] = { L("1 1 malloc(8)=#1\r"), L(""), L("1 1 free(#1)"),
					  L("last") };
	const size_t pieces[] = { 1, 3, 4096 };

	for (size_t k = 0; k < sizeof(pieces) / sizeof(pieces[0]); k++) {
		int fds[2];
		pthread_t writer;
		struct at_linereader r;

		assert_int_equal(pipe(fds), 0);
		struct trickle t = { fds[1], in, sizeof(in) - 1, pieces[k] };
		assert_int_equal(at_linereader_open_fd(&r, fds[0], "pipe", NULL, 0), 0);
		assert_int_equal(pthread_create(&writer, NULL, trickle_in, &t), 0);
		expect_lines(&r, "pipe", want, 4, sizeof(in) - 1);
		pthread_join(writer, NULL);
		at_linereader_close(&r);
		close(fds[0]);
	}
}

/* Preloaded bytes come first, as if read from the fd: a line may start in them and end in the
 * fd's data; the offsets count them. */
static void test_preload(void **state)
{
	(void)state;
	static const struct {
		const char *what, *preload, *rest;
		struct want_line lines[3];
		size_t n;
	} cases[] = {
		{ "a line split between preload and fd", "1 1 mal", "loc(8)=#1\nfoo",
		  { L("1 1 malloc(8)=#1"), L("foo") }, 2 },
		{ "whole lines preloaded, fd empty", "a\nb\n", "", { L("a"), L("b") }, 2 },
		{ "a last line only preloaded", "a\nb", "", { L("a"), L("b") }, 2 },
		{ "preload ends with the newline", "a\n", "b\n", { L("a"), L("b") }, 2 },
		{ "an empty line preloaded", "\n", "x", { L(""), L("x") }, 2 },
		{ "nothing preloaded", "", "a\n", { L("a") }, 1 },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct at_linereader r;
		size_t np = strlen(cases[c].preload), nr = strlen(cases[c].rest);
		int fd = memfile(cases[c].rest, nr);

		assert_int_equal(at_linereader_open_fd(&r, fd, "memfd", cases[c].preload, np), 0);
		expect_lines(&r, cases[c].what, cases[c].lines, cases[c].n, np + nr);
		at_linereader_close(&r);
		close(fd);
	}
}

/* A preload larger than the initial buffer: the buffer starts large enough. */
static void test_large_preload(void **state)
{
	(void)state;
	size_t cap = initial_cap(), n = 2 * cap + 5;
	char *pre = malloc(n);

	assert_non_null(pre);
	memset(pre, 'p', n);
	pre[n - 1] = '\n';
	int fd = memfile("tail", 4);
	struct at_linereader r;
	struct want_line want[] = { { pre, n - 1 }, L("tail") };

	assert_int_equal(at_linereader_open_fd(&r, fd, "memfd", pre, n), 0);
	assert_true(r.cap >= n);
	expect_lines(&r, "large preload", want, 2, n + 4);
	at_linereader_close(&r);
	close(fd);
	free(pre);
}

/* A read error: -1 with read's errno; lines already buffered come out before it. */
static void test_read_errors(void **state)
{
	(void)state;
	struct at_linereader r;
	const char *line;
	size_t len;
	int dir = open("/tmp", O_RDONLY | O_DIRECTORY), fds[2];

	assert_true(dir >= 0);
	assert_int_equal(at_linereader_open_fd(&r, dir, "/tmp", NULL, 0), 0);
	errno = 0;
	assert_int_equal(at_linereader_next(&r, &line, &len), -1);
	assert_int_equal(errno, EISDIR);
	assert_int_equal(r.lineno, 0);
	at_linereader_close(&r);

	assert_int_equal(at_linereader_open_fd(&r, dir, "/tmp", "a\nb", 3), 0);
	assert_int_equal(at_linereader_next(&r, &line, &len), 1);
	assert_int_equal(len, 1);
	assert_memory_equal(line, "a", 1);
	errno = 0;
	assert_int_equal(at_linereader_next(&r, &line, &len), -1);
	assert_int_equal(errno, EISDIR);
	assert_int_equal(r.lineno, 1);
	assert_int_equal(r.bytes, 2);
	at_linereader_close(&r);
	close(dir);

	assert_int_equal(pipe(fds), 0);
	assert_int_equal(at_linereader_open_fd(&r, fds[1], "write end", NULL, 0), 0);
	errno = 0;
	assert_int_equal(at_linereader_next(&r, &line, &len), -1);
	assert_int_equal(errno, EBADF);
	at_linereader_close(&r);
	close(fds[0]);
	close(fds[1]);
}

/* at_input_fd: NULL and "-" are standard input; a path is opened read-only, close-on-exec;
 * a missing one is -1 with ENOENT. The name is the path or "<stdin>". */
static void test_input_fd(void **state)
{
	(void)state;
	const char *name = NULL;
	int fd;

	assert_int_equal(at_input_fd(NULL, &name), 0);
	assert_string_equal(name, "<stdin>");
	name = NULL;
	assert_int_equal(at_input_fd("-", &name), 0);
	assert_string_equal(name, "<stdin>");

	const char *path = "/proc/self/cmdline";
	fd = at_input_fd(path, &name);
	assert_true(fd > 2);
	assert_ptr_equal(name, path);
	assert_int_equal(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDONLY);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);

	errno = 0;
	assert_int_equal(at_input_fd("/nonexistent/x.log", &name), -1);
	assert_int_equal(errno, ENOENT);
	assert_string_equal(name, "/nonexistent/x.log");
	errno = 0;
	assert_int_equal(at_input_fd("", &name), -1);
	assert_int_equal(errno, ENOENT);
}

/* open reads a path and closes it at the end; standard input is left open; a missing path is
 * -1 with ENOENT. */
static void test_open_and_close(void **state)
{
	(void)state;
	struct at_linereader r;
	char path[] = "/tmp/test_lib_linereader.XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x 1\ny 2\n", 8), 8);
	close(fd);
	assert_int_equal(at_linereader_open(&r, path), 0);
	assert_ptr_equal(r.name, path);
	fd = r.fd;
	const struct want_line want[] = { L("x 1"), L("y 2") };
	expect_lines(&r, "a file", want, 2, 8);
	at_linereader_close(&r);
	assert_int_equal(fcntl(fd, F_GETFD), -1);
	assert_null(r.buf);
	unlink(path);

	assert_int_equal(at_linereader_open(&r, "-"), 0);
	assert_int_equal(r.fd, 0);
	assert_string_equal(r.name, "<stdin>");
	at_linereader_close(&r);
	assert_true(fcntl(0, F_GETFD) >= 0);
	assert_int_equal(at_linereader_open(&r, NULL), 0);
	assert_int_equal(r.fd, 0);
	at_linereader_close(&r);
	assert_true(fcntl(0, F_GETFD) >= 0);

	errno = 0;
	assert_int_equal(at_linereader_open(&r, "/nonexistent/x.log"), -1);
	assert_int_equal(errno, ENOENT);

	/* open_fd: the caller's descriptor stays open */
	fd = memfile("a\n", 2);
	assert_int_equal(at_linereader_open_fd(&r, fd, "memfd", NULL, 0), 0);
	at_linereader_close(&r);
	assert_true(fcntl(fd, F_GETFD) >= 0);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_short_inputs),
		cmocka_unit_test(test_long_lines),
		cmocka_unit_test(test_line_limit),
		cmocka_unit_test(test_many_lines),
		cmocka_unit_test(test_pipe_in_pieces),
		cmocka_unit_test(test_preload),
		cmocka_unit_test(test_large_preload),
		cmocka_unit_test(test_read_errors),
		cmocka_unit_test(test_input_fd),
		cmocka_unit_test(test_open_and_close),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
