/* test_replay_slots.c: unit tests of replay/slots.c, the lazily mapped slot array. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../replay/slots.h"

static void test_slots_init(void **state)
{
	(void)state;
	struct rp_slots s;

	errno = 0;
	assert_int_equal(rp_slots_init(&s, 0), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(rp_slots_init(&s, RP_SLOT_LIMIT + 1), -1);
	assert_int_equal(errno, EINVAL);
	/* the full limit is only address space until touched */
	assert_int_equal(rp_slots_init(&s, RP_SLOT_LIMIT), 0);
	assert_int_equal(s.limit, RP_SLOT_LIMIT);
	assert_int_equal(rp_slots_resident(&s), 0);
	s.slot[RP_SLOT_LIMIT - 1].size = 1;
	rp_slots_touch(&s, RP_SLOT_LIMIT - 1);
	assert_int_equal(s.used, RP_SLOT_LIMIT);
	assert_int_equal(rp_slots_resident(&s), 4096);
	s.slot[0].size = 1;
	s.slot[1000].size = 1; /* 1000 * 16 bytes: the fourth page */
	assert_int_equal(rp_slots_resident(&s), 3 * 4096);
	rp_slots_fini(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slots_init),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
