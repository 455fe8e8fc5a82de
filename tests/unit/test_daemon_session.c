/* test_daemon_session.c: unit tests of daemon/session.c over the fake BPF program
 * (tests/unit/fake_bpf.c), whose ring delivers the records a test queues: what the program is
 * told at the open, the tick (records to the output in order, losses noted from the program's
 * counters, the end of the session once the traced processes are gone), ended processes
 * leaving the process table once the output passes their end, RSS samples, and the losses
 * counted at the finish. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "alloctap.h"
#include "fake_bpf.h"
#include "prim.h"
#include "proctable.h"
#include "session.h"
#include "source.h"
#include "window.h"

static struct at_session session;
static int trace_fd = -1; /* a copy of the output's descriptor, to read the trace back */

/* A --pid session over the fake program, writing a trace of format into a memory file. 0, or
 * at_session_open's -1 (the session then needs close_session all the same). */
static int open_session(enum at_sink_format format, int stacks)
{
	struct at_session *d = &session;

	fake_bpf_reset();
	memset(d, 0, sizeof(*d));
	d->opt.dest.fd = memfd_create("trace", 0);
	if (trace_fd >= 0)
		close(trace_fd); /* the last session's */
	trace_fd = dup(d->opt.dest.fd);
	d->opt.format = format;
	d->opt.ringbuf_size = 1 << 16;
	d->opt.npids = 1;
	d->opt.stacks = stacks;
	return at_session_open(d);
}

/* pid's flags in the session's process table (enum at_proc_flag), 0 when it has no slot. */
static unsigned proc_flags(pid_t pid)
{
	const struct at_proc *p = at_proctable_find(&session.table, pid);

	return p ? p->flags : 0;
}

/* Time n on the records' clock, well before the fake's clock after a reset (FAKE_BPF_CLOCK),
 * and each a millisecond apart (far more than the merge's slack). */
#define T(n) (1000000000ull + (uint64_t)(n) * 1000000ull)

/* pid has ended, at the clock's time now (at_session_now): as the targets end a process. */
static void depart(pid_t pid)
{
	at_proctable_depart(&session.table, pid, 0, at_session_now(&session));
}

/* Closes the session; its trace stays readable at trace_fd. */
static void close_session(void)
{
	at_session_close(&session, 0);
	close(session.opt.dest.fd);
}

/* Queues a malloc(size) of pid at time T(n) and 789 ns more (which a trace without stacks
 * leaves out: its times are to the microsecond) in ring 0. */
static void push_malloc(uint64_t n, uint32_t pid, uint64_t size)
{
	struct at_record r = { .time = T(n) + 789, .time_entry = T(n) + 789, .pid = pid,
			       .tid = pid, .arg = { size, 0 }, .result = 0x1000 + n * 0x10,
			       .func = AT_PROBE_MALLOC };

	fake_bpf_push(&r);
}

/* The sizes of the mallocs in the trace, in order (at most n), and their times when times is
 * not NULL; the count. */
static unsigned read_sizes(uint64_t *sizes, uint64_t *times, unsigned n)
{
	struct at_source src;
	struct at_event ev;
	unsigned got = 0;

	lseek(trace_fd, 0, SEEK_SET);
	assert_int_equal(at_source_open_fd(&src, trace_fd, "mem"), 0);
	while (at_source_next(&src, &ev) == 1)
		if (ev.func == AT_MALLOC && got < n) {
			if (times)
				times[got] = ev.time_ns;
			sizes[got++] = ev.arg[0];
		}
	at_source_close(&src);
	return got;
}

/* What the program is told before load: the sizes, the switches, the thread slots (from the
 * environment when set there, refused unless a power of two), times in every binary trace
 * (with or without stacks; none in text, nor with ALLOCTAP_TIMES=none, the bench's switch),
 * to the microsecond without stacks unless ALLOCTAP_TIMES=ns. */
