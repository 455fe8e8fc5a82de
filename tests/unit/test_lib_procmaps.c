/* test_lib_procmaps.c: unit tests of lib/procmaps.c: maps lines field by field, maps files
 * read in small buffers (long paths reported as truncated, never cut silently), whole maps
 * files, C library names; and the caller's-buffer mode of lib/linereader.c it reads through. */
#include <errno.h>
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
#include "procmaps.h"

/* A file holding text, and its /proc/self/fd path for at_linereader_open_buffer(). */
struct text_file {
	int fd;
	char path[64];
};

static void text_file(struct text_file *t, const char *text, size_t n)
{
	t->fd = memfd_create("maps", 0);
	assert_true(t->fd >= 0);
	if (n)
		assert_int_equal(write(t->fd, text, n), (ssize_t)n);
	snprintf(t->path, sizeof(t->path), "/proc/self/fd/%d", t->fd);
}

/* A maps line with a path of n bytes: "/" then 'a' to 'z' over and over. */
static char *long_line(size_t n, const char *head, char **path)
{
	size_t h = strlen(head);
	char *line = malloc(h + n + 2);

	assert_non_null(line);
	memcpy(line, head, h);
	line[h] = '/';
	for (size_t i = 1; i < n; i++)
		line[h + i] = (char)('a' + i % 26);
	line[h + n] = '\n';
	line[h + n + 1] = '\0';
	*path = line + h;
	return line;
}

