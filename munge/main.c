/* alloctap-munge: raw logalloc log in, munged log out (LOGALLOC.md section 2). */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "display.h"
#include "linereader.h"
#include "munge.h"
#include "output.h"
#include "pipeline.h"
#include "text.h"

#define PROGRAM "alloctap-munge"
/* Bytes of a dropped line echoed in its message; longer lines end with "...". */
#define ECHO_MAX 200

static void usage(FILE *f)
{
	fprintf(f,
"Usage: " PROGRAM " [FILE|-] [-o OUT] [--pid PID] [--stats-every N] [--strict]\n"
"                      [--threads 1|2] [-q|-v]\n"
"\n"
"Reads a raw logalloc log (FILE, or standard input when FILE is - or absent) and writes the\n"
"munged log alloctap-replay and Firefox's logalloc-replay read: process and thread ids\n"
"renumbered 1, 2, ... in order of appearance, pointers replaced by #SLOT numbers that are\n"
"reused first-released, first-reused. The output is byte for byte that of Firefox's\n"
"logalloc_munge.py on the same input. Lines that script drops are dropped too and reported\n"
"on stderr as FILE:LINE: Ignored \"LINE\": REASON, followed by a one-line summary.\n"
"\n"
"Options:\n"
"  -o, --output OUT     write to OUT instead of standard output\n"
"      --pid PID        keep only the lines of process PID (its number in the raw log),\n"
"                       printed as process 1; the other processes' lines are skipped\n"
"      --stats-every N  add \"P 1 jemalloc_stats()\" after every N written lines of each\n"
"                       process P, so a replay prints allocator statistics as it goes\n"
"      --strict         a line that would be dropped is an error: report it, exit 1\n"
"      --threads 1|2    1: read, parse and munge in one thread; 2 (the default with two or\n"
"                       more CPUs): a second thread reads and parses ahead\n"
"  -q, --quiet          no message per dropped line (the summary and errors remain);\n"
"                       -qq: errors only\n"
"  -v, --verbose        also print the time taken\n"
"  -h, --help           this help\n"
"\n"
"Example: " PROGRAM " raw.log -o munged.log && alloctap-replay munged.log\n"
"\n"
"Exit status: 0 success (dropped lines included, unless --strict); 1 input or output error\n"
"(unreadable FILE, failed write such as a full disk or a closed pipe) or, with --strict, a\n"
"dropped line; 2 usage error.\n"
"\n"
"Known difference from the reference: a pid, tid or pointer whose magnitude needs more than\n"
"64 bits is accepted by Python but dropped here, with a message saying so. Messages echo at\n"
"most %d bytes of a line, bytes outside printable ASCII as \\xNN.\n",
		ECHO_MAX);
}

static int usage_error(const char *msg, const char *arg)
{
	at_error("%s%s", msg, arg ? arg : "");
	fprintf(stderr, "Try '" PROGRAM " --help'.\n");
	return 2;
}

struct munge_args {
	const char *input;
	const char *output;
	struct at_munge_options opt;
	int strict;
	int threads;
};

/* Parses a positive decimal count for an option. */
static int parse_count(const char *s, uint64_t *v)
{
	int neg;

	return at_munge_parse_int(s, strlen(s), 10, &neg, v) == AT_PYINT_OK && !neg && *v &&
			       s[0] >= '0' && s[0] <= '9'
		       ? 0
		       : -1;
}

/* Fills a from argv. Returns -1 to go on, else the exit code (0 after --help). */
static int parse_args(int argc, char **argv, struct munge_args *a)
{
	enum { OPT_PID = 256, OPT_STATS, OPT_STRICT, OPT_THREADS };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "stats-every", required_argument, NULL, OPT_STATS },
		{ "strict", no_argument, NULL, OPT_STRICT },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
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
			if (at_munge_parse_int(optarg, strlen(optarg), 10, &a->opt.pid_neg,
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
			break;
		case OPT_THREADS:
			if (strcmp(optarg, "1") && strcmp(optarg, "2"))
				return usage_error("--threads needs 1 or 2, not: ", optarg);
			a->threads = optarg[0] - '0';
			break;
		case 'q':
			if (at_display_level > 0)
				at_display_level--;
			break;
		case 'v':
			at_display_level++;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			return usage_error("missing argument for option ", argv[optind - 1]);
		default:
			return usage_error("unknown option ", argv[optind - 1]);
		}
	}
	if (argc - optind > 1)
		return usage_error("more than one input file: ", argv[optind + 1]);
	if (optind < argc)
		a->input = argv[optind];
	return -1;
}

