/* liveness.h: whether traced processes still run, from /proc/PID/stat. */
#ifndef ALLOCTAP_LIVENESS_H
#define ALLOCTAP_LIVENESS_H

#include <sys/types.h>

/* Whether the text of a /proc/PID/stat file says its process runs: the state after the command
 * name's last ')' is neither Z (zombie) nor X (dead). 0 for text of another shape. */
int at_stat_running(const char *stat);

/* What a process is, for messages that say why it cannot be traced. */
enum at_process_state {
	AT_PROCESS_GONE = 0,     /* no such process (or its stat could not be read) */
	AT_PROCESS_RUNNING,      /* a user-space process that has not exited */
	AT_PROCESS_ZOMBIE,       /* exited, not yet reaped by its parent (Z or X) */
	AT_PROCESS_KERNEL_THREAD, /* no user space: the PF_KTHREAD flag is set */
};

/* The state the text of a /proc/PID/stat file gives: its state letter and its flags field
 * (the sixth number after the state). AT_PROCESS_GONE for text of another shape. */
enum at_process_state at_stat_state(const char *stat);
enum at_process_state at_process_state(pid_t pid);

/* Whether any of the n processes exists and is not a zombie. */
int at_any_running(const pid_t *pids, unsigned n);

#endif
