/* test_replay_procinfo.c: unit tests of replay/procinfo.c: /proc figures and the mapping
 * lookup behind --allocator's check. */
#include <dlfcn.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../replay/procinfo.h"

static void test_rss(void **state)
{
	(void)state;
	int64_t before = rp_proc_rss();
	assert_true(before > 0);
	assert_int_equal(before % 1024, 0);
	/* 8 MiB touched shows up in Rss and in the peak */
	size_t n = 8u << 20;
	char *p = malloc(n);
	assert_non_null(p);
	memset(p, 1, n);
	int64_t after = rp_proc_rss();
	assert_true(after - before >= (int64_t)n - (1 << 20));
	assert_true(rp_proc_peak_rss() >= after);
	free(p);
}

static void test_mapping_path(void **state)
{
	(void)state;
	char path[PATH_MAX], self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	assert_true(n > 0);
	self[n] = 0;
	assert_int_equal(rp_proc_mapping_path((const void *)test_mapping_path, path, sizeof(path)), 0);
	assert_string_equal(path, self);
	/* getpid lives in libc (and no sanitizer intercepts it) */
	assert_int_equal(rp_proc_mapping_path(dlsym(RTLD_DEFAULT, "getpid"), path, sizeof(path)), 0);
	assert_non_null(strstr(path, "/libc.so.6"));
	/* the stack and the heap are no file */
	int local;
	assert_int_equal(rp_proc_mapping_path(&local, path, sizeof(path)), -1);
	assert_int_equal(rp_proc_mapping_path((void *)8, path, sizeof(path)), -1);
	/* a path that does not fit */
	assert_int_equal(rp_proc_mapping_path((const void *)test_mapping_path, path, 4), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rss),
		cmocka_unit_test(test_mapping_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
