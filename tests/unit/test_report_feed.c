/* test_report_feed.c: unit tests of report/feed.c: binary 2.0 traces written here with
 * lib/sink (mapping and stack records, events referring to stacks, stack-less events, records
 * after the last event), read back through lib/source into the export: the exact folded lines.
 * A 1.1 trace of the same events (no stacks): one frame per function. Text input. Damage: a
 * malformed line skipped, a cut binary trace fed up to the cut; with strict, both refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../report/feed.h"
#include "display.h"
#include "sink.h"

static char path[64];

static int setup(void **state)
{
	int fd;

	(void)state;
	strcpy(path, "/tmp/at-report-feed.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	close(fd);
	at_display_level = 0; /* the error cases report; the tests look at return values */
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

static const struct at_mapping mappings[] = {
	{ .pid = 1, .start = 0x1000, .end = 0x2000, .offset = 0, .path = "/nonexistent/a.so" },
	{ .pid = 1, .start = 0x5000, .end = 0x6000, .offset = 0x3000, .path = "/nonexistent/b.so" },
};

static const struct at_stack stacks[] = {
	{ .id = 1, .pid = 1, .count = 3, .pcs = { 0x1000, 0x1010, 0x5020 } },
	{ .id = 2, .pid = 1, .count = 2, .flags = AT_STACK_INCOMPLETE, .pcs = { 0x1000, 0x5100 } },
};

/* The trace: each entry a record or an event. */
struct step {
	int kind; /* 0 event, 1 mapping, 2 stack */
	int index;
	uint8_t func;
	uint64_t size;
	uint32_t stack;
};

static const struct step trace[] = {
	{ 1, 0, 0, 0, 0 },
	{ 1, 1, 0, 0, 0 },
	{ 2, 0, 0, 0, 0 },
	{ 0, 0, AT_MALLOC, 10, 1 },
	{ 0, 0, AT_MALLOC, 20, 1 },
	{ 0, 0, AT_FREE, 0, 1 },
	{ 2, 1, 0, 0, 0 },
	{ 0, 0, AT_MALLOC, 5, 2 },
	{ 0, 0, AT_VALLOC, 4096, 1 },
	{ 0, 0, AT_MALLOC, 7, 0 },
};

/* Writes the trace to path as a binary trace of version major. */
static void write_trace(unsigned major)
{
	struct at_sink sink;
	struct at_sink_options opt = { .format = AT_SINK_ATZ, .atz = { .major = major } };
	uint64_t ptr = 0x100;

	assert_int_equal(at_sink_open(&sink, path, AT_SINK_TRUNCATE), 0);
	assert_int_equal(at_sink_start(&sink, &opt), 0);
	for (size_t i = 0; i < sizeof(trace) / sizeof(trace[0]); i++) {
		const struct step *t = &trace[i];
		struct at_sink_record r;

		if (t->kind == 1) {
			r = (struct at_sink_record){ .kind = AT_SINK_MAPPING,
						     .mapping = &mappings[t->index] };
		} else if (t->kind == 2) {
			r = (struct at_sink_record){ .kind = AT_SINK_STACK,
						     .stack = &stacks[t->index] };
		} else {
			struct at_event ev = { .pid = 1, .tid = 1, .func = t->func,
					       .has_result = t->func != AT_FREE,
					       .arg = { t->func == AT_FREE ? ptr : t->size },
					       .result = t->func == AT_FREE ? 0 : (ptr += 0x10),
					       .stack = major >= 2 ? t->stack : 0 };
			assert_int_equal(at_sink_put(&sink, &ev), 0);
			continue;
		}
		if (major >= 2)
			assert_int_equal(at_sink_put_record(&sink, &r), 0);
	}
	assert_int_equal(at_sink_close(&sink), 0);
}

/* Feeds path into a new export, damage read past as d says (d->strict) and noted there, and
 * returns what it writes (malloc'ed), or NULL when the feed failed. */
static char *report_damaged(enum rep_weight w, struct rep_damage *d)
{
	struct at_source src;
	struct rep_sites x;
	char *buf = NULL;
	size_t n = 0;
	int fd, rc;

	assert_int_equal(rep_sites_init(&x, w, "/nonexistent", NULL, NULL), 0);
	assert_int_equal(rep_open_input(&src, path, &fd), 0);
	rc = rep_feed(&src, &x, d);
	if (rc == 0) {
		FILE *out = open_memstream(&buf, &n);
		assert_int_equal(rep_export_write(&x, out), 0);
		fclose(out);
	}
	at_source_close(&src);
	close(fd);
	rep_sites_free(&x);
	return buf;
}

