/* alloctap-munge: raw logalloc log in, munged log out (LOGALLOC.md section 2). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "atz.h"
#include "display.h"
#include "linereader.h"
#include "munge.h"
#include "output.h"
#include "pipeline.h"
#include "source.h"
#include "text.h"

#define PROGRAM "alloctap-munge"
/* Bytes of a dropped line echoed in its message; longer lines end with "...". */
#define ECHO_MAX 200

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
"on stderr as FILE:LINE: Ignored \"LINE\": REASON, followed by a one-line summary.\n"
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
"      --strict         a line or event that would be dropped or skipped is an error:\n"
"                       report it, exit 1\n"
"      --threads 1|2    1: read, parse and munge in one thread; 2 (the default with two or\n"
"                       more CPUs): a second thread reads and parses ahead (raw text munged\n"
"                       to text only; other conversions run in one thread)\n"
"  -q, --quiet          no message per dropped line (the summary and errors remain);\n"
"                       -qq: errors only\n"
"  -v, --verbose        also print the time taken\n"
"  -h, --help           this help\n"
"\n"
"Examples: " PROGRAM " raw.log -o munged.log && alloctap-replay munged.log\n"
"          " PROGRAM " --format binary trace.atz -o munged.atz && alloctap-replay munged.atz\n"
"          " PROGRAM " --keep-pointers trace.atz > raw.log    (binary -> raw text)\n"
"\n"
"Exit status: 0 success (dropped lines included, unless --strict); 1 input or output error\n"
"(unreadable FILE, damaged or already munged binary trace, failed write such as a full disk\n"
"or a closed pipe) or, with --strict, a dropped line; 2 usage error.\n"
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
	int binary;        /* --format binary */
	int keep_pointers; /* --keep-pointers */
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
	enum { OPT_PID = 256, OPT_STATS, OPT_STRICT, OPT_THREADS, OPT_FORMAT, OPT_KEEP };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "stats-every", required_argument, NULL, OPT_STATS },
		{ "strict", no_argument, NULL, OPT_STRICT },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "keep-pointers", no_argument, NULL, OPT_KEEP },
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
		case OPT_FORMAT:
			if (strcmp(optarg, "text") && strcmp(optarg, "binary"))
				return usage_error("--format needs text or binary, not: ", optarg);
			a->binary = optarg[0] == 'b';
			break;
		case OPT_KEEP:
			a->keep_pointers = 1;
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
	if (a->keep_pointers && (a->opt.has_pid || a->opt.stats_every))
		return usage_error("--pid and --stats-every munge; they do not go with ",
				   "--keep-pointers");
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
	uint64_t lost_total; /* events a binary input's recorder lost */
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

/* --- events: binary input, binary output, --keep-pointers ------------------------------- */

/* One run over the events of a source (at_source: a binary trace, or text parsed into events),
 * munged (m) or kept as they are (m == NULL), written as text (out) or as an .atz trace. */
struct event_run {
	const struct munge_args *a;
	struct at_source *src;
	struct at_munge *m;           /* NULL with --keep-pointers */
	struct at_output *out;
	struct at_atz_writer *atz;    /* binary output, opened at the first event it needs */
	int munged_out;               /* the output holds slots (#N), not addresses */
	struct at_event *pending;     /* --keep-pointers, text in, binary out: events read before
				       * the text showed whether it is raw or munged */
	size_t npending, pending_cap;
	struct counts c;
	uint64_t lost;                /* events the recorder lost, not yet carried to the output */
	uint64_t lost_seen;           /* lost events announced before events so far */
	int write_errno;              /* errno of a failed .atz write, 0 if none */
};

/* Where the last event came from, for messages: "FILE:LINE" (text) or "FILE: event N". */
static void event_position(const struct event_run *r, char *buf, size_t size)
{
	if (r->src->kind == AT_SOURCE_TEXT)
		snprintf(buf, size, "%s:%llu", r->src->name, (unsigned long long)r->src->lineno);
	else
		snprintf(buf, size, "%s: event %llu", r->src->name, (unsigned long long)r->c.read);
}

/* Opens the .atz writer on out's fd: munged or raw as decided, header from a binary input. */
static int open_atz(struct event_run *r)
{
	/* munge runs offline: LZ4HC level 9 (python3 trace: 1.50 bytes/event against 1.77 for the
	 * fast level alloctapd uses while tracing), at about 100 ns more per event */
	struct at_atz_options opt = { .flags = r->munged_out ? AT_ATZ_FLAG_MUNGED : 0,
				      .level = 9 };
	const struct at_atz_header *h =
		r->src->kind == AT_SOURCE_BINARY ? at_atz_reader_header(r->src->atz) : NULL;

	opt.host = h ? h->host : ""; /* a text log does not say where it was recorded */
	opt.start_ns = h ? h->start_ns : 0;
	r->atz = at_atz_writer_open(r->out->fd, r->out->name, &opt);
	if (!r->atz) {
		r->write_errno = errno;
		return -1;
	}
	return 0;
}

