/* test_daemon_pylinetable.c: unit tests of daemon/python/pylinetable.c.
 *
 * The oracle is CPython: the location tables below are a function's co_linetable as 3.11 and
 * 3.13 compiled it (short, one-line, no-column and long forms, lines going back, entries
 * without a location), and each code unit's line is what co_positions() gave for it (-1 for
 * None). The function:
 *
 *     def sample(items):              # line 2
 *         total = 0
 *         for i in items:
 *             if i % 2:
 *                 total += i
 *             else:
 *                 total -= (
 *                     i
 *                     * 2)
 *         try:
 *             x = 1 / 0
 *         except ZeroDivisionError:
 *             pass
 *
 *
 *
 *         return total                # line 18
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../daemon/python/pylinetable.h"

static const uint8_t table_311[] = { 0x80, 0x00, 0xd8, 0x0c, 0x0d, 0x80, 0x45, 0xd8, 0x0d, 0x12, 0xf0, 0x00, 0x06, 0x05, 0x15, 0xf0, 0x00, 0x06, 0x05, 0x15, 0x88, 0x01, 0xd8, 0x0b, 0x0c, 0x88, 0x71, 0x89, 0x35, 0xf0, 0x00, 0x05, 0x09, 0x15, 0xd8, 0x0c, 0x11, 0x90, 0x51, 0x89, 0x4a, 0x88, 0x45, 0x88, 0x45, 0xe0, 0x0c, 0x11, 0xd8, 0x10, 0x11, 0xd8, 0x12, 0x13, 0xf1, 0x03, 0x01, 0x11, 0x14, 0xf1, 0x03, 0x02, 0x0d, 0x15, 0x88, 0x45, 0x88, 0x45, 0xf0, 0x06, 0x03, 0x05, 0x0d, 0xd8, 0x0c, 0x0d, 0x90, 0x01, 0x89, 0x45, 0x88, 0x01, 0x88, 0x01, 0xf8, 0xdd, 0x0b, 0x1c, 0xf0, 0x00, 0x01, 0x05, 0x0d, 0xf0, 0x00, 0x01, 0x05, 0x0d, 0xf0, 0x00, 0x01, 0x05, 0x0d, 0xd8, 0x08, 0x0c, 0x88, 0x04, 0xf0, 0x03, 0x01, 0x05, 0x0d, 0xf8, 0xf8, 0xf8, 0xf0, 0x0a, 0x00, 0x0c, 0x11, 0x80, 0x4c };
static const int lines_311[] = { 2, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 8, 9, 10, 9, 9, 8, 8, 8, 8, 11, 12, 12, 12, 12, 12, 12, -1, 13, 13, 13, 13, 13, 13, 13, 13, 13, 14, 14, 13, -1, -1, -1, 18, 18 };
static const uint8_t table_313[] = { 0x80, 0x00, 0xd8, 0x0c, 0x0d, 0x80, 0x45, 0xdb, 0x0d, 0x12, 0x88, 0x01, 0xd8, 0x0b, 0x0c, 0x88, 0x71, 0x8f, 0x35, 0xd8, 0x0c, 0x11, 0x89, 0x4a, 0x8a, 0x45, 0xe0, 0x0c, 0x11, 0xd8, 0x10, 0x11, 0xd8, 0x12, 0x13, 0xf1, 0x03, 0x01, 0x11, 0x14, 0xf1, 0x03, 0x02, 0x0d, 0x15, 0x8a, 0x45, 0xf1, 0x09, 0x00, 0x0e, 0x13, 0xf0, 0x0e, 0x03, 0x05, 0x0d, 0xd8, 0x0c, 0x0d, 0x90, 0x01, 0x89, 0x45, 0x88, 0x01, 0xf0, 0x0c, 0x00, 0x0c, 0x11, 0x80, 0x4c, 0xf8, 0xf4, 0x0b, 0x00, 0x0c, 0x1d, 0xf3, 0x00, 0x01, 0x05, 0x0d, 0xd8, 0x08, 0x0c, 0xf0, 0x08, 0x00, 0x0c, 0x11, 0x80, 0x4c, 0xf0, 0x0b, 0x01, 0x05, 0x0d, 0xfa };
static const int lines_313[] = { 2, 3, 3, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 8, 9, 10, 9, 9, 8, 8, 8, 8, 8, 4, 4, 11, 12, 12, 12, 12, 12, 18, 18, -1, 13, 13, 13, 13, 13, 13, 13, 13, 13, 14, 18, 18, 13, -1, -1, -1 };

#define N(a) (sizeof(a) / sizeof(a[0]))

/* Each code unit's line is CPython's, and past the last entry there is none. */
static void test_lines_as_cpython(void **state)
{
	static const struct {
		const uint8_t *table;
		size_t len;
		const int *lines;
		size_t n;
	} cases[] = {
		{ table_311, sizeof(table_311), lines_311, N(lines_311) },
		{ table_313, sizeof(table_313), lines_313, N(lines_313) },
	};

	(void)state;
	for (size_t i = 0; i < N(cases); i++) {
		for (uint32_t off = 0; off < cases[i].n; off++)
			assert_int_equal(at_py_line(cases[i].table, cases[i].len, 2, off),
					 cases[i].lines[off]);
		assert_int_equal(at_py_line(cases[i].table, cases[i].len, 2, (uint32_t)cases[i].n),
				 -1);
		assert_int_equal(at_py_line(cases[i].table, cases[i].len, 2, UINT32_MAX), -1);
	}
}

