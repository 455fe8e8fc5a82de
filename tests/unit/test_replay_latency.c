/* test_replay_latency.c: unit tests of replay/latency.c: the bucket of a time and the lowest
 * time of a bucket (table-driven, and round trips over every bucket), size classes, exact
 * percentiles on known inputs, merging. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../replay/latency.h"

static void test_buckets(void **state)
{
	(void)state;
	static const struct { uint64_t ns; unsigned bucket; uint64_t low; } cases[] = {
		{ 0, 0, 0 },     { 1, 1, 1 },      { 15, 15, 15 },   { 16, 16, 16 },
		{ 31, 31, 31 },  { 32, 32, 32 },   { 33, 32, 32 },   { 34, 33, 34 },
		{ 63, 47, 62 },  { 64, 48, 64 },   { 100, 57, 100 }, { 1000, 111, 992 },
		{ 1023, 111, 992 }, { 1024, 112, 1024 },
		{ UINT64_MAX, RP_LAT_BUCKETS - 1, UINT64_C(31) << 59 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(rp_lat_bucket(cases[i].ns), cases[i].bucket);
		assert_int_equal(rp_lat_bucket_low(cases[i].bucket), cases[i].low);
	}
	for (unsigned b = 0; b < RP_LAT_BUCKETS; b++) {
		uint64_t low = rp_lat_bucket_low(b);
		assert_int_equal(rp_lat_bucket(low), b);
		if (b + 1 < RP_LAT_BUCKETS) {
			assert_true(rp_lat_bucket_low(b + 1) > low);
			assert_int_equal(rp_lat_bucket(rp_lat_bucket_low(b + 1) - 1), b);
		}
	}
}

static void test_classes(void **state)
{
	(void)state;
	assert_int_equal(rp_lat_class(0), 0);
	assert_int_equal(rp_lat_class(1), 1);
	assert_int_equal(rp_lat_class(32), 6);
	assert_int_equal(rp_lat_class(63), 6);
	assert_int_equal(rp_lat_class(64), 7);
	assert_int_equal(rp_lat_class(UINT64_MAX), 64);
}

static void test_percentiles(void **state)
{
	(void)state;
	struct rp_latency l;

	assert_int_equal(rp_latency_init(&l, 0), 0);
	for (uint64_t v = 1; v <= 10; v++) /* 1..10 ns: exact buckets */
		rp_latency_add(&l, AT_MALLOC, 8, v);
	const struct rp_lat_cell *c = rp_lat_cell_of(&l, AT_MALLOC, 0);
	assert_int_equal(c->count, 10);
	assert_int_equal(c->sum, 55);
	assert_int_equal(c->max, 10);
	assert_int_equal(rp_lat_percentile(c, 0.5), 5);
	assert_int_equal(rp_lat_percentile(c, 0.9), 9);
	assert_int_equal(rp_lat_percentile(c, 0.99), 10);
	assert_int_equal(rp_lat_percentile(c, 0.1), 1);
	assert_int_equal(rp_lat_percentile(rp_lat_cell_of(&l, AT_FREE, 0), 0.5), 0);
	/* 999 calls of 20 ns and one of 5000: p99.9 is 20, max 5000 */
	for (int i = 0; i < 999; i++)
		rp_latency_add(&l, AT_FREE, 0, 20);
	rp_latency_add(&l, AT_FREE, 0, 5000);
	c = rp_lat_cell_of(&l, AT_FREE, 0);
	assert_int_equal(rp_lat_percentile(c, 0.999), 20);
	assert_int_equal(rp_lat_percentile(c, 1.0), 4864); /* 5000's bucket: within 1/16 */
	assert_int_equal(c->max, 5000);
	rp_latency_fini(&l);
}

static void test_sizes_and_merge(void **state)
{
	(void)state;
	struct rp_latency a, b;

	assert_int_equal(rp_latency_init(&a, 1), 0);
	assert_int_equal(rp_latency_init(&b, 1), 0);
	rp_latency_add(&a, AT_MALLOC, 40, 7);
	rp_latency_add(&b, AT_MALLOC, 40, 9);
	rp_latency_add(&b, AT_MALLOC, 4000, 100);
	rp_latency_merge(&a, &b);
	const struct rp_lat_cell *c = rp_lat_cell_of(&a, AT_MALLOC, rp_lat_class(40));
	assert_int_equal(c->count, 2);
	assert_int_equal(c->sum, 16);
	assert_int_equal(c->max, 9);
	assert_int_equal(c->bucket[7] + c->bucket[9], 2);
	assert_int_equal(rp_lat_cell_of(&a, AT_MALLOC, rp_lat_class(4000))->count, 1);
	assert_true(rp_clock_cost_ns() > 0);
	rp_latency_fini(&a);
	rp_latency_fini(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buckets),
		cmocka_unit_test(test_classes),
		cmocka_unit_test(test_percentiles),
		cmocka_unit_test(test_sizes_and_merge),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
