/* test_daemon_processes.c: unit tests of daemon/procs/processes.c: the table through growth and
 * removals, and change records queued by number, written in order into a binary trace and read
 * back with this process's executable and command line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../daemon/procs/processes.h"
#include "atz.h"
#include "sink.h"

static void count_pid(void *arg, pid_t pid)
{
	(void)pid;
	(*(unsigned *)arg)++;
}

static void test_table(void **state)
{
	(void)state;
	struct at_processes p;
	unsigned n = 0;

	assert_int_equal(at_processes_init(&p, 0), 0);
	for (pid_t pid = 1; pid <= 3000; pid++)
		assert_int_equal(at_processes_add(&p, pid * 7, 1), 1);
	assert_int_equal(at_processes_add(&p, 7, 1), 0);
	assert_int_equal(at_processes_add(&p, 0, 1), 0);
	assert_int_equal(p.count, 3000);
	for (pid_t pid = 1; pid <= 3000; pid += 2)
		assert_int_equal(at_processes_remove(&p, pid * 7), 1);
	assert_int_equal(at_processes_remove(&p, 7), 0);
	for (pid_t pid = 1; pid <= 3000; pid++)
		assert_int_equal(at_processes_has(&p, pid * 7), pid % 2 == 0);
	at_processes_each(&p, count_pid, &n);
	assert_int_equal(n, 1500);
	/* text output: changes are not kept */
	at_processes_note(&p, AT_ATZ_PROCESS_EXIT, 7, 1, 0, 0, 1, 5);
	assert_null(p.head);
	at_processes_free(&p);
}

struct got {
	unsigned n;
	struct at_atz_process c[4];
	char exe[4][4096];
	char args[4][4096];
	uint64_t events_before[4];
	uint64_t events;
};

static void on_change(void *arg, const struct at_atz_process *c)
{
	struct got *g = arg;

	assert_true(g->n < 4);
	g->c[g->n] = *c;
	memcpy(g->exe[g->n], c->exe, c->exe_len);
	memcpy(g->args[g->n], c->args, c->args_len < 4096 ? c->args_len : 4095);
	g->events_before[g->n] = g->events;
	g->n++;
}

/* Changes numbered 10, 20 and 30 around events numbered 5, 15, 25, 35: each lands after the
 * events numbered below it. */
static void test_records_in_order(void **state)
{
	(void)state;
	struct at_processes p;
	struct at_sink s;
	struct at_sink_options opt = { .format = AT_SINK_ATZ, .atz = { .minor = 1 } };
	int fd = memfd_create("procs", 0);
	static struct got g;

	assert_int_equal(at_processes_init(&p, 1), 0);
	assert_int_equal(at_sink_open_fd(&s, fd, "mem"), 0);
	assert_int_equal(at_sink_start(&s, &opt), 0);
	at_processes_note(&p, AT_ATZ_PROCESS_START, getpid(), getppid(), AT_ATZ_PROCESS_BEFORE, 0,
			  111, 10);
	at_processes_note(&p, AT_ATZ_PROCESS_EXEC, getpid(), getppid(), 0, 0, 0, 20);
	assert_int_equal(at_processes_add(&p, getpid(), getppid()), 1);
	at_processes_note(&p, AT_ATZ_PROCESS_EXIT, getpid(), 0, 0, 7 << 8, 333, 30); /* the table's */
	for (uint64_t seq = 5; seq <= 35; seq += 10) {
		struct at_event ev = { (uint32_t)getpid(), (uint32_t)getpid(), AT_MALLOC, 1,
				       { seq, 0 }, 0x1000 * seq, 0, 0 };
		at_processes_flush(&p, &s, seq);
		assert_int_equal(at_sink_put(&s, &ev), 0);
	}
	at_processes_flush(&p, &s, UINT64_MAX);
	assert_null(p.head);
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
		assert_int_equal(g.c[i].pid, getpid());
		assert_int_equal(g.c[i].parent, getppid());
		assert_int_equal(g.events_before[i], i + 1);
	}
	assert_int_equal(g.c[0].flags, AT_ATZ_PROCESS_BEFORE);
	assert_int_equal(g.c[0].time_ns, 111);
	assert_true(g.c[1].time_ns > 1600000000ull * 1000000000ull); /* now */
	assert_int_equal(g.c[2].status, 7 << 8);
	assert_int_equal(g.c[2].exe_len, 0);
	char self[4096];
	ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(k > 0);
	self[k] = 0;
	assert_string_equal(g.exe[0], self);
	assert_non_null(strstr(g.args[1], "test_daemon_processes"));
	at_processes_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_records_in_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
