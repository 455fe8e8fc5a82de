/* alloctap-report: reports on a trace. This file reads the command line into a request;
 * report/command.c runs it: report/feed.c reads the trace into the engine of report/heap.c
 * (live blocks, sites, processes) or the folded export of report/export.c, and
 * report/tables.c, tree.c, diff.c and folded.c write the command's output. The commands, their
 * operands and their writers are the table of report/commands.h. */
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

/* --window T0:T1, either side may be empty. */
static int parse_window(const char *s, struct rep_heap_options *o)
{
	const char *colon = strchr(s, ':');
	char from[32];

	if (!colon || (size_t)(colon - s) >= sizeof(from))
		return -1;
	memcpy(from, s, (size_t)(colon - s));
	from[colon - s] = '\0';
	o->window_from_ns = 0;
	o->window_to_ns = UINT64_MAX;
	if (from[0] && parse_seconds(from, &o->window_from_ns) < 0)
		return -1;
	if (colon[1] && parse_seconds(colon + 1, &o->window_to_ns) < 0)
		return -1;
	o->have_window = 1;
	return o->window_from_ns <= o->window_to_ns ? 0 : -1;
}

/* --at heap-peak|rss-peak|end|SECONDS. */
static int parse_at(const char *s, struct rep_heap_options *o)
{
	if (strcmp(s, "heap-peak") == 0 || strcmp(s, "peak") == 0)
		o->moment = REP_AT_PEAK;
	else if (strcmp(s, "rss-peak") == 0)
		o->moment = REP_AT_RSS_PEAK;
	else if (strcmp(s, "end") == 0)
		o->moment = REP_AT_END;
	else if (parse_seconds(s, &o->moment_ns) == 0)
		o->moment = REP_AT_TIME;
	else
		return -1;
	return 0;
}

/* Options given, to check that each goes with the command. */
struct given {
	int json, at, dot, every, churn, top, folded, pprof, weight, output, annotate, hist;
};

/* The command's operands and the options it takes. -1 to go on, else the exit code. */
static int check_command(struct rep_request *r, const struct given *g, int nops, char **ops)
{
	enum rep_command c = r->command;
	const struct rep_command_def *cmd = rep_commands[c];
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
	if (cmd->output_is && !g->output)
		return at_usage_error("%s needs -o FILE (%s)", name, cmd->output_is);
	if (g->annotate && c != REP_CMD_LIFETIMES && c != REP_CMD_LAYOUT)
		return at_usage_error("--annotate goes with lifetimes and layout, not with %s", name);
	if (g->hist && c != REP_CMD_LIFETIMES)
		return at_usage_error("--hist goes with lifetimes, not with %s", name);
	if (g->hist && g->annotate)
		return at_usage_error("lifetimes takes one of --annotate and --hist");
	if (g->json && c != REP_CMD_SUMMARY)
		return at_usage_error("--json goes with summary, not with %s", name);
	if ((g->at || g->dot) && c != REP_CMD_PEAK && !(g->at && g->pprof))
		return at_usage_error("%s goes with peak, not with %s", g->dot ? "--dot" : "--at",
				      name);
	if ((g->every || g->churn || g->top) && c != REP_CMD_TIMELINE)
		return at_usage_error("--every, --churn and --top go with timeline, not with %s",
				      name);
	if (c == REP_CMD_TIMELINE && g->every == g->churn)
		return at_usage_error("timeline needs one of --every SECONDS and --churn BYTES");
	if ((g->folded || g->pprof || g->weight) && c != REP_CMD_EXPORT)
		return at_usage_error("--folded, --pprof and --weight go with export, not with %s",
				      name);
	if (c == REP_CMD_EXPORT && g->folded == g->pprof)
		return at_usage_error("export needs one output format: --folded or --pprof");
	if (g->pprof && g->weight)
		return at_usage_error("--weight goes with --folded: a pprof profile holds every "
				      "weight");
	if (g->pprof && !g->at)
		r->heap.moment = REP_AT_END; /* in use: at the end, unless --at heap-peak */
	if (g->at && c == REP_CMD_EXPORT && r->heap.moment != REP_AT_PEAK &&
	    r->heap.moment != REP_AT_END)
		return at_usage_error("export --pprof takes --at heap-peak or end");
	if (g->at && c == REP_CMD_EXPORT && g->folded)
		return at_usage_error("export --folded takes --weight peak-bytes or leak-bytes, "
				      "not --at");
	return -1;
}

static void usage(void)
{
	rep_usage();
}

