/* test_daemon_pidset.c: unit tests of daemon/procs/pidset.c, a set of processes: what add answers
 * for new and known pids, pids that share a hash slot (also across the end of the table), the
 * count, the capacity limit, init/free, and removal (the runs it shortens, churn). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../daemon/procs/pidset.h"

static int setup(void **state)
{
	static struct at_pidset set;

	if (at_pidset_init(&set) != 0)
		return -1;
	*state = &set;
	return 0;
}

static int teardown(void **state)
{
	at_pidset_free(*state);
	return 0;
}

/* pidset.c's slot for a pid: a multiplicative hash, modulo the power-of-two table size, so pid
 * and pid + k * capacity want the same slot. */
#define SLOT_OF(pid) (((uint32_t)(pid) * 2654435761u) & (AT_PIDSET_CAPACITY - 1))
#define SAME_SLOT(pid, k) ((uint32_t)((pid) + (k) * AT_PIDSET_CAPACITY))

static void test_init(void **state)
{
	struct at_pidset *s = *state;

	assert_int_equal(s->count, 0);
	assert_non_null(s->slots);
	for (uint32_t i = 0; i < AT_PIDSET_CAPACITY; i++)
		assert_int_equal(s->slots[i], 0);
}

/* One sequence of adds per case: the answer to each add and the count after the last. */
static void test_add_sequences(void **state)
{
	(void)state;
	static const struct {
		const char *what;
		uint32_t pid[8];
		int added[8];
		unsigned n;
		uint32_t count;
	} cases[] = {
		{ "one pid", { 42 }, { 1 }, 1, 1 },
		{ "a duplicate", { 42, 42 }, { 1, 0 }, 2, 1 },
		{ "a duplicate after others", { 7, 8, 9, 7, 9, 8 }, { 1, 1, 1, 0, 0, 0 }, 6, 3 },
		{ "pid 1 and the largest pids",
		  { 1, 4194304, UINT32_MAX, UINT32_MAX - 1, 1, UINT32_MAX },
		  { 1, 1, 1, 1, 0, 0 }, 6, 4 },
		{ "three pids wanting one slot",
		  { SAME_SLOT(5, 0), SAME_SLOT(5, 1), SAME_SLOT(5, 2), SAME_SLOT(5, 1),
		    SAME_SLOT(5, 2), SAME_SLOT(5, 0) },
		  { 1, 1, 1, 0, 0, 0 }, 6, 3 },
		{ "a collision chain among other pids",
		  { SAME_SLOT(300, 0), SAME_SLOT(300, 1), 301, 301, SAME_SLOT(300, 1) },
		  { 1, 1, 1, 0, 0 }, 5, 3 },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct at_pidset s;

		assert_int_equal(at_pidset_init(&s), 0);
		for (unsigned i = 0; i < cases[c].n; i++) {
			int got = at_pidset_add(&s, cases[c].pid[i]);
			if (got != cases[c].added[i])
				fail_msg("%s: add #%u (pid %u) gave %d, want %d", cases[c].what, i,
					 cases[c].pid[i], got, cases[c].added[i]);
		}
		if (s.count != cases[c].count)
			fail_msg("%s: count %u, want %u", cases[c].what, s.count, cases[c].count);
		at_pidset_free(&s);
	}
}

/* A pid whose slot is the last of the table: the pids that share it wrap to slot 0, 1, ... */
static void test_wraps_at_the_end(void **state)
{
	struct at_pidset *s = *state;
	uint32_t last = 0;

	for (uint32_t pid = 1; pid < AT_PIDSET_CAPACITY; pid++) {
		if (SLOT_OF(pid) == AT_PIDSET_CAPACITY - 1) {
			last = pid;
			break;
		}
	}
	assert_int_not_equal(last, 0);
	for (uint32_t k = 0; k < 3; k++)
		assert_int_equal(at_pidset_add(s, SAME_SLOT(last, k)), 1);
	for (uint32_t k = 0; k < 3; k++)
		assert_int_equal(at_pidset_add(s, SAME_SLOT(last, k)), 0);
	assert_int_equal(s->count, 3);
	assert_int_equal(s->slots[AT_PIDSET_CAPACITY - 1], SAME_SLOT(last, 0));
	assert_int_equal(s->slots[0], SAME_SLOT(last, 1));
	assert_int_equal(s->slots[1], SAME_SLOT(last, 2));
}

