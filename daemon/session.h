/* session.h: one run of the daemon: the BPF program and its rings, the probes, the merge of
 * the rings, the output, and the loop that moves events from one to the other. */
#ifndef ALLOCTAP_SESSION_H
#define ALLOCTAP_SESSION_H

#include <linux/types.h>
#include <stdint.h>
#include <sys/types.h>

#include "attach.h"
#include "lost.h"
#include "options.h"
#include "proctable.h"
#include "reorder.h"
#include "sink.h"
#include "stacks.h"
#include "targets.h"

#define AT_MAX_TRACED 16384 /* processes traced at once (the BPF target map's size) */

/* Everything a running daemon holds. */
struct at_session {
	struct at_session_options opt;
	struct at_bpf *bpf;         /* the BPF program, its maps and ring buffer (bpf.h) */
	struct at_probes probes;
	struct at_reorder reorder;
	struct at_sink sink;
	struct at_lost lost;
	struct at_stacks stacks;    /* --stacks */
	struct at_proctable table;  /* every process the daemon knows: seen (SIGUSR1's markers),
				     * written (RSS is sampled from its first event written: before,
				     * a launched child is still the daemon's copy), traced, ended,
				     * its allocator, its change records */
	uint64_t last_rss_ms;       /* when RSS was last sampled (rss.h) */
	uint64_t rss_records;
	struct at_targets targets;  /* what is traced, the files probed, following, the command */
	int output_reported;        /* the output's error was reported already */
	uint64_t unfinished;        /* calls of the window that never finished (lost) */
	uint64_t detach_ns;         /* the end's detach took this long (-v) */
	uint64_t pagesize;
	int times;                  /* the events carry their times (times_wanted) */
	uint64_t time_grain;        /* the events' times are multiples of this many ns (times_grain) */
	volatile uint64_t *ring_pos[2]; /* consumer, producer positions (for -v) */
	int news;                   /* the last round read news of Python stacks */
};

/* Opens the output, allocates the buffers, loads the BPF program. 0, or -1 after a message;
 * at_session_close must follow either way. */
int at_session_open(struct at_session *d);
/* Plants the probes (targets.h) and installs the signal handlers. 0, or -1 after a
 * message. */
int at_session_attach(struct at_session *d);
/* The loop: drain the ring buffer, tick, progress, signals, until a signal, --duration, the
 * end of the targets or an error. 0 for a normal stop, -1 after an output or ring error. */
int at_session_run(struct at_session *d);
/* Detaches, writes out what the ring buffer and the window still hold, flushes and prints the
 * summary. rc is at_session_run's result; returns the exit status. */
int at_session_finish(struct at_session *d, int rc);
/* One pass of the loop's periodic tick: takes what the ring buffer holds, gives up on the
 * numbers missing since the last tick, writes the process changes and the losses noted since
 * (a fresh read of the BPF counters), flushes, and ends the traced processes whose ends nothing
 * reports (neither ptrace nor the connector) once they are gone. 1 when every traced process is
 * gone (the session ends), else 0. */
int at_session_tick(struct at_session *d);
/* The RSS records of the processes with events written and not ended (after the ended ones
 * whose end the output has passed leave), into a binary trace (text has no place for them);
 * notes now as the last sample's time (last_rss_ms). The loop calls it every
 * AT_RSS_PERIOD_MS and at SIGUSR1. */
void at_session_take_rss(struct at_session *d);
/* Frees everything and closes the output; reports a failed close when status is 0. Returns
 * the exit status. */
int at_session_close(struct at_session *d, int status);

/* Marks pid as a target in the BPF program, with allocators its allocator of each family
 * (AT_TARGET_IN of bpf/alloctap.h; 0: not known yet), and as seen in the process table (a new
 * process if its number had ended). 0, or -1 after a message. */
int at_session_add_target(struct at_session *d, pid_t pid, uint64_t allocators);
/* Makes object (an id of at_targets.objects) pid's allocator of the object's family in the BPF
 * program, its allocators of other families kept: the probes of other objects of that family do
 * not record pid's calls once the program checks (allocator_check). */
void at_session_set_allocator(struct at_session *d, pid_t pid, uint32_t object);
/* --all: pid, a new process, has its parent's allocators (fork keeps the mappings). */
void at_session_inherit_allocator(struct at_session *d, pid_t pid, pid_t parent);
/* pid's allocators in the BPF program (AT_TARGET_IN of each family's AT_TARGET, bpf/alloctap.h),
 * 0 when it has none: the process table's mirror of what the daemon wrote there. */
uint64_t at_session_allocator(const struct at_session *d, pid_t pid);
/* Unmarks pid (it has ended, at_proctable_depart: its number may come back as another
 * process): out of the BPF targets map, and its allocator's mirror in the table with it. */
void at_session_remove_target(struct at_session *d, pid_t pid);
/* The time now on the records' clock (CLOCK_MONOTONIC ns): every event recorded before it is
 * timed below it. */
uint64_t at_session_now(const struct at_session *d);

#endif
