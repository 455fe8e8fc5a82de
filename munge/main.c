/* alloctap-munge: raw logalloc log in, munged log out (doc/LOGALLOC.md). This file reads the
 * command line; munge/pipeline.c runs the reference-compatible text path, munge/convert.c the
 * event path (binary input or output, --keep-pointers). */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>

#include "convert.h"
#include "cli.h"
#include "display.h"
#include "formats.h"
#include "prim.h"
#include "lines.h"
#include "munge.h"
#include "sink.h"
#include "source.h"

#define PROGRAM "alloctap-munge"

static void usage(FILE *f)
{
	fprintf(f,
"Usage: " PROGRAM " [FILE|-] [-o OUT] [--format text|binary] [--keep-pointers]\n"
"                      [--pid PID] [--stats-every N] [--strict] [--threads 1|2] [-q|-v]\n"
"\n"
"Reads a raw logalloc log (FILE, or standard input when FILE is - or absent) and writes the\n"
"munged log alloctap-replay and Firefox's logalloc-replay read: process and thread ids\n"
"renumbered 1, 2, ... in order of appearance, pointers replaced by #SLOT numbers that are\n"
"reused first-released, first-reused. The output is byte for byte that of Firefox's\n"
"logalloc_munge.py on the same input. Lines that script drops are dropped too and reported\n"
"on stderr as FILE:LINE: Ignored \"LINE\": REASON, followed by a one-line summary. Lines it\n"
"writes although no replay can read them (an allocation without a result, a size that is\n"
"not a decimal number) are written too and reported as FILE:LINE: Written, but not\n"
"replayable \"LINE\": REASON.\n"
"Frees and reallocs of a pointer never allocated in the trace (\"Did not see an alloc for\n"
"pointer\": blocks allocated before it began, hundreds in a trace taken by attaching,\n"
"alloctapd --pid) are dropped the same, but counted in one line before the summary\n"
"(FILE: frees or reallocs of a pointer never allocated in the trace: N, ignored ...) and\n"
"listed one by one only with -v.\n"
"\n"
"The input may also be a binary trace (.atz, doc/FORMAT.md: alloctapd --format binary),\n"
"recognised by its first bytes (04 22 4D 18), without an option. Its events are munged the\n"
"same way; a drop is reported as FILE: event N: Ignored \"LINE\": REASON. A damaged binary\n"
"trace (truncated, corrupt block, newer version) is munged up to the damage, then the\n"
"reader's message is printed and the exit status is 1. An input that is already munged is\n"
"an error (exit 1), except with --keep-pointers.\n"
"\n"
"Options:\n"
"  -o, --output OUT     write to OUT instead of standard output\n"
"      --format FMT     text (default): a logalloc text log; binary: a munged .atz trace\n"
"                       (slot numbers instead of pointers) that alloctap-replay reads;\n"
"                       text lines that do not fit its event model are then reported\n"
"                       and skipped, as with --keep-pointers\n"
"      --keep-pointers  convert without munging: the events as they are, raw or munged as\n"
"                       the input is, in the --format asked (raw text -> raw binary with\n"
"                       --format binary, binary -> text without). Text lines that do not fit\n"
"                       the event model (sizes in hex, numbers beyond 64 bits, junk) are\n"
"                       reported as FILE:LINE and skipped\n"
"      --pid PID        keep only the lines of process PID (its number in the raw log),\n"
"                       printed as process 1; the other processes' lines are skipped\n"
"      --stats-every N  add \"P 1 jemalloc_stats()\" after every N written lines of each\n"
"                       process P, so a replay prints allocator statistics as it goes\n"
"      --strict         a line or event that would be dropped or skipped, or written\n"
"                       although a replay cannot read it, is an error: report it, exit 1\n"
"      --threads 1|2    1: read, parse and munge in one thread; 2 (the default with two or\n"
"                       more CPUs): a second thread reads and parses ahead (raw text munged\n"
"                       to text only; other conversions run in one thread)\n"
"  -q, --quiet          no message per dropped line (the summary and errors remain);\n"
"                       -qq: nothing (the exit status says it)\n"
"  -v, --verbose        also list each free or realloc of a pointer never allocated,\n"
"                       and print the time taken\n"
"  -h, --help           this help\n"
"      --version        the version, then exit\n"
"\n"
"Examples: " PROGRAM " raw.log -o munged.log && alloctap-replay munged.log\n"
"          " PROGRAM " --format binary trace.atz -o munged.atz && alloctap-replay munged.atz\n"
"          " PROGRAM " --keep-pointers trace.atz > raw.log    (binary -> raw text)\n"
"\n"
"Exit status: 0 success (dropped lines included, unless --strict); 1 input or output error\n"
"(unreadable FILE, damaged or already munged binary trace, failed write such as a full disk)\n"
"or, with --strict, a dropped line; 2 usage error. When the output's reader goes away (| head)\n"
"it stops quietly and ends killed by SIGPIPE (141 in a shell), as cat does.\n"
"\n"
"Known difference from the reference: a pid, tid or pointer whose magnitude needs more than\n"
"64 bits is accepted by Python but dropped here, with a message saying so. Messages echo at\n"
"most %d bytes of a line, bytes outside printable ASCII as \\xNN.\n",
		AT_MUNGE_ECHO_MAX);
}