/* The set holds AT_PIDSET_CAPACITY - 1 pids; past that, add answers 0 and counts nothing. */
static void test_capacity(void **state)
{
	struct at_pidset *s = *state;
	uint32_t full = AT_PIDSET_CAPACITY - 1;

	for (uint32_t pid = 1; pid <= full; pid++)
		assert_int_equal(at_pidset_add(s, pid), 1);
	assert_int_equal(s->count, full);
	assert_int_equal(at_pidset_add(s, full + 1), 0);
	assert_int_equal(at_pidset_add(s, 1000000), 0);
	assert_int_equal(s->count, full);
	assert_int_equal(at_pidset_add(s, 1), 0);
	assert_int_equal(at_pidset_add(s, full), 0);
	assert_int_equal(s->count, full);
}

/* Every pid added is stored once; the slots hold exactly the pids added. */
static void test_slots_hold_the_pids(void **state)
{
	struct at_pidset *s = *state;
	uint64_t sum = 0, want = 0;
	uint32_t used = 0;

	for (uint32_t i = 0; i < 20000; i++) {
		uint32_t pid = 1 + i * 7919u;
		assert_int_equal(at_pidset_add(s, pid), 1);
		want += pid;
	}
	for (uint32_t i = 0; i < 20000; i += 3)
		assert_int_equal(at_pidset_add(s, 1 + i * 7919u), 0);
	for (uint32_t i = 0; i < AT_PIDSET_CAPACITY; i++) {
		if (s->slots[i]) {
			used++;
			sum += s->slots[i];
		}
	}
	assert_int_equal(s->count, 20000);
	assert_int_equal(used, 20000);
	assert_int_equal(sum, want);
}

/* free releases the table and may be called twice; init after free starts empty. */
static void test_free_and_reinit(void **state)
{
	(void)state;
	struct at_pidset s;

	assert_int_equal(at_pidset_init(&s), 0);
	assert_int_equal(at_pidset_add(&s, 9), 1);
	at_pidset_free(&s);
	assert_null(s.slots);
	at_pidset_free(&s);
	assert_null(s.slots);
	assert_int_equal(at_pidset_init(&s), 0);
	assert_int_equal(s.count, 0);
	assert_int_equal(at_pidset_add(&s, 9), 1);
	assert_int_equal(s.count, 1);
	at_pidset_free(&s);
}

/* Two sets are independent. */
static void test_two_sets(void **state)
{
	struct at_pidset *a = *state, b;

	assert_int_equal(at_pidset_init(&b), 0);
	assert_int_equal(at_pidset_add(a, 77), 1);
	assert_int_equal(at_pidset_add(&b, 77), 1);
	assert_int_equal(at_pidset_add(&b, 78), 1);
	assert_int_equal(a->count, 1);
	assert_int_equal(b.count, 2);
	at_pidset_free(&b);
}

/* Removal: one table-driven case per shape of the run a pid leaves: each step adds (+pid) or
 * removes (-pid) with the answer it must give; then every pid of keep is there and none of gone,
 * and the count is right. Removing from a run moves the later pids back, even across the end. */
