/* test_report_top.c: unit tests of report/top.c: the ranking of a small pass: order, ties by
 * text, the limit, shares, the exact-bytes switch, and the JSON form; every key:
 * heaptrack_print's temporaries, churn, and live bytes at a moment (the end, the heap peak, a
 * time). The units themselves: test_report_units.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../report/top.h"

/* Process 7's events, event k at k - 1 s: malloc 3000 live + 100 freed by its thread's next
 * call, calloc 3000 live (a tie with malloc: by text, calloc first), valloc 1000 live,
 * aligned_alloc 24 freed at once: two temporaries (SMALL events). Then calloc's block
 * realloc'd to 5000 (at realloc's site), and that one freed. */
#define SMALL 7
static const struct at_event events[] = {
	{ .pid = 7, .tid = 7, .func = AT_MALLOC, .has_result = 1, .arg = { 3000 }, .result = 0x1000,
	  .time_ns = 1000000000 },
	{ .pid = 7, .tid = 7, .func = AT_CALLOC, .has_result = 1, .arg = { 3, 1000 }, .result = 0x9000,
	  .time_ns = 2000000000 },
	{ .pid = 7, .tid = 7, .func = AT_VALLOC, .has_result = 1, .arg = { 1000 }, .result = 0xf000,
	  .time_ns = 3000000000 },
	{ .pid = 7, .tid = 8, .func = AT_MALLOC, .has_result = 1, .arg = { 100 }, .result = 0x20000,
	  .time_ns = 4000000000 },
	{ .pid = 7, .tid = 9, .func = AT_ALIGNED_ALLOC, .has_result = 1, .arg = { 16, 24 },
	  .result = 0x30000, .time_ns = 5000000000 },
	{ .pid = 7, .tid = 9, .func = AT_FREE, .arg = { 0x30000 }, .time_ns = 6000000000 },
	{ .pid = 7, .tid = 8, .func = AT_FREE, .arg = { 0x20000 }, .time_ns = 7000000000 },
	{ .pid = 7, .tid = 7, .func = AT_REALLOC, .has_result = 1, .arg = { 0x9000, 5000 },
	  .result = 0x40000, .time_ns = 8000000000 },
	{ .pid = 7, .tid = 7, .func = AT_FREE, .arg = { 0x40000 }, .time_ns = 9000000000 },
};

/* The pass over the first n events, for the moment o. */
static struct rep_heap *pass(struct rep_sites *x, const struct rep_heap_options *o, size_t n)
{
	assert_int_equal(rep_sites_init(x, REP_WEIGHT_ALLOC_COUNT, NULL, NULL, NULL), 0);
	struct rep_heap *h = rep_heap_new(x, o);
	assert_non_null(h);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(rep_heap_event(h, &events[i]), 0);
	rep_heap_finish(h);
	return h;
}

#define ALL (sizeof(events) / sizeof(events[0]))
#define AT(k, ns) { .moment = k, .moment_ns = ns } /* a pass's moment */
#define BY(w, n, b, j) .by = w, .limit = n, .exact = b, .json = j /* what ranks, how */

