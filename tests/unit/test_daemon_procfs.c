/* test_daemon_procfs.c: unit tests of daemon/procs/procfs.c: whole files of any length, environment
 * lookups, status fields, start times, same-file checks. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../daemon/procs/procfs.h"

static char root[] = "/tmp/test_daemon_procfs.XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	return system(cmd);
}

/* A file far longer than any fixed buffer comes back whole, NUL after its end. */
static void test_read_whole(void **state)
{
	(void)state;
	char path[256], *buf;
	size_t len, n = 300000;

	snprintf(path, sizeof(path), "%s/7", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/7/environ", root);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	for (size_t i = 0; i < n; i++)
		fputc(i % 1000 == 999 ? '\0' : 'a' + (int)(i % 26), f);
	fclose(f);
	assert_int_equal(at_proc_read(root, 7, "environ", &buf, &len), 0);
	assert_int_equal(len, n);
	assert_int_equal(buf[len], '\0');
	assert_int_equal(buf[n - 1], '\0');
	assert_int_equal(buf[1000], 'a' + 1000 % 26);
	free(buf);
	assert_int_equal(at_proc_read(root, 8, "environ", &buf, &len), -1);
	/* this process's own command line, as the kernel gives it */
	assert_int_equal(at_proc_read("/proc", getpid(), "cmdline", &buf, &len), 0);
	assert_true(len > 0);
	assert_non_null(strstr(buf, "test_daemon_procfs"));
	free(buf);
}

static void test_environ_get(void **state)
{
	(void)state;
	static const char env[] = "A=1\0LD_PRELOADX=no\0LD_PRELOAD=first\0B=\0LD_PRELOAD=last\0"
				  "C=unterminated";
	size_t len = sizeof(env) - 1;

	assert_string_equal(at_environ_get(env, len, "LD_PRELOAD"), "last");
	assert_string_equal(at_environ_get(env, len, "A"), "1");
	assert_string_equal(at_environ_get(env, len, "B"), "");
	assert_null(at_environ_get(env, len, "C")); /* cut short: no terminating NUL */
	assert_null(at_environ_get(env, len, "LD"));
	assert_null(at_environ_get(env, 0, "A"));
}

static int tid_pipe[2], hold_pipe[2];

/* Writes its thread id to tid_pipe, then waits until hold_pipe is closed. */
static void *report_tid(void *arg)
{
	pid_t tid = gettid();
	char c;

	if (write(tid_pipe[1], &tid, sizeof(tid)) != sizeof(tid))
		return NULL;
	while (read(hold_pipe[0], &c, 1) > 0)
		;
	return arg;
}

/* The process and parent of a task: this process's own, another thread's (its process, and
 * the process's parent), none for a task that does not exist. */
static void test_ids(void **state)
{
	(void)state;
	long tgid, ppid;
	pthread_t t;
	pid_t tid = 0;

	at_proc_ids(getpid(), &tgid, &ppid);
	assert_int_equal(tgid, getpid());
	assert_int_equal(ppid, getppid());
	assert_int_equal(pipe(tid_pipe), 0);
	assert_int_equal(pipe(hold_pipe), 0);
	assert_int_equal(pthread_create(&t, NULL, report_tid, NULL), 0);
	assert_int_equal(read(tid_pipe[0], &tid, sizeof(tid)), sizeof(tid));
	assert_int_not_equal(tid, getpid());
	at_proc_ids(tid, &tgid, &ppid);
	assert_int_equal(tgid, getpid());
	assert_int_equal(ppid, getppid());
	close(hold_pipe[1]);
	assert_int_equal(pthread_join(t, NULL), 0);
	close(hold_pipe[0]);
	close(tid_pipe[0]);
	close(tid_pipe[1]);
	at_proc_ids(999999999, &tgid, &ppid);
	assert_int_equal(tgid, -1);
	assert_int_equal(ppid, -1);
}

static void test_status_and_start(void **state)
{
	(void)state;
	assert_int_equal(at_proc_status_field(getpid(), "Tgid"), getpid());
	assert_int_equal(at_proc_status_field(getpid(), "PPid"), getppid());
	assert_int_equal(at_proc_status_field(getpid(), "NoSuchField"), -1);
	assert_int_equal(at_proc_status_field(999999999, "Tgid"), -1);
	uint64_t now = at_realtime_ns(), start = at_proc_start_ns(getpid());
	assert_true(start <= now + 20000000ull);
	assert_true(start + 3600ull * 1000000000ull > now);
	assert_int_equal(at_proc_start_ns(999999999), 0);
}

/* Alive: this process; not alive: a child that exited and is not yet reaped (a zombie, whose
 * status /proc still shows), and a reaped one. */
static void test_alive(void **state)
{
	(void)state;
	int status;
	pid_t child = fork();

	if (child == 0)
		_exit(0);
	assert_true(child > 0);
	assert_int_equal(at_proc_alive(getpid()), 1);
	for (int i = 0; i < 2000 && at_proc_alive(child); i++)
		usleep(1000); /* until it has exited */
	assert_int_equal(at_proc_alive(child), 0);
	assert_true(at_proc_status_field(child, "Tgid") == child); /* a zombie: still in /proc */
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_int_equal(at_proc_alive(child), 0);
}

static void test_same_file(void **state)
{
	(void)state;
	struct stat st;

	assert_int_equal(stat("/proc/self/exe", &st), 0);
	assert_true(at_same_file("/proc/self/exe", st.st_dev, st.st_ino));
	assert_false(at_same_file("/proc/self/exe", st.st_dev, st.st_ino + 1));
	assert_false(at_same_file("/nonexistent", st.st_dev, st.st_ino));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_whole),
		cmocka_unit_test(test_environ_get),
		cmocka_unit_test(test_status_and_start),
		cmocka_unit_test(test_ids),
		cmocka_unit_test(test_same_file),
		cmocka_unit_test(test_alive),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
