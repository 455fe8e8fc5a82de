/* test_report_growth.c: unit tests of report/growth.c: a pass of a held block, a block kept at
 * every step and one allocated at the end gives steady, growing and young sites, in that order
 * of the listing (growing first), with their growth since the sample at or before half the
 * trace and the mean age of their live blocks; a trace too short for a sample counts growth
 * from the start; the text with exact figures (--bytes) and in units; the same as JSON and CSV,
 * and a site that shrank since the sample. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../report/growth.h"
#include "../../report/units.h"

/* A writer of leaks (text, JSON, CSV). */
typedef int (*leaks_writer)(FILE *, const struct rep_heap *, const struct rep_growth *);

/* Runs the n events through an engine with the watcher and returns what write writes. */
static char *written_of(const struct at_event *evs, size_t n, leaks_writer write)
{
	struct rep_sites x;
	struct rep_heap_options o = { 0 };
	struct rep_growth g = { 0 };
	char *text = NULL;
	size_t len = 0;

	assert_int_equal(rep_sites_init(&x, REP_WEIGHT_ALLOC_COUNT, NULL, NULL, NULL), 0);
	struct rep_heap *h = rep_heap_new(&x, &o);
	assert_non_null(h);
	rep_growth_start(&g, h);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(rep_heap_event(h, &evs[i]), 0);
	rep_heap_finish(h);
	assert_int_equal(rep_growth_end(&g, h), 0);
	FILE *out = open_memstream(&text, &len);
	assert_int_equal(write(out, h, &g), 0);
	fclose(out);
	rep_growth_free(&g);
	rep_heap_free(h);
	rep_sites_free(&x);
	return text;
}

/* What leaks writes as text. */
static char *leaks_of(const struct at_event *evs, size_t n)
{
	return written_of(evs, n, rep_write_leaks_growth);
}

static struct at_event alloc(enum at_func f, uint64_t size, uint64_t addr)
{
	struct at_event ev = { .pid = 1, .tid = 1, .func = f, .has_result = 1, .result = addr };

	ev.arg[0] = f == AT_CALLOC ? 1 : size;
	ev.arg[1] = f == AT_CALLOC ? size : 0;
	return ev;
}

static void test_kinds(void **state)
{
	(void)state;
	struct at_event evs[42];

	evs[0] = alloc(AT_CALLOC, 100, 0x100);         /* clock 0: held, steady */
	for (int i = 0; i < 40; i++)                    /* clocks 1 to 40: kept, growing */
		evs[1 + i] = alloc(AT_MALLOC, 32, 0x1000 + 64 * (uint64_t)i);
	evs[41] = alloc(AT_VALLOC, 50, 0x9000);         /* clock 41: young */
	rep_units_set_exact(1);
	char *got = leaks_of(evs, 42);
	rep_units_set_exact(0);
	/* samples at 16 and 32 events kept: 16 is at or before half of 42; the malloc blocks'
	 * mean clock is 820 / 40 = 20, so their age is 22 */
	assert_string_equal(got,
			    "live at the end: 1430 bytes in 42 blocks, 3 sites; growth since 16 "
			    "events, of 42 events\n"
			    "       bytes   blocks       growth       mean age  kind     site\n"
			    "        1280       40         +800          22 ev  growing  malloc\n"
			    "         100        1           +0          42 ev  steady   calloc\n"
			    "          50        1          +50           1 ev  young    valloc\n");
	free(got);
	/* in units, the default: 1430 bytes are 1.3 KiB (1.396...), 1280 are 1.2 KiB (1.25) */
	got = leaks_of(evs, 42);
	assert_string_equal(got,
			    "live at the end: 1.3 KiB in 42 blocks, 3 sites; growth since 16 "
			    "events, of 42 events\n"
			    "       bytes   blocks       growth       mean age  kind     site\n"
			    "     1.2 KiB       40       +800 B          22 ev  growing  malloc\n"
			    "       100 B        1         +0 B          42 ev  steady   calloc\n"
			    "        50 B        1        +50 B           1 ev  young    valloc\n");
	free(got);
}

