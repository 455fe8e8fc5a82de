/* test_daemon_reorder.c: unit tests of daemon/trace/reorder.c, the merge of the event rings by
 * time, over ring images in memory laid out as the kernel lays out its rings (ring_image.h).
 * Each case puts records into two or three rings, drains at given times and checks the exact
 * order of the output (each record has a label), what is held back, and the counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <linux/types.h>

#include "../../daemon/trace/reorder.h"
#include "ring_image.h"

#define RINGS 3
#define US 1000ull /* a microsecond */
#define T0 (1ull << 30)

static struct ring_image rings[RINGS];
static struct at_ring views[RINGS];
static struct at_reorder merge;
static char out[256]; /* the labels of the records emitted, in order; '|' for a mark */
static unsigned nout;

/* A record's label travels in its stack field (the merge never reads it). */
static void collect(void *arg, const struct at_record *r)
{
	(void)arg;
	if (nout < sizeof(out) - 1)
		out[nout++] = (char)r->stack;
}

static void mark(void *arg)
{
	(void)arg;
	if (nout < sizeof(out) - 1)
		out[nout++] = '|';
}

/* The merge of RINGS empty rings of ring_bytes each. */
static void setup_merge_of(unsigned max_returns, uint64_t ring_bytes)
{
	for (unsigned i = 0; i < RINGS; i++) {
		ring_image_free(&rings[i]);
		assert_int_equal(ring_image_init(&rings[i], ring_bytes), 0);
		views[i] = rings[i].view;
	}
	at_reorder_free(&merge);
	assert_int_equal(at_reorder_init(&merge, views, RINGS, max_returns, collect, NULL), 0);
	merge.mark = mark;
	memset(out, 0, sizeof(out));
	nout = 0;
}

static void setup_merge(unsigned max_returns)
{
	setup_merge_of(max_returns, 1 << 16);
}

enum kind { MALLOC, FREE, ENTRY, RETURN, NO_ENTRY_RETURN, THREAD_END };

/* One record: label, ring, time (microseconds from T0), kind, thread, argument, result; a
 * realloc's return has its entry's time in entry. */
struct item {
	char label;
	unsigned ring;
	uint64_t us, entry_us;
	enum kind kind;
	uint32_t tid;
	uint64_t arg, result;
};

static struct at_record record_of(const struct item *it)
{
	static const uint32_t funcs[] = { AT_PROBE_MALLOC, AT_PROBE_FREE, AT_PROBE_REALLOC_ENTRY,
					  AT_PROBE_REALLOC, AT_PROBE_REALLOC, AT_PROBE_THREAD_END };
	struct at_record r = { .time = T0 + it->us * US, .pid = 100, .tid = it->tid,
			       .func = funcs[it->kind], .result = it->result,
			       .stack = (uint64_t)it->label };

	r.time_entry = it->kind == RETURN || it->kind == NO_ENTRY_RETURN
			       ? T0 + it->entry_us * US : r.time;
	r.arg[0] = it->arg;
	r.arg[1] = it->kind == RETURN ? 64 : 0;
	r.flags = it->kind == NO_ENTRY_RETURN ? AT_REC_NO_ENTRY : 0;
	return r;
}

/* Puts items into their rings (busy ones left uncommitted: their positions in busy[]). */
static void put_items(const struct item *items, unsigned n, int busy_label, int64_t *busy_pos)
{
	for (unsigned i = 0; i < n; i++) {
		struct at_record r = record_of(&items[i]);
		int busy = items[i].label == busy_label;
		int64_t pos = ring_image_put(&rings[items[i].ring], &r, busy);

		assert_true(pos >= 0);
		if (busy)
			*busy_pos = pos;
	}
}

/* Drains at time us (microseconds from T0). */
static void drain_at(uint64_t us)
{
	at_reorder_drain(&merge, T0 + us * US);
}

/* The cases of the merge: the records, when the drain happens, and what goes out then and at
 * the finish. */
