/* test_daemon_probed.c: unit tests of daemon/probes/probed.c: per process, for every process,
 * forgetting, a full table. */
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
	while (p.n < AT_PROBED_MAX)
		assert_int_equal(at_probed_add(&p, 9, p.n, 1), 0);
	assert_int_equal(at_probed_add(&p, 9, 9999, 1), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scopes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
