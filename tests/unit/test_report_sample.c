/* test_report_sample.c: unit tests of report/sample.c, table-driven: what a sampled allocation
 * stands for (pprof's scaling: 1/p allocations and s/p bytes, p = 1 - exp(-s/N)), its bytes
 * against figures computed independently (tests/sample_check.py's Python, on real traces), and
 * its count: 1/p rounded down or up, up as often as the fraction says over many keys. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../report/sample.h"

static void test_bytes(void **state)
{
	static const struct {
		uint64_t size, n, bytes;
		double scale;
	} cases[] = {
		{ 64, 65536, 65568, 1024.5001627 },
		{ 1024, 65536, 66049, 64.50130 },
		{ 16384, 65536, 74069, 4.520812 },
		{ 262144, 65536, 267035, 1.018657 },
		{ 64, 524288, 524320, 8192.5000203 },
		{ 4294967296ull, 1, 4294967296ull, 1.0 }, /* always sampled: itself */
		{ 0, 4096, 0, 1.0 },                      /* never sampled; itself if recorded */
		{ 100, 0, 100, 1.0 },                     /* not a sampled trace */
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rep_estimate e = rep_sample_estimate(cases[i].size, cases[i].n, i);
		assert_int_equal(e.bytes, cases[i].bytes);
		assert_true(fabs(rep_sample_scale(cases[i].size, cases[i].n) - cases[i].scale) <
			    1e-5 * cases[i].scale);
		if (cases[i].scale == 1.0)
			assert_int_equal(e.count, 1);
	}
}

/* Counts: each floor(1/p) or one more, one more in the fraction's share of 1,000,000 keys (a
 * mix of them: their share within 0.3% of the fraction, far past what the 64-bit mix could
 * miss). */
static void test_counts(void **state)
{
	static const struct {
		uint64_t size, n;
	} cases[] = { { 64, 65536 }, { 1024, 65536 }, { 16384, 65536 }, { 100000, 65536 } };
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double w = rep_sample_scale(cases[i].size, cases[i].n), whole = floor(w);
		uint64_t up = 0, keys = 1000000;
		for (uint64_t k = 0; k < keys; k++) {
			struct rep_estimate e = rep_sample_estimate(cases[i].size, cases[i].n, k);
			assert_true(e.count == (uint64_t)whole || e.count == (uint64_t)whole + 1);
			up += e.count > (uint64_t)whole;
		}
		assert_true(fabs((double)up / (double)keys - (w - whole)) < 0.003);
	}
	/* the same key, the same count */
	assert_int_equal(rep_sample_estimate(64, 65536, 42).count,
			 rep_sample_estimate(64, 65536, 42).count);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bytes),
		cmocka_unit_test(test_counts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