static void test_merge_cases(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		struct item items[8];
		unsigned n;
		uint64_t drain_us;   /* one drain at this time */
		const char *first;   /* the output after it */
		const char *all;     /* after the finish */
	} cases[] = {
		{ "frees on another CPU, a moment after the allocation",
		  { { 'a', 0, 1, 0, MALLOC, 1, 8, 0x10 }, { 'b', 1, 2, 0, FREE, 2, 0x10, 0 },
		    { 'c', 0, 3, 0, MALLOC, 1, 8, 0x10 }, { 'd', 1, 4, 0, FREE, 2, 0x10, 0 } },
		  4, 100, "abcd", "abcd" },
		{ "one ring flooded, the others idle: nothing waits for them",
		  { { 'a', 0, 1, 0, MALLOC, 1, 8, 0x10 }, { 'b', 0, 2, 0, FREE, 1, 0x10, 0 },
		    { 'c', 0, 3, 0, MALLOC, 1, 8, 0x20 }, { 'd', 0, 4, 0, MALLOC, 1, 8, 0x30 } },
		  4, 100, "abcd", "abcd" },
		{ "records past the drain's time wait for a later one",
		  { { 'a', 0, 1, 0, MALLOC, 1, 8, 0x10 }, { 'b', 1, 50, 0, FREE, 2, 0x10, 0 },
		    { 'c', 2, 200, 0, MALLOC, 3, 8, 0x10 } },
		  3, 100, "ab", "abc" },
		{ "a record older than the one before it in its ring (its producer preempted)",
		  { { 'b', 0, 2, 0, FREE, 1, 0x10, 0 }, { 'a', 0, 1, 0, MALLOC, 2, 8, 0x10 },
		    { 'c', 1, 3, 0, MALLOC, 3, 8, 0x10 } },
		  3, 100, "abc", "abc" },
		{ "realloc: another thread receives its old block before it returns",
		  { { 'e', 0, 1, 0, ENTRY, 1, 0, 0 }, { 'm', 1, 2, 0, MALLOC, 2, 8, 0x10 },
		    { 'r', 0, 3, 1, RETURN, 1, 0x10, 0x50 } },
		  3, 100, "rm", "rm" },
		{ "realloc: the block it returns was freed by another thread after its entry",
		  { { 'e', 0, 1, 0, ENTRY, 1, 0, 0 }, { 'f', 1, 2, 0, FREE, 2, 0x50, 0 },
		    { 'r', 1, 3, 1, RETURN, 1, 0x10, 0x50 } },
		  3, 100, "fr", "fr" },
		{ "realloc: its return read before its entry (another ring)",
		  { { 'r', 0, 3, 1, RETURN, 1, 0x10, 0x50 }, { 'e', 1, 1, 0, ENTRY, 1, 0, 0 },
		    { 'a', 2, 2, 0, MALLOC, 2, 8, 0x60 } },
		  3, 100, "ar", "ar" },
		{ "realloc in place goes at its entry",
		  { { 'e', 0, 1, 0, ENTRY, 1, 0, 0 }, { 'a', 1, 2, 0, MALLOC, 2, 8, 0x60 },
		    { 'r', 0, 3, 1, RETURN, 1, 0x10, 0x10 } },
		  3, 100, "ra", "ra" },
		{ "realloc not returned yet: the output waits at its entry",
		  { { 'a', 1, 1, 0, MALLOC, 2, 8, 0x60 }, { 'e', 0, 2, 0, ENTRY, 1, 0, 0 },
		    { 'b', 1, 3, 0, FREE, 2, 0x60, 0 } },
		  3, 100, "a", "ab" },
		{ "realloc whose entry found no room: at its return",
		  { { 'a', 1, 1, 0, MALLOC, 2, 8, 0x60 },
		    { 'r', 0, 3, 2, NO_ENTRY_RETURN, 1, 0x10, 0x50 }, { 'b', 1, 4, 0, FREE, 2, 0x60, 0 } },
		  3, 100, "arb", "arb" },
		{ "a thread's end after its events",
		  { { 'a', 0, 1, 0, MALLOC, 2, 8, 0x60 }, { 'x', 1, 3, 0, THREAD_END, 2, 0, 0 },
		    { 'b', 0, 2, 0, FREE, 2, 0x60, 0 } },
		  3, 100, "abx", "abx" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t none;

		setup_merge(64);
		put_items(cases[i].items, cases[i].n, 0, &none);
		drain_at(cases[i].drain_us);
		if (strcmp(out, cases[i].first) != 0)
			fail_msg("%s: first drain wrote \"%s\", not \"%s\"", cases[i].name, out,
				 cases[i].first);
		at_reorder_finish(&merge);
		if (strcmp(out, cases[i].all) != 0)
			fail_msg("%s: the finish wrote \"%s\", not \"%s\"", cases[i].name, out,
				 cases[i].all);
		/* the rings given back up to their ends */
		for (unsigned k = 0; k < RINGS; k++)
			assert_int_equal(rings[k].consumer, rings[k].producer);
	}
}

