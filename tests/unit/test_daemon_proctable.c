/* test_daemon_proctable.c: unit tests of daemon/procs/proctable.c, the process table: sequences
 * of appear, event, trace, exec, depart and forget with the slots, flags, counts and allocators
 * they leave; a pid that ends and comes back as a new process; departures that leave the table
 * only once the output passes their number, each told to the forget hook once; growth bounded
 * through a million processes; the change records written in order, each with its parent; a
 * process's allocators of two families, mirrored whole. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../daemon/procs/proctable.h"
#include "alloctap.h"
#include "atz.h"
#include "sink.h"

#define S AT_PROC_SEEN
#define W AT_PROC_WRITTEN
#define T AT_PROC_TRACED
#define D AT_PROC_DEPARTED

enum op_kind { APPEAR, EVENT, TRACE, UNTRACE, EXEC, DEPART, FORGET, ALLOCATOR };

/* One call: what it is given and what it must answer (forget answers nothing: 0). */
struct op {
	enum op_kind kind;
	pid_t pid;
	pid_t parent;    /* APPEAR, TRACE */
	unsigned flags;  /* APPEAR's flags; ALLOCATOR's value */
	uint64_t seq;    /* EVENT, DEPART, FORGET */
	int answer;
};

/* A slot as a case expects it after its calls. */
struct slot {
	pid_t pid, parent;
	unsigned flags;
	uint32_t allocator;
	uint64_t before;
};

static int call(struct at_proctable *t, const struct op *o)
{
	switch (o->kind) {
	case APPEAR:
		return at_proctable_appear(t, o->pid, o->parent, o->flags);
	case EVENT:
		return at_proctable_event(t, o->pid, o->seq);
	case TRACE:
		return at_proctable_trace(t, o->pid, o->parent);
	case UNTRACE:
		at_proctable_untrace(t, o->pid);
		return 0;
	case EXEC:
		return at_proctable_exec(t, o->pid, 0, o->seq);
	case DEPART:
		return at_proctable_depart(t, o->pid, 0, o->seq);
	case FORGET:
		at_proctable_forget(t, o->seq);
		return 0;
	case ALLOCATOR:
		return at_proctable_set_allocator(t, o->pid, o->flags);
	}
	return -2;
}