static void test_write(void **state)
{
	(void)state;
	static const struct {
		struct rep_heap_options h;
		size_t n;
		struct rep_top_options o;
		const char *want;
	} cases[] = {
		{ AT(REP_AT_END, 0), SMALL, { BY(REP_WEIGHT_LEAK_BYTES, 20, 0, 0) },
		  "sites by leak-bytes, bytes live at the end: 3 of 3 shown\n"
		  "         bytes   share  site: the allocation function, then its callers\n"
		  "       2.9 KiB    42.8%  calloc\n"
		  "       2.9 KiB    42.8%  malloc\n"
		  "        1000 B    14.2%  valloc\n" },
		{ AT(REP_AT_END, 0), SMALL, { BY(REP_WEIGHT_ALLOC_BYTES, 2, 1, 0) },
		  "sites by alloc-bytes, bytes allocated (asked): 2 of 4 shown\n"
		  "         bytes   share  site: the allocation function, then its callers\n"
		  "          3100    43.5%  malloc\n"
		  "          3000    42.1%  calloc\n" },
		{ AT(REP_AT_END, 0), SMALL, { BY(REP_WEIGHT_TEMP_COUNT, 20, 0, 0) },
		  "sites by temp-count, temporary allocations (freed by the next call of their "
		  "thread): 2 of 2 shown\n"
		  "         count   share  site: the allocation function, then its callers\n"
		  "             1    50.0%  aligned_alloc\n"
		  "             1    50.0%  malloc\n" },
		{ AT(REP_AT_END, 0), SMALL, { BY(REP_WEIGHT_ALLOC_COUNT, 2, 0, 1) },
		  "{\"by\":\"alloc-count\",\"processes\":[{\"pid\":7,\"total\":5,\"sites\":"
		  "[{\"value\":2,\"stack\":[{\"function\":\"malloc\"}]},{\"value\":1,"
		  "\"stack\":[{\"function\":\"aligned_alloc\"}]}]}]}\n" },
		/* the freed blocks' bytes, each at the site that allocated it */
		{ AT(REP_AT_END, 0), ALL, { BY(REP_WEIGHT_CHURN, 20, 0, 0) },
		  "sites by churn, bytes allocated and released again (freed or reallocated): "
		  "4 of 4 shown\n"
		  "         bytes   share  site: the allocation function, then its callers\n"
		  "       4.8 KiB    61.5%  realloc\n"
		  "       2.9 KiB    36.9%  calloc\n"
		  "         100 B     1.2%  malloc\n"
		  "          24 B     0.2%  aligned_alloc\n" },
		{ AT(REP_AT_END, 0), ALL, { BY(REP_WEIGHT_CHURN, 1, 1, 0) },
		  "sites by churn, bytes allocated and released again (freed or reallocated): "
		  "1 of 4 shown\n"
		  "         bytes   share  site: the allocation function, then its callers\n"
		  "          5000    61.5%  realloc\n" },
		/* aligned_alloc's freed after its allocation, the realloc's after the realloc;
		 * malloc's 100 is freed after a release: none */
		{ AT(REP_AT_END, 0), ALL, { BY(REP_WEIGHT_HEAPTRACK_TEMP_COUNT, 20, 0, 0) },
		  "sites by heaptrack-temp-count, temporary allocations as heaptrack_print counts "
		  "them (released right after an allocation of their site and size): 2 of 2 shown\n"
		  "         count   share  site: the allocation function, then its callers\n"
		  "             1    50.0%  aligned_alloc\n"
		  "             1    50.0%  realloc\n" },
		{ AT(REP_AT_END, 0), ALL,
		  { BY(REP_WEIGHT_LIVE_BYTES, 20, 1, 0), .at = REP_AT_END },
		  "sites by live-bytes, bytes live at the end: 2 of 2 shown\n"
		  "         bytes   share  site: the allocation function, then its callers\n"
		  "          3000    75.0%  malloc\n"
		  "          1000    25.0%  valloc\n" },
		/* the peak: 9000 bytes, after the realloc */
		{ AT(REP_AT_PEAK, 0), ALL,
		  { BY(REP_WEIGHT_LIVE_BYTES, 20, 0, 0), .at = REP_AT_PEAK },
		  "sites by live-bytes, bytes live at the heap peak: 3 of 3 shown\n"
		  "         bytes   share  site: the allocation function, then its callers\n"
		  "       4.8 KiB    55.5%  realloc\n"
		  "       2.9 KiB    33.3%  malloc\n"
		  "        1000 B    11.1%  valloc\n" },
		/* at 4.5 s: the first five events (at 0 to 4 s) applied */
		{ AT(REP_AT_TIME, 4500000000), ALL,
		  { BY(REP_WEIGHT_LIVE_BYTES, 20, 0, 0), .at = REP_AT_TIME, .at_ns = 4500000000 },
		  "sites by live-bytes, bytes live at 4.5 s: 4 of 4 shown\n"
		  "         bytes   share  site: the allocation function, then its callers\n"
		  "       3.0 KiB    43.5%  malloc\n"
		  "       2.9 KiB    42.1%  calloc\n"
		  "        1000 B    14.0%  valloc\n"
		  "          24 B     0.3%  aligned_alloc\n" },
		{ AT(REP_AT_TIME, 4500000000), ALL,
		  { BY(REP_WEIGHT_LIVE_BYTES, 1, 0, 1), .at = REP_AT_TIME, .at_ns = 4500000000 },
		  "{\"by\":\"live-bytes\",\"at\":\"time\",\"time_ns\":4500000000,\"processes\":"
		  "[{\"pid\":7,\"total\":7124,\"sites\":[{\"value\":3100,\"stack\":"
		  "[{\"function\":\"malloc\"}]}]}]}\n" },
		{ AT(REP_AT_PEAK, 0), ALL,
		  { BY(REP_WEIGHT_LIVE_BYTES, 1, 0, 1), .at = REP_AT_PEAK },
		  "{\"by\":\"live-bytes\",\"at\":\"heap-peak\",\"time_ns\":null,\"processes\":"
		  "[{\"pid\":7,\"total\":9000,\"sites\":[{\"value\":5000,\"stack\":"
		  "[{\"function\":\"realloc\"}]}]}]}\n" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rep_sites x;
		struct rep_heap *h = pass(&x, &cases[i].h, cases[i].n);
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
