/* stacks.h: alloctapd --stacks: the unwind tables in the BPF program's maps, each traced
 * process's mappings kept current there, and the stacks the program takes turned into a
 * trace's stack and mapping records (doc/DESIGN.md, decision 14).
 *
 * The BPF program stores each stack it takes under a 64-bit hash (the stacks map) and the
 * record carries the hash; the daemon numbers hashes 1, 2, ... in order of first appearance,
 * reads a stack once (then deletes it from the map) and writes, before the first event that
 * refers to it, the mappings of its process not written yet and the stack itself. A stack that
 * stopped at a pc without a table makes the daemon read that process's maps again (at most
 * every AT_STACKS_RESCAN_MS), so the objects it mapped since (dlopen) get their tables. */
#ifndef ALLOCTAP_STACKS_H
#define ALLOCTAP_STACKS_H

#include <stdint.h>
#include <sys/types.h>

#include "alloctap.h"
#include "pytrace.h"
#include "sink.h"
#include "stack.h"
#include "stack_ids.h"
#include "stack_procs.h"
#include "stack_store.h"
#include "stack_tables.h"
#include "table_builder.h"

struct at_bpf;

#define AT_STACKS_RESCAN_MS 100
#define AT_STACKS_HOLD_MS 2000 /* the longest a held thread waits for its tables */
#define AT_STACKS_PARK_MS 10000 /* the longest a program waits at its start for its first
				 * tables (it waited for every build before they were built
				 * off the loop) */

/* A thread held until the tables of its process's mappings are built. */
struct at_stacks_held {
	pid_t tid, tgid;
	uint64_t until_ms;          /* then it goes on, its stack incomplete */
	int walk;                   /* h is its hold: its stack is walked before it goes on */
	struct at_bpf_held h;
};

/* Map sizes, set before load. */
#define AT_STACKS_RULES (1u << 18)     /* 2 MiB */
#define AT_STACKS_PAGES (1u << 18)     /* 2 MiB */
#define AT_STACKS_ENTRIES (1u << 23)   /* 32 MiB */
#define AT_STACKS_STORED (1u << 16)    /* stacks waiting for the daemon */

struct at_stacks {
	int on;
	int hold;                     /* the traced processes are ptraced: threads may be held */
	struct at_stack_tables tables;
	struct at_table_builder *builder; /* builds the tables off the loop */
	struct at_stacks_held *held;  /* threads waiting for their tables */
	uint32_t held_count, held_cap;
	struct at_stack_procs procs;
	struct at_stack_ids ids;       /* hashes to session ids */
	struct at_stack_store store;   /* session ids to stacks and their ids in the file */
	struct at_pytrace py;          /* the processes whose Python frames are read */
	int no_python;                 /* set after at_stacks_open: no Python frames (--no-python) */
	void *mem[4];                 /* the mapped arrays: rules, pages, entries, tables */
	size_t mem_len[4];
	struct at_bpf *bpf;           /* the program's maps (bpf.h): mappings, stacks, holds */
	struct at_bpf_mappings *scan; /* one scan's result, before it goes into the map */
	struct at_stack stack;        /* the stack being written */
	uint32_t serials[AT_STACK_MAX_FRAMES]; /* its frames' mapping serials */
	uint64_t written, truncated, incomplete; /* stack records */
	uint64_t unreadable;          /* hashes whose stack was gone from the map */
	uint64_t rescans;
	uint64_t holds;               /* held threads whose stack the daemon walked */
	uint64_t py_holds;            /* held threads whose module's frame the daemon named */
	uint64_t hold_timeouts;       /* of those, walked before their tables were built */
	uint64_t tables_built;        /* tables the builder thread handed back */
	uint64_t tables_cached;       /* of those, read from the on-disk cache */
	uint8_t *copy;                /* a copy of a held thread's stack */
	uint8_t *no_table;            /* by id: the stack stopped at a pc without a table */
	uint32_t no_table_cap;
	uint64_t counts[AT_STACKS_COUNT]; /* the BPF program's counters, last read */
};

/* Before load: the map sizes (small maps when off; the switch is at_bpf_options.stacks). */
void at_stacks_configure(struct at_bpf *bpf, int on);
/* After load: maps the table arrays, sets up the tables, ids and processes, and the builder
 * with the on-disk cache of tables in cache_dir (NULL: none; table_cache.h) of cache_limit
 * bytes. 0, or -1 after a message (an unsafe cache folder is one). Nothing when the
 * program's stacks are off. */