/* A record still being written (reserved, not committed) in one ring holds back the records of
 * every ring from the time of the drain that found it: one of them may depend on a record
 * committed after it in that ring. */
static void test_busy_record(void **state)
{
	(void)state;
	static const struct item items[] = {
		{ 'a', 0, 1, 0, MALLOC, 1, 8, 0x10 }, { 'b', 1, 2, 0, MALLOC, 2, 8, 0x20 },
		{ 'c', 1, 5, 0, FREE, 2, 0x10, 0 },
	};
	int64_t busy = -1;

	setup_merge(64);
	drain_at(30); /* every ring drained at 30: a, b and c may go once 30 passes the slack */
	put_items(items, 3, 'b', &busy);
	drain_at(100); /* ring 1 stops at b: drained still at 30 */
	assert_string_equal(out, "a");
	ring_image_commit(&rings[1], (uint64_t)busy);
	drain_at(101);
	assert_string_equal(out, "abc");
}

/* A record given up (a free whose reservation found recording off) is passed over, and its
 * ring given back past it. A record reserved and not yet written below the producer position a
 * drain found is told (at_reorder_unwritten: the window's close waits for it) until it is
 * written; one reserved after that drain is not. */
static void test_discarded_and_unwritten(void **state)
{
	(void)state;
	static const struct item first[] = {
		{ 'a', 0, 1, 0, MALLOC, 1, 8, 0x10 }, { 'g', 0, 2, 0, FREE, 1, 0x10, 0 },
		{ 'b', 0, 3, 0, FREE, 1, 0x10, 0 }, { 'c', 1, 4, 0, MALLOC, 2, 8, 0x20 },
	};
	static const struct item later = { 'd', 1, 5, 0, FREE, 2, 0x20, 0 };
	int64_t given_up = -1, busy = -1;

	setup_merge(64);
	assert_int_equal(at_reorder_unwritten(&merge), 0); /* nothing read yet */
	put_items(first, 4, 'g', &given_up);
	ring_image_discard(&rings[0], (uint64_t)given_up);
	drain_at(100);
	assert_string_equal(out, "abc");
	assert_int_equal(rings[0].consumer, rings[0].producer);
	assert_int_equal(at_reorder_unwritten(&merge), 0);

	put_items(&later, 1, 'd', &busy);
	assert_int_equal(at_reorder_unwritten(&merge), 0); /* reserved after the last drain */
	drain_at(101);
	assert_int_equal(at_reorder_unwritten(&merge), 1);
	assert_string_equal(out, "abc");
	ring_image_commit(&rings[1], (uint64_t)busy);
	drain_at(102);
	assert_int_equal(at_reorder_unwritten(&merge), 0);
	assert_string_equal(out, "abcd");
}

/* With discard set, a drain gives every ring back up to its producer position, records
 * written, given up or still being written alike, emits none of them (nor a realloc held), and
 * counts them; the window's close finds nothing unwritten, and the finish nothing to emit. */
