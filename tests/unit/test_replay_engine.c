/* test_replay_engine.c: unit tests of replay/engine.c on in-memory event
 * sequences: each function's slot semantics, realloc between slots, empty slots, failures,
 * the slot limit, live-bytes and slop accounting, -c filling. (The slot array itself:
 * test_replay_slots.c.) */
#include <errno.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../replay/engine.h"

/* The ASan build must let failing allocations return NULL, as the replay expects. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}

#define PID 7

static struct at_event ev1(enum at_func f, uint64_t a0, uint64_t result)
{
	return (struct at_event){ PID, 1, (uint8_t)f, 1, { a0, 0 }, result, 0, 0 };
}

static struct at_event ev2(enum at_func f, uint64_t a0, uint64_t a1, uint64_t result)
{
	return (struct at_event){ PID, 1, (uint8_t)f, 1, { a0, a1 }, result, 0, 0 };
}

static struct at_event ev_free(uint64_t slot)
{
	return (struct at_event){ PID, 1, AT_FREE, 0, { slot, 0 }, 0, 0, 0 };
}

static void step_ok(struct rp_engine *e, struct at_event ev)
{
	const char *why = NULL;
	assert_int_equal(rp_engine_step(e, &ev, &why), RP_STEP_DONE);
}

/* Frees whatever the slots still hold, so the sanitizer build sees no leak. */
static void release_all(struct rp_engine *e)
{
	for (uint64_t i = 0; i < e->slots.used; i++)
		free(e->slots.slot[i].ptr);
	rp_engine_fini(e);
}

static void init(struct rp_engine *e, uint64_t limit, unsigned flags)
{
	assert_int_equal(rp_engine_init(e, limit, flags), 0);
}

/* Every allocating function stores a usable, suitably aligned block and its size. */
static void test_allocating_functions(void **state)
{
	(void)state;
	static const struct {
		struct at_event ev;
		uint64_t size;
		uint64_t align;
	} cases[] = {
		{ { PID, 1, AT_MALLOC, 1, { 32, 0 }, 1, 0, 0 }, 32, 1 },
		{ { PID, 1, AT_CALLOC, 1, { 3, 50 }, 2, 0, 0 }, 150, 1 },
		{ { PID, 1, AT_MEMALIGN, 1, { 256, 10 }, 3, 0, 0 }, 10, 256 },
		{ { PID, 1, AT_POSIX_MEMALIGN, 1, { 128, 240 }, 4, 0, 0 }, 240, 128 },
		{ { PID, 1, AT_ALIGNED_ALLOC, 1, { 64, 128 }, 5, 0, 0 }, 128, 64 },
		{ { PID, 1, AT_VALLOC, 1, { 100, 0 }, 6, 0, 0 }, 100, 4096 },
		{ { PID, 1, AT_MALLOC, 1, { 0, 0 }, 0, 0, 0 }, 0, 1 },
	};
	struct rp_engine e;
	uint64_t total = 0;

	init(&e, 64, 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		step_ok(&e, cases[i].ev);
		struct rp_slot *s = &e.slots.slot[cases[i].ev.result];
		assert_non_null(s->ptr);
		assert_int_equal(s->size, cases[i].size);
		assert_int_equal((uintptr_t)s->ptr % cases[i].align, 0);
		assert_true(malloc_usable_size(s->ptr) >= cases[i].size);
		total += cases[i].size;
		assert_int_equal(e.calls[cases[i].ev.func] > 0, 1);
	}
	assert_int_equal(e.live_objects, 7);
	assert_int_equal(e.live_bytes, total);
	assert_int_equal(e.peak_live_bytes, total);
	assert_int_equal(e.ops, 7);
	assert_int_equal(e.slots.used, 7);
	assert_int_equal(e.calls[AT_MALLOC], 2);
	assert_int_equal(e.overwritten, 0);
	assert_int_equal(e.failed, 0);
	release_all(&e);
}

