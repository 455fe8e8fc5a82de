/* test_report_live.c: unit tests of report/live.c, the live view's snapshots (top --follow)
 * written to a file (not a terminal): each site's live bytes, growth since the snapshot
 * before and since the first, allocations per second over the interval (trace time; the wall
 * clock when the trace's time did not move), the three orders, sites that hold and do
 * nothing left out, the final table. The terminal form and the following reader:
 * tests/report_live.sh, test_lib_source.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../report/live.h"

#define S 1000000000u /* a second, in ns */

/* Before the first snapshot: malloc 1000 at 1 s (the trace's 0.0 s). Before the second:
 * calloc 500 at 2 s, malloc 300 at 3 s, malloc 10 freed at once, the first malloc freed. */
static const struct at_event first[] = {
	{ .pid = 7, .tid = 7, .func = AT_MALLOC, .has_result = 1, .arg = { 1000 }, .result = 0x1000,
	  .time_ns = 1 * S },
};
static const struct at_event second[] = {
	{ .pid = 7, .tid = 7, .func = AT_CALLOC, .has_result = 1, .arg = { 1, 500 }, .result = 0x2000,
	  .time_ns = 2 * S },
	{ .pid = 7, .tid = 7, .func = AT_MALLOC, .has_result = 1, .arg = { 300 }, .result = 0x3000,
	  .time_ns = 3 * S },
	{ .pid = 7, .tid = 7, .func = AT_MALLOC, .has_result = 1, .arg = { 10 }, .result = 0x5000,
	  .time_ns = 3 * S },
	{ .pid = 7, .tid = 7, .func = AT_FREE, .arg = { 0x5000 }, .time_ns = 3 * S },
	{ .pid = 7, .tid = 7, .func = AT_FREE, .arg = { 0x1000 }, .time_ns = 3 * S },
};

#define HEAD "        live       growth    since 1st   allocs/s  "

static const char want_first[] =
	"== at 0.0 s: 1000 B live in 1 block\n"
	HEAD "sites by live bytes: 1 of 1 shown\n"
	"      1000 B      +1000 B         +0 B        1.0  malloc\n\n";

static const char *const want_second[] = {
	[REP_LIVE_BY_LIVE] =
	"== at 2.0 s: 800 B live in 2 blocks\n"
	HEAD "sites by live bytes: 2 of 2 shown\n"
	"       500 B       +500 B       +500 B        0.5  calloc\n"
	"       300 B       -700 B       -700 B        1.0  malloc\n\n",
	[REP_LIVE_BY_GROWTH] =
	"== at 2.0 s: 800 B live in 2 blocks\n"
	HEAD "sites by growth: 2 of 2 shown\n"
	"       500 B       +500 B       +500 B        0.5  calloc\n"
	"       300 B       -700 B       -700 B        1.0  malloc\n\n",
	[REP_LIVE_BY_RATE] =
	"== at 2.0 s: 800 B live in 2 blocks\n"
	HEAD "sites by allocations per second: 2 of 2 shown\n"
	"       300 B       -700 B       -700 B        1.0  malloc\n"
	"       500 B       +500 B       +500 B        0.5  calloc\n\n",
};

/* The final table after the second snapshot, nothing new: no growth, no allocations. */
static const char want_end[] =
	"== at 2.0 s, the end of the trace: 800 B live in 2 blocks\n"
	HEAD "sites by live bytes: 2 of 2 shown\n"
	"       500 B         +0 B       +500 B        0.0  calloc\n"
	"       300 B         +0 B       -700 B        0.0  malloc\n\n";

/* A view over a fresh engine, writing into *text (a memory stream the caller closes). */
struct view {
	struct rep_sites x;
	struct rep_heap *h;
	struct rep_live l;
	char *text;
	size_t len;
	FILE *out;
};

