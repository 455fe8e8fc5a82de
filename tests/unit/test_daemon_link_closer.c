/* test_daemon_link_closer.c: unit tests of daemon/probes/link_closer.c: descriptors handed over
 * are all closed once it finishes, by threads that block every signal, and it serves again
 * after; each waits its own linger, none while held, and one thread alone waits timed. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "link_closer.h"
#include "prim.h"

#define PIPES 150

/* Opens n pipes; their 2n descriptors in fds. */
static void open_pipes(int *fds, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(pipe(&fds[2 * i]), 0);
}

static void assert_closed(const int *fds, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		errno = 0;
		assert_int_equal(fcntl(fds[i], F_GETFD), -1);
		assert_int_equal(errno, EBADF);
	}
}

/* The threads of this process other than the caller that take one of the signals the daemon's
 * loop waits for (their SigBlk lacks it). */
static unsigned threads_taking_signals(void)
{
	DIR *dir = opendir("/proc/self/task");
	struct dirent *e;
	unsigned n = 0;

	assert_non_null(dir);
	while ((e = readdir(dir))) {
		char path[300], line[256];
		FILE *f;

		if (e->d_name[0] == '.' || atoi(e->d_name) == gettid())
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		while (fgets(line, sizeof(line), f)) {
			unsigned long long blocked = strtoull(line + 7, NULL, 16);
			const int wanted[] = { SIGINT, SIGTERM, SIGCHLD, SIGUSR1, SIGHUP };

			if (strncmp(line, "SigBlk:", 7) != 0)
				continue;
			for (unsigned k = 0; k < sizeof(wanted) / sizeof(wanted[0]); k++)
				if (!(blocked >> (wanted[k] - 1) & 1)) {
					n++;
					break;
				}
		}
		fclose(f);
	}
	closedir(dir);
	return n;
}

static void test_closes_all(void **state)
{
	(void)state;
	static struct at_link_closer c;
	int fds[2 * PIPES];

	for (int round = 0; round < 2; round++) { /* and again after a finish */
		open_pipes(fds, PIPES);
		at_link_closer_put(&c, fds, PIPES);            /* in two hand-overs */
		at_link_closer_put(&c, fds + PIPES, PIPES);
		assert_true(c.nthreads > 0);
		assert_int_equal(threads_taking_signals(), 0);
		at_link_closer_finish(&c);
		assert_int_equal(c.nthreads, 0);
		assert_int_equal(c.closed, (uint64_t)(round + 1) * 2 * PIPES);
		assert_closed(fds, 2 * PIPES);
	}
	at_link_closer_put(&c, fds, 0); /* nothing: no thread */
	assert_int_equal(c.nthreads, 0);
	at_link_closer_finish(&c);
}

/* Whether every one of the n descriptors is closed within 10 s. */
static int closed_soon(const int *fds, unsigned n)
{
	for (int tries = 0; tries < 1000; tries++) {
		unsigned open = 0;

		for (unsigned i = 0; i < n; i++)
			open += fcntl(fds[i], F_GETFD) >= 0;
		if (open == 0)
			return 1;
		usleep(10000);
	}
	return 0;
}

/* Descriptors handed over in the held test: more than one thread's worth. */
#define HELD 128

/* Nothing is closed while the hold count is above 0 (a traced process's leader has exited);
 * once it is 0 again they go after the linger; a finish closes everything whatever the hold. */
static void test_hold(void **state)
{
	(void)state;
	static struct at_link_closer c;
	static volatile uint64_t hold = 1;
	static int fds[HELD];

	c.hold = &hold;
	open_pipes(fds, HELD / 2);
	at_link_closer_put(&c, fds, HELD);
	usleep((AT_CLOSER_LINGER_NS + 50000000) / 1000);
	for (unsigned i = 0; i < HELD; i++)
		assert_int_equal(fcntl(fds[i], F_GETFD), 0); /* still open (no flag) */
	hold = 0;
	assert_true(closed_soon(fds, HELD));
	hold = 1;
	open_pipes(fds, 1);
	at_link_closer_put(&c, fds, 2);
	at_link_closer_finish(&c);
	assert_closed(fds, 2);
	assert_int_equal(c.closed, HELD + 2);
}

/* Whether the write end of the pipe whose read end is rd is closed everywhere (a read finds
 * the end of the file rather than nothing yet). */
static int writer_closed(int rd)
{
	char byte;

	return read(rd, &byte, 1) == 0;
}

/* Each descriptor waits its own linger: one handed over first is closed while others keep
 * coming every 20 ms (a tree whose processes end one after another), and the newest is still
 * open when it has just been handed over. The write ends are handed over; the read ends tell
 * (descriptor numbers are reused at once, so the numbers cannot). */
static void test_linger_each(void **state)
{
	(void)state;
	static struct at_link_closer c;
	int first[2], last[2] = { -1, -1 };

	assert_int_equal(pipe2(first, O_NONBLOCK), 0);
	at_link_closer_put(&c, &first[1], 1);
	for (int i = 0; i < 50; i++) {
		usleep(20000);
		if (last[0] >= 0)
			close(last[0]);
		assert_int_equal(pipe2(last, O_NONBLOCK), 0);
		uint64_t put = at_now_ns();
		at_link_closer_put(&c, &last[1], 1);
		int closed = writer_closed(last[0]);
		if (at_now_ns() - put < AT_CLOSER_LINGER_NS) /* not when this thread was held up */
			assert_false(closed);
	}
	assert_true(writer_closed(first[0]));
	at_link_closer_finish(&c);
	assert_true(writer_closed(last[0]));
	assert_int_equal(c.closed, 51);
	close(first[0]);
	close(last[0]);
}

/* Descriptors waiting (held) cost one thread's timed waits, not one per thread: 100 threads
 * held for 300 ms, the hold looked at every 10 ms, make some 30 waits, not 3,000. */
static void test_one_timed_waiter(void **state)
{
	(void)state;
	static struct at_link_closer c;
	static volatile uint64_t hold = 1;
	static int fds[100];

	c.hold = &hold;
	open_pipes(fds, 50);
	at_link_closer_put(&c, fds, 100);
	assert_int_equal(c.nthreads, 100);
	usleep(300000);
	pthread_mutex_lock(&c.lock);
	uint64_t waits = c.timed_waits;
	pthread_mutex_unlock(&c.lock);
	assert_in_range(waits, 1, 100);
	at_link_closer_finish(&c);
	assert_closed(fds, 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_closes_all),
		cmocka_unit_test(test_hold),
		cmocka_unit_test(test_linger_each),
		cmocka_unit_test(test_one_timed_waiter),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