static void test_short(void **state)
{
	(void)state;
	struct at_event evs[1] = { alloc(AT_MALLOC, 8, 0x10) };
	rep_units_set_exact(1);
	char *got = leaks_of(evs, 1);
	rep_units_set_exact(0);

	/* one event: no sample at or before half of it: growth from the start */
	assert_string_equal(got,
			    "live at the end: 8 bytes in 1 blocks, 1 sites; growth since 0 events, "
			    "of 1 events\n"
			    "       bytes   blocks       growth       mean age  kind     site\n"
			    "           8        1           +8           1 ev  growing  malloc\n");
	free(got);
}

/* test_kinds' events: a held block, 40 kept, one at the end. */
static void kinds_events(struct at_event evs[42])
{
	evs[0] = alloc(AT_CALLOC, 100, 0x100);
	for (int i = 0; i < 40; i++)
		evs[1 + i] = alloc(AT_MALLOC, 32, 0x1000 + 64 * (uint64_t)i);
	evs[41] = alloc(AT_VALLOC, 50, 0x9000);
}

static void test_kinds_json(void **state)
{
	(void)state;
	struct at_event evs[42];

	kinds_events(evs);
	char *got = written_of(evs, 42, rep_write_leaks_json);
	assert_string_equal(got,
			    "{\"clock\":\"events\",\"since\":16,\"end\":42,\"processes\":[{\"pid\":1,"
			    "\"live_bytes\":1430,\"live_blocks\":42,\"sites\":["
			    "{\"bytes\":1280,\"blocks\":40,\"growth\":800,\"mean_age\":22,"
			    "\"kind\":\"growing\",\"stack\":[{\"function\":\"malloc\"}]},"
			    "{\"bytes\":100,\"blocks\":1,\"growth\":0,\"mean_age\":42,"
			    "\"kind\":\"steady\",\"stack\":[{\"function\":\"calloc\"}]},"
			    "{\"bytes\":50,\"blocks\":1,\"growth\":50,\"mean_age\":1,"
			    "\"kind\":\"young\",\"stack\":[{\"function\":\"valloc\"}]}]}]}\n");
	free(got);
}

static void test_kinds_csv(void **state)
{
	(void)state;
	struct at_event evs[42];

	kinds_events(evs);
	char *got = written_of(evs, 42, rep_write_leaks_csv);
	assert_string_equal(got, "pid,bytes,blocks,growth,mean_age_events,kind,stack\r\n"
				 "1,1280,40,800,22,growing,malloc\r\n"
				 "1,100,1,0,42,steady,calloc\r\n"
				 "1,50,1,50,1,young,valloc\r\n");
	free(got);
}

/* A site that held more at the sample than at the end: its growth negative, exactly. */
static void test_shrank(void **state)
{
	(void)state;
	struct at_event evs[40];

	for (int i = 0; i < 20; i++) /* clocks 0 to 19: 20 blocks of 64 */
		evs[i] = alloc(AT_MALLOC, 64, 0x1000 + 64 * (uint64_t)i);
	for (int i = 0; i < 20; i++) { /* clocks 20 to 38: 19 freed; at 39 one more malloc */
		evs[20 + i] = (struct at_event){ .pid = 1, .tid = 1, .func = AT_FREE,
						 .arg = { 0x1000 + 64 * (uint64_t)i } };
	}
	evs[39] = alloc(AT_MALLOC, 64, 0x9000);
	/* the sample at 16 held 16 blocks (1024 bytes), the end 2 (128 bytes), allocated at
	 * clocks 19 and 39: a mean age of 40 - 29 */
	char *got = written_of(evs, 40, rep_write_leaks_csv);
	assert_string_equal(got, "pid,bytes,blocks,growth,mean_age_events,kind,stack\r\n"
				 "1,128,2,-896,11,steady,malloc\r\n");
	free(got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_short),
		cmocka_unit_test(test_kinds_json),
		cmocka_unit_test(test_kinds_csv),
		cmocka_unit_test(test_shrank),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