static void test_remove_sequences(void **state)
{
	(void)state;
	static uint32_t wrap; /* a pid whose slot is the last of the table */
	for (uint32_t pid = 1; !wrap && pid < AT_PIDSET_CAPACITY; pid++)
		if (SLOT_OF(pid) == AT_PIDSET_CAPACITY - 1)
			wrap = pid;
	const struct {
		const char *what;
		int64_t step[8];
		int answer[8];
		unsigned n;
		uint32_t keep[4], gone[4];
	} cases[] = {
		{ "remove the one pid", { 42, -42 }, { 1, 1 }, 2, { 0 }, { 42 } },
		{ "remove a pid never added", { 42, -43 }, { 1, 0 }, 2, { 42 }, { 43 } },
		{ "remove twice", { 42, -42, -42 }, { 1, 1, 0 }, 3, { 0 }, { 42 } },
		{ "add again after removal", { 42, -42, 42 }, { 1, 1, 1 }, 3, { 42 }, { 0 } },
		{ "the head of a run of three",
		  { SAME_SLOT(5, 0), SAME_SLOT(5, 1), SAME_SLOT(5, 2), -(int64_t)SAME_SLOT(5, 0) },
		  { 1, 1, 1, 1 }, 4, { SAME_SLOT(5, 1), SAME_SLOT(5, 2) }, { SAME_SLOT(5, 0) } },
		{ "the middle of a run of three",
		  { SAME_SLOT(5, 0), SAME_SLOT(5, 1), SAME_SLOT(5, 2), -(int64_t)SAME_SLOT(5, 1) },
		  { 1, 1, 1, 1 }, 4, { SAME_SLOT(5, 0), SAME_SLOT(5, 2) }, { SAME_SLOT(5, 1) } },
		{ "a run across the end of the table",
		  { wrap, SAME_SLOT(wrap, 1), SAME_SLOT(wrap, 2), -(int64_t)wrap },
		  { 1, 1, 1, 1 }, 4, { SAME_SLOT(wrap, 1), SAME_SLOT(wrap, 2) }, { wrap } },
		{ "pid 0 is never there", { 7, 0 }, { 1, 0 }, 2, { 7 }, { 0 } },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct at_pidset s;
		uint32_t count = 0;

		assert_int_equal(at_pidset_init(&s), 0);
		for (unsigned i = 0; i < cases[c].n; i++) {
			int64_t st = cases[c].step[i];
			int got = st > 0 ? at_pidset_add(&s, (uint32_t)st)
					 : at_pidset_remove(&s, (uint32_t)-st);
			if (got != cases[c].answer[i])
				fail_msg("%s: step #%u gave %d, want %d", cases[c].what, i, got,
					 cases[c].answer[i]);
		}
		for (unsigned k = 0; k < 4; k++) {
			if (cases[c].keep[k] && !at_pidset_has(&s, cases[c].keep[k]))
				fail_msg("%s: pid %u lost", cases[c].what, cases[c].keep[k]);
			if (at_pidset_has(&s, cases[c].gone[k]))
				fail_msg("%s: pid %u still there", cases[c].what, cases[c].gone[k]);
			count += cases[c].keep[k] != 0;
		}
		if (s.count != count)
			fail_msg("%s: count %u, want %u", cases[c].what, s.count, count);
		at_pidset_free(&s);
	}
}

/* Many adds and removes in turn: the set is always exactly the pids still in, and full
 * churn leaves it empty (the table does not fill with pids that ended). */
static void test_churn(void **state)
{
	struct at_pidset *s = *state;

	for (uint32_t round = 0; round < 4; round++) {
		for (uint32_t i = 0; i < 60000; i++)
			assert_int_equal(at_pidset_add(s, 1 + i * 7919u + round), 1);
		for (uint32_t i = 0; i < 60000; i += 2)
			assert_int_equal(at_pidset_remove(s, 1 + i * 7919u + round), 1);
		for (uint32_t i = 0; i < 60000; i++)
			assert_int_equal(at_pidset_has(s, 1 + i * 7919u + round), i % 2);
		for (uint32_t i = 1; i < 60000; i += 2)
			assert_int_equal(at_pidset_remove(s, 1 + i * 7919u + round), 1);
		assert_int_equal(s->count, 0);
	}
	for (uint32_t i = 0; i < AT_PIDSET_CAPACITY; i++)
		assert_int_equal(s->slots[i], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_init, setup, teardown),
		cmocka_unit_test(test_add_sequences),
		cmocka_unit_test_setup_teardown(test_wraps_at_the_end, setup, teardown),
		cmocka_unit_test_setup_teardown(test_capacity, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slots_hold_the_pids, setup, teardown),
		cmocka_unit_test(test_free_and_reinit),
		cmocka_unit_test_setup_teardown(test_two_sets, setup, teardown),
		cmocka_unit_test(test_remove_sequences),
		cmocka_unit_test_setup_teardown(test_churn, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
