/* test_replay_compare.c: unit tests of replay/compare.c's pure parts: the allocator list, which
 * figures are exact, and the median and min-max of a figure's runs (--repeat). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../../replay/compare.h"

static void test_figure(void **state)
{
	static const struct {
		double runs[6];
		int n, decimals;
		const char *median, *spread;
		int varied;
	} cases[] = {
		{ { 408.0, 155.0, 77.0 }, 3, 1, "155.0", "77.0-408.0", 1 },  /* order does not count */
		{ { 77, 408, 155, 160, 90 }, 5, 0, "155", "77-408", 1 },
		{ { 42 }, 1, 0, "42", "42-42", 0 },
		{ { 7, 7, 7 }, 3, 0, "7", "7-7", 0 },
		{ { 1, 2 }, 2, 0, "1.5", "1-2", 1 },                      /* even: the mean, a decimal more */
		{ { 4, 2, 8, 6 }, 4, 0, "5", "2-8", 1 },                  /* (4 + 6) / 2 needs none */
		{ { 74.2, 74.3, 70.0, 90.1 }, 4, 1, "74.25", "70.0-90.1", 1 },
		{ { 85.4, 85.6 }, 2, 1, "85.5", "85.4-85.6", 1 },
		{ { 2756608, 2854912, 2752512, 2859008, 2805760 }, 5, 0, "2805760", "2752512-2859008", 1 },
		{ { 3, 1, 2, 5, 4, 6 }, 6, 0, "3.5", "1-6", 1 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char median[48], spread[96];

		print_message("case %zu\n", i);
		assert_int_equal(rp_compare_figure(cases[i].runs, cases[i].n, cases[i].decimals,
						   median, sizeof(median), spread, sizeof(spread)),
				 cases[i].varied);
		assert_string_equal(median, cases[i].median);
		assert_string_equal(spread, cases[i].spread);
	}
}

static void test_exact(void **state)
{
	static const struct {
		const char *name;
		int exact;
	} cases[] = {
		{ "library", 1 },          { "operations", 1 },
		{ "peak live requested bytes", 1 }, { "final live requested bytes", 1 },
		{ "final live objects", 1 }, { "failed allocations", 1 },
		{ "threads", 1 },          { "wall time ns", 0 },
		{ "ns per operation", 0 }, { "peak rss bytes", 0 },
		{ "thread waits", 0 },     { "thread wait time ns", 0 },
		{ "malloc p99.9 ns", 0 },  { "operations malloc", 0 }, /* not a compared row */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		print_message("case %zu: %s\n", i, cases[i].name);
		assert_int_equal(rp_compare_exact(cases[i].name), cases[i].exact);
	}
}

static void test_parse(void **state)
{
	static const struct {
		const char *list;
		int n;
		const char *bad;
	} cases[] = {
		{ "glibc", 1, NULL },
		{ "glibc,jemalloc,tcmalloc", 3, NULL },
		{ "", -1, "" },
		{ "glibc,", -1, "" },
		{ ",glibc", -1, "" },
		{ "glibc,,jemalloc", -1, "" },
		{ "glibc,nosuch", -1, "nosuch" },
		{ "glibc,glibc,glibc,glibc,glibc,glibc,glibc,glibc,glibc,glibc,glibc,glibc,glibc,"
		  "glibc,glibc,glibc", 16, NULL },
		{ "glibc,glibc,glibc,glibc,glibc,glibc,glibc,glibc,glibc,glibc,glibc,glibc,glibc,"
		  "glibc,glibc,glibc,tcmalloc", -1, "tcmalloc" }, /* the 17th */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char list[256];
		const char *names[RP_COMPARE_MAX], *bad = NULL;

		print_message("case %zu: %s\n", i, cases[i].list);
		snprintf(list, sizeof(list), "%s", cases[i].list);
		assert_int_equal(rp_compare_parse(list, names, &bad), cases[i].n);
		if (cases[i].bad)
			assert_string_equal(bad, cases[i].bad);
		else
			assert_string_equal(names[cases[i].n - 1], cases[i].n == 1 ? "glibc" :
				cases[i].n == 3 ? "tcmalloc" : "glibc");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_figure),
		cmocka_unit_test(test_exact),
		cmocka_unit_test(test_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