static const struct {
	const char *what;
	struct op ops[10];
	unsigned nops;
	struct slot slots[3];
	unsigned nslots, traced;
	uint64_t seen;
} cases[] = {
	{ "a target appears, seen once",
	  { { APPEAR, 10, 0, S, 0, 1 }, { APPEAR, 10, 0, S, 0, 0 } }, 2,
	  { { 10, 0, S, 0, 0 } }, 1, 0, 1 },
	{ "a target traced: its parent kept",
	  { { APPEAR, 10, 0, S, 0, 1 }, { TRACE, 10, 3, 0, 0, 1 }, { TRACE, 10, 4, 0, 0, 0 } }, 3,
	  { { 10, 3, S | T, 0, 0 } }, 1, 1, 1 },
	{ "found by its first event: seen and written, once",
	  { { EVENT, 20, 0, 0, 5, 1 }, { EVENT, 20, 0, 0, 6, 0 } }, 2,
	  { { 20, 0, S | W, 0, 0 } }, 1, 0, 1 },
	{ "an event of a target: written, not counted again",
	  { { APPEAR, 10, 0, S, 0, 1 }, { EVENT, 10, 0, 0, 5, 0 } }, 2,
	  { { 10, 0, S | W, 0, 0 } }, 1, 0, 1 },
	{ "exec of a traced process and of one not traced",
	  { { APPEAR, 10, 2, S | T, 0, 1 }, { EXEC, 10, 0, 0, 4, 1 }, { EXEC, 11, 0, 0, 4, 0 } }, 3,
	  { { 10, 2, S | T, 0, 0 } }, 1, 1, 1 },
	{ "depart: traced no more, still seen and written until forgotten",
	  { { APPEAR, 10, 2, S | T, 0, 1 }, { EVENT, 10, 0, 0, 3, 0 }, { DEPART, 10, 0, 0, 7, 1 },
	    { FORGET, 0, 0, 0, 6, 0 } }, 4,
	  { { 10, 2, S | W | D, 0, 0 } }, 1, 0, 1 },
	{ "forget at the departure's number: the slot goes",
	  { { APPEAR, 10, 2, S | T, 0, 1 }, { DEPART, 10, 0, 0, 7, 1 }, { FORGET, 0, 0, 0, 7, 0 } },
	  3, { { 0 } }, 0, 0, 1 },
	{ "a departure of a pid never seen: its late events count it until forgotten",
	  { { DEPART, 30, 0, 0, 9, 0 }, { EVENT, 30, 0, 0, 8, 1 }, { TRACE, 30, 1, 0, 0, 1 },
	    { FORGET, 0, 0, 0, 9, 0 } }, 4,
	  { { 0 } }, 0, 0, 1 },
	{ "an ended process's late event, before its end",
	  { { APPEAR, 10, 0, S, 0, 1 }, { DEPART, 10, 0, 0, 7, 0 }, { EVENT, 10, 0, 0, 6, 0 } }, 3,
	  { { 10, 0, S | W | D, 0, 0 } }, 1, 0, 1 },
	{ "a pid back before it is forgotten: a new process, fresh",
	  { { APPEAR, 10, 2, S | T, 0, 1 }, { EVENT, 10, 0, 0, 3, 0 }, { ALLOCATOR, 10, 0, 5, 0, 0 },
	    { DEPART, 10, 0, 0, 7, 1 }, { APPEAR, 10, 4, S | T, 0, 1 } }, 5,
	  { { 10, 4, S | T, 0, 7 } }, 1, 1, 2 },
	{ "the ended one's late event leaves the new one unwritten",
	  { { APPEAR, 10, 0, S, 0, 1 }, { DEPART, 10, 0, 0, 7, 0 }, { APPEAR, 10, 0, S, 0, 1 },
	    { EVENT, 10, 0, 0, 6, 0 } }, 4,
	  { { 10, 0, S, 0, 7 } }, 1, 0, 2 },
	{ "the ended one's departure does not remove the new one",
	  { { APPEAR, 10, 0, S, 0, 1 }, { DEPART, 10, 0, 0, 7, 0 }, { APPEAR, 10, 0, S, 0, 1 },
	    { EVENT, 10, 0, 0, 8, 0 }, { FORGET, 0, 0, 0, 100, 0 } }, 5,
	  { { 10, 0, S | W, 0, 7 } }, 1, 0, 2 },
	{ "the new one ends too: forgotten at its own end",
	  { { APPEAR, 10, 0, S, 0, 1 }, { DEPART, 10, 0, 0, 7, 0 }, { APPEAR, 10, 0, S, 0, 1 },
	    { DEPART, 10, 0, 0, 12, 0 }, { FORGET, 0, 0, 0, 7, 0 } }, 5,
	  { { 10, 0, S | D, 0, 7 } }, 1, 0, 2 },
	{ "a second end of the same process: the first stands",
	  { { APPEAR, 10, 0, S, 0, 1 }, { DEPART, 10, 0, 0, 7, 0 }, { DEPART, 10, 0, 0, 9, 0 },
	    { FORGET, 0, 0, 0, 7, 0 } }, 4,
	  { { 0 } }, 0, 0, 1 },
	{ "allocators: mirrored, cleared at the end",
	  { { ALLOCATOR, 40, 0, 0x30002, 0, 0 }, { ALLOCATOR, 41, 0, 0x30001, 0, 0 },
	    { DEPART, 41, 0, 0, 5, 0 } }, 3,
	  { { 40, 0, 0, 0x30002, 0 }, { 41, 0, D, 0, 0 } }, 2, 0, 0 },
	{ "untrace: a slot with nothing else goes",
	  { { TRACE, 50, 1, 0, 0, 1 }, { UNTRACE, 50, 0, 0, 0, 0 }, { APPEAR, 51, 1, S | T, 0, 1 },
	    { UNTRACE, 51, 0, 0, 0, 0 } }, 4,
	  { { 51, 1, S, 0, 0 } }, 1, 0, 1 },
	{ "pid 0 and negative pids have no slot",
	  { { APPEAR, 0, 0, S, 0, -1 }, { EVENT, 0, 0, 0, 1, 0 }, { TRACE, -1, 0, 0, 0, -1 },
	    { DEPART, -1, 0, 0, 1, 0 } }, 4,
	  { { 0 } }, 0, 0, 0 },
};

static void count_slot(void *arg, pid_t pid)
{
	(void)pid;
	(*(unsigned *)arg)++;
}

