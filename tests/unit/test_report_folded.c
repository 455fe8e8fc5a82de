/* test_report_folded.c: unit tests of report/folded.c: interning, saturating sums, the
 * sorted output (bytewise, prefixes first, weight-0 lines left out), growth past many
 * entries, write errors. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../report/folded.h"

/* What f writes, in a malloc'ed string. */
static char *written(struct rep_folded *f)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *out = open_memstream(&buf, &n);

	assert_non_null(out);
	assert_int_equal(rep_folded_write(f, out), 0);
	fclose(out);
	return buf;
}

static void test_lines(void **state)
{
	static const struct {
		const char *stack;
		uint64_t weight;
	} adds[] = {
		{ "main;b;malloc", 3 },
		{ "main;a;malloc", 1 },
		{ "main;b;malloc", 4 },
		{ "main", 2 },
		{ "main;a", 5 },
		{ "Z;malloc", 1 },
		{ "main;zero;malloc", 0 },
		{ "main;a;calloc", UINT64_MAX - 1 },
		{ "main;a;calloc", 5 },
	};
	static const char want[] = "Z;malloc 1\n"
				   "main 2\n"
				   "main;a 5\n"
				   "main;a;calloc 18446744073709551615\n"
				   "main;a;malloc 1\n"
				   "main;b;malloc 7\n";
	struct rep_folded *f = rep_folded_new();
	char *got;

	(void)state;
	assert_non_null(f);
	for (size_t i = 0; i < sizeof(adds) / sizeof(adds[0]); i++) {
		int64_t e = rep_folded_intern(f, adds[i].stack, strlen(adds[i].stack));

		assert_true(e >= 0);
		rep_folded_add(f, e, adds[i].weight);
	}
	assert_int_equal(rep_folded_count(f), 7);
	got = written(f);
	assert_string_equal(got, want);
	free(got);
	/* the table still works after a write */
	rep_folded_add(f, rep_folded_intern(f, "main", 4), 1);
	assert_int_equal(rep_folded_count(f), 7);
	got = written(f);
	assert_non_null(strstr(got, "\nmain 3\n"));
	free(got);
	rep_folded_free(f);
}

/* Interning only looks at the len bytes given, and two texts of one prefix are distinct. */
static void test_intern(void **state)
{
	struct rep_folded *f = rep_folded_new();

	(void)state;
	int64_t a = rep_folded_intern(f, "a;bXYZ", 3);
	int64_t b = rep_folded_intern(f, "a;b", 3);
	int64_t c = rep_folded_intern(f, "a;", 2);
	assert_int_equal(a, b);
	assert_true(c != a);
	assert_int_equal(rep_folded_count(f), 2);
	rep_folded_free(f);
}

/* Many distinct stacks: each counted once, all written, in order. */
static void test_many(void **state)
{
	enum { N = 20000 };
	struct rep_folded *f = rep_folded_new();
	char text[32], *got, *line;
	unsigned prev = 0, lines = 0;

	(void)state;
	for (int round = 0; round < 2; round++)
		for (unsigned i = 0; i < N; i++) {
			int n = snprintf(text, sizeof(text), "s%08u;malloc", i);
			rep_folded_add(f, rep_folded_intern(f, text, (size_t)n), i + 1);
		}
	assert_int_equal(rep_folded_count(f), N);
	got = written(f);
	for (line = strtok(got, "\n"); line; line = strtok(NULL, "\n"), lines++) {
		unsigned i;
		uint64_t w;

		assert_int_equal(sscanf(line, "s%08u;malloc %" SCNu64, &i, &w), 2);
		assert_int_equal(i, lines);
		assert_int_equal(w, 2 * (uint64_t)(i + 1));
		assert_true(lines == 0 || i > prev);
		prev = i;
	}
	assert_int_equal(lines, N);
	free(got);
	rep_folded_free(f);
}

static void test_write_error(void **state)
{
	struct rep_folded *f = rep_folded_new();
	FILE *full = fopen("/dev/full", "w");

	(void)state;
	assert_non_null(full);
	rep_folded_add(f, rep_folded_intern(f, "main;malloc", 11), 1);
	errno = 0;
	assert_int_equal(rep_folded_write(f, full), -1);
	assert_int_equal(errno, ENOSPC);
	fclose(full);
	rep_folded_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_intern),
		cmocka_unit_test(test_many),
		cmocka_unit_test(test_write_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
