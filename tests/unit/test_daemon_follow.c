/* test_daemon_follow.c: unit tests of daemon/procs/follow.c with real processes (no BPF): a child of
 * this test, seized while it waits on a pipe, creates processes every way (fork, vfork, clone
 * of a process, posix_spawn), a thread, takes a signal and executes programs; the session's
 * calls must see each process start, execute and end, with the statuses and signals intact;
 * job control and letting go. */
#include <errno.h>
#include <sched.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../daemon/procs/follow.h"
#include "../../daemon/procs/procfs.h"
#include "prim.h"

extern char **environ;

/* What the calls saw. */
struct seen {
	pid_t started[16], parents[16], executed[16], ended[16];
	int statuses[16];
	unsigned nstarted, nexecuted, nended;
	int refuse;   /* started returns -1 */
	pid_t former; /* a thread other than the main one executed */
};

static int on_started(void *arg, pid_t pid, pid_t parent)
{
	struct seen *s = arg;

	if (s->nstarted < 16) {
		s->parents[s->nstarted] = parent;
		s->started[s->nstarted++] = pid;
	}
	return s->refuse ? -1 : 0;
}

static int on_executed(void *arg, pid_t pid, pid_t former)
{
	struct seen *s = arg;

	if (former != pid)
		s->former = former;
	if (s->nexecuted < 16)
		s->executed[s->nexecuted++] = pid;
	return 0;
}

static void on_ended(void *arg, pid_t pid, int status)
{
	struct seen *s = arg;

	if (s->nended < 16) {
		s->statuses[s->nended] = status;
		s->ended[s->nended++] = pid;
	}
}

static const struct at_follow_calls calls = { on_started, on_executed, on_ended, NULL };

/* Reaps until pid has ended or ms have passed. 1 if it ended. */
static int reap_until_ended(struct at_follow *f, struct seen *s, pid_t pid, unsigned ms)
{
	uint64_t deadline = at_now_ms() + ms;

	while (at_now_ms() < deadline) {
		if (at_follow_reap(f, 64) == 0)
			usleep(1000);
		for (unsigned i = 0; i < s->nended; i++)
			if (s->ended[i] == pid)
				return 1;
	}
	return 0;
}

static int count(const pid_t *v, unsigned n, pid_t pid)
{
	int k = 0;

	for (unsigned i = 0; i < n; i++)
		k += v[i] == pid;
	return k;
}

static int status_of(const struct seen *s, pid_t pid)
{
	for (unsigned i = 0; i < s->nended; i++)
		if (s->ended[i] == pid)
			return s->statuses[i];
	return -1;
}

/* Forks a child that runs body once the pipe says go; returns its pid and the pipe's write
 * end. The child exits with body's value. */
static pid_t start_held(int (*body)(void), int *go)
{
	int fds[2];

	assert_int_equal(pipe(fds), 0);
	pid_t parent = getpid(), pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char c;
		/* a test that fails before it ends the child (a body that forks forever) does
		 * not leave it running, holding the test's output open */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
			_exit(101);
		close(fds[1]);
		if (read(fds[0], &c, 1) != 1)
			_exit(100);
		_exit(body());
	}
	close(fds[0]);
	*go = fds[1];
	return pid;
}

static void release(int go)
{
	assert_int_equal(write(go, "g", 1), 1);
	close(go);
}

/* Clears s (refuse: its calls' answer to a new process), follows a child held until seized
 * that then runs body, with f of scope, and lets it go. Returns the child. */
static pid_t follow_child(struct at_follow *f, struct seen *s, enum at_follow_scope scope,
			  int refuse, int (*body)(void))
{
	int go;

	memset(s, 0, sizeof(*s));
	s->refuse = refuse;
	assert_int_equal(at_follow_init(f, scope, &calls, s), 0);
	pid_t child = start_held(body, &go);
	assert_int_equal(at_follow_seize(f, child), 0);
	release(go);
	return child;
}

static volatile sig_atomic_t got_usr1;
static void on_usr1(int sig)
{
	(void)sig;
	got_usr1 = 1;
}

static void *thread_body(void *arg)
{
	return arg;
}

static int clone_child(void *arg)
{
	(void)arg;
	return 9;
}

