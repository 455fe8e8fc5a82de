/* test_daemon_parse.c: unit tests of the daemon's parsers: /proc/PID/maps lines, -o DEST,
 * C library names, record conversion. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <linux/types.h>

#include "../../daemon/convert.h"
#include "../../daemon/dest.h"
#include "../../daemon/maps.h"
#include "text.h"

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
		struct at_map_entry e;

		snprintf(line, sizeof(line), "%s", cases[i].line);
		int rc = at_maps_parse_line(line, &e);
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

static int count_files(const struct at_map_entry *e, void *arg)
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

	assert_int_equal(at_maps_for_each("/proc/self/maps", count_files, &c, &bad), 0);
	assert_true(c.files >= 3);
	assert_true(c.libc >= 1);
	assert_int_equal(at_maps_for_each("/nonexistent/maps", count_files, &c, &bad), -1);
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
	assert_int_equal(at_maps_for_each(path, count_files, &c, &bad), -2);
	assert_int_equal(bad, 2);
	assert_int_equal(c.files, 1);
	unlink(path);
}

static void test_libc_names(void **state)
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

static void test_dest(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		int rc, fd;
		const char *path;
	} cases[] = {
		{ "3", 0, 3, NULL },       { "0", 0, 0, NULL },      { "9999", 0, 9999, NULL },
		{ "09999", 0, 9999, NULL }, { "10000", 0, -1, "10000" }, { "-", 0, 1, NULL },
		{ "12abc", 0, -1, "12abc" }, { "/tmp/log", 0, -1, "/tmp/log" },
		{ "-3", 0, -1, "-3" },     { " 3", 0, -1, " 3" },    { "", -1, -1, NULL },
		{ "000000000003", 0, -1, "000000000003" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct at_dest d;
		int rc = at_dest_parse(cases[i].s, &d);
		if (rc != cases[i].rc || d.fd != cases[i].fd)
			fail_msg("'%s': rc %d fd %d", cases[i].s, rc, d.fd);
		if (cases[i].path)
			assert_string_equal(d.path, cases[i].path);
		else
			assert_null(d.path);
	}
	assert_int_equal(at_dest_parse(NULL, &(struct at_dest){ 0, NULL }), -1);
}

/* Records become the logalloc line that reproduces them. */
static void test_convert(void **state)
{
	(void)state;
	static const struct {
		struct at_record rec;
		const char *line;
	} cases[] = {
		{ { 5, 5, 10, 11, { 32, 0 }, 0x7f00, AT_PROBE_MALLOC, 0 }, "10 11 malloc(32)=0x7f00\n" },
		{ { 5, 5, 10, 11, { 0x7f00, 0 }, 0, AT_PROBE_FREE, 0 }, "10 11 free(0x7f00)\n" },
		{ { 5, 5, 10, 11, { 0, 0 }, 0, AT_PROBE_FREE, 0 }, "10 11 free(0x0)\n" },
		{ { 5, 3, 10, 11, { 0x10, 64 }, 0x20, AT_PROBE_REALLOC, 0 },
		  "10 11 realloc(0x10,64)=0x20\n" },
		{ { 5, 5, 10, 11, { 5000, 0 }, 0x3000, AT_PROBE_PVALLOC, 0 },
		  "10 11 valloc(8192)=0x3000\n" },
		{ { 5, 5, 10, 11, { 0, 0 }, 0x3000, AT_PROBE_PVALLOC, 0 },
		  "10 11 valloc(0)=0x3000\n" },
		{ { 5, 5, 10, 11, { UINT64_MAX - 5, 0 }, 0, AT_PROBE_PVALLOC, 0 },
		  "10 11 valloc(18446744073709551610)=0x0\n" },
		{ { 5, 4, 10, 11, { 0x10, 80 }, 0x40, AT_PROBE_REALLOCARRAY, 0 },
		  "10 11 realloc(0x10,80)=0x40\n" },
		{ { 5, 4, 10, 11, { 0x10, UINT64_MAX }, 0, AT_PROBE_REALLOCARRAY, AT_REC_OVERFLOW },
		  "10 11 realloc(0x10,18446744073709551615)=0x0\n" },
		{ { 5, 5, 10, 11, { 64, 100 }, 0, AT_PROBE_POSIX_MEMALIGN, 0 },
		  "10 11 posix_memalign(64,100)=0x0\n" },
		{ { 5, 5, 10, 11, { 256, 512 }, 0x100, AT_PROBE_ALIGNED_ALLOC, 0 },
		  "10 11 aligned_alloc(256,512)=0x100\n" },
		{ { 5, 5, 10, 11, { 3, 4 }, 0x100, AT_PROBE_CALLOC, 0 },
		  "10 11 calloc(3,4)=0x100\n" },
		{ { 5, 5, 10, 11, { 16, 4 }, 0x100, AT_PROBE_MEMALIGN, 0 },
		  "10 11 memalign(16,4)=0x100\n" },
		{ { 5, 5, 10, 11, { 16, 0 }, 0x1000, AT_PROBE_VALLOC, 0 },
		  "10 11 valloc(16)=0x1000\n" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct at_event ev;
		char buf[AT_LINE_MAX + 1];

		at_record_to_event(&cases[i].rec, 4096, &ev);
		buf[at_format_raw(buf, &ev)] = '\0';
		assert_string_equal(buf, cases[i].line);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_maps_lines),
		cmocka_unit_test(test_maps_of_self),
		cmocka_unit_test(test_maps_malformed_file),
		cmocka_unit_test(test_libc_names),
		cmocka_unit_test(test_dest),
		cmocka_unit_test(test_convert),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