/* Hand-made tables: each form's line delta, and the lengths of entries. */
static void test_forms(void **state)
{
	static const struct {
		uint8_t table[8];
		size_t len;
		int first;
		uint32_t offset;
		int line;
	} cases[] = {
		/* short form (code 0), 8 units: the first line throughout */
		{ { 0x87, 0x00 }, 2, 10, 7, 10 },
		/* one-line form code 12: line + 2 */
		{ { 0xe0, 0x01, 0x02 }, 3, 10, 0, 12 },
		/* no-column form code 13, delta -3 (signed varint 7) */
		{ { 0xe8, 0x07 }, 2, 10, 0, 7 },
		/* long form code 14, delta +64 (varint 128: 0x40 | 0, then 2), then three varints */
		{ { 0xf0, 0x40, 0x02, 0x00, 0x01, 0x01 }, 6, 1, 0, 65 },
		/* no location (code 15) */
		{ { 0xf8 }, 1, 10, 0, -1 },
		/* the second entry (code 11: line + 1), after one of 2 units */
		{ { 0x81, 0x00, 0xd8, 0x00, 0x00 }, 5, 10, 2, 11 },
	};

	(void)state;
	for (size_t i = 0; i < N(cases); i++)
		assert_int_equal(at_py_line(cases[i].table, cases[i].len, cases[i].first,
					    cases[i].offset), cases[i].line);
}

/* Malformed tables: no line, no read past the end. */
static void test_malformed(void **state)
{
	static const struct {
		uint8_t table[4];
		size_t len;
		uint32_t offset;
	} cases[] = {
		{ { 0 }, 0, 0 },                    /* empty */
		{ { 0x00, 0x00 }, 2, 0 },           /* an entry without its top bit */
		{ { 0xf0, 0x40 }, 2, 0 },           /* a varint cut short */
		{ { 0xe8 }, 1, 0 },                 /* a no-column entry without its delta */
		{ { 0xd0, 0x00 }, 2, 0 },           /* a one-line entry without its end column */
		{ { 0x80, 0x00, 0x00 }, 3, 1 },     /* the next entry without its top bit */
		{ { 0xe8, 0x05 }, 2, 0 },           /* a line below 0 (1 - 2) */
	};

	(void)state;
	for (size_t i = 0; i < N(cases); i++)
		assert_int_equal(at_py_line(cases[i].table, cases[i].len, 1, cases[i].offset), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_as_cpython),
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
