/* alloctap-report: reports on a trace. This file reads the command line into a request;
 * report/command.c runs it: report/feed.c reads the trace into the engine of report/heap.c
 * (live blocks, sites, processes) or the folded export of report/export.c, and
 * report/tables.c, tree.c, diff.c and folded.c write the command's output. The commands, their
 * operands, their options and their writers are the table of report/commands.h: this file
 * parses every command's options through that table, with one loop. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "command.h"
#include "display.h"
#include "usage.h"

#define PROGRAM "alloctap-report"

/* A decimal number of seconds ("2", "0.25", ".5") into ns, to the nanosecond; more than nine
 * decimals are refused rather than rounded. 0, or -1 for anything else or past 2^64-1 ns. */
static int parse_seconds(const char *s, uint64_t *ns)
{
	uint64_t whole = 0, frac = 0;
	int digits = 0, frac_digits = 0;

	for (; *s >= '0' && *s <= '9'; s++, digits++) {
		if (whole > (UINT64_MAX - 9) / 10)
			return -1;
		whole = whole * 10 + (uint64_t)(*s - '0');
	}
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++, digits++) {
			if (++frac_digits > 9)
				return -1;
			frac = frac * 10 + (uint64_t)(*s - '0');
		}
	if (*s || !digits)
		return -1;
	for (; frac_digits < 9; frac_digits++)
		frac *= 10;
	if (whole > (UINT64_MAX - frac) / 1000000000u)
		return -1;
	*ns = whole * 1000000000u + frac;
	return 0;
}

/* parse_seconds, with a leading '-' allowed: *negative says whether there was one (such a
 * time is before the trace, which the report refuses once it knows the trace's span). */
static int parse_signed_seconds(const char *s, uint64_t *ns, int *negative)
{
	*negative = s[0] == '-';
	return parse_seconds(s + *negative, ns);
}

/* A decimal count, 0 to max, digits only. */
static int parse_count(const char *s, uint64_t max, uint64_t *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long long n = strtoull(s, &end, 10);
	if (errno || *end || n > max)
		return -1;
	*v = n;
	return 0;
}

/* Whether time a (negative or not, ns) is after time b. */
static int later(int a_negative, uint64_t a, int b_negative, uint64_t b)
{
	if (a_negative != b_negative)
		return b_negative;
	return a_negative ? a < b : a > b;
}

/* --window T0:T1, either side may be empty, either negative (refused later, with the trace's
 * span): the window into o (a negative side as 0), the times asked into *ask. */
static int parse_window(const char *s, struct rep_heap_options *o, struct rep_time_ask *ask)
{
	const char *colon = strchr(s, ':');
	char from[32];

	if (!colon || (size_t)(colon - s) >= sizeof(from))
		return -1;
	memcpy(from, s, (size_t)(colon - s));
	from[colon - s] = '\0';
	*ask = (struct rep_time_ask){ .option = "window", .arg = s, .times = 2,
				      .given = { from[0] != '\0', colon[1] != '\0' } };
	if (ask->given[0] && parse_signed_seconds(from, &ask->ns[0], &ask->negative[0]) < 0)
		return -1;
	if (ask->given[1] && parse_signed_seconds(colon + 1, &ask->ns[1], &ask->negative[1]) < 0)
		return -1;
	if (ask->given[0] && ask->given[1] &&
	    later(ask->negative[0], ask->ns[0], ask->negative[1], ask->ns[1]))
		return -1;
	o->window_from_ns = ask->given[0] && !ask->negative[0] ? ask->ns[0] : 0;
	o->window_to_ns = !ask->given[1] ? UINT64_MAX : ask->negative[1] ? 0 : ask->ns[1];
	o->have_window = 1;
	return 0;
}

/* --at heap-peak|rss-peak|end|SECONDS: the moment's kind in *kind, its time in *ns and
 * whether it was negative in *negative (for SECONDS only). */
static int parse_at(const char *s, uint64_t *kind, uint64_t *ns, int *negative)
{
	if (strcmp(s, "heap-peak") == 0 || strcmp(s, "peak") == 0)
		*kind = REP_AT_PEAK;
	else if (strcmp(s, "rss-peak") == 0)
		*kind = REP_AT_RSS_PEAK;
	else if (strcmp(s, "end") == 0)
		*kind = REP_AT_END;
	else if (parse_signed_seconds(s, ns, negative) == 0)
		*kind = REP_AT_TIME;
	else
		return -1;
	return 0;
}

