/* test_report_heap.c: unit tests of report/heap.c, table-driven: short event sequences with the
 * figures they must leave per process and per site (live, peak, the moment, temporaries,
 * failures, frees of blocks not live), temporaries by heaptrack_print's rule, churn, the selection by pid and window, the trace's span, and
 * a large allocate-and-free run that checks the block table's removals, and a sampled trace's
 * estimates. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../report/heap.h"
#include "../../report/sample.h"

#define MAX_EVENTS 16
#define MAX_SITES 4

/* An event: time in ms from 1 s (0: none). */
struct ev {
	uint32_t pid, tid;
	enum at_func func;
	uint64_t a0, a1, result;
	uint64_t ms;
};

/* What a site must hold at the end: by its function, in process pid. */
struct want_site {
	enum at_func func;
	uint32_t pid;
	uint64_t allocs, frees, temps, live, peak, moment;
};

struct heap_case {
	const char *name;
	struct rep_heap_options o;
	struct ev ev[MAX_EVENTS];
	/* the first process's figures */
	uint64_t live, blocks, peak, peak_blocks, temps, failed, unknown;
	struct want_site sites[MAX_SITES];
};

#define E(pid, tid, f, a0, a1, r) { pid, tid, AT_##f, a0, a1, r, 0 }
#define T(ms, pid, tid, f, a0, a1, r) { pid, tid, AT_##f, a0, a1, r, ms }

