/* test_report_export.c: unit tests of report/export.c and report/stacks.c: given mappings,
 * stacks and events, the exact folded lines, by count and by bytes; truncated, incomplete and
 * stack-less events; unknown stacks; a stack record given again; and, on this program's own
 * code, inlined functions as frames of their own in root-first order. */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../report/export.h"
#include "procmaps.h"

static int problems;

static void count_problem(void *arg, const char *path, const char *why)
{
	(void)arg, (void)path, (void)why;
	problems++;
}

/* What x writes, in a malloc'ed string. */
static char *written(struct rep_sites *x)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *out = open_memstream(&buf, &n);

	assert_non_null(out);
	assert_int_equal(rep_export_write(x, out), 0);
	fclose(out);
	return buf;
}

struct test_event {
	uint8_t func;
	uint64_t arg0, arg1, result;
	uint32_t stack;
};

static void feed_events(struct rep_sites *x, const struct test_event *evs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct at_event ev = { .pid = 1, .tid = 1, .func = evs[i].func,
				       .has_result = evs[i].func != AT_FREE,
				       .arg = { evs[i].arg0, evs[i].arg1 },
				       .result = evs[i].result };

		assert_int_equal(rep_export_event(x, &ev, evs[i].stack), 0);
	}
}

static const struct {
	uint32_t pid;
	uint64_t start, end, offset;
	const char *path;
} maps[] = {
	{ 1, 0x1000, 0x2000, 0x0, "/nonexistent/a.so" },
	{ 1, 0x5000, 0x6000, 0x2000, "/nonexistent/b.so" },
	{ 2, 0x7000, 0x8000, 0x0, "/nonexistent/a.so" },
};

static const struct {
	uint32_t id, pid;
	uint16_t flags, count;
	uint64_t pcs[4];
} stacks[] = {
	{ 1, 1, 0, 3, { 0x1000, 0x1100, 0x5010 } },
	{ 2, 1, AT_STACK_TRUNCATED, 2, { 0x1000, 0x1200 } },
	{ 3, 1, AT_STACK_INCOMPLETE, 2, { 0x1000, 0x9999 } },
	{ 4, 2, 0, 1, { 0x7000 } },
	{ 5, 2, AT_STACK_TRUNCATED | AT_STACK_INCOMPLETE, 2, { 0x7000, 0x7040 } },
};

static const struct test_event events[] = {
	{ AT_MALLOC, 10, 0, 0x10, 1 },
	{ AT_MALLOC, 20, 0, 0x20, 1 },
	{ AT_CALLOC, 2, 3, 0x30, 1 },
	{ AT_FREE, 0x10, 0, 0, 1 },
	{ AT_MALLOC, 5, 0, 0, 2 },             /* failed: counts */
	{ AT_REALLOC, 0x20, 7, 0x40, 3 },
	{ AT_MALLOC, 1, 0, 0x50, 0 },
	{ AT_MALLOC, 3, 0, 0x60, 0 },
	{ AT_FREE, 0x50, 0, 0, 0 },
	{ AT_MEMALIGN, 16, 100, 0x70, 4 },
	{ AT_POSIX_MEMALIGN, 8, 9, 0x80, 5 },
	{ AT_MALLOC, 0, 0, 0x90, 5 },
	{ AT_JEMALLOC_STATS, 0, 0, 0, 0 },
};

static void setup_trace(struct rep_sites *x, enum rep_weight w)
{
	problems = 0;
	assert_int_equal(rep_sites_init(x, w, "/nonexistent", count_problem, NULL), 0);
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		struct at_mapping m = { .pid = maps[i].pid, .start = maps[i].start,
					.end = maps[i].end, .offset = maps[i].offset,
					.path = maps[i].path };
		assert_int_equal(rep_sites_mapping(x, &m), 0);
	}
	for (size_t i = 0; i < sizeof(stacks) / sizeof(stacks[0]); i++) {
		struct at_stack s = { .id = stacks[i].id, .pid = stacks[i].pid,
				      .count = stacks[i].count, .flags = stacks[i].flags };
		memcpy(s.pcs, stacks[i].pcs, sizeof(stacks[i].pcs));
		assert_int_equal(rep_sites_stack(x, &s), 0);
	}
}