/* The argument of option o into *v (and *ns and *negative for a moment). 0, or -1 when it is
 * not of o's kind or is 0 where o needs more. */
static int parse_option(const struct rep_option *o, const char *arg, uint64_t *v, uint64_t *ns,
			int *negative)
{
	enum rep_weight w = REP_WEIGHT_ALLOC_COUNT;
	int rc = 0;

	switch (o->arg) {
	case REP_ARG_NONE:
		*v = 1;
		break;
	case REP_ARG_SECONDS:
	case REP_ARG_PERIOD:
		rc = parse_seconds(arg, v);
		break;
	case REP_ARG_BYTES:
		rc = parse_count(arg, UINT64_MAX, v);
		break;
	case REP_ARG_COUNT:
		rc = parse_count(arg, SIZE_MAX, v);
		break;
	case REP_ARG_MOMENT:
		rc = parse_at(arg, v, ns, negative);
		break;
	case REP_ARG_WEIGHT:
		rc = rep_weight_parse(arg, &w);
		*v = (uint64_t)w;
		break;
	}
	return rc < 0 || (o->above_zero && !*v) ? -1 : 0;
}

/* The most distinct option names of all commands together (more abort at the start: the table
 * of commands must grow this with it). */
#define OPTIONS_ALL 32

/* What the command line gave of an option: its value (and a moment's time), its argument. */
struct given_option {
	int on, negative;
	uint64_t v, ns;
	const char *arg;
};

/* Every command's options, each name once (its first row in the table's order, and that row's
 * command), and what the command line gave of each. */
struct options {
	const struct rep_option *o[OPTIONS_ALL];
	enum rep_command first[OPTIONS_ALL];
	size_t n;
	struct given_option given[OPTIONS_ALL];
};

/* The index of the option named name in all, or -1. */
static int option_index(const struct options *all, const char *name)
{
	for (size_t i = 0; i < all->n; i++)
		if (strcmp(all->o[i]->name, name) == 0)
			return (int)i;
	return -1;
}

/* Fills all from the table of commands. */
static void collect_options(struct options *all)
{
	memset(all, 0, sizeof(*all));
	for (size_t c = 0; c < REP_CMD_COUNT; c++)
		for (size_t i = 0; i < rep_commands[c]->n_options; i++) {
			const struct rep_option *o = &rep_commands[c]->options[i];

			if (option_index(all, o->name) >= 0)
				continue;
			if (all->n == OPTIONS_ALL) { /* the table outgrew getopt's list: a build error */
				fprintf(stderr, "%s: internal error: more than %d option names\n",
					PROGRAM, OPTIONS_ALL);
				abort();
			}
			all->first[all->n] = (enum rep_command)c;
			all->o[all->n++] = o;
		}
}

/* Whether the option named name was given. */
static int given(const struct options *all, const char *name)
{
	int i = option_index(all, name);

	return i >= 0 && all->given[i].on;
}

/* Whether any option named in names (names separated by a space) was given. */
static int given_any(const struct options *all, const char *names)
{
	char name[64];

	for (const char *p = names; *p; p += strcspn(p, " "), p += *p == ' ') {
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(p, " "), p);
		if (given(all, name))
			return 1;
	}
	return 0;
}

/* Whether a command takes the option named name with an option that is given: its mistakes
 * are then said by that option's own check. */
static int needed_elsewhere(const struct options *all, const char *name)
{
	for (size_t c = 0; c < REP_CMD_COUNT; c++)
		for (size_t i = 0; i < rep_commands[c]->n_options; i++) {
			const struct rep_option *o = &rep_commands[c]->options[i];

			if (o->needs && strcmp(o->name, name) == 0 && given(all, o->needs))
				return 1;
		}
	return 0;
}

/* Option i of all, if given, goes with r's command (and with the option it needs there). -1
 * to go on, else the exit code. */
