/* procevents.h: every process's fork, exec and exit, from the kernel's process events
 * connector (a netlink socket; root only). The messages arrive after the fact: what a process
 * did before the daemon read its event is not held back, so --all and the fallback for a
 * process that cannot be ptraced use this, and say that they pick processes up late. */
#ifndef ALLOCTAP_PROCEVENTS_H
#define ALLOCTAP_PROCEVENTS_H

#include <stdint.h>
#include <sys/types.h>

enum at_procevent_kind {
	AT_PROCEVENT_FORK = 1, /* pid: the new process (or thread), parent: its creator's tgid */
	AT_PROCEVENT_EXEC,     /* pid executed a new program */
	AT_PROCEVENT_EXIT,     /* thread tid of process pid ended; status as waitpid(2) gives it */
};

struct at_procevent {
	enum at_procevent_kind kind;
	pid_t pid;    /* the process (thread group) */
	pid_t tid;    /* the thread */
	pid_t parent; /* FORK: the creating process */
	int status;   /* EXIT */
	uint64_t time_ns; /* when it happened (CLOCK_MONOTONIC) */
};

struct at_procevents {
	int fd;            /* -1 when closed */
	uint64_t overflows; /* times the socket's buffer overflowed: events were lost */
};

/* Opens the socket and subscribes. 0, or -1 with errno (EPERM without CAP_NET_ADMIN, or
 * EPROTONOSUPPORT for a kernel without the connector). */
int at_procevents_open(struct at_procevents *pe);
/* Reads what is pending (never blocks) and calls fn for each fork, exec and exit event.
 * Returns the number of events, or -1 with errno on a socket error. */
int at_procevents_read(struct at_procevents *pe,
		       void (*fn)(void *arg, const struct at_procevent *e), void *arg);
void at_procevents_close(struct at_procevents *pe);

#endif
