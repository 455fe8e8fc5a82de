/* test_lib_ranges.c: unit tests of lib/ranges.c: given cases of replacement (a range over
 * the end, the start, the middle of others, several at once, another process untouched), then
 * random puts and lookups against a list that replaces by scanning every range, as the
 * symbolizer did before; and 100,000 ranges put in decreasing order (a list or an unbalanced
 * tree would take seconds). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "ranges.h"

static void put(struct at_ranges *t, uint32_t pid, uint64_t start, uint64_t end, uintptr_t v)
{
	struct at_range r = { pid, start, end, 0, (void *)v };

	assert_int_equal(at_ranges_put(t, &r), 0);
}

/* The value of the range holding addr of pid, 0 for none. */
static uintptr_t value_at(const struct at_ranges *t, uint32_t pid, uint64_t addr)
{
	const struct at_range *r = at_ranges_find(t, pid, addr);

	return r ? (uintptr_t)r->value : 0;
}

struct lookup_case {
	uint32_t pid;
	uint64_t addr;
	uintptr_t want;
};

static void test_given(void **state)
{
	struct at_ranges *t = at_ranges_new();
	static const struct lookup_case cases[] = {
		{ 1, 0x0fff, 0 }, { 1, 0x1000, 1 }, { 1, 0x1fff, 1 }, { 1, 0x2000, 0 },
		{ 1, 0x3000, 5 }, /* 3 and 4 replaced by 5 */
		{ 1, 0x4fff, 5 }, { 1, 0x5000, 0 }, { 1, 0x8000, 6 }, { 1, 0x9000, 0 },
		{ 2, 0x3000, 7 }, /* another process keeps its own */
		{ 3, 0x3000, 0 }, { 0, 0x3000, 0 },
	};

	(void)state;
	assert_non_null(t);
	struct at_range empty = { 1, 0x10, 0x10, 0, NULL };
	assert_int_equal(at_ranges_put(t, &empty), -1);
	assert_int_equal(errno, EINVAL);
	put(t, 1, 0x1000, 0x2000, 1);
	put(t, 1, 0x2800, 0x3800, 3);  /* reaches into 5 from before it */
	put(t, 1, 0x4000, 0x4800, 4);  /* inside 5 */
	put(t, 2, 0x2000, 0x6000, 7);
	put(t, 1, 0x7000, 0xa000, 8);
	put(t, 1, 0x8000, 0x9000, 6);  /* inside 8: 8 goes, 6 stays */
	put(t, 1, 0x3000, 0x5000, 5);
	assert_int_equal(at_ranges_count(t), 4);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(value_at(t, cases[i].pid, cases[i].addr), cases[i].want);
	at_ranges_free(t);
	at_ranges_free(NULL);
}

/* The replacement rule by scanning: what the treap must agree with. */
struct slow {
	struct at_range v[4096];
	size_t n;
};

static void slow_put(struct slow *s, const struct at_range *r)
{
	size_t kept = 0;

	for (size_t i = 0; i < s->n; i++)
		if (!(s->v[i].pid == r->pid && s->v[i].start < r->end && r->start < s->v[i].end))
			s->v[kept++] = s->v[i];
	s->n = kept;
	s->v[s->n++] = *r;
}

static uintptr_t slow_value(const struct slow *s, uint32_t pid, uint64_t addr)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].pid == pid && s->v[i].start <= addr && addr < s->v[i].end)
			return (uintptr_t)s->v[i].value;
	return 0;
}

static void test_random_against_scan(void **state)
{
	static struct slow slow;
	struct at_ranges *t = at_ranges_new();
	uint64_t rng = 88172645463325252ull;

	(void)state;
	slow.n = 0;
	for (uintptr_t k = 1; k <= 3000; k++) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		uint32_t pid = (uint32_t)(rng % 3);
		uint64_t start = (rng >> 8) % 4096, len = 1 + (rng >> 24) % 64;
		struct at_range r = { pid, start, start + len, 0, (void *)k };
		assert_int_equal(at_ranges_put(t, &r), 0);
		slow_put(&slow, &r);
		assert_int_equal(at_ranges_count(t), slow.n);
		for (int q = 0; q < 8; q++) {
			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			uint32_t qpid = (uint32_t)(rng % 4);
			uint64_t addr = (rng >> 8) % 4200;
			assert_int_equal(value_at(t, qpid, addr), slow_value(&slow, qpid, addr));
		}
	}
	at_ranges_free(t);
}

static void test_many_in_decreasing_order(void **state)
{
	struct at_ranges *t = at_ranges_new();

	(void)state;
	for (uint64_t k = 100000; k > 0; k--)
		put(t, 1, k * 0x10000, k * 0x10000 + 0x8000, (uintptr_t)k);
	assert_int_equal(at_ranges_count(t), 100000);
	for (uint64_t k = 1; k <= 100000; k += 997) {
		assert_int_equal(value_at(t, 1, k * 0x10000 + 0x7fff), k);
		assert_int_equal(value_at(t, 1, k * 0x10000 + 0x8000), 0);
	}
	put(t, 1, 0x10000, 100001ull * 0x10000, 7); /* one over all of them */
	assert_int_equal(at_ranges_count(t), 1);
	assert_int_equal(value_at(t, 1, 50000ull * 0x10000), 7);
	at_ranges_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_given),
		cmocka_unit_test(test_random_against_scan),
		cmocka_unit_test(test_many_in_decreasing_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