static int check_elsewhere(const struct rep_request *r, const struct options *all, size_t i)
{
	const struct rep_command_def *cmd = rep_commands[r->command];

	if (!all->given[i].on)
		return -1;
	int row = rep_option_row(r, all->o[i]->name);
	if (row < 0 && !needed_elsewhere(all, all->o[i]->name))
		return at_usage_error("%s, not with %s", all->o[i]->elsewhere, cmd->name);
	if (row < 0)
		return -1;
	const struct rep_option *o = &cmd->options[row];
	if (o->needs && !given(all, o->needs))
		return at_usage_error("%s, not with %s", o->elsewhere, cmd->name);
	return -1;
}

/* Notes in r an option of r's command that names a time (a moment of SECONDS) or needs times
 * (an interval of SECONDS), g what was given of it: the report checks it against the trace. */
static void ask_time(struct rep_request *r, const struct rep_option *o,
		     const struct given_option *g)
{
	if (o->arg != REP_ARG_SECONDS && !(o->arg == REP_ARG_MOMENT && g->v == REP_AT_TIME))
		return;
	struct rep_time_ask a = { .option = o->name, .arg = g->arg,
				  .times = o->arg == REP_ARG_MOMENT, .given = { 1 },
				  .negative = { g->negative }, .ns = { g->ns } };
	rep_time_asks_add(&r->asks, &a);
}

/* r's command's own options together (one of them, conflicts), then their values into r. -1
 * to go on, else the exit code. */
static int check_own(struct rep_request *r, const struct options *all)
{
	const struct rep_command_def *cmd = rep_commands[r->command];
	int one_of = 0;

	for (size_t i = 0; i < cmd->n_options; i++)
		one_of += cmd->options[i].one_of && given(all, cmd->options[i].name);
	if (cmd->one_of && one_of != 1)
		return at_usage_error("%s", cmd->one_of);
	for (size_t i = 0; i < cmd->n_options; i++) {
		const struct rep_option *o = &cmd->options[i];

		if (o->conflicts && given(all, o->name) && given_any(all, o->conflicts))
			return at_usage_error("%s", o->conflict);
	}
	for (size_t i = 0; i < cmd->n_options; i++) {
		const struct rep_option *o = &cmd->options[i];
		int k = option_index(all, o->name);

		if (o->needs && !given(all, o->needs))
			continue;
		if (k < 0 || !all->given[k].on) {
			rep_option_set(r, i, o->value, 0);
			continue;
		}
		if (o->allowed && !(o->allowed & 1u << all->given[k].v))
			return at_usage_error("%s", o->refused);
		if (o->with && !(o->with_values & 1u << rep_option_value(r, o->with)))
			return at_usage_error("%s", o->conflict);
		rep_option_set(r, i, all->given[k].v, all->given[k].ns);
		ask_time(r, o, &all->given[k]);
	}
	return -1;
}

/* The options given, command by command in the table's order: each option given goes with r's
 * command; at r's command, its own checks. The first mistake is said. -1 to go on, else the
 * exit code. */
static int check_options(struct rep_request *r, const struct options *all)
{
	int rc;

	for (size_t c = 0; c < REP_CMD_COUNT; c++) {
		for (size_t i = 0; i < all->n; i++)
			if (all->first[i] == c && (rc = check_elsewhere(r, all, i)) >= 0)
				return rc;
		if (c == r->command && (rc = check_own(r, all)) >= 0)
			return rc;
	}
	return -1;
}

/* The command's operands and the options it takes. -1 to go on, else the exit code. */
static int check_command(struct rep_request *r, const struct options *all, int output, int nops,
			 char **ops)
{
	const struct rep_command_def *cmd = rep_commands[r->command];
	const char *name = cmd->name;
	int ntraces = (int)cmd->traces;

	if (nops < ntraces)
		return at_usage_error("%s needs %s (a file, or - for standard input)", name,
				      ntraces == 2 ? "two traces, A and B" : "a TRACE");
	if (nops > ntraces)
		return at_usage_error("%s: one operand too many: %s", name, ops[ntraces]);
	r->trace[0] = ops[0];
	r->trace[1] = ntraces == 2 ? ops[1] : NULL;
	if (ntraces == 2 && strcmp(ops[0], "-") == 0 && strcmp(ops[1], "-") == 0)
		return at_usage_error("%s: only one of the traces can be standard input", name);
	if (cmd->output_is && !output)
		return at_usage_error("%s needs -o FILE (%s)", name, cmd->output_is);
	return check_options(r, all);
}

