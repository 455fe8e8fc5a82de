/* test_report_sites.c: unit tests of report/sites.c, each allocation's site named once: the
 * line of each (stack, function), the same entry every time, the function alone without a
 * stack, two lines of one function two sites of one folded line, an unknown stack refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../report/sites.h"
#include "../../report/stacks.h"

static void ignore_problem(void *arg, const char *path, const char *why)
{
	(void)arg, (void)path, (void)why;
}

/* Two objects mapped by process 1, one of them again by process 2. pcs[0], the allocation function's entry, is not in a site's text (report/stacks.h). */
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
	int64_t key = rep_sites_site(x, &ev);

	assert_true(key >= 0);
	assert_int_equal(rep_sites_key(x, stack, func), key); /* the same key again */
	int64_t entry = rep_sites_line(x, stack, func);
	assert_int_equal(rep_sites_folded(x, key), entry);
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

/* Frames named with lines (frames of the test kind, named as NAMES records name them): a
 * function called from two lines of its caller makes two sites, one folded line. */
static void test_two_lines(void **state)
{
	static const struct at_frame_name names[] = {
		{ .pid = 1, .kind = AT_FRAME_TEST, .value = 10, .function = "f", .file = "/src/x.c",
		  .line = 10 },
		{ .pid = 1, .kind = AT_FRAME_TEST, .value = 12, .function = "f", .file = "/src/x.c",
		  .line = 12 },
		{ .pid = 1, .kind = AT_FRAME_TEST, .value = 99, .function = "main",
		  .file = "/src/main.c", .line = 7 },
	};
	struct at_stack stacks[] = {
		{ .id = 1, .pid = 1, .count = 3, .flags = AT_STACK_KINDS, .pcs = { 1, 10, 99 } },
		{ .id = 2, .pid = 1, .count = 3, .flags = AT_STACK_KINDS, .pcs = { 1, 12, 99 } },
		{ .id = 3, .pid = 1, .count = 3, .flags = AT_STACK_KINDS, .pcs = { 1, 10, 99 } },
	};
	static const char *const located[] = { "main (main.c:7);f (x.c:10);malloc",
					       "main (main.c:7);f (x.c:12);malloc" };
	struct rep_sites x;
	size_t len;

	(void)state;
	assert_int_equal(rep_sites_init(&x, REP_WEIGHT_ALLOC_COUNT, "/nonexistent", ignore_problem,
					NULL),
			 0);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		assert_int_equal(at_symbolizer_add_name(x.symbolizer, &names[i]), 0);
	for (size_t i = 0; i < sizeof(stacks) / sizeof(stacks[0]); i++) {
		memset(stacks[i].kinds, AT_FRAME_TEST, sizeof(stacks[i].kinds));
		assert_int_equal(rep_sites_stack(&x, &stacks[i]), 0);
	}
	/* stacks 1 and 3 are one site: the same frames at the same lines */
	int64_t keys[3];
	for (uint32_t id = 1; id <= 3; id++) {
		keys[id - 1] = rep_sites_key(&x, id, AT_MALLOC);
		assert_int_equal(rep_sites_line(&x, id, AT_MALLOC), 0);
	}
	assert_int_equal(keys[0], 0);
	assert_int_equal(keys[1], 1);
	assert_int_equal(keys[2], 0);
	assert_int_equal(rep_folded_count(x.located), 2);
	for (int k = 0; k < 2; k++) {
		const char *text = rep_folded_text(x.located, k, &len);
		assert_int_equal(len, strlen(located[k]));
		assert_memory_equal(text, located[k], len);
	}
	assert_int_equal(rep_folded_count(x.folded), 1);
	assert_string_equal(rep_folded_text(x.folded, 0, &len), "main;f;malloc");
	/* the locations: stacks 1 and 3 hold the same two, root first */
	size_t n;
	unsigned flags;
	const uint32_t *a = rep_stacks_locations(x.stacks, 1, &n, &flags);
	assert_int_equal(n, 2);
	assert_int_equal(flags, AT_STACK_KINDS);
	const uint32_t *c = rep_stacks_locations(x.stacks, 3, &n, &flags);
	assert_memory_equal(a, c, 2 * sizeof(*a));
	const struct rep_location *l = rep_frames_location(&x.frames, a[1]);
	assert_int_equal(l->value, 10);
	assert_int_equal(l->count, 1);
	assert_string_equal(rep_frames_line(&x.frames, l, 0)->function, "f");
	assert_int_equal(rep_frames_line(&x.frames, l, 0)->line, 10);
	assert_int_equal(x.frames.nlocations, 3);
	assert_int_equal(x.frames.nframes, 3);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_site_text),
		cmocka_unit_test(test_two_lines),
		cmocka_unit_test(test_unknown_stack),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