static void test_calloc_zeroes(void **state)
{
	(void)state;
	struct rp_engine e;

	init(&e, 8, 0);
	step_ok(&e, ev2(AT_CALLOC, 100, 10, 1));
	const unsigned char *p = e.slots.slot[1].ptr;
	for (int i = 0; i < 1000; i++)
		assert_int_equal(p[i], 0);
	release_all(&e);
}

static void test_realloc_same_slot(void **state)
{
	(void)state;
	struct rp_engine e;

	init(&e, 8, 0);
	step_ok(&e, ev1(AT_MALLOC, 32, 1));
	memcpy(e.slots.slot[1].ptr, "0123456789", 10);
	step_ok(&e, ev2(AT_REALLOC, 1, 4000, 1));
	assert_non_null(e.slots.slot[1].ptr);
	assert_memory_equal(e.slots.slot[1].ptr, "0123456789", 10);
	assert_int_equal(e.slots.slot[1].size, 4000);
	assert_int_equal(e.live_objects, 1);
	assert_int_equal(e.live_bytes, 4000);
	assert_int_equal(e.peak_live_bytes, 4000);
	assert_int_equal(e.calls[AT_REALLOC], 1);
	release_all(&e);
}

static void test_realloc_other_slot(void **state)
{
	(void)state;
	struct rp_engine e;

	init(&e, 8, 0);
	step_ok(&e, ev1(AT_MALLOC, 32, 1));
	memcpy(e.slots.slot[1].ptr, "abc", 4);
	step_ok(&e, ev2(AT_REALLOC, 1, 64, 5));
	assert_null(e.slots.slot[1].ptr);
	assert_int_equal(e.slots.slot[1].size, 0);
	assert_non_null(e.slots.slot[5].ptr);
	assert_string_equal(e.slots.slot[5].ptr, "abc");
	assert_int_equal(e.slots.slot[5].size, 64);
	assert_int_equal(e.live_objects, 1);
	assert_int_equal(e.live_bytes, 64);
	assert_int_equal(e.slots.used, 6);
	release_all(&e);
}

/* realloc of an empty slot passes NULL: it allocates. */
static void test_realloc_empty_slot(void **state)
{
	(void)state;
	struct rp_engine e;

	init(&e, 8, 0);
	step_ok(&e, ev2(AT_REALLOC, 3, 48, 2));
	assert_non_null(e.slots.slot[2].ptr);
	assert_int_equal(e.live_bytes, 48);
	assert_int_equal(e.live_objects, 1);
	assert_int_equal(e.slots.used, 4);
	release_all(&e);
}

static void test_free_slots(void **state)
{
	(void)state;
	struct rp_engine e;

	init(&e, 8, 0);
	step_ok(&e, ev1(AT_MALLOC, 100, 1));
	step_ok(&e, ev1(AT_MALLOC, 50, 2));
	step_ok(&e, ev_free(1));
	assert_null(e.slots.slot[1].ptr);
	assert_int_equal(e.live_bytes, 50);
	assert_int_equal(e.peak_live_bytes, 150);
	assert_int_equal(e.live_objects, 1);
	/* free of an empty slot (freed, then never used) passes NULL: nothing changes */
	step_ok(&e, ev_free(1));
	step_ok(&e, ev_free(6));
	assert_int_equal(e.live_bytes, 50);
	assert_int_equal(e.live_objects, 1);
	assert_int_equal(e.calls[AT_FREE], 3);
	assert_int_equal(e.ops, 5);
	assert_int_equal(e.slots.used, 7);
	step_ok(&e, ev_free(2));
	assert_int_equal(e.live_bytes, 0);
	assert_int_equal(e.live_objects, 0);
	assert_int_equal(e.peak_live_bytes, 150);
	release_all(&e);
}