static void test_discard(void **state)
{
	(void)state;
	static const struct item items[] = {
		{ 'a', 0, 1, 0, MALLOC, 1, 8, 0x10 },    { 'g', 0, 2, 0, FREE, 1, 0x10, 0 },
		{ 'e', 1, 3, 0, ENTRY, 2, 0x20, 0 },     { 'r', 1, 4, 3, RETURN, 2, 0x20, 0x30 },
		{ 'b', 2, 5, 0, MALLOC, 3, 8, 0x40 },
	};
	static const struct item later = { 'c', 2, 6, 0, FREE, 3, 0x40, 0 };
	int64_t given_up = -1, busy = -1;

	setup_merge(64);
	merge.discard = 1;
	put_items(items, 5, 'g', &given_up);
	ring_image_discard(&rings[0], (uint64_t)given_up);
	assert_int_equal(at_reorder_drain(&merge, T0 + 100 * US), 5);
	put_items(&later, 1, 'c', &busy); /* reserved, not yet written */
	assert_int_equal(at_reorder_drain(&merge, T0 + 101 * US), 1);
	assert_int_equal(at_reorder_unwritten(&merge), 0);
	assert_int_equal(at_reorder_drain(&merge, T0 + 102 * US), 0);
	at_reorder_finish(&merge);
	assert_int_equal(merge.discarded, 6);
	assert_int_equal(nout, 0);
	assert_int_equal(merge.emitted + merge.taken + merge.given_up + merge.late_returns, 0);
	for (unsigned i = 0; i < RINGS; i++)
		assert_int_equal(rings[i].consumer, rings[i].producer);
	assert_int_equal(rings[0].producer + rings[1].producer + rings[2].producer, 6);
}

/* A record reserved and not yet written, after laps of the ring: its slot still holds the
 * commit word of the record an older lap wrote there, whole, which reads as not yet written
 * (its number is another); it holds the output back until its own commit word comes. */
static void test_reserved_after_laps(void **state)
{
	(void)state;
	uint64_t us = 1, slots;
	int64_t busy_pos = -1;

	setup_merge_of(64, 1 << 16);
	slots = rings[0].slots;
	while (rings[0].producer < 3 * slots + 5) { /* three laps and some */
		struct item a = { 'a', 0, us, 0, MALLOC, 7, 8, 0x5000 + us };
		struct item f = { 'f', 0, us + 1, 0, FREE, 7, 0x5000 + us, 0 };

		put_items(&a, 1, '-', NULL);
		put_items(&f, 1, '-', NULL);
		us += 2;
		if (rings[0].producer - rings[0].consumer > slots / 2) {
			drain_at(us + 100);
			assert_int_equal(rings[0].consumer, rings[0].producer);
		}
	}
	drain_at(us + 100);
	assert_int_equal(rings[0].consumer, rings[0].producer);
	nout = 0;
	memset(out, 0, sizeof(out));
	struct item items[] = { { 'b', 0, us + 200, 0, MALLOC, 7, 8, 0x20 },
				{ 'c', 1, us + 201, 0, MALLOC, 8, 8, 0x30 } };
	uint64_t n = rings[0].producer;
	const struct at_record *old = ring_image_slot(&rings[0], n);

	assert_int_equal(old->state, AT_RECORD_WRITTEN); /* the last lap's record, whole */
	assert_int_equal(old->number, (uint32_t)(n - slots));
	put_items(items, 2, 'b', &busy_pos);
	drain_at(us + 400);
	assert_string_equal(out, "");
	ring_image_commit(&rings[0], (uint64_t)busy_pos);
	drain_at(us + 401);
	assert_string_equal(out, "bc");
}

/* A realloc whose return does not come: given up on after one to two ticks, counted; the
 * return that comes later is dropped and counted; the output goes on meanwhile. */