static const struct heap_case cases[] = {
	{ "malloc and free",
	  { 0 },
	  { E(1, 1, MALLOC, 10, 0, 0x100), E(1, 1, MALLOC, 20, 0, 0x200), E(1, 2, FREE, 0x100, 0, 0) },
	  20, 1, 30, 2, 0, 0, 0,
	  { { AT_MALLOC, 1, 2, 1, 0, 20, 30, 20 } } },
	{ "realloc: in place, from NULL, to 0 (frees, not a failure: a temporary), failed (block kept)",
	  { 0 },
	  { E(1, 1, MALLOC, 10, 0, 0x100), E(1, 2, REALLOC, 0x100, 40, 0x100),
	    E(1, 2, REALLOC, 0, 8, 0x300), E(1, 2, REALLOC, 0x300, 0, 0),
	    E(1, 2, REALLOC, 0x100, 1000, 0) },
	  40, 1, 48, 2, 1, 1, 0,
	  { { AT_MALLOC, 1, 1, 1, 0, 0, 0, 0 }, { AT_REALLOC, 1, 4, 1, 1, 40, 48, 40 } } },
	{ "temporaries, heaptrack's rule: a realloc of the block just allocated, then a free of its "
	  "result (two); a failed realloc of one (none)",
	  { 0 },
	  { E(1, 1, MALLOC, 16, 0, 0x100), E(1, 1, REALLOC, 0x100, 4096, 0x200),
	    E(1, 1, FREE, 0x200, 0, 0), E(1, 1, MALLOC, 16, 0, 0x300),
	    E(1, 1, REALLOC, 0x300, UINT64_C(1) << 40, 0) },
	  16, 1, 4096, 1, 2, 1, 0,
	  { { AT_MALLOC, 1, 2, 1, 1, 16, 0, 16 }, { AT_REALLOC, 1, 2, 1, 1, 0, 4096, 0 } } },
	{ "an allocation at a live address: the old block counted as freed",
	  { 0 },
	  { E(1, 1, MALLOC, 10, 0, 0x100), E(1, 1, CALLOC, 3, 5, 0x100) },
	  15, 1, 15, 1, 0, 0, 0,
	  { { AT_MALLOC, 1, 1, 1, 0, 0, 0, 0 }, { AT_CALLOC, 1, 1, 0, 0, 15, 15, 15 } } },
	{ "temporaries: freed by the thread's very next event only",
	  { 0 },
	  { E(1, 1, MALLOC, 8, 0, 0x100), E(1, 2, MALLOC, 8, 0, 0x200), E(1, 1, FREE, 0x100, 0, 0),
	    E(1, 2, MALLOC, 8, 0, 0x300), E(1, 2, FREE, 0x200, 0, 0), E(1, 2, FREE, 0x300, 0, 0),
	    E(1, 1, MEMALIGN, 64, 8, 0x400), E(1, 2, FREE, 0x400, 0, 0) },
	  0, 0, 16, 2, 1, 0, 0,
	  { { AT_MALLOC, 1, 3, 3, 1, 0, 16, 0 }, { AT_MEMALIGN, 1, 1, 1, 0, 0, 0, 0 } } },
	{ "frees of blocks not live, free(0), a double free",
	  { 0 },
	  { E(1, 1, FREE, 0x500, 0, 0), E(1, 1, FREE, 0, 0, 0), E(1, 1, MALLOC, 1, 0, 0x100),
	    E(1, 1, FREE, 0x100, 0, 0), E(1, 1, FREE, 0x100, 0, 0) },
	  0, 0, 1, 1, 1, 0, 2,
	  { { AT_MALLOC, 1, 1, 1, 1, 0, 1, 0 } } },
	{ "calloc whose product overflows: a failed call, nothing live",
	  { 0 },
	  { E(1, 1, CALLOC, UINT64_C(1) << 33, UINT64_C(1) << 33, 0) },
	  0, 0, 0, 0, 0, 1, 0,
	  { { AT_CALLOC, 1, 1, 0, 0, 0, 0, 0 } } },
	{ "the peak: each site's share when the process was at its most",
	  { 0 },
	  { E(1, 1, MALLOC, 100, 0, 0x100), E(1, 1, VALLOC, 50, 0, 0x200),
	    E(1, 1, FREE, 0x100, 0, 0), E(1, 1, VALLOC, 60, 0, 0x300),
	    E(1, 1, VALLOC, 70, 0, 0x400) },
	  180, 3, 180, 3, 0, 0, 0,
	  { { AT_MALLOC, 1, 1, 1, 0, 0, 0, 0 }, { AT_VALLOC, 1, 3, 0, 0, 180, 180, 180 } } },
	{ "the peak stays where it was when later events change the sites",
	  { 0 },
	  { E(1, 1, MALLOC, 100, 0, 0x100), E(1, 1, VALLOC, 50, 0, 0x200),
	    E(1, 1, FREE, 0x100, 0, 0), E(1, 1, FREE, 0x200, 0, 0),
	    E(1, 1, VALLOC, 10, 0, 0x300) },
	  10, 1, 150, 2, 0, 0, 0,
	  { { AT_MALLOC, 1, 1, 1, 0, 0, 100, 0 }, { AT_VALLOC, 1, 2, 1, 0, 10, 50, 10 } } },
	{ "--at a time: what was live before the first event after it",
	  { .moment = REP_AT_TIME, .moment_ns = 2500000 },
	  { T(1, 1, 1, MALLOC, 100, 0, 0x100), T(2, 1, 1, POSIX_MEMALIGN, 16, 50, 0x200),
	    T(3, 1, 1, FREE, 0x100, 0, 0), T(4, 1, 1, POSIX_MEMALIGN, 16, 5, 0x300) },
	  55, 2, 150, 2, 0, 0, 0,
	  { { AT_MALLOC, 1, 1, 1, 0, 0, 100, 0 },
	    { AT_POSIX_MEMALIGN, 1, 2, 0, 0, 55, 50, 50 } } },
	{ "--at a time past the end: the end",
	  { .moment = REP_AT_TIME, .moment_ns = 90000000 },
	  { T(1, 1, 1, MALLOC, 100, 0, 0x100), T(2, 1, 1, MALLOC, 50, 0, 0x200) },
	  150, 2, 150, 2, 0, 0, 0,
	  { { AT_MALLOC, 1, 2, 0, 0, 150, 150, 150 } } },
	{ "--pid: the other process passed over, addresses per process",
	  { .have_pid = 1, .pid = 2 },
	  { E(1, 1, MALLOC, 100, 0, 0x100), E(2, 2, MALLOC, 7, 0, 0x100), E(1, 1, FREE, 0x100, 0, 0),
	    E(2, 2, ALIGNED_ALLOC, 64, 64, 0x200) },
	  71, 2, 71, 2, 0, 0, 0,
	  { { AT_MALLOC, 2, 1, 0, 0, 7, 7, 7 }, { AT_ALIGNED_ALLOC, 2, 1, 0, 0, 64, 64, 64 } } },
	{ "--window: events before it unknown, their frees not live; times from the first event",
	  { .have_window = 1, .window_from_ns = 1000000, .window_to_ns = 2000000 },
	  { T(1, 1, 1, MALLOC, 100, 0, 0x100), T(2, 1, 1, FREE, 0x100, 0, 0),
	    T(3, 1, 1, MALLOC, 1, 0, 0x200), T(4, 1, 1, MALLOC, 5, 0, 0x300),
	    T(5, 1, 1, MALLOC, 9, 0, 0x400) },
	  1, 1, 1, 1, 0, 0, 1,
	  { { AT_MALLOC, 1, 1, 0, 0, 1, 1, 1 } } },
	{ "live bytes past 64 bits saturate, never wrap; the peak found by the exact sums",
	  { 0 },
	  { E(1, 1, MALLOC, UINT64_MAX, 0, 0x1000), E(1, 1, MALLOC, UINT64_MAX, 0, 0x2000),
	    E(1, 1, CALLOC, UINT64_C(1) << 32, UINT64_C(1) << 32, 0x3000),
	    E(1, 1, MALLOC, 16, 0, 0x4000), E(1, 1, MALLOC, 16, 0, 0x5000) },
	  UINT64_MAX, 5, UINT64_MAX, 5, 0, 0, 0,
	  { { AT_MALLOC, 1, 4, 0, 0, UINT64_MAX, UINT64_MAX, UINT64_MAX },
	    { AT_CALLOC, 1, 1, 0, 0, UINT64_MAX, UINT64_MAX, UINT64_MAX } } },
	{ "saturated live bytes come back to exact as their blocks are freed",
	  { 0 },
	  { E(1, 1, MALLOC, UINT64_MAX, 0, 0x1000), E(1, 1, MALLOC, 16, 0, 0x2000),
	    E(1, 2, FREE, 0x1000, 0, 0), E(1, 1, MALLOC, 8, 0, 0x3000) },
	  24, 2, UINT64_MAX, 2, 0, 0, 0,
	  { { AT_MALLOC, 1, 3, 1, 0, 24, UINT64_MAX, 24 } } },
};