/* The same with --strict: any damage fails. */
static char *report(enum rep_weight w)
{
	struct rep_damage strict = { .strict = 1 };

	return report_damaged(w, &strict);
}

static void test_stacked_trace(void **state)
{
	char *got;

	(void)state;
	write_trace(2);
	got = report(REP_WEIGHT_ALLOC_COUNT);
	assert_non_null(got);
	assert_string_equal(got, "[incomplete];b.so+0x3100;malloc 1\n"
				 "b.so+0x3020;a.so+0x10;malloc 2\n"
				 "b.so+0x3020;a.so+0x10;valloc 1\n"
				 "malloc 1\n");
	free(got);
	got = report(REP_WEIGHT_ALLOC_BYTES);
	assert_string_equal(got, "[incomplete];b.so+0x3100;malloc 5\n"
				 "b.so+0x3020;a.so+0x10;malloc 30\n"
				 "b.so+0x3020;a.so+0x10;valloc 4096\n"
				 "malloc 7\n");
	free(got);
}

static void test_trace_without_stacks(void **state)
{
	char *got;

	(void)state;
	write_trace(1);
	got = report(REP_WEIGHT_ALLOC_COUNT);
	assert_non_null(got);
	assert_string_equal(got, "malloc 4\nvalloc 1\n");
	free(got);
}

static void test_text(void **state)
{
	FILE *f = fopen(path, "w");
	char *got;

	(void)state;
	fputs("1 1 malloc(3)=0x10\n\n1 1 calloc(2,5)=0x20\n1 1 free(0x10)\n", f);
	fclose(f);
	got = report(REP_WEIGHT_ALLOC_BYTES);
	assert_non_null(got);
	assert_string_equal(got, "calloc 10\nmalloc 3\n");
	free(got);
	f = fopen(path, "w");
	fputs("1 1 malloc(3)=0x10\n1 1 nonsense\n", f);
	fclose(f);
	assert_null(report(REP_WEIGHT_ALLOC_BYTES));
}

/* Damage read past: a malformed line skipped and counted; a binary trace cut inside its last
 * block ends the feed there, noted; --strict fails on both. */
static void test_damage(void **state)
{
	struct rep_damage d = { 0 };
	FILE *f = fopen(path, "w");
	char *got;

	(void)state;
	at_display_level = 0;
	fputs("1 1 malloc(3)=0x10\n1 1 nonsense\n1 1 malloc(4)=0x20\n", f);
	fclose(f);
	got = report_damaged(REP_WEIGHT_ALLOC_BYTES, &d);
	assert_string_equal(got, "malloc 7\n");
	assert_int_equal(d.skipped_lines, 1);
	assert_int_equal(d.stopped, 0);
	free(got);
	write_trace(2);
	f = fopen(path, "r+");
	fseek(f, 0, SEEK_END);
	assert_int_equal(ftruncate(fileno(f), ftell(f) - 12), 0);
	fclose(f);
	assert_null(report(REP_WEIGHT_ALLOC_COUNT));
	d = (struct rep_damage){ 0 };
	got = report_damaged(REP_WEIGHT_ALLOC_COUNT, &d);
	assert_non_null(got);
	assert_int_equal(d.stopped, 1);
	assert_int_equal(d.skipped_lines, 0);
	free(got);
	at_display_level = 2;
}

/* A record the export refuses (a mapping of an empty range) stops the feed: before an event,
 * or after the last one. */
static void test_bad_record(void **state)
{
	static const struct at_mapping empty = { .pid = 3, .start = 0x2000, .end = 0x2000,
						 .path = "/x.so" };
	struct at_sink_record r = { .kind = AT_SINK_MAPPING, .mapping = &empty };
	struct at_event ev = { .pid = 3, .tid = 3, .func = AT_MALLOC, .has_result = 1,
			       .arg = { 8 }, .result = 0x10 };
	struct at_sink_options opt = { .format = AT_SINK_ATZ };

	(void)state;
	for (int after = 0; after < 2; after++) {
		struct at_sink sink;

		assert_int_equal(at_sink_open(&sink, path, AT_SINK_TRUNCATE), 0);
		assert_int_equal(at_sink_start(&sink, &opt), 0);
		assert_int_equal(at_sink_put(&sink, &ev), 0);
		assert_int_equal(at_sink_put_record(&sink, &r), 0); /* the writer takes it as is */
		if (!after)
			assert_int_equal(at_sink_put(&sink, &ev), 0);
		assert_int_equal(at_sink_close(&sink), 0);
		assert_null(report(REP_WEIGHT_ALLOC_COUNT));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stacked_trace),
		cmocka_unit_test(test_trace_without_stacks),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_bad_record),
		cmocka_unit_test(test_damage),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
