/* test_daemon_liveness.c: unit tests of daemon/procs/liveness.c: the state field of /proc/PID/stat
 * (command names with spaces and parentheses), and live, zombie and reaped processes. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../daemon/procs/liveness.h"

static void test_stat_text(void **state)
{
	(void)state;
	static const struct {
		const char *stat;
		int running;
	} cases[] = {
		{ "123 (sleep) S 1 123 123 0 -1", 1 },
		{ "123 (sleep) R 1", 1 },
		{ "123 (sleep) D 1", 1 },
		{ "123 (sleep) T 1", 1 },
		{ "123 (sleep) Z 1", 0 },
		{ "123 (sleep) X 1", 0 },
		{ "123 (a) b) Z 1", 0 },   /* the last ')' ends the name */
		{ "123 (a) Z) S 1", 1 },
		{ "123 (my prog) S 1", 1 },
		{ "123 (sleep)S 1", 0 },   /* not the shape of a stat line */
		{ "123 (sleep) ", 0 },
		{ "123 sleep S", 0 },
		{ "", 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (at_stat_running(cases[i].stat) != cases[i].running)
			fail_msg("'%s': want %d", cases[i].stat, cases[i].running);
}

/* Waits until child is a zombie (it exits at once). */
static void wait_zombie(pid_t child)
{
	siginfo_t si;

	si.si_pid = 0;
	for (int i = 0; i < 1000 && si.si_pid == 0; i++) {
		assert_int_equal(waitid(P_PID, (id_t)child, &si, WEXITED | WNOHANG | WNOWAIT), 0);
		if (si.si_pid == 0)
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	assert_int_equal(si.si_pid, child);
}

static void test_processes(void **state)
{
	(void)state;
	pid_t self = getpid();

	assert_int_equal(at_any_running(&self, 1), 1);
	assert_int_equal(at_any_running(NULL, 0), 0);

	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(0);
	wait_zombie(child);
	assert_int_equal(at_any_running(&child, 1), 0); /* a zombie has exited */
	pid_t both[2] = { child, self };
	assert_int_equal(at_any_running(both, 2), 1);
	assert_int_equal(waitpid(child, NULL, 0), child);
	assert_int_equal(at_any_running(&child, 1), 0); /* gone */
	pid_t none = 0x3fffffff;
	assert_int_equal(at_any_running(&none, 1), 0);
}

/* The state of a stat text: running, zombie (Z and X), kernel thread (PF_KTHREAD in the
 * flags field), and of real processes: ourselves, pid 2 (kthreadd), a pid that is not there. */
static void test_states(void **state)
{
	static const struct {
		const char *stat;
		enum at_process_state want;
	} cases[] = {
		{ "12 (sleep) S 1 12 12 0 -1 4194560 100 0", AT_PROCESS_RUNNING },
		{ "12 (a) b) R 1 12 12 0 -1 4194304 100 0", AT_PROCESS_RUNNING },
		{ "12 (sleep) Z 1 12 12 0 -1 4227340 0 0", AT_PROCESS_ZOMBIE },
		{ "12 (sleep) X 1 12 12 0 -1 4227340 0 0", AT_PROCESS_ZOMBIE },
		{ "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0", AT_PROCESS_KERNEL_THREAD },
		{ "12 (sleep) S 1 12", AT_PROCESS_RUNNING },
		{ "12 (sleep)", AT_PROCESS_GONE },
		{ "", AT_PROCESS_GONE },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (at_stat_state(cases[i].stat) != cases[i].want)
			fail_msg("'%s': %d", cases[i].stat, at_stat_state(cases[i].stat));
	assert_int_equal(at_process_state(getpid()), AT_PROCESS_RUNNING);
	assert_int_equal(at_process_state(2), AT_PROCESS_KERNEL_THREAD);
	assert_int_equal(at_process_state(0x3ffffffe), AT_PROCESS_GONE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stat_text),
		cmocka_unit_test(test_processes),
		cmocka_unit_test(test_states),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