static struct at_event event_of(const struct ev *e)
{
	struct at_event ev = {
		.pid = e->pid, .tid = e->tid, .func = (uint8_t)e->func,
		.has_result = e->func != AT_FREE, .arg = { e->a0, e->a1 }, .result = e->result,
		.time_ns = e->ms ? 1000000000u + e->ms * 1000000u : 0,
	};
	return ev;
}

static const struct rep_site *find_site(struct rep_heap *h, enum at_func f, uint32_t pid)
{
	const struct rep_site *sites;
	size_t n = rep_heap_sites(h, &sites), len;

	for (size_t i = 0; i < n; i++) {
		const char *text = rep_heap_site_text(h, &sites[i], &len);
		if (sites[i].pid == pid && strcmp(text, at_func_name[f]) == 0)
			return &sites[i];
	}
	return NULL;
}

static void run_case(const struct heap_case *c)
{
	struct rep_sites x;
	const struct rep_proc *procs;

	print_message("case: %s\n", c->name);
	assert_int_equal(rep_sites_init(&x, REP_WEIGHT_ALLOC_COUNT, NULL, NULL, NULL), 0);
	struct rep_heap *h = rep_heap_new(&x, &c->o);
	assert_non_null(h);
	for (size_t i = 0; i < MAX_EVENTS && c->ev[i].pid; i++) {
		struct at_event ev = event_of(&c->ev[i]);
		assert_int_equal(rep_heap_event(h, &ev), 0);
	}
	rep_heap_finish(h);
	assert_true(rep_heap_procs(h, &procs) >= 1);
	const struct rep_proc *p = &procs[0];
	assert_int_equal(p->live_bytes, c->live);
	assert_int_equal(p->live_blocks, c->blocks);
	assert_int_equal(p->peak_bytes, c->peak);
	assert_int_equal(p->peak_blocks, c->peak_blocks);
	assert_int_equal(p->temps, c->temps);
	assert_int_equal(p->failed, c->failed);
	assert_int_equal(p->unknown_frees, c->unknown);
	for (size_t i = 0; i < MAX_SITES && c->sites[i].allocs; i++) {
		const struct want_site *w = &c->sites[i];
		const struct rep_site *s = find_site(h, w->func, w->pid);
		print_message("  site %s of %u\n", at_func_name[w->func], w->pid);
		assert_non_null(s);
		assert_int_equal(s->allocs, w->allocs);
		assert_int_equal(s->frees, w->frees);
		assert_int_equal(s->temps, w->temps);
		assert_int_equal(s->live_bytes, w->live);
		assert_int_equal(s->peak_bytes, w->peak);
		assert_int_equal(s->moment_bytes, w->moment);
	}
	rep_heap_free(h);
	rep_sites_free(&x);
}