static void test_open(void **state)
{
	(void)state;
	static const struct {
		const char *slots;
		enum at_sink_format format;
		const char *times_env;
		int stacks;
		int rc;
		uint32_t thread_slots;
		int times;
		uint64_t grain;
	} cases[] = {
		{ NULL, AT_SINK_ATZ, NULL, 0, 0, AT_THREAD_SLOTS, 1, 1000 },
		{ NULL, AT_SINK_ATZ, NULL, 1, 0, AT_THREAD_SLOTS, 1, 1 },
		{ NULL, AT_SINK_TEXT, NULL, 0, 0, AT_THREAD_SLOTS, 0, 1000 },
		{ NULL, AT_SINK_ATZ, "none", 0, 0, AT_THREAD_SLOTS, 0, 1000 },
		{ NULL, AT_SINK_ATZ, "ns", 0, 0, AT_THREAD_SLOTS, 1, 1 },
		{ NULL, AT_SINK_ATZ, "us", 0, 0, AT_THREAD_SLOTS, 1, 1000 }, /* not a switch */
		{ "8", AT_SINK_ATZ, NULL, 0, 0, 8, 1, 1000 },
		{ "6", AT_SINK_ATZ, NULL, 0, -1, 0, 0, 0 },
		{ "0", AT_SINK_ATZ, NULL, 0, -1, 0, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cases[i].slots)
			setenv("ALLOCTAP_THREAD_SLOTS", cases[i].slots, 1);
		else
			unsetenv("ALLOCTAP_THREAD_SLOTS");
		if (cases[i].times_env)
			setenv("ALLOCTAP_TIMES", cases[i].times_env, 1);
		else
			unsetenv("ALLOCTAP_TIMES");
		assert_int_equal(open_session(cases[i].format, cases[i].stacks), cases[i].rc);
		assert_int_equal(fake_bpf.opened, cases[i].rc == 0);
		if (cases[i].rc == 0) {
			assert_int_equal(fake_bpf.options.thread_slots, cases[i].thread_slots);
			assert_int_equal(fake_bpf.options.ring_bytes, 1 << 16);
			assert_int_equal(fake_bpf.options.stacks, cases[i].stacks);
			assert_int_equal(session.times, cases[i].times);
			assert_int_equal(session.time_grain, cases[i].grain);
			assert_int_equal(fake_bpf.options.bound, 1);
			assert_true(fake_bpf.loaded && fake_bpf.thread_exit && fake_bpf.thread_exec);
			assert_true(fake_bpf.ring_open);
			/* with stacks, the entries of single functions are not loaded */
			assert_int_equal(fake_bpf.not_loaded[AT_BPF_MALLOC_ENTRY], cases[i].stacks);
			assert_int_equal(fake_bpf.not_loaded[AT_BPF_ALLOC_ENTRY], 0);
		}
		close_session();
	}
	unsetenv("ALLOCTAP_THREAD_SLOTS");
	unsetenv("ALLOCTAP_TIMES");
	fake_bpf_reset();
	fake_bpf.load_error = -EPERM;
	memset(&session, 0, sizeof(session));
	session.opt.ringbuf_size = 1 << 16;
	session.opt.dest.fd = -1;
	assert_int_equal(at_session_open(&session), -1); /* said, and nothing opened */
	at_session_close(&session, 0);
}

/* Each tick takes the ring and writes its records in their order; once no traced process is
 * left the session ends. */
