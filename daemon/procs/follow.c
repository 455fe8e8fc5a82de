/* follow.c: following traced processes with ptrace, for process events only. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "follow.h"
#include "prim.h"
#include "procfs.h"

struct at_tracee {
	pid_t tid;  /* 0: an empty slot */
	pid_t tgid; /* its process; 0 while unknown (a child seen only through its parent) */
};

unsigned long at_follow_options(enum at_follow_scope scope)
{
	unsigned long o = PTRACE_O_TRACEEXEC;

	if (scope != AT_FOLLOW_EXECS)
		o |= PTRACE_O_TRACECLONE;
	if (scope == AT_FOLLOW_TREE)
		o |= PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK;
	return o;
}

static unsigned slot_of(pid_t tid, unsigned cap)
{
	return ((uint32_t)tid * 2654435761u) & (cap - 1);
}

static struct at_tracee *find(struct at_follow *f, pid_t tid)
{
	for (unsigned i = slot_of(tid, f->cap);; i = (i + 1) & (f->cap - 1)) {
		if (f->slots[i].tid == tid)
			return &f->slots[i];
		if (!f->slots[i].tid)
			return NULL;
	}
}

static void insert(struct at_tracee *slots, unsigned cap, pid_t tid, pid_t tgid)
{
	unsigned i = slot_of(tid, cap);

	while (slots[i].tid)
		i = (i + 1) & (cap - 1);
	slots[i].tid = tid;
	slots[i].tgid = tgid;
}

/* Adds a tracee (or updates its process). 0, or -1 when the table cannot grow. */
static int add(struct at_follow *f, pid_t tid, pid_t tgid)
{
	struct at_tracee *t = find(f, tid);

	if (t) {
		t->tgid = tgid;
		return 0;
	}
	if ((f->threads + 1) * 2 > f->cap) {
		unsigned cap = f->cap * 2;
		struct at_tracee *s = calloc(cap, sizeof(*s));
		if (!s)
			return -1;
		for (unsigned i = 0; i < f->cap; i++)
			if (f->slots[i].tid)
				insert(s, cap, f->slots[i].tid, f->slots[i].tgid);
		free(f->slots);
		f->slots = s;
		f->cap = cap;
	}
	insert(f->slots, f->cap, tid, tgid);
	f->threads++;
	return 0;
}

/* Removes a tracee; the entries after it in its run move back (no tombstones). */
static void drop(struct at_follow *f, struct at_tracee *t)
{
	unsigned mask = f->cap - 1, hole = (unsigned)(t - f->slots);

	f->slots[hole].tid = 0;
	f->threads--;
	for (unsigned i = (hole + 1) & mask; f->slots[i].tid; i = (i + 1) & mask) {
		unsigned home = slot_of(f->slots[i].tid, f->cap);
		/* the entry may fill the hole if its home is not in (hole, i] */
		if (((i - home) & mask) >= ((i - hole) & mask)) {
			f->slots[hole] = f->slots[i];
			f->slots[i].tid = 0;
			hole = i;
		}
	}
}

int at_follow_init(struct at_follow *f, enum at_follow_scope scope,
		   const struct at_follow_calls *calls, void *arg)
{
	memset(f, 0, sizeof(*f));
	f->scope = scope;
	f->calls = *calls;
	f->arg = arg;
	f->cap = 256;
	f->slots = calloc(f->cap, sizeof(*f->slots));
	return f->slots ? 0 : -1;
}

void at_follow_free(struct at_follow *f)
{
	free(f->slots);
	f->slots = NULL;
	f->threads = f->processes = 0;
}

/* Seizes the threads of pid not seized yet, from /proc/PID/task. Returns how many. */
static unsigned seize_threads(struct at_follow *f, pid_t pid)
{
	char path[64];
	unsigned seized = 0;
	struct dirent *de;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *dir = opendir(path);
	if (!dir)
		return 0;
	while ((de = readdir(dir))) {
		pid_t tid = (pid_t)atoi(de->d_name);
		/* a thread the kernel attached already (created by a seized one) refuses: EPERM */
		if (tid > 0 && !find(f, tid) &&
		    ptrace(PTRACE_SEIZE, tid, 0, at_follow_options(f->scope)) == 0 &&
		    add(f, tid, pid) == 0)
			seized++;
	}
	closedir(dir);
	return seized;
}

int at_follow_seize(struct at_follow *f, pid_t pid)
{
	if (ptrace(PTRACE_SEIZE, pid, 0, at_follow_options(f->scope)) < 0)
		return -1;
	if (add(f, pid, pid) < 0) {
		ptrace(PTRACE_DETACH, pid, 0, 0);
		errno = ENOMEM;
		return -1;
	}
	f->processes++;
	/* threads may be born while the list is read: read it until it brings nothing new */
	for (int round = 0; round < 100 && seize_threads(f, pid) > 0; round++)
		;
	return 0;
}

static void resume(struct at_follow *f, pid_t tid, int sig)
{
	if (sig)
		f->signals++;
	ptrace(PTRACE_CONT, tid, 0, sig);
}

/* The first stop of a tracee the kernel attached when a tracee created it (its creator's event
 * may have come first, leaving it in the table with no process yet): a thread, or a process to
 * take in or let go. */
static void newcomer(struct at_follow *f, pid_t tid)
{
	long tgid, parent;

	at_proc_ids(tid, &tgid, &parent);

	if (tgid > 0 && tgid != tid) { /* a thread */
		add(f, tid, (pid_t)tgid);
		resume(f, tid, 0);
		return;
	}
	if (tgid == tid && f->scope == AT_FOLLOW_TREE &&
	    f->calls.started(f->arg, tid, parent > 0 ? (pid_t)parent : 0) == 0 &&
	    add(f, tid, tid) == 0) {
		f->processes++;
		resume(f, tid, 0);
		return;
	}
	struct at_tracee *t = find(f, tid);
	if (t)
		drop(f, t);
	ptrace(PTRACE_DETACH, tid, 0, 0);
}

