/* test_report_weight.c: unit tests of report/weight.c: the weight of every function of the
 * family, by count and by bytes, failed allocations and overflowing callocs included. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../report/weight.h"

static void test_weights(void **state)
{
	static const struct {
		uint8_t func;
		uint64_t arg0, arg1, result;
		uint64_t count, bytes;
	} cases[] = {
		{ AT_MALLOC, 32, 0, 0x10, 1, 32 },
		{ AT_MALLOC, 32, 0, 0, 1, 32 },           /* failed: still a call, bytes asked */
		{ AT_MALLOC, 0, 0, 0x10, 1, 0 },
		{ AT_CALLOC, 4, 8, 0x10, 1, 32 },
		{ AT_CALLOC, UINT64_MAX / 2, 3, 0, 1, UINT64_MAX }, /* saturates */
		{ AT_CALLOC, 1ull << 32, 1ull << 32, 0, 1, UINT64_MAX },
		{ AT_CALLOC, 0, UINT64_MAX, 0x10, 1, 0 },
		{ AT_REALLOC, 0x10, 100, 0x20, 1, 100 },
		{ AT_REALLOC, 0, 7, 0x20, 1, 7 },          /* realloc(NULL, n) */
		{ AT_REALLOC, 0x10, 0, 0, 1, 0 },          /* realloc(p, 0) */
		{ AT_FREE, 0x10, 0, 0, 0, 0 },
		{ AT_FREE, 0, 0, 0, 0, 0 },
		{ AT_MEMALIGN, 64, 100, 0x40, 1, 100 },
		{ AT_POSIX_MEMALIGN, 256, 240, 0x100, 1, 240 },
		{ AT_ALIGNED_ALLOC, 16, 48, 0x10, 1, 48 },
		{ AT_VALLOC, 4096, 0, 0x1000, 1, 4096 },
		{ AT_JEMALLOC_STATS, 0, 0, 0, 0, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct at_event ev = { .pid = 1, .tid = 1, .func = cases[i].func,
				       .has_result = cases[i].func != AT_FREE,
				       .arg = { cases[i].arg0, cases[i].arg1 },
				       .result = cases[i].result };

		print_message("case %zu: %s\n", i, at_func_name[cases[i].func]);
		assert_int_equal(rep_event_weight(&ev, REP_WEIGHT_ALLOC_COUNT), cases[i].count);
		assert_int_equal(rep_event_weight(&ev, REP_WEIGHT_ALLOC_BYTES), cases[i].bytes);
		assert_int_equal(rep_is_allocation(&ev), cases[i].count);
	}
}

static void test_parse(void **state)
{
	enum rep_weight w = REP_WEIGHT_ALLOC_BYTES;

	(void)state;
	assert_int_equal(rep_weight_parse("alloc-count", &w), 0);
	assert_int_equal(w, REP_WEIGHT_ALLOC_COUNT);
	assert_int_equal(rep_weight_parse("alloc-bytes", &w), 0);
	assert_int_equal(w, REP_WEIGHT_ALLOC_BYTES);
	assert_int_equal(rep_weight_parse("heaptrack-temp-count", &w), 0);
	assert_int_equal(w, REP_WEIGHT_HEAPTRACK_TEMP_COUNT);
	assert_int_equal(rep_weight_parse("temp-count", &w), 0);
	assert_int_equal(w, REP_WEIGHT_TEMP_COUNT);
	assert_int_equal(rep_weight_parse("churn", &w), 0);
	assert_int_equal(w, REP_WEIGHT_CHURN);
	assert_int_equal(rep_weight_parse("live-bytes", &w), 0);
	assert_int_equal(w, REP_WEIGHT_LIVE_BYTES);
	assert_int_equal(rep_weight_parse("alloc-bytes", &w), 0);
	assert_int_equal(rep_weight_parse("bytes", &w), -1);
	assert_int_equal(rep_weight_parse("", &w), -1);
	assert_int_equal(rep_weight_parse("alloc-count ", &w), -1);
	assert_int_equal(w, REP_WEIGHT_ALLOC_BYTES);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_weights),
		cmocka_unit_test(test_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
