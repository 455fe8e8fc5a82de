/* proctable.h: the process table: everything the daemon knows of a process, in one slot per
 * pid, with one lifecycle.
 *
 *   appear   a pid becomes a target (at_proctable_appear), or its first event is written
 *            (at_proctable_event): it is seen (SIGUSR1's markers, the summary's count);
 *   trace    it is traced (at_proctable_trace): the trace of a command or of --pid ends when
 *            no traced process is left, and its changes (start, exec, exit) are recorded;
 *   exec     it runs a new program (at_proctable_exec): an exec record;
 *   depart   it has ended (at_proctable_depart): it is traced no more and has no allocator at
 *            once, but stays seen, and written, until the output has written every event
 *            recorded before its end;
 *   forget   the output has passed that time (at_proctable_forget): the slot goes, and the
 *            forget hook (at_proctable_on_forget) tells the modules that keep state of the
 *            process elsewhere that it may go.
 *
 * A pid that departs and comes back (appears again before it is forgotten) is a new process: its
 * slot starts afresh, the ended process's events still in the rings (recorded before its
 * end) touch neither, and the ended one's pending departure no longer removes it. The table
 * grows with the processes alive or ended but not yet written out, never with the run's length.
 *
 * A "seq", here, is a time on the records' clock (CLOCK_MONOTONIC ns, at_session_now): the key
 * the output is ordered by; an event "numbered below" a seq was recorded before that time.
 *
 * A process's change records are queued in a struct at_processes (processes.h), used here only
 * as the queue ordered by event number: the table passes each record's parent itself.
 *
 * What stays elsewhere, keyed by pid:
 * - the mappings of --stacks (stack_procs.h), owned by stacks: the forget hook drives their
 *   forgetting (at_stacks_forgotten), so they go with the slot, once the output has written
 *   every event that needs them, and a pid that came back keeps its entry (its first scan
 *   retires the ended process's mappings, which its late stacks still name). The BPF
 *   program's copy (proc_mappings) goes at the departure, with the targets map entry, by the
 *   caller of at_proctable_depart: the kernel's side never outlives the process.
 * - follow's tracees (follow.h): they are threads, keyed by tid, and ptrace drives their
 *   forgetting: a tracee goes at the wait status that reaps its thread, which comes before the
 *   process departs (follow calls the departure itself) and before the kernel may give its tid
 *   to anyone, so a pid reused never meets the old tracee. A forget hook would come later, when
 *   the pid may be a new tracee already, and would drop the wrong one; keying them by the
 *   table would need a slot per thread, which the table does not have.
 * - the files probed for one pid alone (probed.h; keyed by file, forgotten for a pid at its
 *   end, when its probes went with it).
 * The BPF program's targets map holds what at_proctable_set_allocator mirrors here: the caller
 * writes both. */
#ifndef ALLOCTAP_PROCTABLE_H
#define ALLOCTAP_PROCTABLE_H

#include <stdint.h>
#include <sys/types.h>

#include "processes.h"

#define AT_PROCTABLE_MAX (1u << 22) /* slots at most: pid_max's largest value */

enum at_proc_flag {
	AT_PROC_SEEN = 1,     /* a target, or an event of it was written */
	AT_PROC_WRITTEN = 2,  /* an event of it was written: its RSS is sampled */
	AT_PROC_TRACED = 4,   /* traced now (until it departs) */
	AT_PROC_DEPARTED = 8, /* ended; forgotten once the output passes departed */
};

/* One process. */
struct at_proc {
	pid_t pid;          /* 0: an empty slot */
	pid_t parent;       /* 0: not known */
	unsigned flags;     /* enum at_proc_flag */
	uint64_t allocator; /* its entry in the BPF targets map: its allocator of each family
			     * (AT_TARGET_IN of its AT_TARGET), 0: none */
	uint64_t before;    /* events numbered below are an earlier process's under this pid */
	uint64_t departed;  /* the time of its end (AT_PROC_DEPARTED) */
};

/* A departure waiting for the output: oldest first. */
struct at_proc_departure {
	pid_t pid;
	uint64_t seq;
};

/* The forget hook: pid's process has left the table after its departure. */
typedef void (*at_proctable_forget_fn)(void *arg, pid_t pid);

struct at_proctable {
	struct at_proc *slots;        /* open addressing by pid */
	unsigned cap, count;          /* slots, and those in use */
	unsigned traced;              /* slots with AT_PROC_TRACED */
	uint64_t seen;                /* processes ever seen, for the summary */
	struct at_proc_departure *departures; /* a ring of cap_departures, from first */
	unsigned first, ndepartures, cap_departures;
	struct at_processes records;  /* change records not written yet */
	at_proctable_forget_fn forgotten; /* the forget hook, NULL: none */
	void *forgotten_arg;
};

