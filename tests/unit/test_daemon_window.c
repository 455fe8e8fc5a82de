/* test_daemon_window.c: unit tests of daemon/trace/window.c over the fake BPF program
 * (tests/unit/fake_bpf.c): recording on at one instant, off at one instant before the calls in
 * flight are looked at, the wait for them and for the records reserved by then (the rings
 * taken meanwhile), and the calls that never finished. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "alloctap.h"
#include "fake_bpf.h"
#include "reorder.h"
#include "window.h"

static struct at_bpf *program(void)
{
	struct at_bpf_options o = { .ring_bytes = 4096, .thread_slots = 1 };

	fake_bpf_reset();
	return at_bpf_open(&o);
}

static struct at_reorder merge;

static unsigned emitted;

static void emit_count(void *arg, const struct at_record *rec)
{
	(void)arg;
	(void)rec;
	emitted++;
}

/* The program with its rings open, and a merge of them for at_window_close to drain. */
static struct at_bpf *program_with_rings(void)
{
	struct at_bpf *b = program();
	unsigned n;

	at_reorder_free(&merge);
	assert_int_equal(at_bpf_ring_open(b), 0);
	const struct at_ring *rings = at_bpf_rings(b, &n);
	assert_int_equal(at_reorder_init(&merge, rings, n, 16, emit_count, NULL), 0);
	fake_bpf.consumes = 0;
	emitted = 0;
	return b;
}

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* Recording goes on once, after the settle time. */
static void test_open(void **state)
{
	(void)state;
	struct at_bpf *b = program();

	at_window_open(b, 0);
	assert_int_equal(fake_bpf.recording, 1);
	assert_int_equal(fake_bpf.recording_switches, 1);

	b = program();
	uint64_t start = now_ms();
	at_window_open(b, 30);
	assert_true(now_ms() - start >= 30);
	assert_int_equal(fake_bpf.recording, 1);
	assert_int_equal(fake_bpf.recording_switches, 1);
	assert_int_equal(fake_bpf.in_flight_reads, 0); /* opening looks at nothing */
}

