/* targets.h: what the daemon traces and where its probes go: each --pid process's allocator,
 * every C library (--all), or the allocator of a command it launches; then the processes and
 * programs that appear while it traces (doc/DESIGN.md, decision 11). */
#ifndef ALLOCTAP_TARGETS_H
#define ALLOCTAP_TARGETS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct at_session;

/* Plants the probes for the session's mode and starts following (a launched command is
 * released once its probes are in). 0, or -1 after a message. */
int at_targets_attach(struct at_session *d);

/* 1 when every probe is attached for one process (neither following new processes nor
 * tracing them all): the kernel then checks the process before the BPF program runs. */
int at_targets_bound(const struct at_session *d);

/* Probes the object at path for pid in the session's scope: for every process when the
 * session follows new processes or traces them all, else for pid alone; nothing if that file is
 * probed in that scope already. It becomes pid's allocator (pid > 0): the only object whose
 * probes record pid's calls. 1 when probes went in, 0 when they were there, or -1 with a reason
 * in why. */
int at_targets_probe(struct at_session *d, const char *path, pid_t pid, char *why,
		     size_t whylen);

/* No process is held at its dynamic loader any more (before the processes are let go: a
 * SIGCONT of the BPF program would then reach the program). */
void at_targets_stop_loading(struct at_session *d);

/* Handles the wait statuses of the followed processes (ptrace stops and exits). */
void at_targets_reap(struct at_session *d);

/* Handles what the process events connector reported (--all, and following without
 * ptrace). */
void at_targets_procevents(struct at_session *d);

/* The first event of a process the session has no record of (--all: one that ran before the
 * trace): records its start. */
void at_targets_first_seen(struct at_session *d, pid_t pid, uint64_t seq);

/* The traced processes that are gone, found by their /proc entries, end (for processes whose
 * ends nothing reports: neither ptrace nor the connector). */
void at_targets_sweep(struct at_session *d);

#endif