/* records: whether change records are kept (a binary trace). 0, or -1 with errno. The caller
 * frees with at_proctable_free either way. */
int at_proctable_init(struct at_proctable *t, int records);
void at_proctable_free(struct at_proctable *t);

/* Whether change records are kept (a binary trace). */
int at_proctable_records(const struct at_proctable *t);

/* pid's slot (alive, or ended and not forgotten), NULL when it has none. Valid until the next
 * call that adds or removes a slot. */
const struct at_proc *at_proctable_find(const struct at_proctable *t, pid_t pid);

/* A process appears under pid and gets flags (AT_PROC_SEEN, counted
 * once; AT_PROC_TRACED, with parent, 0 when not known): a target, or a new process. An ended
 * pid not forgotten yet appears as a new process, with a fresh slot. 1 when one of flags is
 * new to it, 0 when it had them all, -1 when the table is full or out of memory. */
int at_proctable_appear(struct at_proctable *t, pid_t pid, pid_t parent, unsigned flags);
/* An event of pid numbered seq is written (after at_proctable_forget(seq)): pid is written and
 * seen. 1 when that makes it seen for the first time (a process found by its events), 0
 * otherwise (also for an event of the earlier process under a pid that came back, which
 * touches nothing). */
int at_proctable_event(struct at_proctable *t, pid_t pid, uint64_t seq);
/* pid, child of parent (0: not known), is traced, as the process its slot holds (an ended one
 * found by its late events stays ended). 1 when it was not, 0 when it was, -1 when the table
 * is full or out of memory. */
int at_proctable_trace(struct at_proctable *t, pid_t pid, pid_t parent);
/* Whether pid is traced. */
int at_proctable_traced(const struct at_proctable *t, pid_t pid);
/* pid is traced no more, without an end (a launch taken back). */
void at_proctable_untrace(struct at_proctable *t, pid_t pid);
/* Queues a change record of traced pid numbered seq (processes.h: START and EXEC read /proc
 * now; time_ns 0: now), with its parent from the table. Nothing when pid is not traced. */
void at_proctable_note(struct at_proctable *t, unsigned change, pid_t pid, unsigned flags,
		       uint64_t status, uint64_t time_ns, uint64_t seq);
/* Traced pid runs a new program (seq: the time now): its exec record. 1 if it is
 * traced, else 0 and nothing. */
int at_proctable_exec(struct at_proctable *t, pid_t pid, unsigned flags, uint64_t seq);
/* pid has ended at time seq: the exit record (status: its wait status) when it
 * was traced, then it is traced no more and has no allocator; it stays seen and written until
 * at_proctable_forget passes seq. 1 when it was traced. */
int at_proctable_depart(struct at_proctable *t, pid_t pid, int status, uint64_t seq);
/* The output has written every event numbered up to seq: the processes that ended at or below
 * it leave the table. */
void at_proctable_forget(struct at_proctable *t, uint64_t seq);

/* From now on fn(arg, pid) is called once for each departed process as it leaves the table
 * (at_proctable_forget passing its end, or its departure when it cannot be queued); never for
 * one whose pid came back before that (the slot is then the new process's, whose own
 * departure calls it later), nor for a slot that goes without a departure. fn must not change
 * the table. */
void at_proctable_on_forget(struct at_proctable *t, at_proctable_forget_fn fn, void *arg);

/* Mirrors pid's entry in the BPF targets map (allocators: its allocator of each family, as
 * bpf/alloctap.h's AT_TARGET_IN; 0: any), written by the caller; pid gets a slot if it has none.
 * 0, or -1 when the table is full. */
int at_proctable_set_allocator(struct at_proctable *t, pid_t pid, uint64_t allocators);
/* pid's allocators as the BPF targets map has them from the daemon (0: none;
 * at_proctable_depart clears them, as the caller deletes the map's entry). */
uint64_t at_proctable_allocator(const struct at_proctable *t, pid_t pid);

/* Calls fn for every pid whose flags include all of mask (0: every slot). fn must not change
 * the table. */
void at_proctable_each(const struct at_proctable *t, unsigned mask,
		       void (*fn)(void *arg, pid_t pid), void *arg);
/* Writes to s the change records numbered up to seq (UINT64_MAX: all), oldest first. */
void at_proctable_flush(struct at_proctable *t, struct at_sink *s, uint64_t seq);

#endif
