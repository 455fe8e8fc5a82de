/* test_daemon_rss.c: unit tests of daemon/trace/rss.c: resident bytes from statm files (a fake /proc
 * in a scratch folder, table-driven), a missing process, malformed files, a link refused, and
 * this process's own statm. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../daemon/trace/rss.h"

static char root[] = "/tmp/test_daemon_rss.XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	return system(cmd);
}

static void put_statm(int pid, const char *text)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%d", root, pid);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/%d/statm", root, pid);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_statm(void **state)
{
	static const struct {
		const char *text;
		int rc;
		uint64_t bytes; /* with 4096-byte pages */
		int err;
	} cases[] = {
		{ "2530 845 600 1 0 200 0\n", 0, 845 * 4096, 0 },
		{ "1 1 0 0 0 0 0", 0, 4096, 0 },
		/* an exited process not reaped yet (a zombie): no memory, no sample */
		{ "0 0 0 0 0 0 0\n", -1, 0, ESRCH },
		{ "99999999999 4294967296 0 0 0 0 0\n", 0, UINT64_C(4294967296) * 4096, 0 },
		{ "", -1, 0, EINVAL },
		{ "12\n", -1, 0, EINVAL },
		{ "abc def\n", -1, 0, EINVAL },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t bytes = 7;
		put_statm(100 + (int)i, cases[i].text);
		errno = 0;
		assert_int_equal(at_rss_read(root, 100 + (pid_t)i, 4096, &bytes), cases[i].rc);
		if (cases[i].rc == 0)
			assert_int_equal(bytes, cases[i].bytes);
		else
			assert_int_equal(errno, cases[i].err);
	}
}

static void test_gone_and_link(void **state)
{
	char path[256], target[256];
	uint64_t bytes;

	(void)state;
	errno = 0;
	assert_int_equal(at_rss_read(root, 99, 4096, &bytes), -1);
	assert_int_equal(errno, ENOENT);
	put_statm(200, "10 5 0 0 0 0 0\n");
	snprintf(path, sizeof(path), "%s/201", root);
	mkdir(path, 0700);
	snprintf(target, sizeof(target), "%s/200/statm", root);
	snprintf(path, sizeof(path), "%s/201/statm", root);
	assert_int_equal(symlink(target, path), 0);
	errno = 0;
	assert_int_equal(at_rss_read(root, 201, 4096, &bytes), -1);
	assert_int_equal(errno, ELOOP);
}

static void test_own(void **state)
{
	uint64_t bytes = 0;

	(void)state;
	assert_int_equal(at_rss_read("/proc", getpid(), (uint64_t)sysconf(_SC_PAGESIZE), &bytes), 0);
	assert_true(bytes > 0);
	assert_int_equal(bytes % (uint64_t)sysconf(_SC_PAGESIZE), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_statm),
		cmocka_unit_test(test_gone_and_link),
		cmocka_unit_test(test_own),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
