/* command.h: one alloctap-report command, run from start to end: the trace read in one pass
 * (report/feed.h) into the engine (report/heap.h) or the folded export (report/export.h), then
 * the command's output (report/tables.h, tree.h, diff.h). alloctap-report's main only fills a
 * request from its arguments; the commands and their options are the table of
 * report/commands.h. */
#ifndef ALLOCTAP_REPORT_COMMAND_H
#define ALLOCTAP_REPORT_COMMAND_H

#include <stddef.h>
#include <stdint.h>

#include "commands.h"
#include "heap.h"
#include "span.h"
#include "weight.h"


struct rep_request {
	enum rep_command command;
	const char *trace[2];       /* TRACE, and TRACE_B for diff ("-": standard input) */
	const char *output;         /* NULL or "-": standard output */
	const char *debug_dir;      /* NULL: lib/symbolize.h's default */
	struct rep_heap_options heap; /* --pid, --window, and the moment of an option REP_ARG_MOMENT */
	/* The values of the command's own options, indexed by their rows in its definition's
	 * options (commands.h): each its default when not given. */
	uint64_t opt[REP_OPTIONS_MAX];
	int strict;                 /* --strict: damaged input is an error, not reported */
	struct rep_time_asks asks;  /* the time options given (--at SECONDS, --window, --every),
				     * checked against each trace read (span.h) */
};

/* The exit status of a report written from a damaged input (a trace cut short or corrupt, a
 * text log with malformed lines): what could be read, the damage said on stderr. */
#define REP_EXIT_DAMAGED 3

/* The command's name ("summary", ...), and the command of a name: 0, or -1 for none (both
 * from commands.h's table). */
const char *rep_command_name(enum rep_command c);
int rep_command_parse(const char *name, enum rep_command *c);

/* Runs r, reporting every error on stderr with its file and place. Returns the exit status:
 * 0, 1 (input or output error, or with r->strict damaged input), REP_EXIT_DAMAGED (the
 * output written from what a damaged input held before or around its damage), or
 * REP_EXIT_UNANSWERABLE (span.h: a time or moment the trace cannot answer; nothing
 * written). */
int rep_run(const struct rep_request *r);

#endif