static void test_realloc_given_up(void **state)
{
	(void)state;
	static const struct item before[] = {
		{ 'a', 1, 1, 0, MALLOC, 2, 8, 0x60 }, { 'e', 0, 2, 0, ENTRY, 1, 0, 0 },
		{ 'b', 1, 3, 0, FREE, 2, 0x60, 0 },
	};
	static const struct item after[] = { { 'r', 0, 4, 2, RETURN, 1, 0x10, 0x50 },
					     { 'c', 1, 5, 0, MALLOC, 2, 8, 0x70 } };
	int64_t none;

	setup_merge(64);
	put_items(before, 3, 0, &none);
	drain_at(100);
	at_reorder_tick(&merge);
	assert_string_equal(out, "a");
	assert_int_equal(merge.given_up, 0);
	drain_at(200);
	at_reorder_tick(&merge); /* the entry was waiting at the last tick already */
	assert_string_equal(out, "ab");
	assert_int_equal(merge.given_up, 1);
	put_items(after, 2, 0, &none);
	drain_at(300);
	at_reorder_finish(&merge);
	assert_string_equal(out, "abc");
	assert_int_equal(merge.late_returns, 1);
	assert_int_equal(at_reorder_lost_events(&merge, 0), 1);
	assert_int_equal(at_reorder_lost_events(&merge, 1), 0); /* its return found no room */
	assert_int_equal(at_reorder_backlog(&merge), 0);
}

/* A realloc given up on whose return never comes (its thread died inside it) is forgotten
 * by the ticks AT_REORDER_GIVEN_UP_KEPT_NS later, so the table does not fill over a long run;
 * not before. */
static void test_given_up_forgotten(void **state)
{
	(void)state;
	static const struct item entry[] = { { 'e', 0, 2, 0, ENTRY, 1, 0, 0 } };
	uint64_t kept_us = AT_REORDER_GIVEN_UP_KEPT_NS / US;
	int64_t none;

	setup_merge(64);
	put_items(entry, 1, 0, &none);
	drain_at(100);
	at_reorder_tick(&merge);
	drain_at(200);
	at_reorder_tick(&merge);
	assert_int_equal(merge.given_up, 1);
	assert_int_equal(merge.nheld, 1); /* remembered: its return may still come */
	drain_at(kept_us - 1000);
	at_reorder_tick(&merge);
	drain_at(kept_us);
	at_reorder_tick(&merge);
	assert_int_equal(merge.nheld, 1);
	drain_at(kept_us + 1000);
	at_reorder_tick(&merge);
	drain_at(kept_us + 2000);
	at_reorder_tick(&merge);
	assert_int_equal(merge.nheld, 0);
	assert_int_equal(at_reorder_backlog(&merge), 0);
}

/* Marks go between the records before their time and those after, in time order. */
static void test_marks(void **state)
{
	(void)state;
	static const struct item items[] = {
		{ 'a', 0, 1, 0, MALLOC, 1, 8, 0x10 }, { 'b', 1, 3, 0, MALLOC, 2, 8, 0x20 },
		{ 'c', 0, 5, 0, FREE, 1, 0x10, 0 },
	};
	int64_t none;

	setup_merge(64);
	put_items(items, 3, 0, &none);
	at_reorder_mark(&merge, T0 + 4 * US);
	at_reorder_mark(&merge, T0 + 2 * US);
	assert_string_equal(out, ""); /* nothing drained yet */
	drain_at(100);
	assert_string_equal(out, "a|b|c");
	at_reorder_mark(&merge, T0 + 1 * US); /* passed already: at once */
	assert_string_equal(out, "a|b|c|");
	at_reorder_mark(&merge, T0 + 500 * US); /* ahead: at the finish */
	assert_string_equal(out, "a|b|c|");
	at_reorder_finish(&merge);
	assert_string_equal(out, "a|b|c||");
}

/* More realloc returns than the merge may hold: the reading stops, the output still moves on,
 * and everything goes out, in order, none given up. */