/* Everything a process can do to make processes; exits 3 when each went as planned. */
static int tree_body(void)
{
	char *true_argv[] = { "true", NULL };
	int st, bad = 0;

	signal(SIGUSR1, on_usr1);
	pid_t a = fork();
	if (a == 0) {
		execve("/bin/true", true_argv, environ);
		_exit(127);
	}
	pid_t b = vfork();
	if (b == 0) {
		execl("/bin/sh", "sh", "-c", "exit 5", (char *)NULL);
		_exit(127);
	}
	pid_t c;
	bad |= posix_spawn(&c, "/bin/true", NULL, NULL, true_argv, environ) != 0;
	static char stack[65536];
	pid_t d = clone(clone_child, stack + sizeof(stack), SIGCHLD, NULL);
	pthread_t t;
	bad |= pthread_create(&t, NULL, thread_body, NULL) != 0 || pthread_join(t, NULL) != 0;
	raise(SIGUSR1);
	bad |= waitpid(a, &st, 0) != a || st != 0;
	bad |= waitpid(b, &st, 0) != b || WEXITSTATUS(st) != 5;
	bad |= waitpid(c, &st, 0) != c || st != 0;
	bad |= waitpid(d, &st, 0) != d || WEXITSTATUS(st) != 9;
	return bad ? 1 : got_usr1 ? 3 : 2;
}

/* The whole tree: four processes start with the child as parent, three execute, everything
 * ends with its own status, and the child's signal and thread behave as untraced. */
static void test_tree(void **state)
{
	(void)state;
	static struct seen s;
	struct at_follow f;
	pid_t child = follow_child(&f, &s, AT_FOLLOW_TREE, 0, tree_body);

	assert_int_equal(f.processes, 1);
	assert_int_equal(at_proc_status_field(child, "TracerPid"), getpid());
	assert_true(reap_until_ended(&f, &s, child, 20000));
	assert_int_equal(WEXITSTATUS(status_of(&s, child)), 3);
	assert_int_equal(s.nstarted, 4);
	for (unsigned i = 0; i < s.nstarted; i++) {
		assert_int_equal(s.parents[i], child);
		assert_int_equal(count(s.ended, s.nended, s.started[i]), 1);
		assert_true(status_of(&s, s.started[i]) >= 0);
	}
	assert_true(s.nexecuted >= 3);
	assert_int_equal(count(s.executed, s.nexecuted, child), 0);
	assert_int_equal(f.processes, 0);
	assert_int_equal(f.threads, 0);
	assert_true(f.signals >= 1); /* SIGUSR1, and SIGCHLDs */
	at_follow_free(&f);
}

static int execs_body(void)
{
	pid_t g = fork();
	if (g == 0)
		_exit(0);
	waitpid(g, NULL, 0);
	execl("/bin/sh", "sh", "-c", "exit 4", (char *)NULL);
	return 127;
}

/* AT_FOLLOW_EXECS: the child's exec is seen, its fork is not followed. */
static void test_execs_only(void **state)
{
	(void)state;
	static struct seen s;
	struct at_follow f;
	pid_t child = follow_child(&f, &s, AT_FOLLOW_EXECS, 0, execs_body);

	assert_true(reap_until_ended(&f, &s, child, 20000));
	assert_int_equal(WEXITSTATUS(status_of(&s, child)), 4);
	assert_int_equal(s.nstarted, 0);
	assert_true(count(s.executed, s.nexecuted, child) >= 1);
	at_follow_free(&f);
}

/* A process the session refuses is let go, and runs on untraced. */
static void test_refused(void **state)
{
	(void)state;
	static struct seen s;
	struct at_follow f;
	pid_t child = follow_child(&f, &s, AT_FOLLOW_TREE, 1, execs_body);

	assert_true(reap_until_ended(&f, &s, child, 20000));
	assert_int_equal(s.nstarted, 1);
	assert_int_equal(count(s.ended, s.nended, s.started[0]), 0);
	at_follow_free(&f);
}

static int stop_body(void)
{
	raise(SIGSTOP);
	return 6;
}

/* A group-stop holds the process (as SIGSTOP does untraced) until SIGCONT. */
static void test_group_stop(void **state)
{
	(void)state;
	static struct seen s;
	struct at_follow f;
	pid_t child = follow_child(&f, &s, AT_FOLLOW_TREE, 0, stop_body);

	assert_false(reap_until_ended(&f, &s, child, 300));
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)child);
	FILE *st = fopen(path, "r");
	assert_non_null(st);
	assert_non_null(fgets(buf, sizeof(buf), st));
	fclose(st);
	char state_char = strrchr(buf, ')')[2];
	assert_true(state_char == 't' || state_char == 'T');
	kill(child, SIGCONT);
	assert_true(reap_until_ended(&f, &s, child, 20000));
	assert_int_equal(WEXITSTATUS(status_of(&s, child)), 6);
	at_follow_free(&f);
}

static void *exec_thread(void *arg)
{
	(void)arg;
	execl("/bin/sh", "sh", "-c", "exit 8", (char *)NULL);
	return NULL;
}

static int thread_exec_body(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, exec_thread, NULL) != 0)
		return 1;
	pause(); /* the exec ends this thread too */
	return 2;
}

/* A thread other than the main one executes (AT_FOLLOW_THREADS: threads created later are
 * followed): the process keeps its pid, the thread's id goes, and the new program's status is
 * the process's. */