static void test_posix_memalign_failure(void **state)
{
	(void)state;
	static const struct {
		uint64_t align, size;
	} cases[] = {
		{ 3, 16 },                      /* not a power of two: EINVAL */
		{ 4, 16 },                      /* below sizeof(void *): EINVAL */
		{ UINT64_C(1) << 62, 16 },      /* huge: ENOMEM */
		{ 64, UINT64_C(1) << 62 },      /* huge size: ENOMEM */
	};
	struct rp_engine e;

	init(&e, 8, 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* the slot held a block: it is overwritten by NULL */
		step_ok(&e, ev1(AT_MALLOC, 8, 1));
		void *old = e.slots.slot[1].ptr;
		step_ok(&e, ev2(AT_POSIX_MEMALIGN, cases[i].align, cases[i].size, 1));
		assert_null(e.slots.slot[1].ptr);
		assert_int_equal(e.slots.slot[1].size, 0);
		assert_int_equal(e.overwritten, i + 1);
		assert_int_equal(e.failed, i + 1);
		assert_int_equal(e.live_objects, 0);
		assert_int_equal(e.live_bytes, 0);
		free(old);
	}
	release_all(&e);
}

static void test_failed_allocations(void **state)
{
	(void)state;
	struct rp_engine e;

	init(&e, 8, 0);
	step_ok(&e, ev2(AT_CALLOC, UINT64_C(1) << 63, 4, 1)); /* overflows */
	step_ok(&e, ev1(AT_MALLOC, UINT64_MAX - 4096, 2));
	assert_null(e.slots.slot[1].ptr);
	assert_null(e.slots.slot[2].ptr);
	assert_int_equal(e.failed, 2);
	assert_int_equal(e.live_bytes, 0);
	assert_int_equal(e.live_objects, 0);
	assert_int_equal(e.ops, 2);
	release_all(&e);
}

/* A failing realloc empties the old slot and stores NULL; the old block stays allocated. */
static void test_realloc_failure(void **state)
{
	(void)state;
	struct rp_engine e;

	init(&e, 8, RP_FILL | RP_SLOP);
	step_ok(&e, ev1(AT_MALLOC, 64, 1));
	void *old = e.slots.slot[1].ptr;
	step_ok(&e, ev2(AT_REALLOC, 1, UINT64_C(1) << 62, 2));
	assert_null(e.slots.slot[1].ptr);
	assert_null(e.slots.slot[2].ptr);
	assert_int_equal(e.failed, 1);
	assert_int_equal(e.overwritten, 0);
	assert_int_equal(e.live_bytes, 0);
	assert_int_equal(e.live_objects, 0);
	assert_int_equal(e.slop_bytes, 0);
	assert_int_equal(e.peak_live_bytes, 64);
	assert_int_equal(e.calls[AT_REALLOC], 1);
	free(old);
	release_all(&e);
}

/* A result slot still holding a pointer: overwritten, counted, the old block leaked. */
static void test_overwritten_slot(void **state)
{
	(void)state;
	struct rp_engine e;

	init(&e, 8, 0);
	step_ok(&e, ev1(AT_MALLOC, 100, 1));
	void *old = e.slots.slot[1].ptr;
	step_ok(&e, ev1(AT_MALLOC, 30, 1));
	assert_ptr_not_equal(e.slots.slot[1].ptr, old);
	assert_int_equal(e.overwritten, 1);
	assert_int_equal(e.live_objects, 1);
	assert_int_equal(e.live_bytes, 30);
	assert_int_equal(e.peak_live_bytes, 100);
	free(old);
	release_all(&e);
}