static void test_returns_full(void **state)
{
	(void)state;
	char want[64] = { 0 };
	unsigned n = 0;
	int64_t pos;

	setup_merge(3);
	/* six reallocs of six threads, each entry in ring 1, each return in ring 0 */
	for (unsigned k = 0; k < 6; k++) {
		struct item e = { '-', 1, 1 + 2 * k, 0, ENTRY, 10 + k, 0, 0 };
		struct item r = { (char)('A' + k), 0, 2 + 2 * k, 1 + 2 * k, RETURN, 10 + k,
				  0x1000 * (k + 1), 0x1000 * (k + 10) };
		struct at_record re = record_of(&e), rr = record_of(&r);

		assert_true((pos = ring_image_put(&rings[1], &re, 0)) >= 0);
		assert_true((pos = ring_image_put(&rings[0], &rr, 0)) >= 0);
		want[n++] = (char)('A' + k);
	}
	drain_at(100);
	assert_string_equal(out, want);
	assert_true(merge.stalls > 0);
	assert_int_equal(merge.given_up, 0);
	at_reorder_finish(&merge);
	assert_string_equal(out, want);
}

/* The results of the records emitted, in order (test_returns_grow). */
static uint64_t results[4096];
static unsigned nresults;

static void collect_result(void *arg, const struct at_record *r)
{
	(void)arg;
	if (nresults < sizeof(results) / sizeof(results[0]))
		results[nresults++] = r->result;
}

/* More returns read before their entries than the table's first size (the entries' ring held
 * up by a record still being written): it grows, and every realloc goes out in its place, none
 * given up on, no reading stopped. */
static void test_returns_grow(void **state)
{
	(void)state;
	const unsigned n = 1500;
	struct item busy = { '-', 1, 0, 0, MALLOC, 99, 8, 0xB00 };
	int64_t busy_pos = -1;

	setup_merge_of(4000, 1 << 18);
	merge.emit = collect_result;
	nresults = 0;
	put_items(&busy, 1, '-', &busy_pos);
	for (unsigned k = 0; k < n; k++) {
		struct item e = { '-', 1, 1 + 2 * k, 0, ENTRY, 10 + k, 0, 0 };
		struct item r = { 'R', 0, 2 + 2 * k, 1 + 2 * k, RETURN, 10 + k, 0x1000 * (k + 1),
				  0x100000 + 0x1000 * k };
		struct at_record re = record_of(&e), rr = record_of(&r);

		assert_true(ring_image_put(&rings[1], &re, 0) >= 0);
		assert_true(ring_image_put(&rings[0], &rr, 0) >= 0);
	}
	drain_at(2 * n + 100);
	assert_int_equal(merge.nheld, n);
	assert_true(merge.held_cap >= 2048); /* 1,500 held at once: grown twice */
	assert_int_equal(nresults, 0);
	ring_image_commit(&rings[1], (uint64_t)busy_pos);
	drain_at(2 * n + 200);
	assert_int_equal(merge.nheld, 0);
	assert_int_equal(merge.stalls, 0);
	assert_int_equal(merge.given_up, 0);
	assert_int_equal(nresults, n + 1);
	assert_int_equal(results[0], 0xB00);
	for (unsigned k = 0; k < n; k++)
		assert_int_equal(results[1 + k], 0x100000 + 0x1000 * k);
	at_reorder_finish(&merge);
	assert_int_equal(nresults, n + 1);
}

/* The times of the records emitted, and how many records the merge had read at the first. */
static uint64_t times[8192];
static unsigned ntimes;
static uint64_t taken_at_first;

static void collect_time(void *arg, const struct at_record *r)
{
	(void)arg;
	if (ntimes == 0)
		taken_at_first = merge.taken;
	if (ntimes < sizeof(times) / sizeof(times[0]))
		times[ntimes++] = r->time;
}

/* Every time emitted after the first one later than the one before it. */
static void assert_times_rise(void)
{
	for (unsigned k = 1; k < ntimes; k++)
		if (times[k] <= times[k - 1])
			fail_msg("record %u went out at %llu after %llu", k,
				 (unsigned long long)times[k], (unsigned long long)times[k - 1]);
}