static void test_sequences(void **state)
{
	(void)state;
	for (unsigned c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct at_proctable t;
		unsigned n = 0;

		print_message("%s\n", cases[c].what);
		assert_int_equal(at_proctable_init(&t, 0), 0);
		for (unsigned i = 0; i < cases[c].nops; i++)
			assert_int_equal(call(&t, &cases[c].ops[i]), cases[c].ops[i].answer);
		assert_int_equal(t.count, cases[c].nslots);
		assert_int_equal(t.traced, cases[c].traced);
		assert_int_equal(t.seen, cases[c].seen);
		for (unsigned i = 0; i < cases[c].nslots; i++) {
			const struct slot *want = &cases[c].slots[i];
			const struct at_proc *p = at_proctable_find(&t, want->pid);
			assert_non_null(p);
			assert_int_equal(p->parent, want->parent);
			assert_int_equal(p->flags, want->flags);
			assert_int_equal(p->allocator, want->allocator);
			assert_int_equal(at_proctable_allocator(&t, want->pid), want->allocator);
			assert_int_equal(p->before, want->before);
			assert_int_equal(at_proctable_traced(&t, want->pid), (want->flags & T) != 0);
		}
		at_proctable_each(&t, 0, count_slot, &n);
		assert_int_equal(n, cases[c].nslots);
		at_proctable_free(&t);
	}
}

/* A process's allocators of two families (the targets map's value, AT_TARGET_IN): mirrored
 * whole, each family's half as written; an allocator of the second family alone keeps an
 * untraced slot as the C family's does; the end clears both. */
static void test_two_families(void **state)
{
	(void)state;
	const unsigned second = AT_TARGET_FAMILIES - 1;
	const uint64_t both = AT_TARGET_IN(AT_FAMILY_C, AT_TARGET(1, 0x9)) |
			      AT_TARGET_IN(second, AT_TARGET(2, 0x30));
	const uint64_t second_only = AT_TARGET_IN(second, AT_TARGET(2, 0x30));
	struct at_proctable t;

	assert_int_equal(at_proctable_init(&t, 0), 0);
	assert_int_equal(at_proctable_set_allocator(&t, 60, both), 0);
	assert_int_equal(at_proctable_allocator(&t, 60), both);
	assert_int_equal(AT_TARGET_OF(AT_FAMILY_C, at_proctable_allocator(&t, 60)),
			 AT_TARGET(1, 0x9));
	assert_int_equal(AT_TARGET_OF(second, at_proctable_allocator(&t, 60)), AT_TARGET(2, 0x30));

	assert_int_equal(at_proctable_trace(&t, 61, 1), 1);
	assert_int_equal(at_proctable_set_allocator(&t, 61, second_only), 0);
	at_proctable_untrace(&t, 61);
	assert_non_null(at_proctable_find(&t, 61)); /* its allocator keeps it */
	assert_int_equal(t.count, 2);

	assert_int_equal(at_proctable_depart(&t, 60, 0, 5), 0);
	assert_int_equal(at_proctable_allocator(&t, 60), 0);
	at_proctable_free(&t);
}

/* Departures leave in the order of their numbers, each once the output reaches it; each
 * mask of at_proctable_each sees what is left. */
static void test_departures_in_order(void **state)
{
	(void)state;
	struct at_proctable t;
	static const uint64_t ends[] = { 10, 20, 20, 30, 45 };
	static const struct {
		uint64_t output;
		unsigned left, written;
	} steps[] = { { 9, 6, 3 }, { 10, 5, 2 }, { 19, 5, 2 }, { 20, 3, 1 }, { 44, 2, 1 },
		      { 45, 1, 0 }, { UINT64_MAX, 1, 0 } };

	assert_int_equal(at_proctable_init(&t, 0), 0);
	for (pid_t pid = 100; pid < 106; pid++) {
		assert_int_equal(at_proctable_appear(&t, pid, 1, S | T), 1);
		if (pid % 2 == 0)
			assert_int_equal(at_proctable_event(&t, pid, 1), 0);
	}
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(at_proctable_depart(&t, 100 + (pid_t)i, 0, ends[i]), 1);
	assert_int_equal(t.traced, 1);
	assert_int_equal(t.ndepartures, 5);
	for (unsigned i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		unsigned seen = 0, written = 0;
		at_proctable_forget(&t, steps[i].output);
		at_proctable_each(&t, S, count_slot, &seen);
		at_proctable_each(&t, S | W, count_slot, &written);
		assert_int_equal(seen, steps[i].left);
		assert_int_equal(written, steps[i].written);
		assert_int_equal(t.count, steps[i].left);
	}
	assert_non_null(at_proctable_find(&t, 105));
	assert_int_equal(t.ndepartures, 0);
	at_proctable_free(&t);
}