static void usage_stdout(void)
{
	usage(stdout);
}

static int usage_error(const char *msg, const char *arg)
{
	return at_usage_error("%s%s", msg, arg ? arg : "");
}

struct munge_args {
	const char *input;
	const char *output;
	struct at_munge_options opt;
	int strict;
	int threads;
	int binary;        /* --format binary */
	int keep_pointers; /* --keep-pointers */
};

/* Parses a positive decimal count for an option. */
static int parse_count(const char *s, uint64_t *v)
{
	int neg;

	return at_parse_pyint(s, strlen(s), 10, &neg, v) == AT_PYINT_OK && !neg && *v &&
			       s[0] >= '0' && s[0] <= '9'
		       ? 0
		       : -1;
}

/* Fills a from argv. Returns -1 to go on, else the exit code (0 after --help). */
static int parse_args(int argc, char **argv, struct munge_args *a)
{
	enum { OPT_PID = 256, OPT_STATS, OPT_STRICT, OPT_THREADS, OPT_FORMAT, OPT_KEEP };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "stats-every", required_argument, NULL, OPT_STATS },
		{ "strict", no_argument, NULL, OPT_STRICT },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "keep-pointers", no_argument, NULL, OPT_KEEP },
		AT_CLI_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	enum at_format format;
	int c;

	memset(a, 0, sizeof(*a));
	a->threads = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 2 : 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:qvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			a->output = optarg;
			break;
		case OPT_PID:
			if (at_parse_pyint(optarg, strlen(optarg), 10, &a->opt.pid_neg,
					       &a->opt.pid_mag) != AT_PYINT_OK)
				return usage_error("--pid needs a process number, not: ", optarg);
			a->opt.has_pid = 1;
			break;
		case OPT_STATS:
			if (parse_count(optarg, &a->opt.stats_every) < 0)
				return usage_error("--stats-every needs a positive number, not: ",
						   optarg);
			break;
		case OPT_STRICT:
			a->strict = 1;
			a->opt.replayable_only = 1;
			break;
		case OPT_THREADS:
			if (strcmp(optarg, "1") && strcmp(optarg, "2"))
				return usage_error("--threads needs 1 or 2, not: ", optarg);
			a->threads = optarg[0] - '0';
			break;
		case OPT_FORMAT:
			if (at_format_parse(optarg, &format) < 0)
				return at_usage_error("--format needs %s, not: %s", at_format_list(),
						      optarg);
			a->binary = format == AT_FORMAT_BINARY;
			break;
		case OPT_KEEP:
			a->keep_pointers = 1;
			break;
		case ':':
			return usage_error("missing argument for option ", argv[optind - 1]);
		default:
			switch (at_cli_option(c, usage_stdout)) {
			case AT_CLI_GO_ON:
				break;
			case AT_CLI_EXIT_OK:
				return 0;
			case AT_CLI_UNKNOWN:
				return usage_error("unknown option ", argv[optind - 1]);
			}
		}
	}
	if (argc - optind > 1)
		return usage_error("more than one input file: ", argv[optind + 1]);
	if (a->keep_pointers && (a->opt.has_pid || a->opt.stats_every))
		return usage_error("--pid and --stats-every munge; they do not go with ",
				   "--keep-pointers");
	if (optind < argc)
		a->input = argv[optind];
	return -1;
}

/* Opens the input (path, or stdin for NULL or "-") and sniffs its format into src.
 * Returns 0, or the exit code after reporting the error. */
