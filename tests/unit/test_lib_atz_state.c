/* test_lib_atz_state.c: unit tests of lib/atz_state.c: the pool of small blocks (classes, reuse,
 * zeroing, large blocks), the thread map against an array searched end to end (puts, finds,
 * removals that shift probe runs back, growth), and rings and freed rings whose storage grows
 * with their entries while keeping them in order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "atz_model.h"
#include "atz_state.h"

static uint64_t rng_state = 4242;
static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Blocks of every size class come back zeroed, a block put back is the next one of its class
 * given out, the bytes in use are counted by class size, large blocks are mappings. */
static void test_pool(void **state)
{
	(void)state;
	static const size_t sizes[] = { 1, 16, 17, 80, 208, 512, 513, 1024, 2076, 4096, 4097, 70000 };
	struct atz_pool p = { 0 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint8_t *a = atz_pool_get(&p, sizes[i]);
		assert_non_null(a);
		for (size_t j = 0; j < sizes[i]; j++)
			assert_int_equal(a[j], 0);
		memset(a, 0xab, sizes[i]);
		size_t used = p.bytes;
		assert_true(used >= sizes[i] && used <= 2 * sizes[i] + 15);
		atz_pool_put(&p, a, sizes[i]);
		assert_int_equal(p.bytes, 0);
		uint8_t *b = atz_pool_get(&p, sizes[i]);
		if (sizes[i] <= ATZ_POOL_SMALL_MAX)
			assert_ptr_equal(a, b);
		for (size_t j = 0; j < sizes[i]; j++)
			assert_int_equal(b[j], 0);
		atz_pool_put(&p, b, sizes[i]);
	}
	/* many small blocks: several chunks, all unmapped at the end */
	void *v[20000];
	for (size_t i = 0; i < 20000; i++)
		assert_non_null(v[i] = atz_pool_get(&p, 208));
	assert_int_equal(p.bytes, 20000 * 208);
	for (size_t i = 0; i < 20000; i += 2)
		atz_pool_put(&p, v[i], 208);
	assert_int_equal(p.bytes, 10000 * 208);
	atz_pool_free(&p);
	assert_null(p.chunks);
}

/* The map against an array: random puts, finds of present and absent keys, removals. */
static void test_tmap(void **state)
{
	(void)state;
	enum { KEYS = 3000, STEPS = 60000 };
	struct atz_tmap m = { 0 };
	struct atz_thread *things = calloc(KEYS, sizeof(*things));
	uint64_t *key = calloc(KEYS, sizeof(*key));
	size_t n = 0;

	assert_null(atz_tmap_find(&m, 5));
	atz_tmap_remove(&m, 5);
	for (size_t s = 0; s < STEPS; s++) {
		uint64_t k = rnd() % (KEYS * 2) * (s % 3 == 0 ? 1 : 0x100000001ull);
		size_t i = 0;
		while (i < n && key[i] != k)
			i++;
		struct atz_thread *t = atz_tmap_find(&m, k);
		assert_true((t != NULL) == (i < n));
		if (t) {
			assert_ptr_equal(t, &things[i]);
			if (n == KEYS || rnd() % 2) {
				atz_tmap_remove(&m, k);
				key[i] = key[n - 1];
				/* keep key i's state at things[i]: the moved key is put again */
				if (i != n - 1) {
					atz_tmap_remove(&m, key[i]);
					assert_int_equal(atz_tmap_put(&m, key[i], &things[i]), 0);
				}
				n--;
			}
		} else if (n < KEYS) {
			key[n] = k;
			assert_int_equal(atz_tmap_put(&m, k, &things[n]), 0);
			n++;
		}
		assert_int_equal(m.count, n);
	}
	for (size_t i = 0; i < n; i++)
		assert_ptr_equal(atz_tmap_find(&m, key[i]), &things[i]);
	size_t seen = 0;
	for (size_t i = 0; i < m.cap; i++)
		seen += atz_tmap_at(&m, i) != NULL;
	assert_int_equal(seen, n);
	/* cleared: every key gone, the memory kept, and the map as good as new */
	size_t cap = m.cap;

	atz_tmap_clear(&m);
	assert_int_equal(m.count, 0);
	assert_int_equal(m.cap, cap);
	for (size_t i = 0; i < n; i++)
		assert_null(atz_tmap_find(&m, key[i]));
	for (size_t i = 0; i < n; i++)
		assert_int_equal(atz_tmap_put(&m, key[i], &things[i]), 0);
	for (size_t i = 0; i < n; i++)
		assert_ptr_equal(atz_tmap_find(&m, key[i]), &things[i]);
	assert_int_equal(m.count, n);
	atz_tmap_free(&m);
	free(things);
	free(key);
}

/* A ring grows from nothing to its capacity as entries come, in order, through removals;
 * once full it drops the oldest. The freed ring likewise, with the writer's hints. */
static void test_rings_grow(void **state)
{
	(void)state;
	struct atz_pool p = { 0 };
	struct atz_thread *t = atz_thread_new(&p, 7, 9, 3);
	uint64_t model[ATZ_ALLOCS_CAP];
	uint32_t n = 0;

	assert_int_equal(t->entry, 3);
	for (uint64_t x = 1; x <= 200; x++) {
		assert_int_equal(atz_thread_reserve(&p, t, 0, 1), 0);
		assert_true(t->allocs.room <= ATZ_ALLOCS_CAP);
		if (x % 7 == 0 && n > 3) { /* remove entry 2 */
			RING_REMOVE(t->allocs, 2);
			memmove(model + 2, model + 3, (n - 3) * sizeof(*model));
			n--;
		}
		RING_PUSH(t->allocs, x);
		memmove(model + 1, model, (n < ATZ_ALLOCS_CAP ? n : n - 1) * sizeof(*model));
		model[0] = x;
		if (n < ATZ_ALLOCS_CAP)
			n++;
		assert_int_equal(t->allocs.count, n);
		for (uint32_t k = 0; k < n; k++)
			assert_int_equal(RING_GET(t->allocs, k), model[k]);
		assert_int_equal(RING_FIND(t->allocs, model[n - 1]), (int)n - 1);
	}
	assert_int_equal(t->allocs.room, ATZ_ALLOCS_CAP);
	assert_int_equal(t->releases.room, 2); /* one reserve in, each ring holds what it got */

	struct atz_thread *u = atz_thread_new(&p, 7, 10, 4);
	for (uint64_t x = 1; x <= 100; x++) {
		assert_int_equal(atz_thread_reserve(&p, u, 1, 1), 0);
		atz_freed_push(&u->freed, 16 * x, x % 3);
		uint32_t rank;
		assert_int_equal(atz_freed_find(&u->freed, x % 3, 16 * x, &rank), 0);
		if (x > 4) {
			uint64_t old = x - 4;
			assert_int_equal(atz_freed_find(&u->freed, old % 3, 16 * old, &rank), 4);
			assert_int_equal(rank, 1); /* x - 1 of the same class is newer */
		}
	}
	assert_int_equal(u->freed.room, ATZ_FREED_CAP);
	assert_int_equal(u->freed.count, ATZ_FREED_CAP);
	assert_int_equal(atz_freed_find(&u->freed, 36 % 3, 16 * 36, &n), -1); /* dropped */
	atz_thread_free(&p, t, 1);
	atz_thread_free(&p, u, 1);
	assert_int_equal(p.bytes, 0);
	atz_pool_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool),
		cmocka_unit_test(test_tmap),
		cmocka_unit_test(test_rings_grow),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
