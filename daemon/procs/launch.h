/* launch.h: starting a command held before exec until the probes are in. */
#ifndef ALLOCTAP_LAUNCH_H
#define ALLOCTAP_LAUNCH_H

#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

struct at_launch {
	pid_t pid;
	int go_fd; /* write end of the pipe the child waits on */
	struct rlimit nofile; /* the command's limit of descriptors (at_launch_raise_nofile) */
	int nofile_raised;
	int nice;             /* the command's priority (at_launch_set_priority) */
	int nice_set;
};

/* Raises the daemon's soft limit of open descriptors to its hard limit (every traced process
 * holds some of its links), keeping the limit it had for the command it launches, which gets
 * that one back before its exec. */
void at_launch_raise_nofile(struct at_launch *l);

/* Sets the calling thread's priority to nice (threads it starts later inherit it), keeping the
 * one it had for the command it launches, which gets that one back before its exec. 0, or -1
 * with errno (the priority unchanged). */
int at_launch_set_priority(struct at_launch *l, int nice);

/* Resolves a command name the way execvp would (PATH search when it has no '/').
 * 0 with the path in out, or -1. */
int at_launch_resolve(const char *cmd, char *out, size_t outlen);

/* Forks a child that waits on a pipe, then execs path with argv and the current environment.
 * Between fork and exec the child makes no allocation. 0, or -1 with errno. */
int at_launch_start(struct at_launch *l, const char *path, char *const argv[]);

/* Lets the child exec. 0, or -1. */
int at_launch_release(struct at_launch *l);

/* Makes the child exit without exec (closing the pipe) and reaps it. */
void at_launch_abort(struct at_launch *l);

#endif
