/* test_lib_atz_live.c: unit tests of lib/atz_live.c, the live tables of the 2.2 model and the
 * writer's block index, each against a plain model (a list, an array searched end to end) on
 * tables of operation patterns: releases of the newest, the oldest, random blocks and blocks
 * near the last release; churn that packs the slots, growth that doubles them, the cap. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "atz_live.h"
#include "atz_state.h"

static struct atz_pool pool; /* every table's memory */

static uint64_t rng_state = 777;
static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* The plain model of a table: the live blocks' addresses oldest first, with the slot the
 * table told us each is in. */
struct model {
	uint64_t *addr;
	uint32_t *slot;
	size_t n;
	size_t moves, drops;
};

static size_t model_find(const struct model *m, uint64_t addr)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->addr[i] == addr)
			return i;
	fail_msg("block 0x%llx is not in the model", (unsigned long long)addr);
	return 0;
}

static void model_take(struct model *m, size_t i)
{
	memmove(m->addr + i, m->addr + i + 1, (m->n - i - 1) * sizeof(*m->addr));
	memmove(m->slot + i, m->slot + i + 1, (m->n - i - 1) * sizeof(*m->slot));
	m->n--;
}

/* The table's callback: a block moved to another slot, or was dropped (then the oldest). */
static void follow(void *arg, uint64_t addr, uint32_t from, uint32_t to)
{
	struct model *m = arg;
	size_t i = model_find(m, addr);

	assert_int_equal(m->slot[i], from);
	if (to == ATZ_LIVE_DROPPED) {
		assert_int_equal(i, 0);
		model_take(m, 0);
		m->drops++;
	} else {
		assert_true(to < from);
		m->slot[i] = to;
		m->moves++;
	}
}

/* Every rank and slot of the table agrees with the model. */
static void check_all(const struct atz_live *t, const struct model *m)
{
	assert_int_equal(t->count, m->n);
	for (size_t i = 0; i < m->n; i++) {
		assert_int_equal(t->block[m->slot[i]].addr, m->addr[i]);
		assert_int_equal(atz_live_rank(t, m->slot[i]), i);
		assert_int_equal(atz_live_slot(t, (uint32_t)i), m->slot[i]);
	}
}

static void append(struct atz_live *t, struct model *m, uint64_t addr)
{
	uint32_t slot;

	assert_int_equal(atz_live_append(t, &pool, addr, addr / 16, &slot, follow, m), 0);
	m->addr[m->n] = addr;
	m->slot[m->n++] = slot;
	assert_int_equal(t->block[slot].size, addr / 16);
}

/* Releases the block of model index i the way a reader does: by rank, its slot found from
 * it (and checked against the writer's way, rank from slot). */
static void release(struct atz_live *t, struct model *m, size_t i)
{
	uint32_t slot = atz_live_slot(t, (uint32_t)i);

	assert_int_equal(slot, m->slot[i]);
	assert_int_equal(atz_live_rank(t, slot), i);
	atz_live_remove(t, slot, (uint32_t)i);
	model_take(m, i);
}

enum pattern { NEWEST, OLDEST, RANDOM, NEAR_LAST, CHURN };

/* Which live block a pattern releases; last is the index of the last one released. */
static size_t pick(enum pattern p, const struct model *m, size_t last)
{
	switch (p) {
	case NEWEST:
		return m->n - 1 - (size_t)(rnd() % (m->n < 40 ? m->n : 40));
	case OLDEST:
		return (size_t)(rnd() % (m->n < 3 ? m->n : 3));
	case NEAR_LAST: {
		long i = (long)last + (long)(rnd() % 17) - 8;
		return i < 0 ? 0 : (size_t)i >= m->n ? m->n - 1 : (size_t)i;
	}
	case CHURN:
		return rnd() % 8 ? m->n - 1 : (size_t)(rnd() % m->n);
	default:
		return (size_t)(rnd() % m->n);
	}
}

/* Patterns of appends and releases against the model: the live blocks grow to about `keep`,
 * with `steps` operations in all; every rank is checked every `check_every` steps. */
static void test_patterns(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		enum pattern p;
		size_t keep, steps, check_every;
		size_t min_moves; /* the slots were packed */
	} cases[] = {
		{ "newest released first", NEWEST, 300, 20000, 97, 1 },
		{ "oldest released first", OLDEST, 300, 20000, 97, 1 },
		{ "random blocks", RANDOM, 2000, 40000, 997, 1 },
		{ "near the last release", NEAR_LAST, 1500, 40000, 997, 1 },
		{ "churn over few live blocks", CHURN, 10, 50000, 101, 1 },
		{ "growth to many live blocks", RANDOM, 30000, 60000, 20011, 1 },
		{ "empty and refilled", CHURN, 1, 5000, 7, 0 },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct atz_live t = { 0 };
		struct model m = { calloc(cases[c].steps + 1, 8), calloc(cases[c].steps + 1, 4), 0,
				   0, 0 };
		size_t last = 0;
		uint64_t next_addr = 0x1000;

		for (size_t s = 0; s < cases[c].steps; s++) {
			int grow = m.n == 0 || (m.n < cases[c].keep ? rnd() % 4 != 0 : rnd() % 2);
			if (grow) {
				append(&t, &m, next_addr);
				next_addr += 16 * (1 + rnd() % 4);
			} else {
				last = pick(cases[c].p, &m, last);
				release(&t, &m, last);
			}
			if (s % cases[c].check_every == 0)
				check_all(&t, &m);
		}
		check_all(&t, &m);
		while (m.n) /* everything out, from the middle */
			release(&t, &m, m.n / 2);
		check_all(&t, &m);
		assert_true(m.moves >= cases[c].min_moves);
		assert_int_equal(m.drops, 0);
		atz_live_free(&t, &pool);
		assert_int_equal(t.cap, 0);
		free(m.addr);
		free(m.slot);
	}
}

