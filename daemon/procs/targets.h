/* targets.h: what the daemon traces and where its probes go: each --pid process's allocator,
 * every C library (--all), or the allocator of a command it launches; then the processes and
 * programs that appear while it traces (doc/DESIGN.md, decision 11). */
#ifndef ALLOCTAP_TARGETS_H
#define ALLOCTAP_TARGETS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "attach.h" /* AT_OBJECTS_MAX */
#include "follow.h"
#include "functions.h" /* enum at_family */
#include "launch.h"
#include "options.h"
#include "pidset.h"
#include "probed.h"
#include "procevents.h"
#include "proctable.h"

struct at_bpf;
struct at_probes;
struct at_stacks;

/* What the targets need of the session that owns them (ctx is at_targets.ctx): the BPF
 * program's targets map, the records' clock, and whether threads may be held. */
struct at_targets_ops {
	/* The time now on the records' clock (CLOCK_MONOTONIC ns): every event recorded before
	 * it is timed below it. The process table keys its changes by it. */
	uint64_t (*now)(void *ctx);
	/* Makes pid a target of the BPF program, with allocators (AT_TARGET_IN of each family's;
	 * 0: not known yet), and seen in the process table. 0, or -1 after a message. */
	int (*add_target)(void *ctx, pid_t pid, uint64_t allocators);
	/* Makes object (an id of at_targets.objects) pid's allocator of the object's family in
	 * the BPF program; its allocators of other families stay. */
	void (*set_allocator)(void *ctx, pid_t pid, uint32_t object);
	/* --all: pid, a new process, has its parent's allocators. */
	void (*inherit_allocator)(void *ctx, pid_t pid, pid_t parent);
	/* pid has ended: it is a target no more. */
	void (*remove_target)(void *ctx, pid_t pid);
	/* Whether threads may be held for their stacks (they need a tracer: ptrace follows). */
	void (*hold_threads)(void *ctx, int on);
};

/* The targets: what is traced and probed, and how new processes are followed. The session
 * fills opt, ops, ctx, table, probes, stacks and bpf, and sets child.go_fd and events.fd to -1
 * and loading up (at_pidset_init) before at_targets_attach; the rest starts zeroed. The
 * session reads the counters and the command's status. */
struct at_targets {
	const struct at_session_options *opt;
	const struct at_targets_ops *ops;
	void *ctx;
	struct at_proctable *table;  /* the processes, the session's */
	struct at_probes *probes;    /* the probes planted (attach.h), the session's */
	struct at_stacks *stacks;    /* --stacks: mappings to scan, threads to hold */
	struct at_bpf *bpf;          /* the BPF program */
	struct at_probed probed[AT_FAMILY_COUNT]; /* the files probed for each family (enum
						   * at_family), and for which process */
	struct {
		uint64_t dev, inode;
		unsigned family;     /* the family it is probed for (enum at_family) */
		uint32_t funcs;      /* the functions probed in it (at_attach_object) */
		uint64_t probed_ns;  /* when its probes first went in (CLOCK_MONOTONIC) */
	} objects[AT_OBJECTS_MAX];   /* the objects probed, a file once per family it is probed
				      * for: an object's id is its index + 1 */
	unsigned nobjects;
	struct at_probed loaders;    /* the dynamic loaders whose _dl_debug_state is probed */
	struct at_pidset loading;    /* processes held at exec whose libraries are being mapped */
	struct at_follow follow;     /* ptrace, once a process is followed */
	int following;               /* follow is set up */
	struct at_procevents events; /* the process events connector: --all, or following
				      * processes ptrace cannot have (fd -1 when unused) */
	int late;                    /* following through the connector: new processes and
				      * programs are picked up after their first calls */
	uint64_t late_processes;     /* processes and programs picked up late */
	uint64_t unprobed;           /* programs whose allocator could not be probed */
	uint64_t scrubbed;           /* processes made by traced ones, not traced, whose
				      * inherited breakpoints were taken out */
	uint64_t unchecked;          /* --all: programs that ended before their allocator could
				      * be looked at (their calls may be missing) */
	struct at_launch child;      /* the command launched */
	int child_status;
	int child_done;
};

/* Plants the probes for the session's mode and starts following (a launched command is
 * released once its probes are in). 0, or -1 after a message. */
int at_targets_attach(struct at_targets *d);

/* 1 when every probe is attached for one process (all but --all and --shared-probes: a
 * followed tree's processes are probed each for itself, so that no process outside the tree
 * has a breakpoint): the kernel then checks the process before the BPF program runs. */
int at_targets_bound(const struct at_targets *d);

/* Probes the object at path for family's functions (enum at_family) for pid in the session's
 * scope: for every process when the session traces them all (--all) or shares its probes
 * (--shared-probes), else for pid alone (a followed tree's processes too: each has links of
 * its own, and no process outside the tree has a breakpoint); nothing if that file is probed
 * in that scope already. It becomes pid's allocator
 * of that family (pid > 0): the only object whose probes of the family record pid's calls. 1
 * when probes went in, 0 when they were there, or -1 with a reason in why. */
int at_targets_probe_family(struct at_targets *d, const char *path, unsigned family, pid_t pid,
			    char *why, size_t whylen);
/* at_targets_probe_family for the C family (malloc's), the one the daemon probes today. */
int at_targets_probe(struct at_targets *d, const char *path, pid_t pid, char *why,
		     size_t whylen);

/* Releases what the targets keep of the files probed (the probes themselves are the
 * session's). */
void at_targets_free(struct at_targets *d);

/* No process is held at its dynamic loader any more (before the processes are let go: a
 * SIGCONT of the BPF program would then reach the program). */
void at_targets_stop_loading(struct at_targets *d);

/* Handles the wait statuses of the followed processes (ptrace stops and exits). */
void at_targets_reap(struct at_targets *d);

/* Handles what the process events connector reported (--all, and following without
 * ptrace). */
void at_targets_procevents(struct at_targets *d);

/* The first event of a process the session has no record of (--all: one that ran before the
 * trace): records its start. */
void at_targets_first_seen(struct at_targets *d, pid_t pid, uint64_t seq);

/* The traced processes that are gone, found by their /proc entries, end (for processes whose
 * ends nothing reports: neither ptrace nor the connector). */
void at_targets_sweep(struct at_targets *d);

#endif