static void test_parse_lines(void **state)
{
	(void)state;
	static const struct {
		const char *line;
		int rc;
		uint64_t start, end, offset, inode;
		unsigned major, minor;
		const char *perms, *path;
	} cases[] = {
		{ "7f2d1c028000-7f2d1c1bd000 r-xp 00028000 fe:01 1573049                    "
		  "/usr/lib/x86_64-linux-gnu/libc.so.6\n",
		  0, 0x7f2d1c028000, 0x7f2d1c1bd000, 0x28000, 1573049, 0xfe, 1, "r-xp",
		  "/usr/lib/x86_64-linux-gnu/libc.so.6" },
		{ "55d0c2a5e000-55d0c2a7f000 rw-p 00000000 00:00 0                          [heap]\n",
		  0, 0x55d0c2a5e000, 0x55d0c2a7f000, 0, 0, 0, 0, "rw-p", "[heap]" },
		{ "7ffd5d1f0000-7ffd5d211000 rw-p 00000000 00:00 0\n", 0, 0x7ffd5d1f0000,
		  0x7ffd5d211000, 0, 0, 0, 0, "rw-p", "" },
		{ "7ffd5d1f0000-7ffd5d211000 rw-p 00000000 00:00 0", 0, 0x7ffd5d1f0000,
		  0x7ffd5d211000, 0, 0, 0, 0, "rw-p", "" },
		{ "7ffc1c3f2000-7ffc1c413000 rw-p 00000000 00:00 0                          [stack]",
		  0, 0x7ffc1c3f2000, 0x7ffc1c413000, 0, 0, 0, 0, "rw-p", "[stack]" },
		{ "400000-401000 r--p 00000000 08:02 42 /tmp/a b/prog (deleted)", 0, 0x400000,
		  0x401000, 0, 42, 8, 2, "r--p", "/tmp/a b/prog (deleted)" },
		{ "7f00-7f01 rw-s 00000000 00:01 2050 /memfd:pool (deleted)\n", 0, 0x7f00, 0x7f01,
		  0, 2050, 0, 1, "rw-s", "/memfd:pool (deleted)" },
		{ "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]\n", 0,
		  0xffffffffff600000, 0xffffffffff601000, 0, 0, 0, 0, "--xp", "[vsyscall]" },
		{ "1000-1000 ---p ffffffffffffffff 103:1f 18446744073709551615\t/x\n", 0, 0x1000,
		  0x1000, UINT64_MAX, UINT64_MAX, 0x103, 0x1f, "---p", "/x" },
		{ "", -1, 0, 0, 0, 0, 0, 0, NULL, NULL },
		{ "garbage\n", -1, 0, 0, 0, 0, 0, 0, NULL, NULL },
		{ "1000-2000 r-xp\n", -1, 0, 0, 0, 0, 0, 0, NULL, NULL },
		{ "1000-2000 r-x 0 0:0 0\n", -1, 0, 0, 0, 0, 0, 0, NULL, NULL },
		{ "2000-1000 r-xp 0 00:00 0 /x\n", -1, 0, 0, 0, 0, 0, 0, NULL, NULL },
		{ "1000-2000 r-xp 0 00:00 x /x\n", -1, 0, 0, 0, 0, 0, 0, NULL, NULL },
		{ "1000-2000 r-xp 0 00:00 1x /x\n", -1, 0, 0, 0, 0, 0, 0, NULL, NULL },
		{ "1000-2000 r-xp 0 00:00 1 /x\n2000-3000 r-xp 0 00:00 1 /y\n", -1, 0, 0, 0, 0, 0,
		  0, NULL, NULL },
		{ "99999999999999999999-2000 r-xp 0 00:00 1 /x\n", -1, 0, 0, 0, 0, 0, 0, NULL,
		  NULL },
		{ "1000-2000 r-xp 10000000000000000 00:00 1 /x\n", -1, 0, 0, 0, 0, 0, 0, NULL,
		  NULL },
		{ "1000-2000 r-xp 0 00:00 18446744073709551616 /x\n", -1, 0, 0, 0, 0, 0, 0, NULL,
		  NULL },
		{ "1000 2000 r-xp 0 00:00 1 /x\n", -1, 0, 0, 0, 0, 0, 0, NULL, NULL },
		{ "1000-2000 r-xp 0 0000 1 /x\n", -1, 0, 0, 0, 0, 0, 0, NULL, NULL },
		{ "-1000-2000 r-xp 0 00:00 1 /x\n", -1, 0, 0, 0, 0, 0, 0, NULL, NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char line[512];
		struct at_procmaps_entry e;

		snprintf(line, sizeof(line), "%s", cases[i].line);
		int rc = at_procmaps_parse_line(line, &e);
		if (rc != cases[i].rc)
			fail_msg("case %zu: rc %d", i, rc);
		if (rc < 0)
			continue;
		assert_true(e.start == cases[i].start);
		assert_true(e.end == cases[i].end);
		assert_true(e.offset == cases[i].offset);
		assert_true(e.inode == cases[i].inode);
		assert_int_equal(e.dev_major, cases[i].major);
		assert_int_equal(e.dev_minor, cases[i].minor);
		assert_string_equal(e.perms, cases[i].perms);
		assert_string_equal(e.path, cases[i].path);
		assert_int_equal(e.path_len, strlen(cases[i].path));
		assert_int_equal(e.path_truncated, 0);
	}
}

/* Every line of a file, read through callers' buffers of several sizes: the same lines,
 * NUL-terminated, cut ones reported with their whole length. */
static void test_lines_in_small_buffers(void **state)
{
	(void)state;
	static const size_t caps[] = { AT_LINEREADER_MIN_BUF, 300, 1000, AT_PROCMAPS_BUF };
	static const size_t lens[] = { 0, 1, 100, 190, 191, 192, 255, 256, 257, 299, 300, 301,
				       999, 1000, 5000, 20000 };
	size_t total = 0;

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		total += lens[i] + 1;
	char *text = malloc(total);
	size_t off = 0;
	assert_non_null(text);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		for (size_t k = 0; k < lens[i]; k++)
			text[off + k] = (char)('A' + (i + k) % 26);
		text[off + lens[i]] = '\n';
		off += lens[i] + 1;
	}
	for (int last_nl = 1; last_nl >= 0; last_nl--) {
		struct text_file t;
		text_file(&t, text, total - (last_nl ? 0 : 1));
		for (size_t c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
			char *buf = malloc(caps[c]);
			struct at_linereader r;
			const char *line;
			size_t len;

			assert_int_equal(at_linereader_open_buffer(&r, t.path, buf, caps[c]), 0);
			off = 0;
			for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
				if (!last_nl && i + 1 == sizeof(lens) / sizeof(lens[0]) &&
				    lens[i] == 0)
					break;
				assert_int_equal(at_linereader_next(&r, &line, &len), 1);
				assert_int_equal(r.lineno, i + 1);
				assert_int_equal(strlen(line), len);
				if (lens[i] >= caps[c]) {
					assert_int_equal(r.cut_len, lens[i]);
					assert_true(len >= caps[c] - 65 && len < lens[i]);
				} else {
					assert_int_equal(r.cut_len, 0);
					assert_int_equal(len, lens[i]);
				}
				assert_memory_equal(line, text + off, len);
				off += lens[i] + 1;
				assert_int_equal(r.bytes, off > total - !last_nl ? total - 1 : off);
			}
			assert_int_equal(at_linereader_next(&r, &line, &len), 0);
			assert_int_equal(at_linereader_next(&r, &line, &len), 0);
			at_linereader_close(&r);
			free(buf);
		}
		close(t.fd);
	}
	free(text);
}

/* A maps file with anonymous, [heap], deleted and long-path entries, read in a small buffer:
 * exact fields, and a path longer than the buffer reported as truncated with its length. */
