/* test_daemon_reorder.c: unit tests of daemon/trace/reorder.c, the causal reorder window, on
 * hand-built record sequences: every arrival order, every realloc interleaving we could
 * construct, gaps, late records, window overflow and the loss accounting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <linux/types.h>

#include "../../daemon/trace/reorder.h"

#define MAX_OUT 256

struct collected {
	uint64_t seq[MAX_OUT];
	unsigned n;
};

static void collect(void *arg, const struct at_record *r)
{
	struct collected *c = arg;

	assert_true(c->n < MAX_OUT);
	c->seq[c->n++] = r->seq;
}

static struct at_record ev(uint64_t seq, uint32_t pid, uint32_t func, uint64_t arg0,
			   uint64_t result)
{
	struct at_record r = { .seq = seq, .seq_entry = seq, .pid = pid, .tid = pid,
			       .func = func, .arg = { arg0, 8 }, .result = result };
	return r;
}

static struct at_record alloc_ev(uint64_t seq, uint32_t pid, uint64_t ptr)
{
	return ev(seq, pid, AT_PROBE_MALLOC, 8, ptr);
}

static struct at_record free_ev(uint64_t seq, uint32_t pid, uint64_t ptr)
{
	return ev(seq, pid, AT_PROBE_FREE, ptr, 0);
}

static struct at_record realloc_ev(uint64_t entry, uint64_t ret, uint32_t pid, uint64_t old,
				   uint64_t result)
{
	struct at_record r = ev(ret, pid, AT_PROBE_REALLOC, old, result);

	r.seq_entry = entry;
	return r;
}

/* Pushes recs in the order given by perm (NULL: as listed), finishes at final, and checks the
 * emitted order (by return number) and the lost count. */
static void run_case(const struct at_record *recs, unsigned n, const unsigned *perm,
		     uint64_t final, const uint64_t *want, unsigned nwant, uint64_t want_lost)
{
	struct at_reorder r;
	struct collected c = { .n = 0 };

	assert_int_equal(at_reorder_init(&r, 6, 8, collect, &c), 0);
	for (unsigned i = 0; i < n; i++)
		at_reorder_push(&r, &recs[perm ? perm[i] : i]);
	at_reorder_finish(&r, final);
	assert_int_equal(c.n, nwant);
	for (unsigned i = 0; i < nwant; i++)
		assert_int_equal(c.seq[i], want[i]);
	assert_int_equal(at_reorder_lost_events(&r, 0), want_lost);
	assert_int_equal(r.emitted, nwant);
	at_reorder_free(&r);
}

/* Every permutation of recs (n <= 6) gives the same output. */
static void run_all_orders(const struct at_record *recs, unsigned n, uint64_t final,
			   const uint64_t *want, unsigned nwant)
{
	unsigned perm[6], c[6] = { 0 }, i = 0, count = 1;

	assert_true(n <= 6);
	for (unsigned k = 0; k < n; k++)
		perm[k] = k;
	run_case(recs, n, perm, final, want, nwant, 0);
	while (i < n) { /* Heap's algorithm */
		if (c[i] < i) {
			unsigned j = i % 2 ? c[i] : 0, t = perm[j];
			perm[j] = perm[i];
			perm[i] = t;
			run_case(recs, n, perm, final, want, nwant, 0);
			count++;
			c[i]++;
			i = 0;
		} else {
			c[i++] = 0;
		}
	}
	unsigned fact = 1;
	for (unsigned k = 2; k <= n; k++)
		fact *= k;
	assert_int_equal(count, fact);
}

static void test_in_order_and_shuffled(void **state)
{
	(void)state;
	const struct at_record recs[] = {
		alloc_ev(0, 1, 0x10), alloc_ev(1, 1, 0x20), free_ev(2, 1, 0x10),
		alloc_ev(3, 1, 0x10), free_ev(4, 1, 0x20),
	};
	const uint64_t want[] = { 0, 1, 2, 3, 4 };
	run_all_orders(recs, 5, 5, want, 5);
}

/* Thread A: realloc(0xa) numbered 0 at entry, 3 at return, moved to 0xb. Thread B receives 0xa
 * (numbered 1) before A's return: the realloc must come before B's malloc. */
static void test_realloc_old_address_reused_in_flight(void **state)
{
	(void)state;
	const struct at_record recs[] = {
		realloc_ev(0, 3, 1, 0xa, 0xb), alloc_ev(1, 1, 0xa), alloc_ev(2, 1, 0xc),
	};
	const uint64_t want[] = { 3, 1, 2 };
	run_all_orders(recs, 3, 4, want, 3);
}

