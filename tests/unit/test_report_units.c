/* test_report_units.c: unit tests of report/units.c: sizes in binary units and exact, at each
 * unit's edges up to 2^64 - 1 (table-driven), changes with their sign (both ends of int64_t
 * included), zero, and the setting that --bytes makes (rep_bytes, rep_bytes_said,
 * rep_bytes_change). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../../report/units.h"

#define KI (UINT64_C(1) << 10)
#define MI (UINT64_C(1) << 20)
#define GI (UINT64_C(1) << 30)
#define TI (UINT64_C(1) << 40)
#define PI (UINT64_C(1) << 50)
#define EI (UINT64_C(1) << 60)

static const struct {
	uint64_t bytes;
	const char *human;
} sizes[] = {
	{ 0, "0 B" },
	{ 1, "1 B" },
	{ 1023, "1023 B" },
	{ KI, "1.0 KiB" },
	{ 1535, "1.4 KiB" },                /* 1.499...: rounded down */
	{ 1536, "1.5 KiB" },
	{ MI - 1, "1023.9 KiB" },           /* never "1024.0 KiB" */
	{ MI, "1.0 MiB" },
	{ 25692228, "24.5 MiB" },
	{ GI - 1, "1023.9 MiB" },
	{ GI, "1.0 GiB" },
	{ 3 * GI, "3.0 GiB" },
	{ TI - 1, "1023.9 GiB" },
	{ TI, "1.0 TiB" },
	{ PI - 1, "1023.9 TiB" },
	{ PI, "1.0 PiB" },
	{ EI - 1, "1023.9 PiB" },
	{ EI, "1.0 EiB" },
	{ 15 * EI + (9 * EI + 9) / 10 - 1, "15.8 EiB" }, /* just under 15.9 EiB */
	{ 15 * EI + (9 * EI + 9) / 10, "15.9 EiB" },
	{ UINT64_MAX, "15.9 EiB" },         /* EiB is the last unit */
};

static void test_human(void **state)
{
	char buf[REP_BYTES_SIZE], want[32];

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		rep_human_bytes(sizes[i].bytes, 0, buf, sizeof(buf));
		assert_string_equal(buf, sizes[i].human);
		snprintf(want, sizeof(want), "%llu", (unsigned long long)sizes[i].bytes);
		rep_human_bytes(sizes[i].bytes, 1, buf, sizeof(buf));
		assert_string_equal(buf, want);
	}
}

static void test_signed(void **state)
{
	static const struct {
		int64_t change;
		const char *human, *exact;
	} cases[] = {
		{ 0, "+0 B", "+0" },
		{ 1, "+1 B", "+1" },
		{ -1, "-1 B", "-1" },
		{ -512, "-512 B", "-512" },
		{ 1023, "+1023 B", "+1023" },
		{ -1024, "-1.0 KiB", "-1024" },
		{ 1258291, "+1.1 MiB", "+1258291" },   /* 1.1999...: rounded down */
		{ 1258292, "+1.2 MiB", "+1258292" },
		{ -(int64_t)(3 * GI), "-3.0 GiB", "-3221225472" },
		{ INT64_MAX, "+7.9 EiB", "+9223372036854775807" },
		{ INT64_MIN, "-8.0 EiB", "-9223372036854775808" },
	};
	char buf[REP_BYTES_SIZE];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rep_human_bytes_signed(cases[i].change, 0, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].human);
		rep_human_bytes_signed(cases[i].change, 1, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].exact);
	}
}

/* A buffer too small is cut, NUL-terminated; one of a byte holds the NUL alone. */
static void test_small_buffer(void **state)
{
	char buf[8];

	(void)state;
	memset(buf, 'x', sizeof(buf));
	rep_human_bytes(25692228, 0, buf, 5);
	assert_string_equal(buf, "24.5");
	rep_human_bytes_signed(-25692228, 0, buf, 5);
	assert_string_equal(buf, "-24.");
	rep_human_bytes_signed(-1, 0, buf, 1);
	assert_string_equal(buf, "");
}

/* The setting: units by default, exact after rep_units_set_exact(1), in columns and in
 * sentences. */
static void test_setting(void **state)
{
	char buf[REP_BYTES_SIZE];

	(void)state;
	assert_int_equal(rep_units_exact(), 0);
	assert_string_equal(rep_bytes(1014096, buf), "990.3 KiB");
	assert_string_equal(rep_bytes_said(1014096, buf), "990.3 KiB");
	assert_string_equal(rep_bytes_said(16, buf), "16 B");
	assert_string_equal(rep_bytes_change(-14096, buf), "-13.7 KiB");
	rep_units_set_exact(2);
	assert_int_equal(rep_units_exact(), 1);
	assert_string_equal(rep_bytes(1014096, buf), "1014096");
	assert_string_equal(rep_bytes_said(1014096, buf), "1014096 bytes");
	assert_string_equal(rep_bytes_said(UINT64_MAX, buf), "18446744073709551615 bytes");
	assert_string_equal(rep_bytes_change(-14096, buf), "-14096");
	rep_units_set_exact(0);
	assert_int_equal(rep_units_exact(), 0);
	assert_string_equal(rep_bytes(0, buf), "0 B");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_human),
		cmocka_unit_test(test_signed),
		cmocka_unit_test(test_small_buffer),
		cmocka_unit_test(test_setting),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