static void test_maps_file(void **state)
{
	(void)state;
	char *long_path, *longer_path;
	char *l1 = long_line(200, "7f0000001000-7f0000002000 r-xp 00001000 08:01 77 ",
			     &long_path);
	char *l2 = long_line(5000, "7f0000003000-7f0000004000 r--p 00000000 08:01 78    ",
			     &longer_path);
	char text[16384];
	int n = snprintf(text, sizeof(text),
			 "55d0c2a5e000-55d0c2a7f000 rw-p 00000000 00:00 0          [heap]\n"
			 "%s"
			 "7f0000000000-7f0000001000 rw-p 00000000 00:00 0\n"
			 "%s"
			 "7f0000005000-7f0000006000 r-xp 00002000 fd:00 99 /tmp/gone (deleted)\n",
			 l1, l2);
	assert_true(n > 0 && (size_t)n < sizeof(text));
	struct text_file t;
	text_file(&t, text, (size_t)n);

	static const size_t caps[] = { 300, AT_PROCMAPS_BUF };
	for (size_t c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
		char buf[AT_PROCMAPS_BUF];
		struct at_linereader f;
		struct at_procmaps_entry e;

		assert_int_equal(at_linereader_open_buffer(&f, t.path, buf, caps[c]), 0);
		assert_int_equal(at_procmaps_next(&f, &e), 1);
		assert_string_equal(e.path, "[heap]");
		assert_true(e.start == 0x55d0c2a5e000 && e.end == 0x55d0c2a7f000 && e.inode == 0);

		assert_int_equal(at_procmaps_next(&f, &e), 1);
		assert_true(e.start == 0x7f0000001000 && e.offset == 0x1000 && e.inode == 77);
		assert_int_equal(e.dev_major, 8);
		assert_int_equal(e.dev_minor, 1);
		assert_int_equal(e.path_len, 200);
		assert_int_equal(e.path_truncated, 0);
		assert_memory_equal(e.path, long_path, 200);
		assert_int_equal(e.path[200], '\0');

		assert_int_equal(at_procmaps_next(&f, &e), 1);
		assert_string_equal(e.path, "");
		assert_string_equal(e.perms, "rw-p");

		assert_int_equal(at_procmaps_next(&f, &e), 1);
		assert_true(e.start == 0x7f0000003000 && e.inode == 78);
		assert_int_equal(e.path_len, 5000);
		assert_int_equal(e.path_truncated, caps[c] < 5000);
		size_t kept = strlen(e.path);
		if (e.path_truncated)
			assert_true(kept >= caps[c] - 80 - 60 && kept < 5000);
		else
			assert_int_equal(kept, 5000);
		assert_memory_equal(e.path, longer_path, kept);

		assert_int_equal(at_procmaps_next(&f, &e), 1);
		assert_string_equal(e.path, "/tmp/gone (deleted)");
		assert_int_equal(e.dev_major, 0xfd);
		assert_true(e.offset == 0x2000 && e.inode == 99);
		assert_int_equal(e.path_truncated, 0);

		assert_int_equal(at_procmaps_next(&f, &e), 0);
		assert_int_equal(f.lineno, 5);
		at_linereader_close(&f);
	}
	close(t.fd);
	free(l1);
	free(l2);
}

struct seen {
	unsigned files, libc, truncated;
	size_t longest;
};

static int count_files(const struct at_procmaps_entry *e, void *arg)
{
	struct seen *s = arg;

	assert_int_equal(e->path[0], '/');
	assert_true(e->inode != 0);
	s->files++;
	s->libc += at_is_libc_path(e->path);
	s->truncated += (unsigned)e->path_truncated;
	if (e->path_len > s->longest)
		s->longest = e->path_len;
	return 0;
}

static int stop_at_second(const struct at_procmaps_entry *e, void *arg)
{
	(void)e;
	return ++*(int *)arg == 2 ? 7 : 0;
}

/* at_procmaps_for_each_file: file-backed entries only, a path beyond PATH_MAX seen whole in
 * length and flagged, the callback's stop value, malformed lines by number, missing files. */