/* A tracee created a thread or process (ptrace's event: a clone's, a fork's or a vfork's): the
 * kernel attached it, and it will report its own first stop. A thread of the creator's process
 * goes in the table with its process, so that its first stop is let go at once; a process
 * waits there with none until its first stop (newcomer). */
static void expect_child(struct at_follow *f, pid_t tid, unsigned event)
{
	unsigned long child = 0;
	struct at_tracee *creator = find(f, tid);

	if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &child) != 0 || child == 0 || find(f, (pid_t)child))
		return;
	/* a clone's child in the creator's process (a clone may make a process too), alive or
	 * dead and not yet taken by a wait here, takes a signal 0 sent to it in that process: no
	 * /proc read, which cost more than the rest of the stops, for each thread a followed
	 * process creates */
	if (event == PTRACE_EVENT_CLONE && creator && creator->tgid &&
	    syscall(SYS_tgkill, creator->tgid, (pid_t)child, 0) == 0) {
		add(f, (pid_t)child, creator->tgid);
		return;
	}
	/* a child whose exit the daemon has taken already (its creator's event came after) is
	 * not waited for: /proc has no status for it any more, or shows it a zombie (its parent,
	 * not the daemon, reaps it) */
	if (at_proc_alive((pid_t)child))
		add(f, (pid_t)child, 0);
}

/* A tracee exited or was killed. */
static void gone(struct at_follow *f, pid_t tid, int status)
{
	struct at_tracee *t = find(f, tid);
	pid_t tgid = t ? t->tgid : tid;

	if (t)
		drop(f, t);
	if (tgid != tid)
		return;
	if (t && f->processes)
		f->processes--;
	f->calls.ended(f->arg, tid, status);
}

/* The exec stop: the thread that called execve now has the process's id; if it was another
 * thread, that thread's id is gone with the old leader. */
static void exec_stop(struct at_follow *f, pid_t pid)
{
	unsigned long former = 0;

	ptrace(PTRACE_GETEVENTMSG, pid, 0, &former);
	if ((pid_t)former != pid) {
		struct at_tracee *old = find(f, (pid_t)former);
		if (old)
			drop(f, old);
	}
	add(f, pid, pid);
	if (!f->calls.executed(f->arg, pid, (pid_t)former))
		resume(f, pid, 0);
}

static int is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

static void handle(struct at_follow *f, pid_t tid, int status)
{
	f->stops++;
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		gone(f, tid, status);
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	struct at_tracee *t = find(f, tid);
	if (!t || !t->tgid) {
		newcomer(f, tid);
		return;
	}
	int sig = WSTOPSIG(status);
	switch ((unsigned)status >> 16) {
	case 0: /* a signal on its way: deliver it, unless it is the session's own */
	{
		int own = f->calls.signalled ? f->calls.signalled(f->arg, tid, t->tgid, sig) : 0;

		if (own == 1)
			ptrace(PTRACE_CONT, tid, 0, 0);
		else if (own == 0)
			resume(f, tid, sig);
		break;
	}
	case PTRACE_EVENT_STOP:
		/* a group-stop stays one (SIGCONT ends it); any other is ours to end */
		if (is_stop_signal(sig))
			ptrace(PTRACE_LISTEN, tid, 0, 0);
		else
			resume(f, tid, 0);
		break;
	case PTRACE_EVENT_EXEC:
		exec_stop(f, tid);
		break;
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE:
		expect_child(f, tid, (unsigned)status >> 16);
		resume(f, tid, 0);
		break;
	default:
		resume(f, tid, 0);
		break;
	}
}

unsigned at_follow_reap(struct at_follow *f, unsigned max)
{
	unsigned n = 0;
	int status;
	pid_t tid;

	while (n < max && (tid = waitpid(-1, &status, WNOHANG | __WALL)) > 0) {
		handle(f, tid, status);
		n++;
	}
	return n;
}

/* During detach_all: a stopped tracee goes, with the signal it was stopped for; one that just
 * created a process leaves the child to be let go too. */
static void detach_stopped(struct at_follow *f, pid_t tid, int status)
{
	struct at_tracee *t;
	unsigned event = (unsigned)status >> 16;
	int sig = event == 0 ? WSTOPSIG(status) : 0;

	if (event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK ||
	    event == PTRACE_EVENT_CLONE)
		expect_child(f, tid, event);
	ptrace(PTRACE_DETACH, tid, 0, sig);
	t = find(f, tid); /* expect_child may have moved it */
	if (t)
		drop(f, t);
}

void at_follow_detach_all(struct at_follow *f, unsigned timeout_ms)
{
	uint64_t deadline = at_now_ms() + timeout_ms;
	int status;

	for (unsigned i = 0; i < f->cap; i++)
		if (f->slots[i].tid)
			ptrace(PTRACE_INTERRUPT, f->slots[i].tid, 0, 0);
	while (f->threads && at_now_ms() < deadline) {
		pid_t tid = waitpid(-1, &status, WNOHANG | __WALL);
		if (tid == 0) {
			usleep(1000);
			continue;
		}
		if (tid < 0)
			break;
		if (WIFEXITED(status) || WIFSIGNALED(status))
			gone(f, tid, status);
		else if (WIFSTOPPED(status))
			detach_stopped(f, tid, status);
	}
	f->processes = 0;
}

unsigned at_follow_expected(const struct at_follow *f)
{
	unsigned n = 0;

	for (unsigned i = 0; i < f->cap; i++)
		n += f->slots[i].tid && !f->slots[i].tgid;
	return n;
}
