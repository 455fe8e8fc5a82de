/* test_daemon_stack_ids.c: unit tests of daemon/stacks/stack_ids.c: ids 1, 2, ... in order of first
 * appearance, the same id for a known hash, hashes that want the same slot, growth past the
 * first table (every id still found), and init/free. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../daemon/stacks/stack_ids.h"

static int setup(void **state)
{
	static struct at_stack_ids ids;

	if (at_stack_ids_init(&ids) != 0)
		return -1;
	*state = &ids;
	return 0;
}

static int teardown(void **state)
{
	at_stack_ids_free(*state);
	return 0;
}

static void test_order_of_first_appearance(void **state)
{
	struct at_stack_ids *s = *state;
	static const struct {
		uint64_t hash;
		int fresh;
		uint32_t id;
	} steps[] = {
		{ 0xdeadbeef, 1, 1 }, { 42, 1, 2 }, { 0xdeadbeef, 0, 1 }, { UINT64_MAX, 1, 3 },
		{ 42, 0, 2 },         { 1, 1, 4 },  { UINT64_MAX, 0, 3 },
	};
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		uint32_t id = 0;

		assert_int_equal(at_stack_ids_get(s, steps[i].hash, &id), steps[i].fresh);
		assert_int_equal(id, steps[i].id);
	}
	assert_int_equal(s->count, 4);
}

/* Hashes differing only in bits the slot function multiplies away collide often; whatever they
 * collide on, each keeps its own id. */
static void test_same_slot(void **state)
{
	struct at_stack_ids *s = *state;
	uint32_t id;

	for (uint64_t k = 1; k <= 64; k++)
		assert_int_equal(at_stack_ids_get(s, k << 40, &id), 1);
	for (uint64_t k = 1; k <= 64; k++) {
		assert_int_equal(at_stack_ids_get(s, k << 40, &id), 0);
		assert_int_equal(id, (uint32_t)k);
	}
}

static void test_growth(void **state)
{
	struct at_stack_ids *s = *state;
	uint32_t id, first_cap = s->cap;

	for (uint32_t i = 1; i <= 100000; i++) {
		assert_int_equal(at_stack_ids_get(s, (uint64_t)i * 0x9e3779b97f4a7c15ull, &id), 1);
		assert_int_equal(id, i);
	}
	assert_true(s->cap > first_cap);
	assert_true((uint64_t)s->count * 4 <= (uint64_t)s->cap * 3);
	for (uint32_t i = 1; i <= 100000; i++) {
		assert_int_equal(at_stack_ids_get(s, (uint64_t)i * 0x9e3779b97f4a7c15ull, &id), 0);
		assert_int_equal(id, i);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_order_of_first_appearance, setup, teardown),
		cmocka_unit_test_setup_teardown(test_same_slot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_growth, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
