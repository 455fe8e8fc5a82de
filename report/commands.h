/* commands.h: the table of alloctap-report's commands. Each row names a command and its
 * definition (struct rep_command_def: its name, operands, options, --help lines, the watcher
 * of its pass and its writer); the enum, the names the command line accepts, the usage
 * messages' list, --help's "Commands:", the options getopt knows and their checks, and the
 * fuzz harness's choice of a request all come from the table, in its order. A new command,
 * with or without options of its own, is its writer's file (defining rep_cmd_NAME) and one
 * row here. */
#ifndef ALLOCTAP_REPORT_COMMANDS_H
#define ALLOCTAP_REPORT_COMMANDS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "export.h"
#include "feed.h"
#include "heap.h"

/* X(ID, name): REP_CMD_ID, defined by rep_cmd_name; in the order --help lists them. */
#define REP_COMMANDS(X)        \
	X(SUMMARY, summary)     \
	X(PEAK, peak)           \
	X(LEAKS, leaks)         \
	X(TOP, top)             \
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

/* The kind of an option's argument: how report/main.c reads it into the option's value. */
enum rep_arg {
	REP_ARG_NONE,    /* a flag: 1 when given */
	REP_ARG_SECONDS, /* decimal seconds ("2", "0.25", ".5", at most nine decimals): ns */
	REP_ARG_BYTES,   /* a decimal count of bytes, up to 2^64-1 */
	REP_ARG_COUNT,   /* a decimal count, up to SIZE_MAX */
	REP_ARG_MOMENT,  /* heap-peak (or peak), rss-peak, end or SECONDS: an enum rep_moment_kind,
			  * also the engine's moment (the request's heap.moment and moment_ns) */
	REP_ARG_WEIGHT,  /* a weight's name (weight.h): an enum rep_weight */
	REP_ARG_PERIOD,  /* decimal seconds as REP_ARG_SECONDS, of the wall clock (the report's
			  * own pace, never a time the trace must answer): ns */
};

/* The most options one command has: the size of the request's values. */
#define REP_OPTIONS_MAX 8

/* One option of a command: its row's index in the command's options is where its value goes
 * (struct rep_request's opt[]). An option two commands take (--at, --annotate) is a row in
 * each, with the same name, argument and messages; the first command of the table that takes
 * it says where else it goes. Its --help line is in the command's usage. */
struct rep_option {
	const char *name;      /* "json": --json */
	enum rep_arg arg;
	uint64_t value;        /* its value when not given */
	int above_zero;        /* a value of 0 is refused (the message bad) */
	const char *bad;       /* an argument not of its kind: the message, %s the argument */
	/* Given to a command without it (or without needs): the message, to which ", not with
	 * COMMAND" is added. */
	const char *elsewhere;
	int one_of;            /* nonzero: the command needs exactly one of its one_of options */
	const char *needs;     /* NULL, or an option of the command this one goes with only; its
				* value is then set only when that one is given */
	const char *conflicts; /* NULL, or the options of the command this one cannot be given
				* with, separated by a space ("json csv") */
	const char *conflict;  /* the message then, and with's */
	const char *with;      /* NULL, or an option of the command on an earlier row: this one,
				* when given, goes only with with_values of it (bits 1 << value,
				* given or its default); the message conflict otherwise */
	unsigned with_values;
	unsigned allowed;      /* 0, or the values (bits 1 << value) this command takes */
	const char *refused;   /* the message for a value not allowed */
};

/* One trace read: its sites named by x, its pass in h (NULL: the plain folded export). */
struct rep_pass {
	struct rep_sites x;
	struct rep_heap *h;
	int x_ready;
	uint64_t min_size, sample_bytes; /* the trace's filter (its header's), 0: none */
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
	int names_no_frames;    /* its output names no frame: no word of unnamed ones (hints.h) */
	const char *usage;      /* its lines under --help's "Commands:", its options' included */
	const struct rep_option *options; /* its own options (at most REP_OPTIONS_MAX) */
	size_t n_options;
	const char *one_of;     /* the message when not exactly one of the one_of options is given */
	size_t state_size;      /* the watcher's state (zeroed), for the first trace's pass */
	/* Starts the watcher: 0, or -1 reported. */
	int (*start)(void *state, const struct rep_command_start *s);
	/* Events of the first trace go here instead of the engine (which this then feeds). */
	rep_event_fn event;
	/* An RSS record, after the engine took it. */
	void (*rss)(void *state, struct rep_heap *h, const struct at_rss *m);
	/* With --follow given: the trace is read while it grows (at_source_open_follow), this
	 * called (at_atz_wait_fn's contract, state its arg) whenever no input is there yet. Only
	 * a binary trace is followed. */
	int (*wait)(void *state, int fd);
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

/* Sets the value of row row of r's command's options (for a REP_ARG_MOMENT, also the engine's
 * moment: value an enum rep_moment_kind, ns its time for REP_AT_TIME). */
void rep_option_set(struct rep_request *r, size_t row, uint64_t value, uint64_t ns);

/* The row of r's command's option named name: its index, or -1 when the command has none. */
int rep_option_row(const struct rep_request *r, const char *name);

/* The value of r's command's option named name (its default when not given), or 0 when the
 * command has no such option. */
uint64_t rep_option_value(const struct rep_request *r, const char *name);

/* The names joined for a message: "summary, peak, ... export or html" (static storage). */
const char *rep_command_list(void);

#endif
