/* test_replay_oplist.c: unit tests of replay/oplist.c: replay threads by recorded tid, slots
 * renamed to instances and the dependencies between threads (table-driven), markers, the log
 * order's live bytes, growth past the first mapping, each thread's instances in one range. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../replay/oplist.h"

#define NONE RP_NO_OP

static struct at_event op(uint32_t tid, enum at_func f, uint64_t a0, uint64_t a1, uint64_t res)
{
	return (struct at_event){ 1, tid, (uint8_t)f, at_func_returns_pointer(f), { a0, a1 }, res, 0, 0 };
}

struct dep_case {
	const char *name;
	struct at_event ev[6];
	unsigned n;
	uint32_t thread[6];
	uint32_t dep[6];
	uint64_t arg[6], result[6]; /* the renamed slots */
};

static void test_dependencies(void **state)
{
	(void)state;
	const struct dep_case cases[] = {
		{ "free on the allocating thread: no wait",
		  { op(1, AT_MALLOC, 8, 0, 1), op(1, AT_FREE, 1, 0, 0) }, 2,
		  { 0, 0 }, { NONE, NONE }, { 8, 1 }, { 1, 0 } },
		{ "free on another thread waits for the allocation",
		  { op(1, AT_MALLOC, 8, 0, 1), op(2, AT_FREE, 1, 0, 0) }, 2,
		  { 0, 1 }, { NONE, 0 }, { 8, 1 }, { 1, 0 } },
		{ "an allocation into a slot another thread emptied waits for nothing: its own instance",
		  { op(1, AT_MALLOC, 8, 0, 1), op(1, AT_FREE, 1, 0, 0), op(2, AT_MALLOC, 9, 0, 1),
		    op(1, AT_FREE, 1, 0, 0) }, 4,
		  { 0, 0, 1, 0 }, { NONE, NONE, NONE, 2 }, { 8, 1, 9, 2 }, { 1, 0, 2, 0 } },
		{ "realloc between slots waits for the block's allocation only",
		  { op(1, AT_MALLOC, 8, 0, 1), op(3, AT_MALLOC, 8, 0, 2), op(3, AT_FREE, 2, 0, 0),
		    op(2, AT_REALLOC, 1, 16, 2), op(3, AT_FREE, 2, 0, 0) }, 5,
		  { 0, 1, 1, 2, 1 }, { NONE, NONE, NONE, 0, 3 }, { 8, 8, 2, 1, 3 }, { 1, 2, 0, 3, 0 } },
		{ "realloc in place: a new instance",
		  { op(1, AT_MALLOC, 8, 0, 1), op(2, AT_REALLOC, 1, 16, 1), op(2, AT_FREE, 1, 0, 0) }, 3,
		  { 0, 1, 1 }, { NONE, 0, NONE }, { 8, 1, 2 }, { 1, 2, 0 } },
		{ "a free of an empty slot takes instance 0 and waits for nothing",
		  { op(1, AT_MALLOC, 8, 0, 0), op(2, AT_FREE, 7, 0, 0), op(2, AT_FREE, 0, 0, 0),
		    op(3, AT_FREE, 0, 0, 0) }, 4,
		  { 0, 1, 1, 2 }, { NONE, NONE, 0, NONE }, { 8, 0, 1, 0 }, { 1, 0, 0, 0 } },
		{ "a marker belongs to no thread and depends on nothing",
		  { op(1, AT_MALLOC, 8, 0, 1), op(1, AT_JEMALLOC_STATS, 0, 0, 0), op(2, AT_FREE, 1, 0, 0) }, 3,
		  { 0, NONE, 1 }, { NONE, NONE, 0 }, { 8, 0, 1 }, { 1, 2, 0 } },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct rp_oplist ol;
		assert_int_equal(rp_oplist_init(&ol, 64), 0);
		for (unsigned i = 0; i < cases[c].n; i++)
			assert_int_equal(rp_oplist_add(&ol, &cases[c].ev[i], i + 1), 0);
		assert_int_equal(rp_oplist_finish(&ol), 0);
		for (unsigned i = 0; i < cases[c].n; i++) {
			if (ol.thread[i] != cases[c].thread[i] || ol.dep[i] != cases[c].dep[i] ||
			    ol.ev[i].arg[0] != cases[c].arg[i] || ol.ev[i].result != cases[c].result[i])
				fail_msg("%s: op %u: thread %u dep %u arg %lu result %lu", cases[c].name, i,
					 ol.thread[i], ol.dep[i], (unsigned long)ol.ev[i].arg[0],
					 (unsigned long)ol.ev[i].result);
		}
		rp_oplist_fini(&ol);
	}
}

