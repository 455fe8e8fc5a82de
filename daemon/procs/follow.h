/* follow.h: following traced processes with ptrace, used for process events only.
 *
 * Every thread of a followed process is a tracee seized with PTRACE_SEIZE, which neither stops
 * it nor sends it anything: the program and its parent see no difference (but TracerPid in
 * /proc/PID/status); with AT_FOLLOW_EXECS only the threads there at the seize, so that a
 * thread's creation never waits for the session. An exec stops until the session has probed
 * the new program; with
 * AT_FOLLOW_TREE a new process (fork, vfork, clone, posix_spawn) starts in a ptrace stop and runs
 * only once the session has taken it in, so its first allocation is seen. Every other stop is
 * passed on at once: a signal is delivered as it was sent, a group-stop (SIGSTOP, SIGTSTP...)
 * is kept with PTRACE_LISTEN, so the shell's job control works as without a tracer. Calls of the
 * allocator never stop anything. doc/DESIGN.md (decision 11) says why ptrace.
 *
 * The tracees stay a registry of their own, beside the process table (proctable.h): they are
 * threads, keyed by thread id, and their state is ptrace's (a stop pending, a listen, a first
 * stop expected before the process is taken in); a tracee goes when ptrace says its thread
 * ended, before the table's process departs and long before the table forgets it
 * (proctable.h says why the table's forget hook does not drive it). */
#ifndef ALLOCTAP_FOLLOW_H
#define ALLOCTAP_FOLLOW_H

#include <stdint.h>
#include <sys/types.h>

enum at_follow_scope {
	AT_FOLLOW_EXECS = 0, /* the programs the seized threads execute; a thread created later is
			      * not traced and never stops */
	AT_FOLLOW_THREADS,   /* and every thread created later (a thread held for --stacks needs
			      * its tracer): each creation stops until the daemon takes it in */
	AT_FOLLOW_TREE,      /* and every process they create, and theirs */
};

/* What the session does at each process event. */
struct at_follow_calls {
	/* pid is a new process, child of parent, stopped before its first instruction (its
	 * memory a copy of its parent's, or shared after vfork). 0 to follow it, -1 to let it go. */
	int (*started)(void *arg, pid_t pid, pid_t parent);
	/* pid has executed a new program and is stopped there: its executable is mapped, its
	 * libraries are not yet. former_tid is the thread that called execve. 1 when the session
	 * resumes it itself later (PTRACE_CONT), 0 to resume it now. */
	int (*executed)(void *arg, pid_t pid, pid_t former_tid);
	/* pid has ended (every thread); status as waitpid(2) gives it. Also called for a child of
	 * the daemon that was not followed. */
	void (*ended)(void *arg, pid_t pid, int status);
	/* Thread tid of process tgid is about to receive sig: 1 when the signal was the
	 * session's own (it is then suppressed), 2 when it was and the session resumes the
	 * thread itself later (PTRACE_CONT), 0 to deliver it. May be NULL. */
	int (*signalled)(void *arg, pid_t tid, pid_t tgid, int sig);
};

struct at_tracee;

struct at_follow {
	enum at_follow_scope scope;
	struct at_follow_calls calls;
	void *arg;
	struct at_tracee *slots;   /* the tracees by thread id: open addressing */
	unsigned cap;
	unsigned threads;          /* tracees */
	unsigned processes;        /* followed processes */
	uint64_t stops;            /* wait statuses handled */
	uint64_t signals;          /* signals passed on */
};

/* 0, or -1 with errno (ENOMEM). */
int at_follow_init(struct at_follow *f, enum at_follow_scope scope,
		   const struct at_follow_calls *calls, void *arg);
void at_follow_free(struct at_follow *f);

/* Seizes every thread of process pid. 0, or -1 with errno (EPERM: another tracer has it, or
 * no permission; ESRCH: no such process). */
int at_follow_seize(struct at_follow *f, pid_t pid);

/* Handles at most max pending wait statuses (waitpid with WNOHANG and __WALL), calling the
 * session's calls. Returns how many it handled. */
unsigned at_follow_reap(struct at_follow *f, unsigned max);

/* Lets every tracee go: each is interrupted and detached at its stop, with the signal it was
 * about to receive; processes created meanwhile are let go too. Gives up after timeout_ms
 * (the kernel detaches what remains when the daemon exits). */
void at_follow_detach_all(struct at_follow *f, unsigned timeout_ms);

/* Threads and processes a tracee created whose first stop has not come yet (not taken in:
 * the trace must not end before them). */
unsigned at_follow_expected(const struct at_follow *f);

/* The PTRACE_O_* options the tracees of a scope are seized with. */
unsigned long at_follow_options(enum at_follow_scope scope);

#endif