static int open_input(struct at_source *src, const char *path, int *fd)
{
	const char *name;

	*fd = at_input_fd(path, &name);
	if (*fd < 0) {
		at_error("%s: cannot open: %s", path, strerror(errno));
		return 1;
	}
	if (at_source_open_fd(src, *fd, name) < 0) {
		if (errno == ENOMEM) {
			at_error("%s: out of memory", name);
		} else { /* as the line reader reports it */
			at_error("%s: read error: %s", name, strerror(errno));
			DISPLAYLEVEL(1, "%s: %s: 0 lines read, 0 written, 0 ignored\n", PROGRAM,
				     name);
		}
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct munge_args a;
	struct at_source src = { .kind = AT_SOURCE_TEXT };
	struct at_sink sink = { .out = { .buf = NULL } };
	struct at_munge m;
	int rc, in_fd = 0, opened = 0;

	at_program_name = PROGRAM;
	rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	signal(SIGPIPE, SIG_IGN); /* a closed pipe becomes EPIPE: at_write_error, at_exit_status */
	at_munge_init(&m, &a.opt);
	rc = open_input(&src, a.input, &in_fd);
	if (rc)
		goto cleanup;
	opened = 1;
	rc = 1;
	if (at_source_refuse_filtered(&src, "munging") < 0)
		goto cleanup;
	if (at_sink_open(&sink, a.output, AT_SINK_TRUNCATE) < 0) {
		at_error("%s: cannot open for writing: %s", a.output ? a.output : "<stdout>",
			 at_sink_open_why(&sink));
		goto cleanup;
	}
	double t0 = at_now_seconds();
	const char *unit = "lines";
	struct at_munge_counts c;
	if (src.kind == AT_SOURCE_TEXT && !a.binary && !a.keep_pointers) {
		/* raw text to text: the reference-compatible line path, untouched */
		rc = at_munge_lines(&m, &src.lines, at_sink_output(&sink), a.threads, a.strict, &c);
	} else {
		struct at_convert_options co = { .binary = a.binary, .strict = a.strict };
		rc = at_convert_run(&src, a.keep_pointers ? NULL : &m, &sink, &co, &c);
		if (src.kind == AT_SOURCE_BINARY)
			unit = "events";
	}
	if (at_sink_close(&sink) < 0) {
		at_write_error(at_sink_name(&sink), at_sink_error(&sink));
		rc = 1;
	}
	if (at_reader_gone()) /* `| head`: it stops quietly, as cat does */
		goto cleanup;
	double dt = at_now_seconds() - t0;
	if (c.unseen)
		at_warn("%s: frees or reallocs of a pointer never allocated in the trace: %llu, "
			"ignored (blocks allocated before it began, as when alloctapd attaches with "
			"--pid; -v lists them)", src.name, (unsigned long long)c.unseen);
	DISPLAYLEVEL(1, "%s: %s: %llu %s read, %llu written, %llu ignored", PROGRAM, src.name,
		     (unsigned long long)c.read, unit, (unsigned long long)c.written,
		     (unsigned long long)c.ignored);
	if (a.opt.has_pid)
		DISPLAYLEVEL(1, ", %llu of other processes", (unsigned long long)c.filtered);
	if (c.unreplayable)
		DISPLAYLEVEL(1, ", %llu not replayable", (unsigned long long)c.unreplayable);
	if (c.lost_total)
		DISPLAYLEVEL(1, ", %llu lost in recording%s", (unsigned long long)c.lost_total,
			     a.binary ? "" : " (a text log cannot show where)");
	DISPLAYLEVEL(1, "\n");
	DISPLAYLEVEL(3, "%s: %.3f s, %.1f M%s/s, %d thread%s\n", PROGRAM, dt,
		     dt > 0 ? (double)c.read / dt / 1e6 : 0.0, unit,
		     src.kind == AT_SOURCE_TEXT && !a.binary && !a.keep_pointers ? a.threads : 1,
		     src.kind == AT_SOURCE_TEXT && !a.binary && !a.keep_pointers && a.threads > 1
			     ? "s"
			     : "");
cleanup:
	at_sink_close(&sink);
	if (opened)
		at_source_close(&src);
	if (in_fd > 0)
		close(in_fd);
	at_munge_free(&m);
	return at_exit_status(rc);
}