/* A table holds ATZ_LIVE_CAP blocks: each block more drops the oldest first (told to the
 * callback in order), and the ranks stay right through drops and releases. */
static void test_cap(void **state)
{
	(void)state;
	enum { MORE = 1000 };
	struct atz_live t = { 0 };
	struct model m = { calloc(ATZ_LIVE_CAP + MORE, 8), calloc(ATZ_LIVE_CAP + MORE, 4), 0, 0,
			   0 };

	for (uint64_t i = 0; i < ATZ_LIVE_CAP + MORE; i++) {
		append(&t, &m, 0x10 * (i + 1));
		if (i % 5000 == 0)
			check_all(&t, &m);
		if (i == ATZ_LIVE_CAP + MORE / 2) /* a release among the drops */
			release(&t, &m, 12345);
	}
	assert_int_equal(m.drops, MORE - 1);
	assert_int_equal(m.addr[0], 0x10 * MORE); /* the oldest MORE - 1 went */
	check_all(&t, &m);
	assert_true(t.cap <= 2 * ATZ_LIVE_CAP);
	atz_live_free(&t, &pool);
	free(m.addr);
	free(m.slot);
}

/* A table's memory follows its live blocks: one block takes a few dozen bytes of the pool,
 * 1,000 about 16 KiB; all of it goes back when the table is freed. */
static void test_small_tables(void **state)
{
	(void)state;
	struct atz_live t = { 0 };
	struct model m = { calloc(1000, 8), calloc(1000, 4), 0, 0, 0 };

	append(&t, &m, 0x1000);
	assert_true(pool.bytes <= 96);
	release(&t, &m, 0);
	append(&t, &m, 0x2000);
	append(&t, &m, 0x3000);
	check_all(&t, &m);
	assert_true(pool.bytes <= 96);
	for (uint64_t i = 0; i < 998; i++)
		append(&t, &m, 0x10000 + 16 * i);
	check_all(&t, &m);
	assert_true(pool.bytes <= 1024 * 16 + 4096);
	atz_live_free(&t, &pool);
	assert_int_equal(pool.bytes, 0);
	free(m.addr);
	free(m.slot);
}

/* The index against an array searched end to end: puts (new keys and overwrites), finds of
 * present and absent keys, removals that shift the runs of linear probing back, over growth,
 * with the same addresses in several processes. */
static void test_index(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		size_t keys, steps;
		unsigned pids;
		uint64_t spread; /* addresses: 16 * (1 .. spread) */
	} cases[] = {
		{ "few keys, many overwrites", 50, 20000, 1, 64 },
		{ "one process, growth", 20000, 60000, 1, 1u << 20 },
		{ "same addresses in many processes", 5000, 40000, 40, 256 },
		{ "dense addresses, long runs", 3000, 40000, 2, 4096 },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct atz_index ix = { 0 };
		struct { uint64_t addr; uint32_t pid, thread, slot; } *v =
			calloc(cases[c].steps, sizeof(*v));
		size_t n = 0;

		for (size_t s = 0; s < cases[c].steps; s++) {
			uint32_t pid = (uint32_t)(rnd() % cases[c].pids);
			uint64_t addr = 16 * (1 + rnd() % cases[c].spread);
			size_t i = 0;
			while (i < n && (v[i].addr != addr || v[i].pid != pid))
				i++;
			struct atz_owner *e = atz_index_find(&ix, pid, addr);
			assert_true((e != NULL) == (i < n));
			if (e) {
				assert_int_equal(e->thread, v[i].thread);
				assert_int_equal(e->slot, v[i].slot);
				assert_int_equal(e->cls, v[i].thread ^ v[i].slot);
			}
			if (e && (n >= cases[c].keys || rnd() % 2)) {
				atz_index_remove(&ix, e);
				v[i] = v[--n];
			} else {
				uint32_t th = (uint32_t)rnd(), sl = (uint32_t)rnd();
				assert_int_equal(atz_index_put(&ix, pid, addr, th, sl, th ^ sl), 0);
				if (i == n)
					n++;
				v[i].addr = addr;
				v[i].pid = pid;
				v[i].thread = th;
				v[i].slot = sl;
			}
			assert_int_equal(ix.count, n);
		}
		for (size_t i = 0; i < n; i++) {
			struct atz_owner *e = atz_index_find(&ix, v[i].pid, v[i].addr);
			assert_non_null(e);
			assert_int_equal(e->slot, v[i].slot);
		}
		/* cleared: every entry gone, the memory kept; put again, found again */
		size_t cap = ix.cap;

		atz_index_clear(&ix);
		assert_int_equal(ix.count, 0);
		assert_int_equal(ix.cap, cap);
		for (size_t i = 0; i < n; i++)
			assert_null(atz_index_find(&ix, v[i].pid, v[i].addr));
		for (size_t i = 0; i < n; i++)
			assert_int_equal(atz_index_put(&ix, v[i].pid, v[i].addr, v[i].thread,
						       v[i].slot, v[i].thread ^ v[i].slot), 0);
		for (size_t i = 0; i < n; i++)
			assert_int_equal(atz_index_find(&ix, v[i].pid, v[i].addr)->slot, v[i].slot);
		atz_index_free(&ix);
		assert_null(atz_index_find(&ix, 0, 16));
		free(v);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_patterns),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_small_tables),
		cmocka_unit_test(test_index),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