/* Writes one event. 0, or -1 when the output failed (r->write_errno or r->out->err). */
static int emit(struct event_run *r, const struct at_event *ev)
{
	if (!r->a->binary) {
		char *d = at_output_reserve(r->out, AT_LINE_MAX);
		at_output_commit(r->out, r->munged_out ? at_format_munged(d, ev)
						       : at_format_raw(d, ev));
		return r->out->err ? -1 : 0;
	}
	if (!r->atz && open_atz(r) < 0)
		return -1;
	if (r->lost) {
		if (at_atz_append_lost(r->atz, r->lost) < 0) {
			r->write_errno = errno;
			return -1;
		}
		r->lost = 0;
	}
	if (at_atz_append(r->atz, ev) < 0) {
		r->write_errno = errno;
		return -1;
	}
	return 0;
}

static int flush_pending(struct event_run *r);

/* --keep-pointers from text to binary: holds events until the text has shown (by its first
 * pointer) whether it is raw or munged, which the .atz header must say before any event. Those
 * events hold no pointer, so they read the same either way. 0, or -1 (output or memory). */
static int emit_kept(struct event_run *r, const struct at_event *ev)
{
	if (!r->a->binary || r->atz || r->src->kind == AT_SOURCE_BINARY)
		return emit(r, ev);
	if (r->src->munged < 0) {
		if (r->npending == r->pending_cap) {
			size_t cap = r->pending_cap ? r->pending_cap * 2 : 256;
			struct at_event *p = realloc(r->pending, cap * sizeof(*p));
			if (!p) {
				r->write_errno = ENOMEM;
				return -1;
			}
			r->pending = p;
			r->pending_cap = cap;
		}
		r->pending[r->npending++] = *ev;
		return 0;
	}
	return flush_pending(r) < 0 ? -1 : emit(r, ev);
}

/* Writes the events emit_kept held, once the output kind is known (raw if it never was). */
static int flush_pending(struct event_run *r)
{
	if (!r->a->binary || r->atz || !r->a->keep_pointers)
		return 0;
	r->munged_out = r->src->munged == 1;
	for (size_t i = 0; i < r->npending; i++)
		if (emit(r, &r->pending[i]) < 0)
			return -1;
	r->npending = 0;
	return r->atz || open_atz(r) == 0 ? 0 : -1;
}

/* Reports an event the munge dropped, as the text path reports a line; with --strict an
 * error. Returns non-zero to stop. */
static int report_dropped_event(struct event_run *r, const struct at_event *ev, const char *why)
{
	char line[AT_LINE_MAX], pos[4200];
	size_t n = at_format_raw(line, ev);

	line[n - 1] = 0;
	event_position(r, pos, sizeof(pos));
	r->c.ignored++;
	if (r->a->strict) {
		at_error("%s: Ignored \"%s\": %s (--strict)", pos, line, why);
		return 1;
	}
	DISPLAYLEVEL(2, "%s: %s: Ignored \"%s\": %s\n", at_program_name, pos, line, why);
	return 0;
}

/* Reports a text line that does not fit the event model (skipped); with --strict an error.
 * Returns non-zero to stop. */
static int report_bad_line(struct event_run *r)
{
	r->c.read++;
	r->c.ignored++;
	if (r->a->strict) {
		at_error_at(r->src->name, r->src->lineno, "Ignored: %s (--strict)", r->src->why);
		return 1;
	}
	DISPLAYLEVEL(2, "%s: %s:%llu: Ignored: %s\n", at_program_name, r->src->name,
		     (unsigned long long)r->src->lineno, r->src->why);
	return 0;
}

static int refuse_munged(const struct event_run *r)
{
	if (r->src->kind == AT_SOURCE_BINARY)
		at_error("%s: already munged (the trace's header says so): nothing to munge; "
			 "--keep-pointers converts it as it is", r->src->name);
	else
		at_error_at(r->src->name, r->src->lineno,
			    "already munged (#slots, not addresses): nothing to munge; "
			    "--keep-pointers converts it as it is");
	return 1;
}

/* Munges (or with --keep-pointers copies) one event. 0 to go on, else the exit code. */
static int take_event(struct event_run *r, const struct at_event *ev)
{
	struct at_event munged[2];
	unsigned n;
	const char *why = NULL;

	r->c.read++;
	if (r->src->kind == AT_SOURCE_BINARY) {
		uint64_t lost = at_atz_lost_before(r->src->atz);
		r->lost += lost;
		r->lost_seen += lost;
	}
	if (!r->m) {
		if (r->src->munged == 1)
			r->munged_out = 1;
		r->c.written++;
		return emit_kept(r, ev) < 0 ? 1 : 0;
	}
	if (r->src->munged == 1)
		return refuse_munged(r);
	switch (at_munge_event(r->m, ev, munged, &n, &why)) {
	case AT_MUNGE_WRITTEN:
		r->c.written++;
		for (unsigned i = 0; i < n; i++)
			if (emit(r, &munged[i]) < 0)
				return 1;
		return 0;
	case AT_MUNGE_FILTERED:
		r->c.filtered++;
		return 0;
	case AT_MUNGE_IGNORED:
		return report_dropped_event(r, ev, why);
	default:
		at_error("%s: out of memory after %llu events", r->src->name,
			 (unsigned long long)r->c.read);
		return 1;
	}
}