/* What the forget hook was told, in order. */
static struct {
	const struct at_proctable *t;
	pid_t pids[16];
	unsigned n;
} forgotten;

static void on_forget(void *arg, pid_t pid)
{
	assert_ptr_equal(arg, &forgotten);
	assert_null(at_proctable_find(forgotten.t, pid)); /* its slot went first */
	assert_true(forgotten.n < 16);
	forgotten.pids[forgotten.n++] = pid;
}

/* The forget hook is called once per departed process, when the output passes its end (a
 * second end changes nothing); never for a pid that came back before that, whose new process
 * is told when it departs in turn; never for a process that has not departed. */
static void test_forget_hook(void **state)
{
	(void)state;
	struct at_proctable t;
	static const struct op ops[] = {
		{ APPEAR, 200, 1, S | T, 0, 1 }, { APPEAR, 201, 1, S | T, 0, 1 },
		{ APPEAR, 202, 1, S | T, 0, 1 }, { APPEAR, 203, 0, S, 0, 1 },
		{ DEPART, 200, 0, 0, 10, 1 },    { DEPART, 200, 0, 0, 12, 0 },
		{ DEPART, 201, 0, 0, 15, 1 },    { APPEAR, 201, 1, S | T, 0, 1 }, /* came back */
		{ DEPART, 202, 0, 0, 20, 1 },
	};
	static const struct {
		enum op_kind kind; /* FORGET, or a DEPART at seq first */
		pid_t pid;
		uint64_t seq;
		unsigned calls;    /* hook calls so far */
	} steps[] = { { FORGET, 0, 9, 0 },    { FORGET, 0, 15, 1 }, { FORGET, 0, 30, 2 },
		      { DEPART, 201, 40, 2 }, { FORGET, 0, 40, 3 }, { FORGET, 0, UINT64_MAX, 3 } };
	static const pid_t order[] = { 200, 202, 201 };

	assert_int_equal(at_proctable_init(&t, 0), 0);
	memset(&forgotten, 0, sizeof(forgotten));
	forgotten.t = &t;
	at_proctable_on_forget(&t, on_forget, &forgotten);
	for (unsigned i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		assert_int_equal(call(&t, &ops[i]), ops[i].answer);
	for (unsigned i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		if (steps[i].kind == DEPART)
			assert_int_equal(at_proctable_depart(&t, steps[i].pid, 0, steps[i].seq), 1);
		else
			at_proctable_forget(&t, steps[i].seq);
		assert_int_equal(forgotten.n, steps[i].calls);
	}
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(forgotten.pids[i], order[i]);
	assert_int_equal(t.count, 1); /* 203, which never departed */
	assert_non_null(at_proctable_find(&t, 203));
	at_proctable_free(&t);
}

/* A million processes, each appearing, written, traced and ending: the table's slots and its
 * departures stay at their first size when the output keeps up, and at the size of the backlog
 * when it lags 1000 departures behind. */
static void test_bounded(void **state)
{
	(void)state;
	static const struct {
		uint64_t lag;
		unsigned cap, departures;
	} cases[] = { { 0, 256, 64 }, { 1000, 2048, 1024 } };

	for (unsigned c = 0; c < 2; c++) {
		struct at_proctable t;
		assert_int_equal(at_proctable_init(&t, 0), 0);
		for (uint64_t i = 1; i <= 1000000; i++) {
			pid_t pid = (pid_t)(i % 4194303) + 1;
			assert_int_equal(at_proctable_appear(&t, pid, 1, S | T), 1);
			at_proctable_event(&t, pid, i);
			assert_int_equal(at_proctable_depart(&t, pid, 0, i), 1);
			if (i > cases[c].lag)
				at_proctable_forget(&t, i - cases[c].lag);
		}
		assert_int_equal(t.count, cases[c].lag);
		assert_int_equal(t.ndepartures, cases[c].lag);
		assert_int_equal(t.cap, cases[c].cap);
		assert_int_equal(t.cap_departures, cases[c].departures);
		assert_int_equal(t.seen, 1000000);
		assert_int_equal(t.traced, 0);
		at_proctable_forget(&t, UINT64_MAX);
		assert_int_equal(t.count, 0);
		at_proctable_free(&t);
	}
}

/* Growth past the first size keeps every slot findable, removals too. */
static void test_growth(void **state)
{
	(void)state;
	struct at_proctable t;

	assert_int_equal(at_proctable_init(&t, 0), 0);
	for (pid_t pid = 1; pid <= 3000; pid++)
		assert_int_equal(at_proctable_appear(&t, pid * 7, 1, S | T), 1);
	assert_int_equal(t.count, 3000);
	assert_int_equal(t.cap, 8192);
	for (pid_t pid = 1; pid <= 3000; pid += 2)
		assert_int_equal(at_proctable_depart(&t, pid * 7, 0, (uint64_t)pid), 1);
	at_proctable_forget(&t, 3000);
	for (pid_t pid = 1; pid <= 3000; pid++)
		assert_int_equal(at_proctable_find(&t, pid * 7) != NULL, pid % 2 == 0);
	assert_int_equal(t.count, 1500);
	assert_int_equal(t.traced, 1500);
	at_proctable_free(&t);
}

struct got {
	unsigned n;
	struct at_atz_process c[4];
	uint64_t events_before[4];
	uint64_t events;
};

static void on_change(void *arg, const struct at_atz_process *c)
{
	struct got *g = arg;

	assert_true(g->n < 4);
	g->c[g->n] = *c;
	g->events_before[g->n] = g->events;
	g->n++;
}

/* A traced process's start, exec and exit, numbered 10, 20, 30 among events 5 to 35: each
 * written after the events below it, with the parent the table holds; an untraced pid's
 * changes are not queued. */
static void test_records(void **state)
{
	(void)state;
	struct at_proctable t;
	struct at_sink s;
	struct at_sink_options opt = { .format = AT_SINK_ATZ, .atz = { .minor = 1 } };
	int fd = memfd_create("proctable", 0);
	static struct got g;
	pid_t self = getpid();

	assert_int_equal(at_proctable_init(&t, 1), 0);
	assert_int_equal(at_sink_open_fd(&s, fd, "mem"), 0);
	assert_int_equal(at_sink_start(&s, &opt), 0);
	assert_int_equal(at_proctable_appear(&t, self, 77, S | T), 1);
	at_proctable_note(&t, AT_ATZ_PROCESS_START, self, AT_ATZ_PROCESS_BEFORE, 0, 111, 10);
	at_proctable_note(&t, AT_ATZ_PROCESS_START, 999999, 0, 0, 111, 10); /* not traced */
	assert_int_equal(at_proctable_exec(&t, self, 0, 20), 1);
	assert_int_equal(at_proctable_depart(&t, self, 7 << 8, 30), 1);
	assert_int_equal(at_proctable_exec(&t, self, 0, 31), 0); /* ended */
	for (uint64_t seq = 5; seq <= 35; seq += 10) {
		struct at_event ev = { (uint32_t)self, (uint32_t)self, AT_MALLOC, 1,
				       { seq, 0 }, 0x1000 * seq, 0, 0 };
		at_proctable_flush(&t, &s, seq);
		assert_int_equal(at_sink_put(&s, &ev), 0);
	}
	at_proctable_flush(&t, &s, UINT64_MAX);
	assert_int_equal(at_sink_close(&s), 0);

	lseek(fd, 0, SEEK_SET);
	struct at_atz_reader *r = at_atz_reader_open(fd, "mem", NULL, 0);
	struct at_event ev;
	at_atz_reader_on_process(r, on_change, &g);
	while (at_atz_next(r, &ev) == 1)
		g.events++;
	assert_int_equal(at_atz_reader_status(r), AT_ATZ_OK);
	at_atz_reader_close(r);
	close(fd);

	assert_int_equal(g.events, 4);
	assert_int_equal(g.n, 3);
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(g.c[i].change, AT_ATZ_PROCESS_START + i);
		assert_int_equal(g.c[i].pid, self);
		assert_int_equal(g.c[i].parent, 77);
		assert_int_equal(g.events_before[i], i + 1);
	}
	assert_int_equal(g.c[0].flags, AT_ATZ_PROCESS_BEFORE);
	assert_int_equal(g.c[0].time_ns, 111);
	assert_int_equal(g.c[2].status, 7 << 8);
	at_proctable_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sequences),
		cmocka_unit_test(test_two_families),
		cmocka_unit_test(test_departures_in_order),
		cmocka_unit_test(test_forget_hook),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_growth),
		cmocka_unit_test(test_records),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