/* Thread B frees 0xb (numbered 1) and realloc then receives 0xb: the free must come first. */
static void test_realloc_new_address_freed_in_flight(void **state)
{
	(void)state;
	const struct at_record recs[] = {
		realloc_ev(0, 2, 1, 0xa, 0xb), free_ev(1, 1, 0xb),
	};
	const uint64_t want[] = { 1, 2 };
	run_all_orders(recs, 2, 3, want, 2);
}

/* Both at once: free(0xb) at 1, malloc=0xa at 3, realloc 0 -> 4: free, realloc, malloc. */
static void test_realloc_both_constraints(void **state)
{
	(void)state;
	const struct at_record recs[] = {
		realloc_ev(0, 4, 1, 0xa, 0xb), free_ev(1, 1, 0xb), alloc_ev(2, 1, 0xd),
		alloc_ev(3, 1, 0xa),
	};
	const uint64_t want[] = { 1, 2, 4, 3 };
	run_all_orders(recs, 4, 5, want, 4);
}

/* realloc(p,0) returning NULL released p: another thread's malloc of p comes after it. */
static void test_realloc_to_zero(void **state)
{
	(void)state;
	const struct at_record recs[] = {
		realloc_ev(0, 2, 1, 0xa, 0), alloc_ev(1, 1, 0xa),
	};
	const uint64_t want[] = { 2, 1 };
	run_all_orders(recs, 2, 3, want, 2);
}

/* realloc(NULL,n) is a malloc: a free of its result in flight comes first. */
static void test_realloc_null(void **state)
{
	(void)state;
	const struct at_record recs[] = {
		realloc_ev(0, 2, 1, 0, 0xb), free_ev(1, 1, 0xb),
	};
	const uint64_t want[] = { 1, 2 };
	run_all_orders(recs, 2, 3, want, 2);
}

/* A realloc in place is written at its entry number. */
static void test_realloc_in_place(void **state)
{
	(void)state;
	const struct at_record recs[] = {
		realloc_ev(0, 2, 1, 0xa, 0xa), alloc_ev(1, 1, 0xc),
	};
	const uint64_t want[] = { 2, 1 };
	run_all_orders(recs, 2, 3, want, 2);
}

/* Another process's allocation of the same address does not move the realloc. */
static void test_realloc_other_process(void **state)
{
	(void)state;
	const struct at_record recs[] = {
		realloc_ev(0, 2, 1, 0xa, 0xb), alloc_ev(1, 2, 0xa),
	};
	const uint64_t want[] = { 1, 2 };
	run_all_orders(recs, 2, 3, want, 2);
}

/* Chained: realloc A (0xa -> 0xb, 0..5) and realloc B (0xc -> 0xa, 2..4): B allocates A's old
 * address, so A goes first; a malloc of B's old address (3) comes after B... which is held
 * until 4: B is written before 3. */
static void test_realloc_chain(void **state)
{
	(void)state;
	const struct at_record recs[] = {
		realloc_ev(0, 5, 1, 0xa, 0xb), alloc_ev(1, 1, 0xd), realloc_ev(2, 4, 1, 0xc, 0xa),
		alloc_ev(3, 1, 0xc),
	};
	const uint64_t want[] = { 1, 5, 4, 3 };
	run_all_orders(recs, 4, 6, want, 4);
}

/* Two reallocs in flight that do not interact are each written at their return. */
static void test_two_reallocs_in_flight(void **state)
{
	(void)state;
	const struct at_record recs[] = {
		realloc_ev(0, 3, 1, 0xa, 0xb), realloc_ev(1, 2, 1, 0xc, 0xd), free_ev(4, 1, 0xe),
	};
	const uint64_t want[] = { 2, 3, 4 };
	run_all_orders(recs, 3, 5, want, 3);
}

/* A number that never comes is lost at finish; the rest flows. */
static void test_gap_counted_at_finish(void **state)
{
	(void)state;
	const struct at_record recs[] = { alloc_ev(0, 1, 0x10), alloc_ev(2, 1, 0x20) };
	const uint64_t want[] = { 0, 2 };
	run_case(recs, 2, NULL, 3, want, 2, 1);
	/* numbers handed out after the last record seen count too */
	run_case(recs, 2, NULL, 6, want, 2, 4);
}

/* A gap is given up on after two ticks, not before one; what follows is then emitted. */
static void test_gap_ticks(void **state)
{
	(void)state;
	struct at_reorder r;
	struct collected c = { .n = 0 };
	struct at_record a = alloc_ev(1, 1, 0x10), b = alloc_ev(2, 1, 0x20);

	assert_int_equal(at_reorder_init(&r, 6, 8, collect, &c), 0);
	at_reorder_push(&r, &a);
	at_reorder_tick(&r);
	assert_int_equal(c.n, 0); /* number 0 still awaited */
	at_reorder_push(&r, &b);
	at_reorder_tick(&r);      /* 0 missing since the last tick: given up */
	assert_int_equal(c.n, 2);
	assert_int_equal(r.missing, 1);
	/* the late record is dropped and not counted twice */
	struct at_record late = alloc_ev(0, 1, 0x30);
	at_reorder_push(&r, &late);
	assert_int_equal(c.n, 2);
	assert_int_equal(r.late, 1);
	at_reorder_finish(&r, 3);
	assert_int_equal(at_reorder_lost_events(&r, 0), 1);
	at_reorder_free(&r);
}

