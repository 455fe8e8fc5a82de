/* test_munge_idmap.c: unit tests of munge/idmap.c, the reference munge's id table, against a
 * naive model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../munge/idmap.h"

/* A naive model of IdMapping: keys and ids in arrays, released ids in a FIFO array. */
#define MODEL_MAX 70000
static struct {
	int64_t key[MODEL_MAX];
	uint64_t id[MODEL_MAX];
	unsigned n;
	uint64_t fifo[MODEL_MAX * 4];
	unsigned head, tail;
	uint64_t next;
} model;

static uint64_t model_get(int64_t key)
{
	for (unsigned i = 0; i < model.n; i++)
		if (model.key[i] == key)
			return model.id[i];
	uint64_t id = model.head < model.tail ? model.fifo[model.head++] : model.next++;
	model.key[model.n] = key;
	model.id[model.n++] = id;
	return id;
}

static int model_release(int64_t key, uint64_t *id)
{
	for (unsigned i = 0; i < model.n; i++) {
		if (model.key[i] == key) {
			*id = model.id[i];
			model.fifo[model.tail++] = *id;
			model.key[i] = model.key[--model.n];
			model.id[i] = model.id[model.n];
			return 1;
		}
	}
	return 0;
}

/* Random gets and releases over a key range that forces collisions, table growth and ring
 * growth; every answer must match the model. */
static void test_idmap_against_model(void **state)
{
	(void)state;
	struct at_idmap m;
	uint64_t x = 12345;

	at_idmap_init(&m);
	memset(&model, 0, sizeof(model));
	model.next = 1;
	for (unsigned step = 0; step < 60000; step++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* keys: multiples of 16 (addresses) and a few negatives, from a range that grows */
		int64_t key = (int64_t)((x >> 8) % (1000 + step / 10)) * 16;
		if ((x & 31) == 0)
			key = -key;
		int neg = key < 0;
		uint64_t mag = neg ? (uint64_t)-key : (uint64_t)key;
		if ((x >> 40) % 100 < 55) {
			uint64_t want = model_get(key);
			assert_int_equal(at_idmap_get(&m, neg, mag), want);
		} else {
			uint64_t got = 0, want = 0;
			int had = model_release(key, &want);
			assert_int_equal(at_idmap_release(&m, neg, mag, &got), had);
			if (had)
				assert_int_equal(got, want);
		}
		assert_int_equal(m.count, model.n);
		assert_int_equal(at_idmap_waiting(&m), model.tail - model.head);
	}
	for (unsigned i = 0; i < model.n; i++) {
		int64_t k = model.key[i];
		assert_true(at_idmap_contains(&m, k < 0, k < 0 ? (uint64_t)-k : (uint64_t)k));
	}
	assert_false(at_idmap_contains(&m, 0, 8)); /* keys are multiples of 16 */
	at_idmap_free(&m);
}

/* A table grown past 4 MiB (the huge-page mapping) keeps every id; released ids come back
 * in release order. */
static void test_idmap_large(void **state)
{
	(void)state;
	struct at_idmap m;
	const uint64_t n = 150000;
	uint64_t id;

	at_idmap_init(&m);
	for (uint64_t i = 0; i < n; i++)
		assert_int_equal(at_idmap_get(&m, 0, 0x7f0000000000 + 48 * i), i + 1);
	assert_true((m.mask + 1) * sizeof(struct at_idmap_slot) >= (4u << 20));
	for (uint64_t i = 0; i < n; i++)
		assert_int_equal(at_idmap_get(&m, 0, 0x7f0000000000 + 48 * i), i + 1);
	for (uint64_t i = 1; i < n; i += 2) {
		assert_int_equal(at_idmap_release(&m, 0, 0x7f0000000000 + 48 * i, &id), 1);
		assert_int_equal(id, i + 1);
	}
	assert_int_equal(at_idmap_release(&m, 0, 0x7f0000000000 + 48, &id), 0);
	for (uint64_t i = 1; i < n; i += 2)
		assert_int_equal(at_idmap_get(&m, 1, 48 * i), i + 1); /* negative keys now */
	assert_int_equal(at_idmap_get(&m, 0, 1), n + 1);
	assert_int_equal(m.count, n + 1);
	at_idmap_free(&m);
}

/* Tables start at 8 slots; one that grew is given back when its last key is released, and the
 * ids go on as if it had stayed: the oldest released first, then the counter. */
static void test_idmap_small_then_given_back(void **state)
{
	(void)state;
	struct at_idmap m;
	uint64_t id;

	at_idmap_init(&m);
	assert_int_equal(at_idmap_get(&m, 0, 0x1000), 1);
	assert_int_equal(m.mask + 1, 8);
	for (uint64_t k = 1; k < 100; k++)
		assert_int_equal(at_idmap_get(&m, 0, 0x1000 + 16 * k), k + 1);
	assert_true(m.mask + 1 >= 256);
	for (uint64_t k = 100; k-- > 0;) {
		assert_int_equal(at_idmap_release(&m, 0, 0x1000 + 16 * k, &id), 1);
		assert_int_equal(id, k + 1);
	}
	assert_null(m.slots);
	assert_int_equal(m.mask, 0);
	assert_int_equal(at_idmap_waiting(&m), 100);
	assert_false(at_idmap_contains(&m, 0, 0x1000));
	assert_int_equal(at_idmap_release(&m, 0, 0x1000, &id), 0);
	assert_int_equal(at_idmap_get(&m, 0, 0x9000), 100); /* released first */
	assert_int_equal(at_idmap_get(&m, 0, 0x9010), 99);
	assert_int_equal(m.mask + 1, 8);
	for (uint64_t k = 0; k < 98; k++)
		at_idmap_get(&m, 1, 16 * k);
	assert_int_equal(at_idmap_get(&m, 0, 0xa000), 101); /* the counter goes on */
	/* a table of 8 slots emptied is kept */
	at_idmap_free(&m);
	at_idmap_init(&m);
	assert_int_equal(at_idmap_get(&m, 0, 0x10), 1);
	assert_int_equal(at_idmap_release(&m, 0, 0x10, &id), 1);
	assert_non_null(m.slots);
	assert_int_equal(at_idmap_get(&m, 0, 0x20), 1);
	at_idmap_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idmap_against_model),
		cmocka_unit_test(test_idmap_large),
		cmocka_unit_test(test_idmap_small_then_given_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