/* Fills r from argv. Returns -1 to go on, else the exit code (0 after --help). */
static int parse_args(int argc, char **argv, struct rep_request *r)
{
	enum { OPT_FOLDED = 256, OPT_PPROF, OPT_ANNOTATE, OPT_HIST, OPT_WEIGHT, OPT_DEBUG_DIR, OPT_PID, OPT_WINDOW, OPT_JSON, OPT_AT,
	       OPT_DOT, OPT_EVERY, OPT_CHURN, OPT_TOP, OPT_STRICT };
	static const struct option longopts[] = {
		{ "folded", no_argument, NULL, OPT_FOLDED },
		{ "pprof", no_argument, NULL, OPT_PPROF },
		{ "annotate", no_argument, NULL, OPT_ANNOTATE },
		{ "hist", no_argument, NULL, OPT_HIST },
		{ "weight", required_argument, NULL, OPT_WEIGHT },
		{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "window", required_argument, NULL, OPT_WINDOW },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "at", required_argument, NULL, OPT_AT },
		{ "dot", no_argument, NULL, OPT_DOT },
		{ "every", required_argument, NULL, OPT_EVERY },
		{ "churn", required_argument, NULL, OPT_CHURN },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "strict", no_argument, NULL, OPT_STRICT },
		{ "output", required_argument, NULL, 'o' },
		AT_CLI_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct given g = { 0 };
	uint64_t v;
	int c;

	memset(r, 0, sizeof(*r));
	r->top = 10;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:qvh", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_FOLDED:
			g.folded = 1;
			break;
		case OPT_ANNOTATE:
			g.annotate = 1;
			r->annotate = 1;
			break;
		case OPT_HIST:
			g.hist = 1;
			break;
		case OPT_PPROF:
			g.pprof = 1;
			r->pprof = 1;
			break;
		case OPT_WEIGHT:
			g.weight = 1;
			if (rep_weight_parse(optarg, &r->weight) < 0)
				return at_usage_error("--weight needs alloc-count, alloc-bytes, "
						      "peak-bytes, leak-bytes or temp-count, not: %s",
						      optarg);
			break;
		case OPT_DEBUG_DIR:
			r->debug_dir = optarg;
			break;
		case OPT_PID:
			if (parse_count(optarg, UINT32_MAX, &v) < 0)
				return at_usage_error("--pid needs a process id, not: %s", optarg);
			r->heap.have_pid = 1;
			r->heap.pid = (uint32_t)v;
			break;
		case OPT_WINDOW:
			if (parse_window(optarg, &r->heap) < 0)
				return at_usage_error("--window needs T0:T1, seconds from the first "
						      "event with T0 <= T1 (2:5, 1.5:, :0.25), not: %s",
						      optarg);
			break;
		case OPT_JSON:
			g.json = 1;
			r->json = 1;
			break;
		case OPT_AT:
			g.at = 1;
			if (parse_at(optarg, &r->heap) < 0)
				return at_usage_error("--at needs heap-peak, rss-peak, end or SECONDS, "
						      "not: %s",
						      optarg);
			break;
		case OPT_DOT:
			g.dot = 1;
			r->dot = 1;
			break;
		case OPT_EVERY:
			g.every = 1;
			if (parse_seconds(optarg, &r->every_ns) < 0 || !r->every_ns)
				return at_usage_error("--every needs SECONDS above 0, not: %s", optarg);
			break;
		case OPT_CHURN:
			g.churn = 1;
			if (parse_count(optarg, UINT64_MAX, &r->churn_bytes) < 0 || !r->churn_bytes)
				return at_usage_error("--churn needs BYTES above 0, not: %s", optarg);
			break;
		case OPT_TOP:
			g.top = 1;
			if (parse_count(optarg, SIZE_MAX, &v) < 0)
				return at_usage_error("--top needs a count, not: %s", optarg);
			r->top = (size_t)v;
			break;
		case OPT_STRICT:
			r->strict = 1;
			break;
		case 'o':
			g.output = 1;
			r->output = optarg;
			break;
		case ':':
			return at_usage_error("missing argument for option %s", argv[optind - 1]);
		default:
			switch (at_cli_option(c, usage)) {
			case AT_CLI_GO_ON:
				break;
			case AT_CLI_EXIT_OK:
				return 0;
			case AT_CLI_UNKNOWN:
				return at_usage_error("unknown option %s", argv[optind - 1]);
			}
		}
	}
	if (optind >= argc)
		return at_usage_error("no command: %s", rep_command_list());
	if (rep_command_parse(argv[optind], &r->command) < 0)
		return at_usage_error("unknown command %s (%s)", argv[optind],
				      rep_command_list());
	return check_command(r, &g, argc - optind - 1, argv + optind + 1);
}

int main(int argc, char **argv)
{
	struct rep_request r;
	int rc;

	at_program_name = PROGRAM;
	rc = parse_args(argc, argv, &r);
	if (rc >= 0)
		return rc;
	return rep_run(&r);
}