/* A realloc whose entry number was given up on (its thread seemed dead) and that returns
 * later: one lost event, not two, and its return number does not stall the window. */
static void test_realloc_entry_given_up(void **state)
{
	(void)state;
	struct at_reorder r;
	struct collected c = { .n = 0 };
	struct at_record x = alloc_ev(1, 1, 0x10), re = realloc_ev(0, 2, 1, 0xa, 0xb),
			 y = alloc_ev(3, 1, 0x20);

	assert_int_equal(at_reorder_init(&r, 6, 8, collect, &c), 0);
	at_reorder_push(&r, &x);
	at_reorder_tick(&r);
	at_reorder_tick(&r);
	assert_int_equal(c.n, 1);
	at_reorder_push(&r, &re);
	at_reorder_push(&r, &y);
	assert_int_equal(c.n, 2);
	assert_int_equal(c.seq[1], 3);
	at_reorder_finish(&r, 4);
	assert_int_equal(at_reorder_lost_events(&r, 0), 1);
	at_reorder_free(&r);
}

/* A realloc whose two numbers were both given up on: one lost event. */
static void test_realloc_both_given_up(void **state)
{
	(void)state;
	struct at_reorder r;
	struct collected c = { .n = 0 };
	struct at_record x = alloc_ev(2, 1, 0x10), re = realloc_ev(0, 1, 1, 0xa, 0xb);

	assert_int_equal(at_reorder_init(&r, 6, 8, collect, &c), 0);
	at_reorder_push(&r, &x);
	at_reorder_tick(&r);
	at_reorder_tick(&r);
	at_reorder_push(&r, &re);
	at_reorder_finish(&r, 3);
	assert_int_equal(c.n, 1);
	assert_int_equal(at_reorder_lost_events(&r, 0), 1);
	/* a realloc the BPF program could not reserve leaves two numbers for one event */
	assert_int_equal(at_reorder_lost_events(&r, 1), 0);
	at_reorder_free(&r);
}

/* A killed thread's realloc never returns: its entry number is lost, nothing stalls. */
static void test_realloc_never_returns(void **state)
{
	(void)state;
	const struct at_record recs[] = { alloc_ev(1, 1, 0x10), free_ev(2, 1, 0x10) };
	const uint64_t want[] = { 1, 2 };
	run_case(recs, 2, NULL, 3, want, 2, 1);
}

/* Numbers far ahead push the window: the oldest gaps are given up on, in order. */
static void test_window_overflow(void **state)
{
	(void)state;
	struct at_reorder r;
	struct collected c = { .n = 0 };

	assert_int_equal(at_reorder_init(&r, 3, 8, collect, &c), 0); /* 8 slots */
	for (uint64_t s = 1; s <= 20; s++) {
		struct at_record a = alloc_ev(s, 1, 0x10 * s);
		at_reorder_push(&r, &a);
	}
	assert_int_equal(c.n, 20);
	for (unsigned i = 0; i < 20; i++)
		assert_int_equal(c.seq[i], i + 1);
	assert_int_equal(r.missing, 1);
	at_reorder_finish(&r, 21);
	assert_int_equal(at_reorder_lost_events(&r, 0), 1);
	at_reorder_free(&r);
}

/* With no room to hold a realloc it is written at its entry number (never dropped). */
static void test_held_reallocs_full(void **state)
{
	(void)state;
	struct at_reorder r;
	struct collected c = { .n = 0 };
	struct at_record a = realloc_ev(0, 3, 1, 0xa, 0xb), b = realloc_ev(1, 4, 1, 0xc, 0xd),
			 x = alloc_ev(2, 1, 0x50);

	assert_int_equal(at_reorder_init(&r, 6, 1, collect, &c), 0);
	at_reorder_push(&r, &a);
	at_reorder_push(&r, &b);
	at_reorder_push(&r, &x);
	at_reorder_finish(&r, 5);
	assert_int_equal(c.n, 3);
	assert_int_equal(c.seq[0], 4); /* b, written at its entry: nowhere to hold it */
	assert_int_equal(c.seq[1], 2);
	assert_int_equal(c.seq[2], 3);
	assert_int_equal(at_reorder_lost_events(&r, 0), 0);
	at_reorder_free(&r);
}

