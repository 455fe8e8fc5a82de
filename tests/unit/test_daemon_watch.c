/* test_daemon_watch.c: unit tests of daemon/watch.c: the exit status of alloctapd --watch from
 * the daemon's and the view's wait statuses, and a daemon that fails before it is attached
 * (no view started, its status passed on). */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "watch.h"

/* wait statuses as waitpid gives them */
#define EXITED(n) ((n) << 8)
#define KILLED(s) (s)

static void test_status_table(void **state)
{
	(void)state;
	static const struct {
		const char *what;
		int d, v, viewer_first, want;
	} cases[] = {
		{ "both ended well", EXITED(0), EXITED(0), 0, 0 },
		{ "q on a pipe: the daemon's SIGPIPE is the end asked for", KILLED(SIGPIPE),
		  EXITED(0), 1, 0 },
		{ "q, then the daemon ended by the SIGINT passed on", EXITED(0), EXITED(0), 1, 0 },
		{ "the command's status", EXITED(7), EXITED(0), 0, 7 },
		{ "the daemon's runtime error beats the view", EXITED(1), EXITED(3), 0, 1 },
		{ "the view's failure (a trace cut short)", EXITED(0), EXITED(3), 0, 3 },
		{ "the view not found", EXITED(0), EXITED(127), 1, 127 },
		{ "Ctrl-C: the view killed by SIGINT, the daemon's clean end", EXITED(0),
		  KILLED(SIGINT), 1, 0 },
		{ "the view killed by SIGKILL", EXITED(0), KILLED(SIGKILL), 1, 128 + SIGKILL },
		{ "the daemon killed by SIGPIPE while the view still ran", KILLED(SIGPIPE),
		  EXITED(0), 0, 128 + SIGPIPE },
		{ "the daemon killed by SIGKILL", KILLED(SIGKILL), EXITED(3), 0, 3 },
		{ "the daemon killed, the view well", KILLED(SIGSEGV), EXITED(0), 0, 128 + SIGSEGV },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = at_watch_status(cases[i].d, cases[i].v, cases[i].viewer_first);
		if (got != cases[i].want)
			fail_msg("%s: %d, want %d", cases[i].what, got, cases[i].want);
	}
}

/* Without --watch nothing is split: the caller goes on as the daemon. */
static void test_no_watch(void **state)
{
	(void)state;
	struct at_session_options o;

	memset(&o, 0, sizeof(o));
	o.dest.fd = 1;
	assert_int_equal(at_watch_split(&o), 0);
	assert_int_equal(o.dest.fd, 1);
	at_watch_ready(); /* nothing to say: no pipe */
}

/* A daemon that ends before it is attached: the supervisor exits with its status and never
 * starts the view (no pipe is read: the view would say a trace cut short). */
static void test_daemon_fails_first(void **state)
{
	(void)state;
	pid_t sup = fork();

	assert_true(sup >= 0);
	if (sup == 0) {
		struct at_session_options o;

		memset(&o, 0, sizeof(o));
		o.watch = 1;
		o.dest.fd = -1;
		setenv("PATH", "/nonexistent", 1);
		if (at_watch_split(&o) == 0) /* the daemon's process: fails before ready */
			_exit(o.dest.fd >= 0 ? 5 : 6);
		_exit(99);
	}
	int st;
	assert_int_equal(waitpid(sup, &st, 0), sup);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 5); /* the daemon's, with a pipe for its output */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_table),
		cmocka_unit_test(test_no_watch),
		cmocka_unit_test(test_daemon_fails_first),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
