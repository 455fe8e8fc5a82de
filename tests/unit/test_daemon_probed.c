/* test_daemon_probed.c: unit tests of daemon/probes/probed.c: per process, for every process,
 * forgetting, a registry that grows with the processes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../daemon/probes/probed.h"

static void test_scopes(void **state)
{
	(void)state;
	static struct at_probed p;

	assert_false(at_probed_has(&p, 1, 2, 10));
	assert_int_equal(at_probed_add(&p, 1, 2, 10), 0);
	assert_true(at_probed_has(&p, 1, 2, 10));
	assert_false(at_probed_has(&p, 1, 2, 11));  /* another process */
	assert_false(at_probed_has(&p, 1, 3, 10));  /* another file */
	assert_false(at_probed_has(&p, 2, 2, 10));  /* another device */
	assert_false(at_probed_has(&p, 1, 2, -1));
	assert_int_equal(at_probed_add(&p, 5, 6, -1), 0);
	assert_true(at_probed_has(&p, 5, 6, 10));   /* every process */
	assert_true(at_probed_has(&p, 5, 6, -1));
	at_probed_forget(&p, 10);
	assert_false(at_probed_has(&p, 1, 2, 10));
	assert_true(at_probed_has(&p, 5, 6, 10));
	at_probed_free(&p);
	assert_false(at_probed_has(&p, 5, 6, 10));
}

static void count_file(void *arg, uint64_t dev, uint64_t inode)
{
	unsigned *n = arg;

	assert_int_equal(dev, 9);
	assert_int_equal(inode % 3, 0);
	(*n)++;
}

/* A followed tree's processes are probed each for itself: a thousand of them and more. */
static void test_grows(void **state)
{
	(void)state;
	struct at_probed p = { 0 };
	unsigned n = 0;

	for (unsigned i = 0; i < 3000; i++)
		assert_int_equal(at_probed_add(&p, 9, i, (pid_t)(100 + i % 3)), 0);
	assert_int_equal(at_probed_add(&p, 7, 7, -1), 0);
	assert_int_equal(p.n, 3001);
	assert_true(at_probed_has(&p, 9, 2999, 102));
	assert_false(at_probed_has(&p, 9, 2999, 101));
	at_probed_each(&p, 100, count_file, &n); /* not the file probed for every process */
	assert_int_equal(n, 1000);
	at_probed_forget(&p, 100);
	assert_int_equal(p.n, 2001);
	assert_false(at_probed_has(&p, 9, 0, 100));
	assert_true(at_probed_has(&p, 7, 7, 100));
	at_probed_free(&p);
	assert_int_equal(p.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scopes),
		cmocka_unit_test(test_grows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