static void test_slot_limit(void **state)
{
	(void)state;
	struct rp_engine e;
	const char *why = NULL;
	struct at_event ev;

	init(&e, 16, 0);
	step_ok(&e, ev1(AT_MALLOC, 10, 15));
	step_ok(&e, ev1(AT_MALLOC, 10, 3));
	ev = ev1(AT_MALLOC, 10, 16);
	assert_int_equal(rp_engine_step(&e, &ev, &why), RP_STEP_ERROR);
	assert_string_equal(why, "result slot beyond the slot limit");
	assert_int_equal(e.has_bad_slot, 1);
	assert_int_equal(e.bad_slot, 16);
	ev = ev_free(20);
	assert_int_equal(rp_engine_step(&e, &ev, &why), RP_STEP_ERROR);
	assert_string_equal(why, "pointer slot beyond the slot limit");
	assert_int_equal(e.bad_slot, 20);
	/* nothing happens on an error: slot 3 keeps its block */
	ev = ev2(AT_REALLOC, 3, 20, 99);
	assert_int_equal(rp_engine_step(&e, &ev, &why), RP_STEP_ERROR);
	assert_int_equal(e.bad_slot, 99);
	assert_non_null(e.slots.slot[3].ptr);
	assert_int_equal(e.slots.slot[3].size, 10);
	ev = ev2(AT_REALLOC, 16, 20, 3);
	assert_int_equal(rp_engine_step(&e, &ev, &why), RP_STEP_ERROR);
	assert_int_equal(e.bad_slot, 16);
	assert_int_equal(e.ops, 2);
	assert_int_equal(e.live_bytes, 20);
	assert_int_equal(e.slots.used, 16);
	release_all(&e);
}

static void test_missing_result(void **state)
{
	(void)state;
	struct rp_engine e;
	const char *why = NULL;
	struct at_event ev = { PID, 1, AT_MALLOC, 0, { 10, 0 }, 0, 0, 0 };

	init(&e, 16, 0);
	assert_int_equal(rp_engine_step(&e, &ev, &why), RP_STEP_ERROR);
	assert_string_equal(why, "missing result slot (=#N)");
	assert_int_equal(e.has_bad_slot, 0);
	assert_int_equal(e.ops, 0);
	release_all(&e);
}

static void test_other_pids_and_stats(void **state)
{
	(void)state;
	struct rp_engine e;
	const char *why = NULL;
	struct at_event ev = ev1(AT_MALLOC, 10, 1);

	init(&e, 16, 0);
	step_ok(&e, ev);
	ev.pid = PID + 1;
	ev.result = 2;
	assert_int_equal(rp_engine_step(&e, &ev, &why), RP_STEP_SKIPPED);
	ev = (struct at_event){ PID + 1, 1, AT_FREE, 0, { 1, 0 }, 0, 0, 0 };
	assert_int_equal(rp_engine_step(&e, &ev, &why), RP_STEP_SKIPPED);
	ev = (struct at_event){ PID, 9, AT_JEMALLOC_STATS, 0, { 0, 0 }, 0, 0, 0 };
	assert_int_equal(rp_engine_step(&e, &ev, &why), RP_STEP_STATS);
	assert_int_equal(e.pid, PID);
	assert_int_equal(e.other_pid_events, 2);
	assert_null(e.slots.slot[2].ptr);
	assert_non_null(e.slots.slot[1].ptr);
	assert_int_equal(e.calls[AT_JEMALLOC_STATS], 1);
	assert_int_equal(e.calls[AT_FREE], 0);
	assert_int_equal(e.ops, 1);
	release_all(&e);
}

static void assert_filled(const unsigned char *p, size_t from, size_t to, unsigned char c)
{
	for (size_t i = from; i < to; i++)
		if (p[i] != c)
			fail_msg("byte %zu is 0x%02x, expected 0x%02x", i, p[i], c);
}