int at_stacks_open(struct at_stacks *s, struct at_bpf *bpf, const char *cache_dir,
		   uint64_t cache_limit);
void at_stacks_close(struct at_stacks *s);

/* Reads pid's mappings, loads the tables they need and puts them in the BPF program's
 * per-process map. 0, or -1 (the process is gone: nothing to do). */
int at_stacks_scan(struct at_stacks *s, pid_t pid);
/* A ptraced thread is in a signal-delivery stop: if the BPF program held it (struct
 * at_bpf_held), reads its process's mappings again and, unless a table of them is being built,
 * walks its stack from the entry's registers with the BPF walk (unwind_walk.h), stores the stack
 * under its hash and points the thread's call at it: 1 (the signal is then to be suppressed and
 * the thread resumed). While a table is being built, the thread stays stopped: 2 (the signal is
 * suppressed; at_stacks_built or at_stacks_tick walk its stack and resume it once the tables
 * are there, or after AT_STACKS_HOLD_MS with its stack incomplete). 0 when the stop was no
 * hold. */
int at_stacks_hold(struct at_stacks *s, pid_t tid, pid_t tgid);

/* Thread tid of tgid is stopped where the session would resume it (its dynamic loader has
 * mapped its libraries): 1 when a table of tgid's mappings is being built, and the thread is
 * kept stopped until it is there (at most AT_STACKS_PARK_MS), so that its first stacks are
 * whole; 0 to resume it now. */
int at_stacks_park(struct at_stacks *s, pid_t tid, pid_t tgid);

/* The descriptor readable when stacks with Python frames are new (-1 when off), and their
 * naming, at once (at_pytrace_capture). at_stacks_news returns how many stacks it was told of:
 * after some, more may come unsignalled for AT_PY_NEWS_WAKE_NS (at_bpf_news_fd). */
int at_stacks_news_fd(const struct at_stacks *s);
int at_stacks_news(struct at_stacks *s);

/* The descriptor readable when built tables wait to be loaded (-1 when off). */
int at_stacks_fd(const struct at_stacks *s);
/* Loads the tables the builder has built into the BPF arrays, scans again the processes that
 * were waiting for them, and resumes the held threads whose tables are all there. */
void at_stacks_built(struct at_stacks *s);
/* Resumes the held threads that have waited AT_STACKS_HOLD_MS, their stacks incomplete. */
void at_stacks_tick(struct at_stacks *s);
/* Resumes every held thread (the session ends). */
void at_stacks_release_all(struct at_stacks *s);

/* The hash the BPF program gives a stack of count pcs, each in the mapping of that serial and of
 * that kind (enum at_frame_kind; kinds NULL: every frame native) (the same function, so that a
 * stack the daemon walks and the same stack walked in BPF later are one). walked: the process's
 * mappings were known. */
uint64_t at_stacks_hash(uint32_t tgid, const uint64_t *pcs, const uint32_t *serials,
			const uint8_t *kinds, uint32_t count, uint32_t flags, int walked);

/* pid runs a new program (exec): what was known of its interpreter goes, before the scan of
 * its new mappings. */
void at_stacks_exec(struct at_stacks *s, pid_t pid);

/* pid has ended: its mappings leave the BPF program's map. What the daemon knows of them
 * stays until at_stacks_forgotten: its last events may still wait in the rings. */
void at_stacks_forget(struct at_stacks *s, pid_t pid);
/* pid's process has left the process table (its forget hook): the output has written every
 * event of it, and what the daemon knows of its mappings goes. */
void at_stacks_forgotten(struct at_stacks *s, pid_t pid);

/* The id of the stack a record carries in the file being written (0: none), after writing to
 * the sink whatever the trace needs before it: the process's mappings not in this file yet and
 * the stack. */
uint32_t at_stacks_resolve(struct at_stacks *s, struct at_sink *sink, pid_t pid, uint64_t hash);

/* The output moved to a new file (SIGHUP after a rotation): its stack ids start over, and each
 * stack and mapping is written again before the first event there that needs it. */
void at_stacks_new_file(struct at_stacks *s);

/* The summary (level 2), and with -v the maps' kernel memory. */
void at_stacks_summary(struct at_stacks *s);

#endif