static void test_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
}

/* The selection by pid and window counts what it passed over apart. */
/* heaptrack_print's temporaries: events, then the process's count and two sites' counts (by
 * function; AT_FREE: no site), next to the thread rule's count. */
struct heaptrack_case {
	const char *name;
	struct ev ev[MAX_EVENTS];
	uint64_t heaptrack_temps, temps;
	enum at_func f1;
	uint64_t f1_temps;
	enum at_func f2;
	uint64_t f2_temps;
};

static const struct heaptrack_case heaptrack_cases[] = {
	{ "another block of the last allocation's site and size: one (the thread rule: none)",
	  { E(1, 1, MALLOC, 16, 0, 0x100), E(1, 1, MALLOC, 16, 0, 0x200), E(1, 1, FREE, 0x100, 0, 0) },
	  1, 0, AT_MALLOC, 1, AT_FREE, 0 },
	{ "a block of the last allocation's site, of another size: none",
	  { E(1, 1, MALLOC, 16, 0, 0x100), E(1, 1, MALLOC, 32, 0, 0x200), E(1, 1, FREE, 0x100, 0, 0) },
	  0, 0, AT_MALLOC, 0, AT_FREE, 0 },
	{ "a block of another site, of the same size: none",
	  { E(1, 1, VALLOC, 16, 0, 0x100), E(1, 1, MALLOC, 16, 0, 0x200), E(1, 1, FREE, 0x100, 0, 0) },
	  0, 0, AT_MALLOC, 0, AT_VALLOC, 0 },
	{ "the process's order, not the thread's: freed by another thread (one, the thread rule "
	  "none); another thread's allocation in between (none, the thread rule one)",
	  { E(1, 1, MALLOC, 8, 0, 0x100), E(1, 2, FREE, 0x100, 0, 0), E(1, 1, MALLOC, 8, 0, 0x200),
	    E(1, 2, MALLOC, 24, 0, 0x300), E(1, 1, FREE, 0x200, 0, 0) },
	  1, 1, AT_MALLOC, 1, AT_FREE, 0 },
	{ "free(0), a free of a block not live, a failed malloc, a failed realloc: no events",
	  { E(1, 1, MALLOC, 8, 0, 0x100), E(1, 1, FREE, 0, 0, 0), E(1, 1, FREE, 0x999, 0, 0),
	    E(1, 1, MALLOC, 8, 0, 0), E(1, 1, REALLOC, 0x100, UINT64_C(1) << 40, 0),
	    E(1, 1, FREE, 0x100, 0, 0) },
	  1, 0, AT_MALLOC, 1, AT_FREE, 0 },
	{ "a release in between: the second free is none",
	  { E(1, 1, MALLOC, 8, 0, 0x100), E(1, 1, MALLOC, 8, 0, 0x200), E(1, 1, FREE, 0x200, 0, 0),
	    E(1, 1, FREE, 0x100, 0, 0) },
	  1, 1, AT_MALLOC, 1, AT_FREE, 0 },
	{ "realloc: its release, then its allocation; to 0 returning NULL: no event for heaptrack",
	  { E(1, 1, MALLOC, 8, 0, 0x100), E(1, 1, REALLOC, 0x100, 16, 0x200),
	    E(1, 1, REALLOC, 0x200, 16, 0x300), E(1, 1, MALLOC, 4, 0, 0x400),
	    E(1, 1, MALLOC, 4, 0, 0x500), E(1, 1, REALLOC, 0x500, 0, 0), E(1, 1, FREE, 0x400, 0, 0) },
	  3, 3, AT_MALLOC, 2, AT_REALLOC, 1 },
};

