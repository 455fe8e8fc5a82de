/* commands.h: the table of alloctap-report's commands. Each row names a command and its
 * definition (struct rep_command_def: its name, operands, --help lines, the watcher of its
 * pass and its writer); the enum, the names the command line accepts, the usage messages'
 * list, --help's "Commands:" and the fuzz harness's choice all come from the table, in its
 * order. A new command is its writer's file (defining rep_cmd_NAME) and one row here. */
#ifndef ALLOCTAP_REPORT_COMMANDS_H
#define ALLOCTAP_REPORT_COMMANDS_H

#include <stddef.h>
#include <stdio.h>

#include "export.h"
#include "feed.h"
#include "heap.h"

/* X(ID, name): REP_CMD_ID, defined by rep_cmd_name; in the order --help lists them. */
#define REP_COMMANDS(X)        \
	X(SUMMARY, summary)     \
	X(PEAK, peak)           \
	X(LEAKS, leaks)         \
	X(SIZES, sizes)         \
	X(TIMELINE, timeline)   \
	X(LIFETIMES, lifetimes) \
	X(LAYOUT, layout)       \
	X(DIFF, diff)           \
	X(EXPORT, export)       \
	X(HTML, html)

#define REP_COMMAND_ENUM(id, name) REP_CMD_##id,
enum rep_command { REP_COMMANDS(REP_COMMAND_ENUM) REP_CMD_COUNT };
#undef REP_COMMAND_ENUM

struct rep_request;

/* One trace read: its sites named by x, its pass in h (NULL: the plain folded export). */
struct rep_pass {
	struct rep_sites x;
	struct rep_heap *h;
	int x_ready;
};

/* What a command's watcher starts with, before the first trace is opened. */
struct rep_command_start {
	const struct rep_request *r;
	struct rep_heap *h;  /* the engine of the pass */
	FILE *out;           /* the command's output */
	const char *trace;   /* the trace's path as given */
	const int *munged;   /* the source's: 1 munged, 0 raw, -1 not yet known (read later) */
};

/* A command. Every function but write may be NULL (nothing to do). */
struct rep_command_def {
	const char *name;       /* on the command line */
	unsigned traces;        /* operands: 1, or 2 (TRACE_A TRACE_B, both read alike) */
	const char *output_is;  /* non-NULL: the command needs -o FILE, this being what FILE is */
	int heap_sizes;         /* the engine counts calls per size bucket */
	const char *usage;      /* its lines under --help's "Commands:" */
	size_t state_size;      /* the watcher's state (zeroed), for the first trace's pass */
	/* Starts the watcher: 0, or -1 reported. */
	int (*start)(void *state, const struct rep_command_start *s);
	/* Events of the first trace go here instead of the engine (which this then feeds). */
	rep_event_fn event;
	/* An RSS record, after the engine took it. */
	void (*rss)(void *state, struct rep_heap *h, const struct at_rss *m);
	/* Ends the watcher after the pass: its last output. 0, or -1 with errno (ENOTSUP: the
	 * trace has no times). */
	int (*end)(void *state, struct rep_heap *h);
	/* Frees what the watcher holds (after end, or after an error). */
	void (*free)(void *state);
	/* Writes the output from the finished pass(es) (b: the second trace). 0, or -1 with
	 * errno. */
	int (*write)(FILE *f, const struct rep_request *r, struct rep_pass *a, struct rep_pass *b);
};

#define REP_COMMAND_DECLARE(id, name) extern const struct rep_command_def rep_cmd_##name;
REP_COMMANDS(REP_COMMAND_DECLARE)
#undef REP_COMMAND_DECLARE

/* The table, indexed by enum rep_command. */
extern const struct rep_command_def *const rep_commands[REP_CMD_COUNT];

/* The names joined for a message: "summary, peak, ... export or html" (static storage). */
const char *rep_command_list(void);

#endif
