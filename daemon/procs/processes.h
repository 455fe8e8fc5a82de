/* processes.h: a table of processes, and the process change records of a binary trace.
 *
 * The daemon keeps its processes in the process table (proctable.h), which uses this module
 * as the queue of change records only, giving each record's parent itself. A change (start, exec,
 * exit) is queued with the time on the records' clock when the daemon learnt of it, and
 * written once the output has reached that time: a start lands before the process's first
 * event, an exec between the old program's events and the new one's, an exit after its last
 * (doc/FORMAT.md 5.4). */
#ifndef ALLOCTAP_PROCESSES_H
#define ALLOCTAP_PROCESSES_H

#include <stdint.h>
#include <sys/types.h>

struct at_sink;
struct at_process_slot;
struct at_process_note;

struct at_processes {
	struct at_process_slot *slots; /* open addressing by pid */
	unsigned cap, count;
	struct at_process_note *head, *tail; /* changes not written yet, oldest first */
	int records;                   /* 0 (text output): nothing is queued */
	const char *proc;              /* where /proc is ("/proc"; tests give another) */
};

/* records: whether changes are recorded (a binary trace). 0, or -1 with errno. */
int at_processes_init(struct at_processes *p, int records);
void at_processes_free(struct at_processes *p);

/* Adds pid, child of parent (0: unknown). 1 if it is new, 0 if it was there, -1 out of
 * memory. */
int at_processes_add(struct at_processes *p, pid_t pid, pid_t parent);
int at_processes_has(const struct at_processes *p, pid_t pid);
/* Removes pid. 1 if it was there. */
int at_processes_remove(struct at_processes *p, pid_t pid);
/* Calls fn for every process in the table. */
void at_processes_each(const struct at_processes *p, void (*fn)(void *arg, pid_t pid),
		       void *arg);

/* Queues a change of pid (enum at_atz_process_change), numbered seq. START and EXEC read the
 * executable and command line from /proc now. parent 0: the table's; time_ns 0: now. Nothing
 * when changes are not recorded. */
void at_processes_note(struct at_processes *p, unsigned change, pid_t pid, pid_t parent,
		       unsigned flags, uint64_t status, uint64_t time_ns, uint64_t seq);
/* Writes to s the queued changes numbered up to seq (UINT64_MAX: all), oldest first. */
void at_processes_flush(struct at_processes *p, struct at_sink *s, uint64_t seq);

#endif