static void test_for_each_file(void **state)
{
	(void)state;
	struct seen s = { 0, 0, 0, 0 };
	unsigned long bad = 0;

	assert_int_equal(at_procmaps_for_each_file("/proc/self/maps", count_files, &s, &bad), 0);
	assert_true(s.files >= 3);
	assert_true(s.libc >= 1);
	assert_int_equal(s.truncated, 0);
	errno = 0;
	assert_int_equal(at_procmaps_for_each_file("/nonexistent/maps", count_files, &s, &bad),
			 -1);
	assert_int_equal(errno, ENOENT);

	char *path;
	char *huge = long_line(10000, "1000-2000 r--p 0 08:01 5 ", &path);
	char text[12000];
	int n = snprintf(text, sizeof(text),
			 "1000-2000 r-xp 0 00:00 1 /x\n"
			 "3000-4000 rw-p 0 00:00 0 [heap]\n"
			 "5000-6000 rw-p 0 00:00 0\n"
			 "%s"
			 "7000-8000 r-xp 0 08:01 0 /not/a/file/without/inode\n",
			 huge);
	struct text_file t;
	text_file(&t, text, (size_t)n);
	memset(&s, 0, sizeof(s));
	assert_int_equal(at_procmaps_for_each_file(t.path, count_files, &s, &bad), 0);
	assert_int_equal(s.files, 2);
	assert_int_equal(s.truncated, 1);
	assert_int_equal(s.longest, 10000);
	int calls = 0;
	assert_int_equal(at_procmaps_for_each_file(t.path, stop_at_second, &calls, NULL), 7);
	assert_int_equal(calls, 2);
	close(t.fd);
	free(huge);

	static const char malformed[] = "1000-2000 r-xp 0 00:00 1 /x\nnot a maps line\n"
					"3000-4000 r-xp 0 00:00 1 /y\n";
	text_file(&t, malformed, sizeof(malformed) - 1);
	memset(&s, 0, sizeof(s));
	assert_int_equal(at_procmaps_for_each_file(t.path, count_files, &s, &bad), -2);
	assert_int_equal(bad, 2);
	assert_int_equal(s.files, 1);
	close(t.fd);
}