static void run_heaptrack_case(const struct heaptrack_case *c)
{
	struct rep_sites x;
	const struct rep_proc *procs;
	const struct { enum at_func f; uint64_t want; } sites[] = { { c->f1, c->f1_temps },
								    { c->f2, c->f2_temps } };

	print_message("case: %s\n", c->name);
	assert_int_equal(rep_sites_init(&x, REP_WEIGHT_ALLOC_COUNT, NULL, NULL, NULL), 0);
	struct rep_heap *h = rep_heap_new(&x, &(struct rep_heap_options){ 0 });
	assert_non_null(h);
	for (size_t i = 0; i < MAX_EVENTS && c->ev[i].pid; i++) {
		struct at_event ev = event_of(&c->ev[i]);
		assert_int_equal(rep_heap_event(h, &ev), 0);
	}
	rep_heap_finish(h);
	assert_int_equal(rep_heap_procs(h, &procs), 1);
	assert_int_equal(procs[0].heaptrack_temps, c->heaptrack_temps);
	assert_int_equal(procs[0].temps, c->temps);
	for (size_t i = 0; i < 2; i++) {
		if (sites[i].f == AT_FREE)
			continue;
		const struct rep_site *s = find_site(h, sites[i].f, 1);
		assert_non_null(s);
		assert_int_equal(s->heaptrack_temps, sites[i].want);
		assert_int_equal(rep_site_weight(s, REP_WEIGHT_HEAPTRACK_TEMP_COUNT), sites[i].want);
	}
	rep_heap_free(h);
	rep_sites_free(&x);
}

static void test_heaptrack_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(heaptrack_cases) / sizeof(heaptrack_cases[0]); i++)
		run_heaptrack_case(&heaptrack_cases[i]);
}

static void test_counts(void **state)
{
	struct rep_heap_options o = { .have_pid = 1, .pid = 2 };
	struct rep_sites x;
	struct at_event ev = { .pid = 1, .tid = 1, .func = AT_MALLOC, .has_result = 1,
			       .arg = { 8 }, .result = 0x10, .time_ns = 5 };

	(void)state;
	assert_int_equal(rep_sites_init(&x, REP_WEIGHT_ALLOC_COUNT, NULL, NULL, NULL), 0);
	struct rep_heap *h = rep_heap_new(&x, &o);
	assert_non_null(h);
	assert_int_equal(rep_heap_event(h, &ev), 0);
	ev.pid = 2;
	ev.time_ns = 3; /* stamped before the first event: time 0, not 2^64 - 2 */
	assert_int_equal(rep_heap_event(h, &ev), 0);
	assert_int_equal(rep_heap_time_of(h, &ev), 0);
	rep_heap_finish(h);
	assert_int_equal(rep_heap_events(h), 1);
	assert_int_equal(rep_heap_events_read(h), 2);
	assert_true(rep_heap_has_times(h));
	rep_heap_free(h);
	rep_sites_free(&x);
}

/* The span: from the first event or RSS record of any process to the last, whatever the
 * selection; RSS records placed by position add nothing; no times, no span. */