/* Prints the "Ignored" message for a dropped line (at level 2, or as an error): the stripped
 * line, cut at ECHO_MAX bytes, bytes outside printable ASCII as \xNN. */
static void report_dropped(const char *file, uint64_t lineno, const char *line, size_t len,
			   const char *why, int as_error)
{
	static const char hex[] = "0123456789abcdef";
	char echo[ECHO_MAX * 4 + 4];
	struct at_span s = at_strip(line, len);
	size_t n = 0;

	for (size_t i = 0; i < s.n && i < ECHO_MAX; i++) {
		unsigned char c = (unsigned char)s.p[i];
		if (c < 0x20 || c >= 0x7f) {
			echo[n++] = '\\';
			echo[n++] = 'x';
			echo[n++] = hex[c >> 4];
			echo[n++] = hex[c & 15];
		} else {
			echo[n++] = (char)c;
		}
	}
	if (s.n > ECHO_MAX)
		n += (size_t)sprintf(echo + n, "...");
	echo[n] = 0;
	if (as_error)
		at_error_at(file, lineno, "Ignored \"%s\": %s (--strict)", echo, why);
	else
		DISPLAYLEVEL(2, "%s: %s:%llu: Ignored \"%s\": %s\n", at_program_name, file,
			     (unsigned long long)lineno, echo, why);
}

struct counts {
	uint64_t read, written, ignored, filtered;
};

/* What main does with each munged line: count it, report a dropped one, stop on it with
 * --strict. */
struct outcome_ctx {
	const char *name;
	int strict;
	struct counts c;
};

static int on_outcome(void *arg, uint64_t lineno, const char *line, size_t len, int result,
		      const char *why)
{
	struct outcome_ctx *o = arg;

	o->c.read++;
	switch (result) {
	case AT_MUNGE_WRITTEN:
		o->c.written++;
		return 0;
	case AT_MUNGE_FILTERED:
		o->c.filtered++;
		return 0;
	default:
		o->c.ignored++;
		report_dropped(o->name, lineno, line, len, why, o->strict);
		return o->strict;
	}
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	struct munge_args a;
	struct at_linereader r = { .buf = NULL };
	struct at_output out = { .buf = NULL };
	struct at_munge m;
	int rc;

	at_program_name = PROGRAM;
	rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	signal(SIGPIPE, SIG_IGN); /* a closed pipe becomes EPIPE, reported like any write error */
	at_munge_init(&m, &a.opt);
	rc = 1;
	if (at_linereader_open(&r, a.input) < 0) {
		at_error("%s: cannot open: %s", a.input, strerror(errno));
		goto cleanup;
	}
	if (at_output_open(&out, a.output) < 0) {
		at_error("%s: cannot open for writing: %s", a.output ? a.output : "<stdout>",
			 strerror(errno));
		goto cleanup;
	}
	struct outcome_ctx oc = { .name = r.name, .strict = a.strict };
	int read_errno = 0;
	double t0 = now_seconds();
	switch (at_munge_run(&m, &r, &out, a.threads, on_outcome, &oc, &read_errno)) {
	case AT_PIPELINE_DONE:
		rc = 0;
		break;
	case AT_PIPELINE_READ_ERROR:
		at_error("%s: read error: %s", r.name, strerror(read_errno));
		break;
	case AT_PIPELINE_NOMEM:
		at_error("%s: out of memory after line %llu", r.name,
			 (unsigned long long)oc.c.read);
		break;
	default: /* --strict stopped at a dropped line, already reported */
		break;
	}
	if (at_output_close(&out) < 0) {
		at_error("%s: write error: %s", out.name, strerror(out.err));
		rc = 1;
	}
	double dt = now_seconds() - t0;
	DISPLAYLEVEL(1, "%s: %s: %llu lines read, %llu written, %llu ignored", PROGRAM, r.name,
		     (unsigned long long)oc.c.read, (unsigned long long)oc.c.written,
		     (unsigned long long)oc.c.ignored);
	if (a.opt.has_pid)
		DISPLAYLEVEL(1, ", %llu of other processes", (unsigned long long)oc.c.filtered);
	DISPLAYLEVEL(1, "\n");
	DISPLAYLEVEL(3, "%s: %.3f s, %.1f Mlines/s, %d thread%s\n", PROGRAM, dt,
		     dt > 0 ? (double)oc.c.read / dt / 1e6 : 0.0, a.threads,
		     a.threads > 1 ? "s" : "");
cleanup:
	at_output_close(&out);
	at_linereader_close(&r);
	at_munge_free(&m);
	return rc;
}