static void test_weights(void **state)
{
	static const struct {
		enum rep_weight weight;
		const char *want;
	} cases[] = {
		{ REP_WEIGHT_ALLOC_COUNT,
		  "[incomplete];[truncated];a.so+0x40;malloc 1\n"
		  "[incomplete];[truncated];a.so+0x40;posix_memalign 1\n"
		  "[incomplete];[unknown];realloc 1\n"
		  "[truncated];a.so+0x200;malloc 1\n"
		  "b.so+0x2010;a.so+0x100;calloc 1\n"
		  "b.so+0x2010;a.so+0x100;malloc 2\n"
		  "malloc 2\n"
		  "memalign 1\n" },
		{ REP_WEIGHT_ALLOC_BYTES,
		  /* malloc(0) of stack 5 weighs 0: no line */
		  "[incomplete];[truncated];a.so+0x40;posix_memalign 9\n"
		  "[incomplete];[unknown];realloc 7\n"
		  "[truncated];a.so+0x200;malloc 5\n"
		  "b.so+0x2010;a.so+0x100;calloc 6\n"
		  "b.so+0x2010;a.so+0x100;malloc 30\n"
		  "malloc 4\n"
		  "memalign 100\n" },
	};

	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct rep_sites x;
		char *got;

		setup_trace(&x, cases[k].weight);
		feed_events(&x, events, sizeof(events) / sizeof(events[0]));
		got = written(&x);
		assert_string_equal(got, cases[k].want);
		/* a.so (both pids) and b.so, each once */
		assert_int_equal(problems, 2);
		free(got);
		rep_sites_free(&x);
	}
}

/* A text log: every stack is the function's name. */
static void test_no_stacks(void **state)
{
	static const struct test_event log[] = {
		{ AT_MALLOC, 8, 0, 0x10, 0 },   { AT_CALLOC, 1, 1, 0x20, 0 },
		{ AT_REALLOC, 0x10, 9, 0x10, 0 }, { AT_FREE, 0x10, 0, 0, 0 },
		{ AT_VALLOC, 4096, 0, 0x30, 0 }, { AT_ALIGNED_ALLOC, 64, 64, 0x40, 0 },
		{ AT_MALLOC, 8, 0, 0, 0 },
	};
	struct rep_sites x;
	char *got;

	(void)state;
	assert_int_equal(rep_sites_init(&x, REP_WEIGHT_ALLOC_COUNT, NULL, NULL, NULL), 0);
	feed_events(&x, log, sizeof(log) / sizeof(log[0]));
	got = written(&x);
	assert_string_equal(got, "aligned_alloc 1\ncalloc 1\nmalloc 2\nrealloc 1\nvalloc 1\n");
	free(got);
	rep_sites_free(&x);
}

/* Errors: an event of a stack never defined, bad stack records; a record given again. */
static void test_stack_records(void **state)
{
	struct rep_sites x;
	struct at_event ev = { .pid = 1, .tid = 1, .func = AT_MALLOC, .has_result = 1,
			       .arg = { 1 }, .result = 0x10 };
	char *got;

	(void)state;
	setup_trace(&x, REP_WEIGHT_ALLOC_COUNT);
	errno = 0;
	assert_int_equal(rep_export_event(&x, &ev, 6), -1);
	assert_int_equal(errno, ENOENT);
	/* a free of an unknown stack is not looked at */
	ev.func = AT_FREE;
	assert_int_equal(rep_export_event(&x, &ev, 6), 0);
	ev.func = AT_MALLOC;

	struct at_stack bad[] = {
		{ .id = 0, .pid = 1, .count = 1 },
		{ .id = 7, .pid = 1, .count = 0 },
		{ .id = 7, .pid = 1, .count = AT_STACK_MAX_FRAMES + 1 },
		{ .id = 6 + REP_STACKS_MAX_GAP, .pid = 1, .count = 1 },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		assert_int_equal(rep_sites_stack(&x, &bad[i]), -1);
		assert_int_equal(errno, EINVAL);
	}

	/* stack 1 before and after a new record of it */
	assert_int_equal(rep_export_event(&x, &ev, 1), 0);
	struct at_stack again = { .id = 1, .pid = 1, .count = 2, .pcs = { 0x1000, 0x1300 } };
	assert_int_equal(rep_sites_stack(&x, &again), 0);
	assert_int_equal(rep_export_event(&x, &ev, 1), 0);
	assert_int_equal(rep_export_event(&x, &ev, 1), 0);
	got = written(&x);
	assert_string_equal(got, "a.so+0x300;malloc 2\nb.so+0x2010;a.so+0x100;malloc 1\n");
	free(got);
	rep_sites_free(&x);
}