static void test_span(void **state)
{
	static const struct {
		const char *name;
		struct rep_heap_options o;
		int positional;
		struct { int rss; uint32_t pid; uint64_t ns; } in[4];
		int has_times;
		uint64_t span;
	} cases[] = {
		{ "events", { 0 }, 0, { { 0, 1, 1000 }, { 0, 1, 1500 }, { 0, 1, 9000 } }, 1, 8000 },
		{ "a time that goes back (another CPU): the latest counts", { 0 }, 0,
		  { { 0, 1, 1000 }, { 0, 1, 9000 }, { 0, 1, 8000 } }, 1, 8000 },
		{ "an RSS record before the first event and after the last", { 0 }, 0,
		  { { 1, 1, 500 }, { 0, 1, 1000 }, { 0, 1, 2000 }, { 1, 1, 7500 } }, 1, 7000 },
		{ "other processes count (--pid 2)", { .have_pid = 1, .pid = 2 }, 0,
		  { { 0, 1, 1000 }, { 0, 2, 3000 }, { 0, 1, 6000 } }, 1, 5000 },
		{ "events outside the window count", { .have_window = 1, .window_to_ns = 100 }, 0,
		  { { 0, 1, 1000 }, { 0, 1, 4000 } }, 1, 3000 },
		{ "RSS records by position: no time", { 0 }, 1,
		  { { 1, 1, 500 }, { 0, 1, 0 }, { 1, 1, 7500 } }, 0, 0 },
		{ "no times", { 0 }, 0, { { 0, 1, 0 }, { 0, 1, 0 } }, 0, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rep_sites x;

		print_message("case: %s\n", cases[i].name);
		assert_int_equal(rep_sites_init(&x, REP_WEIGHT_ALLOC_COUNT, NULL, NULL, NULL), 0);
		struct rep_heap *h = rep_heap_new(&x, &cases[i].o);
		assert_non_null(h);
		if (cases[i].positional)
			rep_heap_rss_by_position(h);
		for (size_t k = 0; k < 4 && cases[i].in[k].pid; k++) {
			struct at_event ev = { .pid = cases[i].in[k].pid, .tid = cases[i].in[k].pid,
					       .func = AT_MALLOC, .has_result = 1, .arg = { 8 },
					       .result = 0x10 * (k + 1), .time_ns = cases[i].in[k].ns };
			struct at_rss m = { cases[i].in[k].pid, cases[i].in[k].ns, 4096 };
			assert_int_equal(cases[i].in[k].rss ? rep_heap_rss(h, &m)
							    : rep_heap_event(h, &ev), 0);
		}
		rep_heap_finish(h);
		assert_int_equal(rep_heap_has_times(h), cases[i].has_times);
		assert_int_equal(rep_heap_span(h), cases[i].span);
		rep_heap_free(h);
		rep_sites_free(&x);
	}
}

/* 200000 blocks allocated, then freed in a scrambled order, with lookups all along: the
 * table's removals (shifting entries back) never lose a block. */
static void test_many_blocks(void **state)
{
	enum { N = 200000 };
	struct rep_heap_options o = { 0 };
	struct rep_sites x;
	const struct rep_proc *procs;
	uint64_t bytes, blocks;

	(void)state;
	assert_int_equal(rep_sites_init(&x, REP_WEIGHT_ALLOC_COUNT, NULL, NULL, NULL), 0);
	struct rep_heap *h = rep_heap_new(&x, &o);
	assert_non_null(h);
	for (uint64_t i = 0; i < N; i++) {
		struct at_event ev = { .pid = 7, .tid = 7, .func = AT_MALLOC, .has_result = 1,
				       .arg = { i % 13 }, .result = 0x1000 + 16 * i };
		assert_int_equal(rep_heap_event(h, &ev), 0);
	}
	for (uint64_t k = 0; k < N; k++) {
		uint64_t i = (k * 7919) % N; /* 7919 is prime, N is not its multiple: a permutation */
		struct at_event ev = { .pid = 7, .tid = 8, .func = AT_FREE, .arg = { 0x1000 + 16 * i } };
		assert_int_equal(rep_heap_event(h, &ev), 0);
	}
	rep_heap_finish(h);
	rep_heap_live(h, &bytes, &blocks);
	assert_int_equal(bytes, 0);
	assert_int_equal(blocks, 0);
	rep_heap_procs(h, &procs);
	assert_int_equal(procs[0].unknown_frees, 0);
	assert_int_equal(procs[0].peak_blocks, N);
	rep_heap_free(h);
	rep_sites_free(&x);
}

/* Churn: the bytes of each site's blocks as they are released (free, realloc, a new block at
 * their address, a realloc to 0), none for what releases no live block. */
static void test_churn(void **state)
{
	(void)state;
	static const struct ev evs[] = {
		E(1, 1, MALLOC, 10, 0, 0x100), E(1, 1, MALLOC, 20, 0, 0x200),
		E(1, 1, FREE, 0x100, 0, 0),                  /* malloc 10 */
		E(1, 2, REALLOC, 0x200, 50, 0x300),          /* malloc 20 */
		E(1, 2, CALLOC, 3, 5, 0x300),                /* realloc 50: a missed free */
		E(1, 2, FREE, 0x999, 0, 0),                  /* not live: none */
		E(1, 2, REALLOC, 0x300, UINT64_C(1) << 40, 0), /* failed: none */
		E(1, 2, REALLOC, 0x300, 0, 0),               /* calloc 15: freed */
		E(1, 2, VALLOC, 64, 0, 0x400),               /* live at the end: none */
	};
	static const struct {
		enum at_func f;
		uint64_t churn;
	} want[] = { { AT_MALLOC, 30 }, { AT_REALLOC, 50 }, { AT_CALLOC, 15 }, { AT_VALLOC, 0 } };
	struct rep_heap_options o = { 0 };
	struct rep_sites x;

	assert_int_equal(rep_sites_init(&x, REP_WEIGHT_ALLOC_COUNT, NULL, NULL, NULL), 0);
	struct rep_heap *h = rep_heap_new(&x, &o);
	assert_non_null(h);
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
		struct at_event ev = event_of(&evs[i]);
		assert_int_equal(rep_heap_event(h, &ev), 0);
	}
	rep_heap_finish(h);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct rep_site *s = find_site(h, want[i].f, 1);
		assert_non_null(s);
		assert_int_equal(rep_site_weight(s, REP_WEIGHT_CHURN), want[i].churn);
	}
	rep_heap_free(h);
	rep_sites_free(&x);
}

