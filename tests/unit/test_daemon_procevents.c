/* test_daemon_procevents.c: unit tests of daemon/procs/procevents.c (needs root): a child's fork,
 * exec and exit arrive, with its parent and its status. */
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../daemon/procs/procevents.h"

struct seen {
	pid_t child;
	int fork, exec, exit, status;
	pid_t parent;
};

static void note(void *arg, const struct at_procevent *e)
{
	struct seen *s = arg;

	if (e->pid != s->child)
		return;
	if (e->kind == AT_PROCEVENT_FORK) {
		s->fork++;
		s->parent = e->parent;
	} else if (e->kind == AT_PROCEVENT_EXEC) {
		s->exec++;
	} else if (e->kind == AT_PROCEVENT_EXIT && e->tid == s->child) {
		s->exit++;
		s->status = e->status;
	}
}

static void test_child_events(void **state)
{
	(void)state;
	struct at_procevents pe;
	struct seen s = { 0 };
	int status;

	assert_int_equal(at_procevents_open(&pe), 0);
	s.child = fork();
	assert_true(s.child >= 0);
	if (s.child == 0) {
		execl("/bin/sh", "sh", "-c", "exit 7", (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(s.child, &status, 0), s.child);
	for (int tries = 0; tries < 200 && !s.exit; tries++) {
		struct pollfd p = { pe.fd, POLLIN, 0 };
		poll(&p, 1, 10);
		assert_true(at_procevents_read(&pe, note, &s) >= 0);
	}
	at_procevents_close(&pe);
	assert_int_equal(pe.fd, -1);
	assert_int_equal(s.fork, 1);
	assert_int_equal(s.parent, getpid());
	assert_true(s.exec >= 1);
	assert_int_equal(s.exit, 1);
	assert_int_equal(s.status, status);
	assert_int_equal(WEXITSTATUS(s.status), 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_child_events),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