/* Reads every event of r->src through take_event, then ends the output. Returns the exit
 * code; every error is reported. */
static int run_events(struct event_run *r)
{
	struct at_event ev;
	int got, rc = 0;

	r->munged_out = r->m != NULL || r->src->munged == 1;
	if (r->m && r->src->munged == 1)
		return refuse_munged(r);
	while (!rc && (got = at_source_next(r->src, &ev)) != 0) {
		if (got > 0)
			rc = take_event(r, &ev);
		else if (r->src->fatal) {
			at_source_report(r->src); /* truncated, corrupt, newer, read error */
			rc = 1;
		} else {
			rc = report_bad_line(r);
		}
	}
	if (r->src->kind == AT_SOURCE_BINARY && r->src->atz) {
		struct at_atz_stats st;
		at_atz_reader_stats(r->src->atz, &st);
		r->c.lost_total = st.lost;
		r->lost += st.lost - r->lost_seen; /* lost after the last event */
	}
	if (r->a->binary && !r->write_errno && !r->out->err) {
		if (flush_pending(r) < 0 || (!r->atz && open_atz(r) < 0))
			rc = 1;
		else if (r->lost && at_atz_append_lost(r->atz, r->lost) < 0)
			r->write_errno = errno;
	}
	if (r->atz && at_atz_writer_close(r->atz) < 0 && !r->write_errno)
		r->write_errno = errno ? errno : EIO;
	r->atz = NULL;
	if (r->write_errno && !r->out->err) {
		at_error("%s: write error: %s", r->out->name, strerror(r->write_errno));
		rc = 1;
	}
	free(r->pending);
	return rc;
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
	struct at_output out = { .buf = NULL };
	struct at_munge m;
	int rc, in_fd = 0, opened = 0;

	at_program_name = PROGRAM;
	rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	signal(SIGPIPE, SIG_IGN); /* a closed pipe becomes EPIPE, reported like any write error */
	at_munge_init(&m, &a.opt);
	rc = open_input(&src, a.input, &in_fd);
	if (rc)
		goto cleanup;
	opened = 1;
	rc = 1;
	if (at_output_open(&out, a.output) < 0) {
		at_error("%s: cannot open for writing: %s", a.output ? a.output : "<stdout>",
			 strerror(errno));
		goto cleanup;
	}
	double t0 = now_seconds();
	const char *unit = "lines";
	struct counts c;
	if (src.kind == AT_SOURCE_TEXT && !a.binary && !a.keep_pointers) {
		/* raw text to text: the reference-compatible line path, untouched */
		struct at_linereader *r = &src.lines;
		struct outcome_ctx oc = { .name = r->name, .strict = a.strict };
		int read_errno = 0;
		switch (at_munge_run(&m, r, &out, a.threads, on_outcome, &oc, &read_errno)) {
		case AT_PIPELINE_DONE:
			rc = 0;
			break;
		case AT_PIPELINE_READ_ERROR:
			at_error("%s: read error: %s", r->name, strerror(read_errno));
			break;
		case AT_PIPELINE_NOMEM:
			at_error("%s: out of memory after line %llu", r->name,
				 (unsigned long long)oc.c.read);
			break;
		default: /* --strict stopped at a dropped line, already reported */
			break;
		}
		c = oc.c;
	} else {
		struct event_run er = { .a = &a, .src = &src, .out = &out,
					.m = a.keep_pointers ? NULL : &m };
		rc = run_events(&er);
		c = er.c;
		if (src.kind == AT_SOURCE_BINARY)
			unit = "events";
	}
	if (at_output_close(&out) < 0) {
		at_error("%s: write error: %s", out.name, strerror(out.err));
		rc = 1;
	}
	double dt = now_seconds() - t0;
	DISPLAYLEVEL(1, "%s: %s: %llu %s read, %llu written, %llu ignored", PROGRAM, src.name,
		     (unsigned long long)c.read, unit, (unsigned long long)c.written,
		     (unsigned long long)c.ignored);
	if (a.opt.has_pid)
		DISPLAYLEVEL(1, ", %llu of other processes", (unsigned long long)c.filtered);
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
	at_output_close(&out);
	if (opened)
		at_source_close(&src);
	if (in_fd > 0)
		close(in_fd);
	at_munge_free(&m);
	return rc;
}