/* A sampled trace (rep_heap_sampled): each allocation counts for what it stands for
 * (report/sample.h), its release takes the same off; the figures of a site, its process and
 * the peak are those sums, the calls too. */
static void test_sampled(void **state)
{
	static const struct ev evs[] = {
		T(1, 1, 1, MALLOC, 4096, 0, 0x100), T(2, 1, 1, MALLOC, 100, 0, 0x200),
		T(3, 1, 1, CALLOC, 10, 10, 0x300), T(4, 1, 1, FREE, 0x100, 0, 0),
		T(5, 1, 1, FREE, 0x300, 0, 0),
	};
	struct rep_heap_options o = { 0 };
	struct rep_sites x;
	struct rep_estimate e[3];

	(void)state;
	assert_int_equal(rep_sites_init(&x, REP_WEIGHT_ALLOC_COUNT, NULL, NULL, NULL), 0);
	struct rep_heap *h = rep_heap_new(&x, &o);
	assert_non_null(h);
	rep_heap_sampled(h, 1024);
	assert_int_equal(rep_heap_sample_bytes(h), 1024);
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
		struct at_event ev = event_of(&evs[i]);
		if (i < 3)
			e[i] = rep_sample_estimate(ev.func == AT_CALLOC ? 100 : ev.arg[0], 1024,
						   rep_sample_key(&ev));
		assert_int_equal(rep_heap_event(h, &ev), 0);
	}
	rep_heap_finish(h);
	/* 100 bytes stand for some 10.75 allocations of 100: 1075 bytes, a count of 10 or 11 */
	assert_int_equal(e[1].bytes, 1075);
	assert_int_equal(e[0].bytes, 4172);
	assert_true(e[1].count == 10 || e[1].count == 11);
	const struct rep_site *m = find_site(h, AT_MALLOC, 1), *c = find_site(h, AT_CALLOC, 1);
	assert_non_null(m);
	assert_non_null(c);
	assert_int_equal(m->allocs, e[0].count + e[1].count);
	assert_int_equal(m->alloc_bytes, e[0].bytes + e[1].bytes);
	assert_int_equal(m->frees, e[0].count);
	assert_int_equal(m->live_bytes, e[1].bytes);
	assert_int_equal(m->live_blocks, e[1].count);
	assert_int_equal(m->peak_bytes, e[0].bytes + e[1].bytes);
	assert_int_equal(c->peak_bytes, e[2].bytes);
	assert_int_equal(c->live_bytes, 0);
	const struct rep_proc *procs;
	assert_int_equal(rep_heap_procs(h, &procs), 1);
	assert_int_equal(procs[0].peak_bytes, e[0].bytes + e[1].bytes + e[2].bytes);
	assert_int_equal(procs[0].peak_blocks, e[0].count + e[1].count + e[2].count);
	assert_int_equal(procs[0].calls[AT_MALLOC], e[0].count + e[1].count);
	assert_int_equal(procs[0].calls[AT_FREE], e[0].count + e[2].count);
	rep_heap_free(h);
	rep_sites_free(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_heaptrack_cases),
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_span),
		cmocka_unit_test(test_many_blocks),
		cmocka_unit_test(test_churn),
		cmocka_unit_test(test_sampled),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