static void view_open(struct view *v, enum rep_live_order order, size_t limit)
{
	struct rep_heap_options o = { .moment = REP_AT_END };

	memset(v, 0, sizeof(*v));
	assert_int_equal(rep_sites_init(&v->x, REP_WEIGHT_ALLOC_COUNT, NULL, NULL, NULL), 0);
	v->h = rep_heap_new(&v->x, &o);
	assert_non_null(v->h);
	v->out = open_memstream(&v->text, &v->len);
	assert_non_null(v->out);
	v->l = (struct rep_live){ .interval_ns = S, .limit = limit, .trace = "t.atz" };
	assert_int_equal(rep_live_start(&v->l, v->h, v->out), 0);
	v->l.order = order;
	v->l.last_wall_ns = 0; /* the wall clock of the tests: 0 at the start */
}

static void feed(struct view *v, const struct at_event *ev, size_t n)
{
	for (size_t i = 0; i < n; i++)
		assert_int_equal(rep_live_event(&v->l, &ev[i]), 0);
}

/* The text written since the last call. */
static const char *written(struct view *v, size_t *from)
{
	fflush(v->out);
	const char *p = v->text + *from;
	*from = v->len;
	return p;
}

static void view_close(struct view *v)
{
	rep_live_free(&v->l);
	fclose(v->out);
	free(v->text);
	rep_heap_free(v->h);
	rep_sites_free(&v->x);
}

/* Two snapshots in each order: the figures, the order, the rates over trace time (over the
 * wall clock for the first, whose trace time did not move); then the end's table. */
static void test_snapshots(void **state)
{
	(void)state;
	for (int order = REP_LIVE_BY_LIVE; order <= REP_LIVE_BY_RATE; order++) {
		struct view v;
		size_t from = 0;

		view_open(&v, (enum rep_live_order)order, 20);
		feed(&v, first, sizeof(first) / sizeof(first[0]));
		assert_int_equal(rep_live_snapshot(&v.l, 1 * S), 0);
		const char *got = written(&v, &from);
		if (order == REP_LIVE_BY_LIVE)
			assert_string_equal(got, want_first);
		feed(&v, second, sizeof(second) / sizeof(second[0]));
		assert_int_equal(rep_live_snapshot(&v.l, 3 * S), 0);
		assert_string_equal(written(&v, &from), want_second[order]);
		if (order == REP_LIVE_BY_LIVE) {
			rep_heap_finish(v.h);
			assert_int_equal(rep_live_end(&v.l), 0);
			assert_string_equal(written(&v, &from), want_end);
		}
		view_close(&v);
	}
}

/* The limit keeps the first rows; a site that holds nothing and did nothing in the interval
 * is left out (the free of the last malloc block: malloc then 0 B, growth -300 B, shown;
 * the snapshot after, nothing: left out). */
static void test_limit_and_idle(void **state)
{
	(void)state;
	struct view v;
	size_t from = 0;
	const struct at_event frees[] = {
		{ .pid = 7, .tid = 7, .func = AT_FREE, .arg = { 0x3000 }, .time_ns = 4 * S },
	};

	view_open(&v, REP_LIVE_BY_LIVE, 1);
	feed(&v, first, 1);
	feed(&v, second, sizeof(second) / sizeof(second[0]));
	assert_int_equal(rep_live_snapshot(&v.l, 1 * S), 0);
	assert_string_equal(written(&v, &from),
			    "== at 2.0 s: 800 B live in 2 blocks\n"
			    HEAD "sites by live bytes: 1 of 2 shown\n"
			    "       500 B       +500 B         +0 B        0.5  calloc\n\n");
	v.l.limit = 5;
	feed(&v, frees, 1);
	assert_int_equal(rep_live_snapshot(&v.l, 2 * S), 0);
	assert_string_equal(written(&v, &from),
			    "== at 3.0 s: 500 B live in 1 block\n"
			    HEAD "sites by live bytes: 2 of 2 shown\n"
			    "       500 B         +0 B         +0 B        0.0  calloc\n"
			    "         0 B       -300 B       -300 B        0.0  malloc\n\n");
	assert_int_equal(rep_live_snapshot(&v.l, 3 * S), 0);
	assert_string_equal(written(&v, &from),
			    "== at 3.0 s: 500 B live in 1 block\n"
			    HEAD "sites by live bytes: 1 of 1 shown\n"
			    "       500 B         +0 B         +0 B        0.0  calloc\n\n");
	view_close(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_snapshots),
		cmocka_unit_test(test_limit_and_idle),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