static void test_thread_exec(void **state)
{
	(void)state;
	static struct seen s;
	struct at_follow f;
	pid_t child = follow_child(&f, &s, AT_FOLLOW_THREADS, 0, thread_exec_body);

	assert_true(reap_until_ended(&f, &s, child, 20000));
	assert_int_equal(WEXITSTATUS(status_of(&s, child)), 8);
	assert_true(count(s.executed, s.nexecuted, child) >= 1);
	assert_true(s.former > 0 && s.former != child);
	assert_int_equal(f.threads, 0);
	assert_int_equal(f.processes, 0);
	at_follow_free(&f);
}

static void *idle_thread(void *arg)
{
	return arg;
}

static int threads_body(void)
{
	for (int i = 0; i < 20; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, idle_thread, NULL) != 0 || pthread_join(t, NULL) != 0)
			return 1;
	}
	return 3;
}

/* AT_FOLLOW_EXECS: creating threads stops nothing (no clone event, no tracee for the new
 * thread): the only wait status is the process's end. */
static void test_execs_threads_do_not_stop(void **state)
{
	(void)state;
	static struct seen s;
	struct at_follow f;
	pid_t child = follow_child(&f, &s, AT_FOLLOW_EXECS, 0, threads_body);

	assert_true(reap_until_ended(&f, &s, child, 20000));
	assert_int_equal(WEXITSTATUS(status_of(&s, child)), 3);
	assert_int_equal(f.stops, 1);
	assert_int_equal(f.threads, 0);
	at_follow_free(&f);
}

/* 100 rounds of 4 threads that end at once, then a process made by clone with no exit signal;
 * exits 3 when each went as planned. */
static int threads_clone_body(void)
{
	static char stack[65536];
	int st;

	for (int i = 0; i < 100; i++) {
		pthread_t t[4];

		for (int k = 0; k < 4; k++)
			if (pthread_create(&t[k], NULL, idle_thread, NULL) != 0)
				return 1;
		for (int k = 0; k < 4; k++)
			if (pthread_join(t[k], NULL) != 0)
				return 1;
	}
	pid_t d = clone(clone_child, stack + sizeof(stack), 0, NULL);
	if (d < 0 || waitpid(d, &st, __WCLONE) != d || !WIFEXITED(st) || WEXITSTATUS(st) != 9)
		return 1;
	return 3;
}

/* AT_FOLLOW_TREE: each thread is a tracee from its creation to its end and is no process,
 * however its first stop and its creator's event come (a thread that ends at once may be gone
 * before that event is read); a process made by clone with no exit signal (a clone event like
 * a thread's) is one. Three wait statuses a thread or that process (the creator's event, the
 * first stop, the end), and the child's end. */
static void test_threads_and_clone(void **state)
{
	(void)state;
	static struct seen s;
	struct at_follow f;
	pid_t child = follow_child(&f, &s, AT_FOLLOW_TREE, 0, threads_clone_body);

	assert_true(reap_until_ended(&f, &s, child, 20000));
	assert_int_equal(WEXITSTATUS(status_of(&s, child)), 3);
	assert_int_equal(s.nstarted, 1);
	assert_int_equal(s.parents[0], child);
	assert_int_equal(count(s.ended, s.nended, s.started[0]), 1);
	assert_int_equal(WEXITSTATUS(status_of(&s, s.started[0])), 9);
	assert_int_equal(s.nended, 2);
	assert_int_equal(f.stops, 400 * 3 + 3 + 1);
	assert_int_equal(f.processes, 0);
	assert_int_equal(f.threads, 0);
	at_follow_free(&f);
}

static int loop_body(void)
{
	for (;;) {
		pid_t g = fork();
		if (g == 0)
			_exit(0);
		waitpid(g, NULL, 0);
		usleep(1000);
	}
	return 0;
}

/* Letting go of a process that keeps forking: it and its children end untraced. */
static void test_detach_all(void **state)
{
	(void)state;
	static struct seen s;
	struct at_follow f;
	int status;
	pid_t child = follow_child(&f, &s, AT_FOLLOW_TREE, 0, loop_body);

	assert_false(reap_until_ended(&f, &s, child, 200));
	assert_true(s.nstarted > 0);
	at_follow_detach_all(&f, 5000);
	assert_int_equal(f.threads, 0);
	assert_int_equal(at_proc_status_field(child, "TracerPid"), 0);
	usleep(20000); /* it goes on forking, untraced */
	assert_int_equal(at_proc_status_field(child, "TracerPid"), 0);
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFSIGNALED(status));
	at_follow_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree),
		cmocka_unit_test(test_execs_only),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_group_stop),
		cmocka_unit_test(test_thread_exec),
		cmocka_unit_test(test_execs_threads_do_not_stop),
		cmocka_unit_test(test_threads_and_clone),
		cmocka_unit_test(test_detach_all),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
