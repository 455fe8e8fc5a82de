/* test_report_sites.c: unit tests of report/sites.c, each allocation's site named once: the
 * line of each (stack, function), the same entry every time, the function alone without a
 * stack, an unknown stack refused, the trace's objects kept once per path and build-id. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../report/sites.h"

static void ignore_problem(void *arg, const char *path, const char *why)
{
	(void)arg, (void)path, (void)why;
}

/* Two objects mapped by process 1, one of them again by process 2 (one object: kept once).
 * pcs[0], the allocation function's entry, is not in a site's text (report/stacks.h). */
static void setup_trace(struct rep_sites *x)
{
	static const struct at_mapping maps[] = {
		{ .pid = 1, .start = 0x1000, .end = 0x2000, .offset = 0, .path = "/nonexistent/a.so" },
		{ .pid = 1, .start = 0x5000, .end = 0x6000, .offset = 0x2000,
		  .path = "/nonexistent/b.so" },
		{ .pid = 2, .start = 0x7000, .end = 0x8000, .offset = 0, .path = "/nonexistent/a.so" },
	};
	static const struct at_stack stacks[] = {
		{ .id = 1, .pid = 1, .count = 3, .pcs = { 0x1000, 0x1100, 0x5010 } },
		{ .id = 2, .pid = 2, .count = 2, .pcs = { 0x7000, 0x7040 } },
	};

	assert_int_equal(rep_sites_init(x, REP_WEIGHT_ALLOC_COUNT, "/nonexistent", ignore_problem,
					NULL),
			 0);
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		assert_int_equal(rep_sites_mapping(x, &maps[i]), 0);
	for (size_t i = 0; i < sizeof(stacks) / sizeof(stacks[0]); i++)
		assert_int_equal(rep_sites_stack(x, &stacks[i]), 0);
}

/* The text of the site of func on stack (0: none). */
static void check_site(struct rep_sites *x, uint32_t stack, uint8_t func, const char *want)
{
	struct at_event ev = { .pid = 1, .tid = 1, .func = func, .stack = stack };
	size_t len = 0;
	int64_t entry = rep_sites_site(x, &ev);

	assert_true(entry >= 0);
	assert_int_equal(rep_sites_line(x, stack, func), entry); /* the same line again */
	const char *text = rep_folded_text(x->folded, entry, &len);
	assert_non_null(text);
	assert_int_equal(len, strlen(want));
	assert_memory_equal(text, want, len);
}

static const struct {
	uint32_t stack;
	uint8_t func;
	const char *want;
} sites[] = {
	{ 1, AT_MALLOC, "b.so+0x2010;a.so+0x100;malloc" },
	{ 1, AT_CALLOC, "b.so+0x2010;a.so+0x100;calloc" },
	{ 2, AT_MALLOC, "a.so+0x40;malloc" },
	{ 0, AT_MALLOC, "malloc" },
	{ 0, AT_POSIX_MEMALIGN, "posix_memalign" },
};

/* Each (stack, function) has its line, the callers' text then the function; one entry each. */
static void test_site_text(void **state)
{
	struct rep_sites x;

	(void)state;
	setup_trace(&x);
	for (size_t i = 0; i < sizeof(sites) / sizeof(sites[0]); i++)
		check_site(&x, sites[i].stack, sites[i].func, sites[i].want);
	assert_int_equal(rep_folded_count(x.folded), sizeof(sites) / sizeof(sites[0]));
	rep_sites_forget_entries(&x); /* the entries found again, the same lines */
	for (size_t i = 0; i < sizeof(sites) / sizeof(sites[0]); i++)
		check_site(&x, sites[i].stack, sites[i].func, sites[i].want);
	assert_int_equal(rep_folded_count(x.folded), sizeof(sites) / sizeof(sites[0]));
	rep_sites_free(&x);
}

/* A stack no record defined has no site: ENOENT, and no line made. */
static void test_unknown_stack(void **state)
{
	struct rep_sites x;
	struct at_event ev = { .pid = 1, .tid = 1, .func = AT_MALLOC, .stack = 9 };

	(void)state;
	setup_trace(&x);
	errno = 0;
	assert_int_equal(rep_sites_site(&x, &ev), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(rep_folded_count(x.folded), 0);
	rep_sites_free(&x);
}

/* The trace's objects: one mapping record per path and build-id, the first seen. */
static void test_objects(void **state)
{
	struct rep_sites x;

	(void)state;
	setup_trace(&x);
	assert_int_equal(x.nobjects, 2);
	assert_string_equal(x.objects[0].path, "/nonexistent/a.so");
	assert_int_equal(x.objects[0].pid, 1);
	assert_string_equal(x.objects[1].path, "/nonexistent/b.so");
	assert_int_equal(x.objects[1].offset, 0x2000);
	rep_sites_free(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_site_text),
		cmocka_unit_test(test_unknown_stack),
		cmocka_unit_test(test_objects),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
