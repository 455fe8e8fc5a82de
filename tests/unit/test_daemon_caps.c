/* test_daemon_caps.c: unit tests of daemon/caps.c: the CapEff line, and the names of the
 * capabilities a step needs that a set lacks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../daemon/caps.h"

/* Three capabilities, to name more than one missing. */
#define LOAD_AND_ADMIN (AT_CAPS_LOAD | AT_CAP_BIT(AT_CAP_SYS_ADMIN))

static void test_parse_status(void **state)
{
	(void)state;
	assert_int_equal(at_caps_parse_status("Name:\tx\nCapInh:\t0\nCapEff:\t000001ffffffffff\n"),
			 0x1ffffffffffull);
	assert_int_equal(at_caps_parse_status("Name:\tx\nCapEff:\t00000000000000c0\n"), 0xc0);
	assert_int_equal(at_caps_parse_status("Name:\tx\n"), ~0ull);
	assert_int_equal(at_caps_parse_status("Name:\tx\nCapEff:\tzz\n"), ~0ull);
}

static void test_names(void **state)
{
	static const struct {
		uint64_t need, have;
		unsigned count;
		const char *names;
	} cases[] = {
		{ LOAD_AND_ADMIN, 0, 3, "CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN" },
		{ LOAD_AND_ADMIN, AT_CAPS_LOAD, 1, "CAP_SYS_ADMIN" },
		{ LOAD_AND_ADMIN, ~0ull, 0, "" },
		{ AT_CAPS_LOAD, AT_CAP_BIT(AT_CAP_PERFMON), 1, "CAP_BPF" },
		{ AT_CAPS_OTHER_PROCESS, LOAD_AND_ADMIN, 1, "CAP_SYS_PTRACE" },
	};
	char buf[128];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(at_caps_names(cases[i].need, cases[i].have, buf, sizeof(buf)),
				 cases[i].count);
		assert_string_equal(buf, cases[i].names);
	}
	/* a small buffer stays terminated and the count stays right */
	assert_int_equal(at_caps_names(LOAD_AND_ADMIN, 0, buf, 10), 3);
	assert_true(strlen(buf) < 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_status),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