static void test_fill(void **state)
{
	(void)state;
	struct rp_engine e;

	init(&e, 16, RP_FILL);
	step_ok(&e, ev1(AT_MALLOC, 100, 1));
	step_ok(&e, ev2(AT_CALLOC, 10, 10, 2));
	step_ok(&e, ev2(AT_POSIX_MEMALIGN, 64, 70, 3));
	step_ok(&e, ev2(AT_MEMALIGN, 32, 33, 4));
	step_ok(&e, ev2(AT_ALIGNED_ALLOC, 16, 48, 5));
	step_ok(&e, ev1(AT_VALLOC, 5000, 6));
	step_ok(&e, ev2(AT_REALLOC, 9, 77, 7));
	assert_filled(e.slots.slot[1].ptr, 0, 100, RP_FILL_BYTE);
	assert_filled(e.slots.slot[2].ptr, 0, 100, RP_FILL_BYTE);
	assert_filled(e.slots.slot[3].ptr, 0, 70, RP_FILL_BYTE);
	assert_filled(e.slots.slot[4].ptr, 0, 33, RP_FILL_BYTE);
	assert_filled(e.slots.slot[5].ptr, 0, 48, RP_FILL_BYTE);
	assert_filled(e.slots.slot[6].ptr, 0, 5000, RP_FILL_BYTE);
	assert_filled(e.slots.slot[7].ptr, 0, 77, RP_FILL_BYTE);
	/* realloc fills only the grown part */
	memset(e.slots.slot[1].ptr, 0xaa, 100);
	step_ok(&e, ev2(AT_REALLOC, 1, 3000, 1));
	assert_filled(e.slots.slot[1].ptr, 0, 100, 0xaa);
	assert_filled(e.slots.slot[1].ptr, 100, 3000, RP_FILL_BYTE);
	/* shrinking fills nothing */
	memset(e.slots.slot[1].ptr, 0xbb, 3000);
	step_ok(&e, ev2(AT_REALLOC, 1, 10, 8));
	assert_filled(e.slots.slot[8].ptr, 0, 10, 0xbb);
	release_all(&e);
}

static void test_no_fill_without_flag(void **state)
{
	(void)state;
	struct rp_engine e;

	init(&e, 16, 0);
	step_ok(&e, ev1(AT_MALLOC, 64, 1));
	memset(e.slots.slot[1].ptr, 0x11, 64);
	step_ok(&e, ev2(AT_REALLOC, 1, 32, 1));
	assert_filled(e.slots.slot[1].ptr, 0, 32, 0x11);
	release_all(&e);
}

static void test_slop(void **state)
{
	(void)state;
	struct rp_engine e;

	init(&e, 16, RP_SLOP);
	step_ok(&e, ev1(AT_MALLOC, 1, 1));
	uint64_t s1 = malloc_usable_size(e.slots.slot[1].ptr) - 1;
	assert_int_equal(e.slop_bytes, s1);
	step_ok(&e, ev2(AT_MEMALIGN, 64, 100, 2));
	uint64_t s2 = malloc_usable_size(e.slots.slot[2].ptr) - 100;
	assert_int_equal(e.slop_bytes, s1 + s2);
	step_ok(&e, ev2(AT_REALLOC, 1, 1000, 3));
	uint64_t s3 = malloc_usable_size(e.slots.slot[3].ptr) - 1000;
	assert_int_equal(e.slop_bytes, s2 + s3);
	step_ok(&e, ev_free(2));
	assert_int_equal(e.slop_bytes, s3);
	step_ok(&e, ev_free(3));
	assert_int_equal(e.slop_bytes, 0);
	assert_int_equal(e.live_bytes, 0);
	release_all(&e);
}

static void test_slop_off(void **state)
{
	(void)state;
	struct rp_engine e;

	init(&e, 16, 0);
	step_ok(&e, ev1(AT_MALLOC, 1, 1));
	assert_int_equal(e.slop_bytes, 0);
	release_all(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allocating_functions),
		cmocka_unit_test(test_calloc_zeroes),
		cmocka_unit_test(test_realloc_same_slot),
		cmocka_unit_test(test_realloc_other_slot),
		cmocka_unit_test(test_realloc_empty_slot),
		cmocka_unit_test(test_free_slots),
		cmocka_unit_test(test_posix_memalign_failure),
		cmocka_unit_test(test_failed_allocations),
		cmocka_unit_test(test_realloc_failure),
		cmocka_unit_test(test_overwritten_slot),
		cmocka_unit_test(test_slot_limit),
		cmocka_unit_test(test_missing_result),
		cmocka_unit_test(test_other_pids_and_stats),
		cmocka_unit_test(test_fill),
		cmocka_unit_test(test_no_fill_without_flag),
		cmocka_unit_test(test_slop),
		cmocka_unit_test(test_slop_off),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