/* A drain that finds more records than one round reads (megabytes when the daemon is behind)
 * lets records out round by round, each while its lines are still in the cache, and ends with
 * every ring read, in time order, as one reading of everything would. */
static void test_rounds(void **state)
{
	(void)state;
	const unsigned per_ring = 2000; /* 160 KB in each ring: several rounds */
	int64_t none;

	setup_merge_of(64, 1 << 20);
	merge.emit = collect_time;
	ntimes = 0;
	for (unsigned k = 0; k < per_ring * RINGS; k++) {
		/* thread k % RINGS on ring k % RINGS; each free is of the block its neighbour
		 * thread allocated a microsecond before, on another ring */
		struct item it = { '-', k % RINGS, 1 + k, 0, k % 2 ? FREE : MALLOC, 1 + k % RINGS,
				   k % 2 ? 0x1000 * k : 8, k % 2 ? 0 : 0x1000 * (k + 1) };

		put_items(&it, 1, 0, &none);
	}
	drain_at(per_ring * RINGS + 100);
	assert_int_equal(ntimes, per_ring * RINGS);
	assert_times_rise();
	/* the first went out after the first round, not after everything was read */
	assert_true(taken_at_first < per_ring * RINGS / 2);
	for (unsigned k = 0; k < RINGS; k++)
		assert_int_equal(rings[k].consumer, rings[k].producer);
	at_reorder_finish(&merge);
	assert_int_equal(ntimes, per_ring * RINGS);
}

/* A realloc entry older than the give-up time whose return, on another ring (its thread
 * migrated), lies past that ring's first round: the round does not give the entry up, since the
 * next one reads the return; one reading of everything would have read it too. */
static void test_round_keeps_entry(void **state)
{
	(void)state;
	const unsigned n = 1000; /* 80 KB of ring 1 before the return */
	int64_t none;

	setup_merge_of(64, 1 << 20);
	merge.emit = collect_time;
	ntimes = 0;
	drain_at(5000);
	at_reorder_tick(&merge);
	at_reorder_tick(&merge); /* give up on entries before 5,000 us from now on */
	struct item e = { 'e', 0, 1, 0, ENTRY, 1, 0, 0 };

	put_items(&e, 1, 0, &none);
	for (unsigned k = 0; k < n; k++) {
		struct item it = { '-', 1, 2 + k, 0, k % 2 ? FREE : MALLOC, 2,
				   k % 2 ? 0x100000 + 0x1000 * k : 8,
				   k % 2 ? 0 : 0x100000 + 0x1000 * (k + 1) };

		put_items(&it, 1, 0, &none);
	}
	struct item r = { 'r', 1, 2 + n, 1, RETURN, 1, 0x10, 0x50 };

	put_items(&r, 1, 0, &none);
	drain_at(6000);
	assert_int_equal(merge.given_up, 0);
	assert_int_equal(ntimes, n + 1);
	assert_times_rise();
	assert_int_equal(times[n], T0 + (2 + n) * US); /* the realloc, at its return */
	at_reorder_finish(&merge);
	assert_int_equal(ntimes, n + 1);
}

/* Nine rings, three records each, three rings at each time: the output is in time order, and
 * among records of the same time, in the order of their rings (the merge takes the first ring
 * whose head record is the earliest). */