static void test_threads_and_markers(void **state)
{
	(void)state;
	struct rp_oplist ol;
	struct at_event m = op(9, AT_JEMALLOC_STATS, 0, 0, 0);

	assert_int_equal(rp_oplist_init(&ol, 64), 0);
	struct at_event a = op(40, AT_MALLOC, 1, 0, 1), b = op(7, AT_MALLOC, 1, 0, 2);
	assert_int_equal(rp_oplist_add(&ol, &a, 1), 0);
	assert_int_equal(rp_oplist_add(&ol, &m, 2), 0);
	assert_int_equal(rp_oplist_add(&ol, &b, 3), 0);
	assert_int_equal(rp_oplist_add(&ol, &a, 4), 0);
	assert_int_equal(ol.nthreads, 2);   /* the marker's tid makes no thread */
	assert_int_equal(ol.tid[0], 40);
	assert_int_equal(ol.tid[1], 7);
	assert_int_equal(ol.markers, 1);
	assert_int_equal(ol.ev[1].result, 2); /* the marker keeps its position */
	rp_oplist_fini(&ol);
}

static void test_live_bytes(void **state)
{
	(void)state;
	struct rp_oplist ol;
	const struct at_event evs[] = {
		op(1, AT_MALLOC, 100, 0, 1),       /* 100 */
		op(1, AT_CALLOC, 10, 20, 2),       /* 300 */
		op(2, AT_REALLOC, 1, 500, 1),      /* 700 */
		op(2, AT_FREE, 2, 0, 0),           /* 500 */
		op(1, AT_MEMALIGN, 64, 50, 3),     /* 550 */
		op(1, AT_MALLOC, 30, 0, 3),        /* overwrites #3: 530 */
		op(1, AT_FREE, 9, 0, 0),           /* an empty slot: 530 */
	};
	assert_int_equal(rp_oplist_init(&ol, 64), 0);
	for (unsigned i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		assert_int_equal(rp_oplist_add(&ol, &evs[i], i + 1), 0);
	assert_int_equal(ol.live_bytes, 530);
	assert_int_equal(ol.peak_live_bytes, 700);
	assert_int_equal(ol.overwritten, 1);
	assert_int_equal(ol.instances, 5);
	rp_oplist_fini(&ol);
}

static void test_growth_and_thread_limit(void **state)
{
	(void)state;
	struct rp_oplist ol;

	assert_int_equal(rp_oplist_init(&ol, 1 << 20), 0);
	for (uint32_t i = 0; i < 200000; i++) {
		struct at_event e = op(i % RP_MAX_THREADS, AT_MALLOC, 1, 0, i % 1000);
		assert_int_equal(rp_oplist_add(&ol, &e, i + 1), 0);
	}
	assert_int_equal(ol.n, 200000);
	assert_true(ol.cap >= 200000);
	assert_int_equal(rp_oplist_finish(&ol), 0);
	/* each thread's instances in one range: 196 for threads 0 to 319, 195 for the others */
	assert_int_equal(ol.ev[0].result, 1);
	assert_int_equal(ol.ev[1].result, 197);
	assert_int_equal(ol.ev[1024].result, 2);
	assert_int_equal(ol.ev[199999].result, 1 + 319 * 196 + 195);
	assert_int_equal(ol.nthreads, RP_MAX_THREADS);
	struct at_event extra = op(RP_MAX_THREADS + 5, AT_MALLOC, 1, 0, 1);
	errno = 0;
	assert_int_equal(rp_oplist_add(&ol, &extra, 1), -1);
	assert_int_equal(errno, EMLINK);
	rp_oplist_fini(&ol);
	/* instances stay below the slot limit */
	assert_int_equal(rp_oplist_init(&ol, 4), 0);
	struct at_event a = op(1, AT_MALLOC, 1, 0, 1);
	for (int i = 0; i < 3; i++)
		assert_int_equal(rp_oplist_add(&ol, &a, 1), 0);
	errno = 0;
	assert_int_equal(rp_oplist_add(&ol, &a, 1), -1);
	assert_int_equal(errno, E2BIG);
	rp_oplist_fini(&ol);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dependencies),
		cmocka_unit_test(test_threads_and_markers),
		cmocka_unit_test(test_live_bytes),
		cmocka_unit_test(test_growth_and_thread_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
