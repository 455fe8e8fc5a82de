/* test_report_top.c: unit tests of report/top.c: the ranking of a small pass: order, ties by
 * text, the limit, shares, the exact-bytes switch, and the JSON form (the units themselves:
 * test_report_units.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../report/top.h"

/* A pass over process 7: malloc 3000 live + 100 freed by its thread's next call, calloc 3000
 * live (a tie with malloc: by text, calloc first), valloc 1000 live, aligned_alloc 24 freed at
 * once: two temporaries. */
static struct rep_heap *small_pass(struct rep_sites *x)
{
	static const struct at_event evs[] = {
		{ .pid = 7, .tid = 7, .func = AT_MALLOC, .has_result = 1, .arg = { 3000 }, .result = 0x1000 },
		{ .pid = 7, .tid = 7, .func = AT_CALLOC, .has_result = 1, .arg = { 3, 1000 }, .result = 0x9000 },
		{ .pid = 7, .tid = 7, .func = AT_VALLOC, .has_result = 1, .arg = { 1000 }, .result = 0xf000 },
		{ .pid = 7, .tid = 8, .func = AT_MALLOC, .has_result = 1, .arg = { 100 }, .result = 0x20000 },
		{ .pid = 7, .tid = 9, .func = AT_ALIGNED_ALLOC, .has_result = 1, .arg = { 16, 24 }, .result = 0x30000 },
		{ .pid = 7, .tid = 9, .func = AT_FREE, .arg = { 0x30000 } },
		{ .pid = 7, .tid = 8, .func = AT_FREE, .arg = { 0x20000 } },
	};
	struct rep_heap_options o = { 0 };

	assert_int_equal(rep_sites_init(x, REP_WEIGHT_ALLOC_COUNT, NULL, NULL, NULL), 0);
	struct rep_heap *h = rep_heap_new(x, &o);
	assert_non_null(h);
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		assert_int_equal(rep_heap_event(h, &evs[i]), 0);
	rep_heap_finish(h);
	return h;
}

static void test_write(void **state)
{
	(void)state;
	static const struct {
		struct rep_top_options o;
		const char *want;
	} cases[] = {
		{ { REP_WEIGHT_LEAK_BYTES, 20, 0, 0 },
		  "sites by leak-bytes, bytes live at the end: 3 of 3 shown\n"
		  "         bytes   share  site: the allocation function, then its callers\n"
		  "       2.9 KiB    42.8%  calloc\n"
		  "       2.9 KiB    42.8%  malloc\n"
		  "        1000 B    14.2%  valloc\n" },
		{ { REP_WEIGHT_ALLOC_BYTES, 2, 1, 0 },
		  "sites by alloc-bytes, bytes allocated (asked): 2 of 4 shown\n"
		  "         bytes   share  site: the allocation function, then its callers\n"
		  "          3100    43.5%  malloc\n"
		  "          3000    42.1%  calloc\n" },
		{ { REP_WEIGHT_TEMP_COUNT, 20, 0, 0 },
		  "sites by temp-count, temporary allocations (freed by the next call of their "
		  "thread): 2 of 2 shown\n"
		  "         count   share  site: the allocation function, then its callers\n"
		  "             1    50.0%  aligned_alloc\n"
		  "             1    50.0%  malloc\n" },
		{ { REP_WEIGHT_ALLOC_COUNT, 2, 0, 1 },
		  "{\"by\":\"alloc-count\",\"processes\":[{\"pid\":7,\"total\":5,\"sites\":"
		  "[{\"value\":2,\"stack\":[{\"function\":\"malloc\"}]},{\"value\":1,"
		  "\"stack\":[{\"function\":\"aligned_alloc\"}]}]}]}\n" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rep_sites x;
		struct rep_heap *h = small_pass(&x);
		char *text = NULL;
		size_t len = 0;
		FILE *out = open_memstream(&text, &len);

		assert_int_equal(rep_write_top(out, h, &cases[i].o), 0);
		fclose(out);
		assert_string_equal(text, cases[i].want);
		free(text);
		rep_heap_free(h);
		rep_sites_free(&x);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