static void test_tick(void **state)
{
	(void)state;
	uint64_t sizes[8], times[8];

	assert_int_equal(open_session(AT_SINK_ATZ, 0), 0);
	struct at_session *d = &session;
	assert_int_equal(at_proctable_trace(&d->table, getpid(), 1), 1);
	push_malloc(1, 4000, 16);
	push_malloc(0, 4000, 8);
	push_malloc(2, 4001, 24);
	assert_int_equal(at_session_tick(d), 0);
	assert_int_equal(fake_bpf.consumes, 1);
	assert_int_equal(d->sink.accepted, 3);
	assert_int_equal(d->table.seen, 2);
	assert_true((proc_flags(4000) & AT_PROC_WRITTEN) && (proc_flags(4001) & AT_PROC_WRITTEN));
	at_proctable_untrace(&d->table, getpid());
	assert_int_equal(at_session_tick(d), 1); /* --pid: every target gone */
	close_session();
	/* closed: the trace holds them in their order, with their times to the microsecond (no
	 * --stacks) */
	assert_int_equal(read_sizes(sizes, times, 8), 3);
	assert_int_equal(sizes[0], 8);
	assert_int_equal(sizes[1], 16);
	assert_int_equal(sizes[2], 24);
	assert_int_equal(times[0], T(0));
	assert_int_equal(times[1], T(1));
	assert_int_equal(times[2], T(2));
}

/* Losses: each tick reads the program's counters and notes the growth in the output. */
static void test_tick_lost(void **state)
{
	(void)state;
	static const struct {
		uint64_t no_state, records, reallocs;
		uint64_t lost; /* in the sink after the tick */
	} ticks[] = {
		{ 0, 0, 0, 0 },
		{ 2, 0, 0, 2 },
		{ 5, 0, 0, 5 },
		{ 5, 3, 1, 8 }, /* ring reservations that failed are lost events, a realloc's too */
	};

	assert_int_equal(open_session(AT_SINK_ATZ, 0), 0);
	struct at_session *d = &session;
	assert_int_equal(at_proctable_trace(&d->table, getpid(), 1), 1);
	for (size_t i = 0; i < sizeof(ticks) / sizeof(ticks[0]); i++) {
		struct at_sink_stats st;

		fake_bpf.lost[AT_LOST_NO_STATE] = ticks[i].no_state;
		fake_bpf.lost[AT_LOST_RECORDS] = ticks[i].records;
		fake_bpf.lost[AT_LOST_REALLOCS] = ticks[i].reallocs;
		assert_int_equal(at_session_tick(d), 0);
		at_sink_stats(&d->sink, &st);
		assert_int_equal(st.lost, ticks[i].lost);
		assert_int_equal(d->lost.reported, ticks[i].lost);
		assert_int_equal(d->lost.bpf[AT_LOST_RECORDS], ticks[i].records);
	}
	close_session();
}

/* An ended process leaves the process table (seen and written) once the output has passed the
 * time of its end, not before; a process that takes its number before then stays. */
static void test_departures(void **state)
{
	(void)state;
	assert_int_equal(open_session(AT_SINK_ATZ, 0), 0);
	struct at_session *d = &session;
	assert_int_equal(at_proctable_trace(&d->table, getpid(), 1), 1);

	push_malloc(0, 4000, 8);
	assert_int_equal(at_session_tick(d), 0);
	assert_true((proc_flags(4000) & AT_PROC_SEEN) && (proc_flags(4000) & AT_PROC_WRITTEN));
	fake_bpf.clock = T(3); /* its end: every event of it is timed below */
	depart(4000);
	assert_int_equal(d->table.ndepartures, 1);
	assert_int_equal(d->table.departures[d->table.first].seq, T(3));
	assert_int_equal(at_proctable_find(&d->table, 4000)->departed, T(3));

	push_malloc(1, 4001, 8);
	push_malloc(2, 4001, 8);
	assert_int_equal(at_session_tick(d), 0);
	assert_true((proc_flags(4000) & AT_PROC_SEEN) && (proc_flags(4000) & AT_PROC_WRITTEN));
	push_malloc(3, 4001, 8);
	fake_bpf.clock = T(4);
	assert_int_equal(at_session_tick(d), 0);
	assert_false(proc_flags(4000) & AT_PROC_SEEN);
	assert_false(proc_flags(4000) & AT_PROC_WRITTEN);
	assert_int_equal(d->table.ndepartures, 0);

	/* 4001 ends, and its number is taken again before the output passes the end: a new
	 * process (doc/DESIGN.md, the process table), seen and counted, not written yet */
	fake_bpf.clock = T(6);
	depart(4001);
	assert_int_equal(at_session_add_target(d, 4001, 0), 0);
	push_malloc(4, 4002, 8);
	push_malloc(5, 4002, 8);
	push_malloc(6, 4002, 8);
	fake_bpf.clock = T(7);
	assert_int_equal(at_session_tick(d), 0);
	assert_int_equal(d->table.ndepartures, 0);
	assert_int_equal(proc_flags(4001), AT_PROC_SEEN);
	assert_int_equal(d->table.seen, 4); /* 4000, 4001, the new 4001, 4002 */
	close_session();
}