/* --- inlined frames, on this program's own code ------------------------------------------ */

void *volatile inline_ret;

__attribute__((noinline)) void record_return(void)
{
	inline_ret = __builtin_return_address(0);
	__asm__ volatile("");
}

static inline __attribute__((always_inline)) void inlined_caller(void)
{
	record_return();
	__asm__ volatile("");
}

__attribute__((noinline)) void outer_caller(void)
{
	inlined_caller();
	__asm__ volatile("");
}

static struct rep_sites *self_x;
static char self_path[PATH_MAX];
static uint8_t self_id[AT_BUILD_ID_MAX];
static int self_id_len;

static int add_self_mapping(const struct at_procmaps_entry *e, void *arg)
{
	(void)arg;
	if (strcmp(e->path, self_path) == 0 && e->perms[2] == 'x') {
		struct at_mapping m = { .pid = 9, .build_id_len = (uint8_t)self_id_len,
					.start = e->start, .end = e->end, .offset = e->offset,
					.path = self_path };
		memcpy(m.build_id, self_id, (size_t)self_id_len);
		assert_int_equal(rep_sites_mapping(self_x, &m), 0);
	}
	return 0;
}

static void test_inlined_frames(void **state)
{
	struct rep_sites x;
	const void *id;
	char *got;
	int fd;
	Elf *elf;

	(void)state;
	assert_non_null(realpath("/proc/self/exe", self_path));
	fd = open(self_path, O_RDONLY);
	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	self_id_len = (int)dwelf_elf_gnu_build_id(elf, &id);
	assert_true(self_id_len > 0 && self_id_len <= AT_BUILD_ID_MAX);
	memcpy(self_id, id, (size_t)self_id_len);
	elf_end(elf);
	close(fd);

	outer_caller();
	problems = 0;
	assert_int_equal(rep_sites_init(&x, REP_WEIGHT_ALLOC_COUNT, "/nonexistent",
					 count_problem, NULL), 0);
	self_x = &x;
	assert_int_equal(at_procmaps_for_each_file("/proc/self/maps", add_self_mapping, NULL,
						   NULL), 0);
	struct at_stack s = { .id = 1, .pid = 9, .count = 2,
			      .pcs = { 0x1, (uint64_t)(uintptr_t)inline_ret } };
	assert_int_equal(rep_sites_stack(&x, &s), 0);
	struct at_event ev = { .pid = 9, .tid = 9, .func = AT_MALLOC, .has_result = 1,
			       .arg = { 8 }, .result = 0x10 };
	assert_int_equal(rep_export_event(&x, &ev, 1), 0);
	got = written(&x);
	assert_string_equal(got, "outer_caller;inlined_caller;malloc 1\n");
	assert_int_equal(problems, 0);
	free(got);
	rep_sites_free(&x);
}

/* Frame words lose the bytes that would break a folded line. */
static void test_frame_words(void **state)
{
	char buf[32];
	size_t len = 0;

	(void)state;
	rep_append_frame(buf, sizeof(buf), &len, "a;b");
	rep_append_frame(buf, sizeof(buf), &len, "c\nd\t");
	rep_append_frame(buf, sizeof(buf), &len, "operator new");
	assert_int_equal(len, 21);
	assert_memory_equal(buf, "a_b;c_d_;operator new", 21);
	len = 0;
	rep_append_frame(buf, 4, &len, "abcdef");
	assert_int_equal(len, 4);
	assert_memory_equal(buf, "abcd", 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_weights),
		cmocka_unit_test(test_no_stacks),
		cmocka_unit_test(test_stack_records),
		cmocka_unit_test(test_inlined_frames),
		cmocka_unit_test(test_frame_words),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