/* The in-flight sum splits into calls (low half) and reallocs (high half). */
static void test_in_flight(void **state)
{
	(void)state;
	static const struct {
		uint64_t sum;
		uint64_t calls, reallocs;
	} cases[] = {
		{ 0, 0, 0 },
		{ 3 * AT_INFLIGHT_CALL, 3, 0 },
		{ 2 * AT_INFLIGHT_REALLOC + AT_INFLIGHT_CALL, 3, 2 },
		{ 5 * AT_INFLIGHT_REALLOC, 5, 5 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct at_bpf *b = program();
		uint64_t calls = 99, reallocs = 99;

		fake_bpf.in_flight[0] = cases[i].sum;
		fake_bpf.nin_flight = 1;
		assert_int_equal(at_window_in_flight(b, &calls, &reallocs), 0);
		assert_int_equal(calls, cases[i].calls);
		assert_int_equal(reallocs, cases[i].reallocs);
	}
	struct at_bpf *b = program();
	uint64_t calls, reallocs;
	fake_bpf.in_flight_error = 1;
	assert_int_equal(at_window_in_flight(b, &calls, &reallocs), -1);
}

/* Closing: recording off before the first look at the calls in flight, then the ring taken and
 * the count read again until none is in flight (or the wait is over); the calls left are
 * returned. */
static void test_close(void **state)
{
	(void)state;
	static const struct {
		uint64_t sums[4];
		unsigned nsums;
		unsigned wait_ms;
		uint64_t left;      /* at_window_close's result */
		unsigned reads;     /* in-flight reads (0: at least 3, the wait ran out) */
	} cases[] = {
		{ { 0 }, 1, 1000, 0, 1 },                        /* nothing in flight */
		{ { 2, 1, 0 }, 3, 1000, 0, 3 },                  /* two calls finish */
		{ { AT_INFLIGHT_REALLOC, 0 }, 2, 1000, 0, 2 },   /* a realloc finishes */
		{ { AT_INFLIGHT_REALLOC + 1 }, 1, 5, 2, 0 },     /* a thread stopped inside */
		{ { 0 }, 0, 1000, 0, 1 },                        /* no count: 0 */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct at_bpf *b = program_with_rings();

		at_window_open(b, 0);
		for (unsigned k = 0; k < cases[i].nsums; k++)
			fake_bpf.in_flight[k] = cases[i].sums[k];
		fake_bpf.nin_flight = cases[i].nsums;
		assert_int_equal(at_window_close(b, &merge, cases[i].wait_ms), cases[i].left);
		assert_int_equal(fake_bpf.recording, 0);
		assert_int_equal(fake_bpf.recording_switches, 2);
		assert_int_equal(fake_bpf.consumes_at_off, 0); /* off before anything was taken */
		if (cases[i].reads)
			assert_int_equal(fake_bpf.in_flight_reads, cases[i].reads);
		else
			assert_true(fake_bpf.in_flight_reads >= 3);
		/* the ring is taken before each look, so that the returns find room */
		assert_int_equal(fake_bpf.consumes, fake_bpf.in_flight_reads);
	}
}

/* Nothing in flight, and a record (a free's, or a return's, which left flight once reserved)
 * still being written below a producer position read after the count: the close waits until
 * it is written and read. Written at the third look: three looks, the record out. Never
 * written: the wait runs out, the record not read (the finish still reads it if it comes). */
static void test_close_waits_unwritten(void **state)
{
	(void)state;
	static const struct {
		unsigned commit_at, wait_ms;
		unsigned consumes; /* 0: at least 3, the wait ran out */
		unsigned emitted;  /* the records out after the finish */
	} cases[] = {
		{ 3, 1000, 3, 1 },
		{ 0, 5, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct at_bpf *b = program_with_rings();
		struct at_record r = { .time = fake_bpf.clock - 1000, .pid = 1, .tid = 1,
				       .func = AT_PROBE_FREE, .arg = { 0x10, 0 } };
		int64_t pos = ring_image_put(&fake_bpf.rings[1], &r, 1);

		assert_int_equal(pos, 0);
		fake_bpf.commit_at = cases[i].commit_at;
		fake_bpf.commit_ring = 1;
		fake_bpf.commit_pos = (uint64_t)pos;
		at_window_open(b, 0);
		assert_int_equal(at_window_close(b, &merge, cases[i].wait_ms), 0);
		if (cases[i].consumes)
			assert_int_equal(fake_bpf.consumes, cases[i].consumes);
		else
			assert_true(fake_bpf.consumes >= 3);
		assert_int_equal(fake_bpf.in_flight_reads, fake_bpf.consumes);
		assert_int_equal(at_reorder_unwritten(&merge), !cases[i].commit_at);
		at_reorder_finish(&merge);
		assert_int_equal(emitted, cases[i].emitted);
	}
}

/* A count that cannot be read ends the wait at once. */
static void test_close_unreadable(void **state)
{
	(void)state;
	struct at_bpf *b = program_with_rings();

	fake_bpf.in_flight_error = 1;
	assert_int_equal(at_window_close(b, &merge, 1000), 0);
	assert_int_equal(fake_bpf.recording, 0);
	assert_int_equal(fake_bpf.consumes, 1);
}

/* After the probes are gone, the unfinished calls counted lost: a realloc's entry record waits
 * for a return the merge gives up on, and counts, so it is left out. */
static void test_unfinished(void **state)
{
	(void)state;
	static const struct {
		uint64_t sum;
		int error;
		uint64_t lost;
	} cases[] = {
		{ 0, 0, 0 },
		{ 1, 0, 1 },
		{ 3 * AT_INFLIGHT_CALL + AT_INFLIGHT_REALLOC, 0, 3 },
		{ 2 * AT_INFLIGHT_REALLOC, 0, 0 },
		{ 7, 1, 0 }, /* unreadable: nothing counted */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct at_bpf *b = program();

		fake_bpf.in_flight[0] = cases[i].sum;
		fake_bpf.nin_flight = 1;
		fake_bpf.in_flight_error = cases[i].error;
		assert_int_equal(at_window_unfinished(b), cases[i].lost);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open),
		cmocka_unit_test(test_in_flight),
		cmocka_unit_test(test_close),
		cmocka_unit_test(test_close_waits_unwritten),
		cmocka_unit_test(test_close_unreadable),
		cmocka_unit_test(test_unfinished),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