/* RSS: a sample of every process with events written, into a binary trace only, the time of
 * the sample noted either way; an ended process the output has passed has none. */
static void test_rss(void **state)
{
	(void)state;
	static const struct {
		enum at_sink_format format;
		int depart;
		uint64_t records;
	} cases[] = {
		{ AT_SINK_ATZ, 0, 1 },
		{ AT_SINK_TEXT, 0, 0 },
		{ AT_SINK_ATZ, 1, 0 },
	};
	uint32_t self = (uint32_t)getpid();

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(open_session(cases[i].format, 0), 0);
		struct at_session *d = &session;
		assert_int_equal(at_proctable_trace(&d->table, getpid(), 1), 1);
		push_malloc(0, self, 8);
		assert_int_equal(at_session_tick(d), 0);
		if (cases[i].depart) {
			fake_bpf.clock = T(1);
			depart((pid_t)self);
			fake_bpf.clock = FAKE_BPF_CLOCK;
		}
		uint64_t before = at_now_ms();
		at_session_take_rss(d);
		assert_int_equal(d->rss_records, cases[i].records);
		assert_true(d->last_rss_ms >= before && d->last_rss_ms <= at_now_ms());
		assert_int_equal((proc_flags((pid_t)self) & AT_PROC_WRITTEN) != 0, !cases[i].depart);
		close_session();
	}
}

/* The finish: recording off, the rings taken, and every loss counted: the records the rings
 * had no room for, the calls without per-thread state, the calls left unfinished. */
static void test_finish_lost(void **state)
{
	(void)state;
	struct at_sink_stats st;
	uint64_t sizes[4];

	assert_int_equal(open_session(AT_SINK_ATZ, 0), 0);
	struct at_session *d = &session;
	assert_int_equal(at_proctable_trace(&d->table, getpid(), 1), 1);
	at_window_open(d->bpf, 0);
	push_malloc(0, 4000, 8);
	push_malloc(1, 4000, 16);
	push_malloc(2, 4000, 24);
	fake_bpf.lost[AT_LOST_RECORDS] = 2;     /* two records found no room */
	fake_bpf.lost[AT_LOST_NO_STATE] = 2;
	fake_bpf.in_flight[0] = 0;              /* nothing in flight when recording stops... */
	fake_bpf.in_flight[1] = 1;              /* ...one call left once the probes are gone */
	fake_bpf.nin_flight = 2;
	assert_int_equal(at_session_finish(d, 0), 0);
	assert_int_equal(fake_bpf.recording, 0);
	assert_int_equal(d->unfinished, 1);
	at_sink_stats(&d->sink, &st);
	assert_int_equal(st.lost, 2 + 2 + 1);
	assert_int_equal(st.accepted, 3);
	close_session();
	assert_int_equal(read_sizes(sizes, NULL, 4), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open),        cmocka_unit_test(test_tick),
		cmocka_unit_test(test_tick_lost),   cmocka_unit_test(test_departures),
		cmocka_unit_test(test_rss),         cmocka_unit_test(test_finish_lost),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