static void usage(void)
{
	rep_usage();
}

/* The options alloctap-report itself takes, after the commands' (whose val is 256 + their
 * index in all). */
enum { OPT_DEBUG_DIR = 256 + OPTIONS_ALL, OPT_PID, OPT_WINDOW, OPT_STRICT };

/* Fills longopts (room for OPTIONS_ALL + 16) from all, then alloctap-report's own options. */
static void make_longopts(const struct options *all, struct option *longopts)
{
	static const struct option own[] = {
		{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "window", required_argument, NULL, OPT_WINDOW },
		{ "strict", no_argument, NULL, OPT_STRICT },
		{ "output", required_argument, NULL, 'o' },
		AT_CLI_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	size_t n = 0;

	for (size_t i = 0; i < all->n; i++)
		longopts[n++] = (struct option){ all->o[i]->name,
						 all->o[i]->arg == REP_ARG_NONE ? no_argument
										: required_argument,
						 NULL, 256 + (int)i };
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		longopts[n++] = own[i];
}

/* One option of alloctap-report's own (not a command's), c as getopt gave it. -1 to go on,
 * else the exit code (0 after --help). */
static int own_option(int c, char **argv, struct rep_request *r, int *output)
{
	struct rep_time_ask ask;
	uint64_t v;

	switch (c) {
	case OPT_DEBUG_DIR:
		r->debug_dir = optarg;
		return -1;
	case OPT_PID:
		if (parse_count(optarg, UINT32_MAX, &v) < 0)
			return at_usage_error("--pid needs a process id, not: %s", optarg);
		r->heap.have_pid = 1;
		r->heap.pid = (uint32_t)v;
		return -1;
	case OPT_WINDOW:
		if (parse_window(optarg, &r->heap, &ask) < 0)
			return at_usage_error("--window needs T0:T1, seconds from the first "
					      "event with T0 <= T1 (2:5, 1.5:, :0.25), not: %s",
					      optarg);
		rep_time_asks_add(&r->asks, &ask);
		return -1;
	case OPT_STRICT:
		r->strict = 1;
		return -1;
	case 'o':
		*output = 1;
		r->output = optarg;
		return -1;
	case ':':
		return at_usage_error("missing argument for option %s", argv[optind - 1]);
	}
	switch (at_cli_option(c, usage)) {
	case AT_CLI_GO_ON:
		return -1;
	case AT_CLI_EXIT_OK:
		return 0;
	case AT_CLI_UNKNOWN:
		break;
	}
	return at_usage_error("unknown option %s", argv[optind - 1]);
}

/* Fills r from argv. Returns -1 to go on, else the exit code (0 after --help). */
static int parse_args(int argc, char **argv, struct rep_request *r)
{
	static struct options all;
	static struct option longopts[OPTIONS_ALL + 16];
	int c, rc, output = 0;

	collect_options(&all);
	make_longopts(&all, longopts);
	memset(r, 0, sizeof(*r));
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:qvhB", longopts, NULL)) != -1) {
		if (c == 'B') /* -B: --bytes */
			c = 256 + option_index(&all, "bytes");
		if (c >= 256 && c < 256 + (int)all.n) {
			const struct rep_option *o = all.o[c - 256];

			all.given[c - 256].on = 1;
			all.given[c - 256].arg = optarg;
			if (parse_option(o, optarg, &all.given[c - 256].v, &all.given[c - 256].ns,
					 &all.given[c - 256].negative) < 0)
				return at_usage_error(o->bad, optarg);
		} else if ((rc = own_option(c, argv, r, &output)) >= 0) {
			return rc;
		}
	}
	if (optind >= argc)
		return at_usage_error("no command: %s", rep_command_list());
	if (rep_command_parse(argv[optind], &r->command) < 0)
		return at_usage_error("unknown command %s (%s)", argv[optind],
				      rep_command_list());
	return check_command(r, &all, output, argc - optind - 1, argv + optind + 1);
}

int main(int argc, char **argv)
{
	struct rep_request r;
	int rc;

	at_program_name = PROGRAM;
	rc = parse_args(argc, argv, &r);
	if (rc >= 0)
		return rc;
	return at_exit_status(rep_run(&r));
}