/* A mark collected as seq UINT64_MAX, so it shows in the order. */
static void collect_mark(void *arg)
{
	struct collected *c = arg;

	assert_true(c->n < MAX_OUT);
	c->seq[c->n++] = UINT64_MAX;
}

/* Marks stand between the numbers below their counter value and those from it on, whatever
 * the arrival order: before anything, between events, in a gap that is given up on, after
 * everything (at finish), two at the same place, and one asked for after its place passed. */
static void test_marks(void **state)
{
	static const struct {
		uint64_t marks[3];
		unsigned nmarks;
		uint64_t want[8];
		unsigned nwant;
	} cases[] = {
		{ { 0 }, 1, { UINT64_MAX, 0, 1, 2, 4 }, 5 },
		{ { 2 }, 1, { 0, 1, UINT64_MAX, 2, 4 }, 5 },
		{ { 3 }, 1, { 0, 1, 2, UINT64_MAX, 4 }, 5 },  /* 3 never arrives */
		{ { 4 }, 1, { 0, 1, 2, UINT64_MAX, 4 }, 5 },
		{ { 9 }, 1, { 0, 1, 2, 4, UINT64_MAX }, 5 },  /* after the last: at finish */
		{ { 2, 2, 5 }, 3, { 0, 1, UINT64_MAX, UINT64_MAX, 2, 4, UINT64_MAX }, 7 },
	};
	static const unsigned orders[][4] = { { 0, 1, 2, 3 }, { 3, 2, 1, 0 }, { 1, 3, 0, 2 } };

	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		for (size_t o = 0; o < sizeof(orders) / sizeof(orders[0]); o++) {
			struct at_record recs[4] = { alloc_ev(0, 1, 0x10), alloc_ev(1, 1, 0x20),
						     free_ev(2, 1, 0x10), alloc_ev(4, 1, 0x30) };
			struct at_reorder r;
			struct collected c = { .n = 0 };

			assert_int_equal(at_reorder_init(&r, 6, 8, collect, &c), 0);
			r.mark = collect_mark;
			for (unsigned m = 0; m < cases[k].nmarks; m++)
				at_reorder_mark(&r, cases[k].marks[m]);
			for (unsigned i = 0; i < 4; i++)
				at_reorder_push(&r, &recs[orders[o][i]]);
			at_reorder_finish(&r, 5);
			if (c.n != cases[k].nwant)
				fail_msg("case %zu order %zu: %u outputs", k, o, c.n);
			for (unsigned i = 0; i < c.n; i++)
				if (c.seq[i] != cases[k].want[i])
					fail_msg("case %zu order %zu: output %u is %llu", k, o, i,
						 (unsigned long long)c.seq[i]);
			at_reorder_free(&r);
		}
	}
}

/* A mark asked for after the events before it went out is written at once; more marks than
 * the window holds are counted as dropped, never lost silently. */
static void test_marks_late_and_full(void **state)
{
	struct at_record a = alloc_ev(0, 1, 0x10), b = alloc_ev(1, 1, 0x20);
	struct at_reorder r;
	struct collected c = { .n = 0 };

	(void)state;
	assert_int_equal(at_reorder_init(&r, 6, 8, collect, &c), 0);
	r.mark = collect_mark;
	at_reorder_push(&r, &a);
	at_reorder_push(&r, &b);
	at_reorder_mark(&r, 1);
	assert_int_equal(c.n, 3);
	assert_int_equal(c.seq[2], UINT64_MAX);
	for (unsigned i = 0; i < AT_REORDER_MARKS + 3; i++)
		at_reorder_mark(&r, 100);
	assert_int_equal(r.nmarks, AT_REORDER_MARKS);
	assert_int_equal(r.marks_dropped, 3);
	at_reorder_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_marks),
		cmocka_unit_test(test_marks_late_and_full),
		cmocka_unit_test(test_in_order_and_shuffled),
		cmocka_unit_test(test_realloc_old_address_reused_in_flight),
		cmocka_unit_test(test_realloc_new_address_freed_in_flight),
		cmocka_unit_test(test_realloc_both_constraints),
		cmocka_unit_test(test_realloc_to_zero),
		cmocka_unit_test(test_realloc_null),
		cmocka_unit_test(test_realloc_in_place),
		cmocka_unit_test(test_realloc_other_process),
		cmocka_unit_test(test_realloc_chain),
		cmocka_unit_test(test_two_reallocs_in_flight),
		cmocka_unit_test(test_gap_counted_at_finish),
		cmocka_unit_test(test_gap_ticks),
		cmocka_unit_test(test_realloc_entry_given_up),
		cmocka_unit_test(test_realloc_both_given_up),
		cmocka_unit_test(test_realloc_never_returns),
		cmocka_unit_test(test_window_overflow),
		cmocka_unit_test(test_held_reallocs_full),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