static void test_buffer_too_small(void **state)
{
	(void)state;
	char buf[AT_LINEREADER_MIN_BUF];
	struct at_linereader r;

	errno = 0;
	assert_int_equal(at_linereader_open_buffer(&r, "/proc/self/maps", buf, sizeof(buf) - 1),
			 -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(at_linereader_open_buffer(&r, "/proc/self/maps", buf, sizeof(buf)), 0);
	at_linereader_close(&r);
}

static void test_libc_names(void **state)
{
	(void)state;
	static const struct {
		const char *path;
		enum at_libc kind;
	} cases[] = {
		{ "/usr/lib/x86_64-linux-gnu/libc.so.6", AT_LIBC_GLIBC },
		{ "/lib/libc-2.31.so", AT_LIBC_GLIBC },
		{ "libc.so.6", AT_LIBC_GLIBC },
		{ "/proc/42/root/usr/lib64/libc.so.6", AT_LIBC_GLIBC },
		{ "/lib/ld-musl-x86_64.so.1", AT_LIBC_MUSL },
		{ "/usr/lib/libc.musl-x86_64.so.1", AT_LIBC_MUSL },
		{ "/usr/lib/x86_64-linux-gnu/libcap.so.2", AT_LIBC_NONE },
		{ "/usr/lib/libc-client.a", AT_LIBC_NONE },
		{ "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", AT_LIBC_NONE },
		{ "/tmp/libc.so.6/evil", AT_LIBC_NONE },
		{ "", AT_LIBC_NONE },
		{ "/", AT_LIBC_NONE },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (at_libc_of_path(cases[i].path) != cases[i].kind)
			fail_msg("%s: %d", cases[i].path, at_libc_of_path(cases[i].path));
		assert_int_equal(at_is_libc_path(cases[i].path), cases[i].kind != AT_LIBC_NONE);
	}
}

/* The cases the daemon's own maps parser was tested with before it moved here. */
static void test_maps_lines(void **state)
{
	(void)state;
	static const struct {
		const char *line;
		int rc;
		uint64_t start, end, offset, inode;
		const char *perms, *path;
	} cases[] = {
		{ "7f2d1c028000-7f2d1c1bd000 r-xp 00028000 fe:01 1573049                    "
		  "/usr/lib/x86_64-linux-gnu/libc.so.6\n",
		  0, 0x7f2d1c028000, 0x7f2d1c1bd000, 0x28000, 1573049, "r-xp",
		  "/usr/lib/x86_64-linux-gnu/libc.so.6" },
		{ "55d0c2a5e000-55d0c2a7f000 rw-p 00000000 00:00 0                          [heap]\n",
		  0, 0x55d0c2a5e000, 0x55d0c2a7f000, 0, 0, "rw-p", "[heap]" },
		{ "7ffd5d1f0000-7ffd5d211000 rw-p 00000000 00:00 0\n", 0, 0x7ffd5d1f0000,
		  0x7ffd5d211000, 0, 0, "rw-p", "" },
		{ "400000-401000 r--p 00000000 08:02 42 /tmp/a b/prog (deleted)", 0, 0x400000,
		  0x401000, 0, 42, "r--p", "/tmp/a b/prog (deleted)" },
		{ "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]\n", 0,
		  0xffffffffff600000, 0xffffffffff601000, 0, 0, "--xp", "[vsyscall]" },
		{ "", -1, 0, 0, 0, 0, NULL, NULL },
		{ "garbage\n", -1, 0, 0, 0, 0, NULL, NULL },
		{ "1000-2000 r-xp\n", -1, 0, 0, 0, 0, NULL, NULL },
		{ "1000-2000 r-x 0 0:0 0\n", -1, 0, 0, 0, 0, NULL, NULL },
		{ "2000-1000 r-xp 0 00:00 0 /x\n", -1, 0, 0, 0, 0, NULL, NULL },
		{ "1000-2000 r-xp 0 00:00 x /x\n", -1, 0, 0, 0, 0, NULL, NULL },
		{ "1000-2000 r-xp 0 00:00 1 /x\n2000-3000 r-xp 0 00:00 1 /y\n", -1, 0, 0, 0, 0,
		  NULL, NULL },
		{ "99999999999999999999-2000 r-xp 0 00:00 1 /x\n", -1, 0, 0, 0, 0, NULL, NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char line[512];
		struct at_procmaps_entry e;

		snprintf(line, sizeof(line), "%s", cases[i].line);
		int rc = at_procmaps_parse_line(line, &e);
		if (rc != cases[i].rc)
			fail_msg("case %zu: rc %d", i, rc);
		if (rc < 0)
			continue;
		assert_int_equal(e.start, cases[i].start);
		assert_int_equal(e.end, cases[i].end);
		assert_int_equal(e.offset, cases[i].offset);
		assert_int_equal(e.inode, cases[i].inode);
		assert_string_equal(e.perms, cases[i].perms);
		assert_string_equal(e.path, cases[i].path);
	}
}

struct maps_count {
	unsigned files, libc;
};

static int count_files_libc(const struct at_procmaps_entry *e, void *arg)
{
	struct maps_count *c = arg;

	c->files++;
	c->libc += at_is_libc_path(e->path);
	return 0;
}

/* Our own maps: file-backed mappings only, and libc among them. */
static void test_maps_of_self(void **state)
{
	(void)state;
	struct maps_count c = { 0, 0 };
	unsigned long bad = 0;

	assert_int_equal(at_procmaps_for_each_file("/proc/self/maps", count_files_libc, &c, &bad), 0);
	assert_true(c.files >= 3);
	assert_true(c.libc >= 1);
	assert_int_equal(at_procmaps_for_each_file("/nonexistent/maps", count_files_libc, &c, &bad), -1);
}

/* A malformed maps file is reported with its line number. */
static void test_maps_malformed_file(void **state)
{
	(void)state;
	char path[] = "/tmp/test_daemon_maps.XXXXXX";
	int fd = mkstemp(path);
	static const char text[] = "1000-2000 r-xp 0 00:00 1 /x\nnot a maps line\n";
	struct maps_count c = { 0, 0 };
	unsigned long bad = 0;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fd);
	assert_int_equal(at_procmaps_for_each_file(path, count_files_libc, &c, &bad), -2);
	assert_int_equal(bad, 2);
	assert_int_equal(c.files, 1);
	unlink(path);
}

static void test_libc_names_more(void **state)
{
	(void)state;
	static const struct {
		const char *path;
		int is_libc;
	} cases[] = {
		{ "/usr/lib/x86_64-linux-gnu/libc.so.6", 1 },
		{ "/lib/libc-2.31.so", 1 },
		{ "/lib/ld-musl-x86_64.so.1", 1 },
		{ "libc.so.6", 1 },
		{ "/usr/lib/x86_64-linux-gnu/libcap.so.2", 0 },
		{ "/usr/lib/libc-client.a", 0 },
		{ "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", 0 },
		{ "/tmp/libc.so.6/evil", 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (at_is_libc_path(cases[i].path) != cases[i].is_libc)
			fail_msg("%s", cases[i].path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_lines),
		cmocka_unit_test(test_lines_in_small_buffers),
		cmocka_unit_test(test_maps_file),
		cmocka_unit_test(test_for_each_file),
		cmocka_unit_test(test_buffer_too_small),
		cmocka_unit_test(test_libc_names),
		cmocka_unit_test(test_maps_lines),
		cmocka_unit_test(test_maps_of_self),
		cmocka_unit_test(test_maps_malformed_file),
		cmocka_unit_test(test_libc_names_more),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