static void test_many_rings(void **state)
{
	enum { MANY = 9, EACH = 3 };
	struct ring_image many[MANY];
	struct at_ring many_views[MANY];
	struct at_reorder m;
	char want[MANY * EACH + 1], got[MANY * EACH + 1];
	unsigned n = 0;

	(void)state;
	for (unsigned i = 0; i < MANY; i++) {
		assert_int_equal(ring_image_init(&many[i], 1 << 16), 0);
		many_views[i] = many[i].view;
		for (unsigned j = 0; j < EACH; j++) {
			/* rings 0, 3 and 6 at 1, 5, 9 us; 1, 4, 7 at 2, 6, 10; ... */
			struct item it = { (char)('A' + i * EACH + j), i, 1 + j * 4 + i % 3, 0,
					   MALLOC, 1 + i, 8, 0x1000 + 16 * (i * EACH + j) };
			struct at_record r = record_of(&it);

			assert_true(ring_image_put(&many[i], &r, 0) >= 0);
		}
	}
	for (unsigned us = 1; us <= 1 + (EACH - 1) * 4 + 2; us++) /* by time, then by ring */
		for (unsigned i = 0; i < MANY; i++)
			for (unsigned j = 0; j < EACH; j++)
				if (1 + j * 4 + i % 3 == us)
					want[n++] = (char)('A' + i * EACH + j);
	want[n] = 0;
	assert_int_equal(n, MANY * EACH);
	assert_int_equal(at_reorder_init(&m, many_views, MANY, 16, collect, NULL), 0);
	memset(out, 0, sizeof(out));
	nout = 0;
	at_reorder_drain(&m, T0 + 1000 * US);
	memcpy(got, out, sizeof(got) - 1);
	got[sizeof(got) - 1] = 0;
	assert_string_equal(got, want);
	assert_int_equal(m.emitted, MANY * EACH);
	at_reorder_free(&m);
	for (unsigned i = 0; i < MANY; i++)
		ring_image_free(&many[i]);
}

/* The records a ring holds when it wakes the daemon (ring.h): an eighth of the ring, no more
 * than its share of 1 MiB of all the rings' and never less than 128 KiB for that share, 1 at
 * least. */
static void test_wakeup_records(void **state)
{
	static const struct {
		uint64_t slots, nrings, want;
	} cases[] = {
		{ 1ull << 19, 2, 8192 },    /* 32 MiB rings on 2 CPUs: 512 KiB */
		{ 1ull << 19, 1, 16384 },   /* one CPU: 1 MiB */
		{ 1ull << 19, 0, 16384 },   /* no count: as for one */
		{ 1ull << 16, 4, 4096 },    /* 4 MiB rings on 4 CPUs: 256 KiB */
		{ 1ull << 16, 8, 2048 },    /* 8 CPUs: 128 KiB */
		{ 1ull << 16, 16, 2048 },   /* 16: 128 KiB, not 64 */
		{ 1ull << 16, 256, 2048 },  /* 256: 128 KiB, not 4 */
		{ 1ull << 13, 2, 1024 },    /* a 512 KiB ring: its eighth, 64 KiB */
		{ 1ull << 19, 3, 5461 },    /* 3 CPUs: a third of 1 MiB, 349,525 bytes, in records */
		{ 64, 2, 8 },               /* the smallest ring */
		{ 4, 2, 1 },                /* an eighth of less than 8 slots: 1 */
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t got = at_ring_wakeup_records(cases[i].slots, cases[i].nrings);

		if (got != cases[i].want)
			fail_msg("case %u: %llu slots, %llu rings: %llu records, want %llu", i,
				 (unsigned long long)cases[i].slots,
				 (unsigned long long)cases[i].nrings, (unsigned long long)got,
				 (unsigned long long)cases[i].want);
	}
}

static int teardown(void **state)
{
	(void)state;
	at_reorder_free(&merge);
	for (unsigned i = 0; i < RINGS; i++)
		ring_image_free(&rings[i]);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_cases),
		cmocka_unit_test(test_busy_record),
		cmocka_unit_test(test_reserved_after_laps),
		cmocka_unit_test(test_discarded_and_unwritten),
		cmocka_unit_test(test_discard),
		cmocka_unit_test(test_realloc_given_up),
		cmocka_unit_test(test_given_up_forgotten),
		cmocka_unit_test(test_marks),
		cmocka_unit_test(test_returns_full),
		cmocka_unit_test(test_returns_grow),
		cmocka_unit_test(test_rounds),
		cmocka_unit_test(test_round_keeps_entry),
		cmocka_unit_test(test_many_rings),
		cmocka_unit_test(test_wakeup_records),
	};

	return cmocka_run_group_tests(tests, NULL, teardown);
}
