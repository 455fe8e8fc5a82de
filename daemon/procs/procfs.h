/* procfs.h: what the daemon reads about a process under /proc: whole files (environ, cmdline),
 * status fields, the start time, and which file a path names. */
#ifndef ALLOCTAP_PROCFS_H
#define ALLOCTAP_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Reads all of PROC/PID/NAME (proc is normally "/proc") into a malloc'd buffer, with a NUL
 * after its len bytes, however long it is (an environment can hold megabytes). 0 with *buf
 * (to free) and *len, or -1 with errno. */
int at_proc_read(const char *proc, pid_t pid, const char *name, char **buf, size_t *len);

/* The value of the variable name in an environment block (entries separated by NULs, as in
 * /proc/PID/environ), from its last entry, as getenv(3) of the dynamic loader finds it; NULL
 * if unset. */
const char *at_environ_get(const char *env, size_t len, const char *name);

/* The number after "FIELD:" in /proc/TID/status (Tgid, PPid...); -1 if it cannot be read. */
long at_proc_status_field(pid_t tid, const char *field);
/* Task tid's process and parent (Tgid and PPid in /proc/TID/status), from one read; each -1
 * if it cannot be read. */
void at_proc_ids(pid_t tid, long *tgid, long *ppid);
/* Whether task tid exists and has not exited (a zombie, waiting for its parent, has). */
int at_proc_alive(pid_t tid);

/* When pid started, in nanoseconds since the Unix epoch, from the clock ticks of
 * /proc/PID/stat (a hundredth of a second is the usual precision); 0 if unknown. */
uint64_t at_proc_start_ns(pid_t pid);

/* Nanoseconds since the Unix epoch (CLOCK_REALTIME): the dates of process records. */
uint64_t at_realtime_ns(void);

/* Whether path names the file (dev, inode) (a stat(2) of path follows links). */
int at_same_file(const char *path, uint64_t dev, uint64_t inode);

#endif
