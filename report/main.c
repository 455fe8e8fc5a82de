/* alloctap-report: reports on a trace. This file reads the command line; report/feed.c reads
 * the trace into report/export.c, which aggregates its allocations by stack
 * (report/stacks.c, lib/symbolize.c) and writes them as folded lines (report/folded.c). */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "display.h"
#include "export.h"
#include "feed.h"
#include "source.h"

#define PROGRAM "alloctap-report"

static void usage(void)
{
	fputs(
"Usage: " PROGRAM " export --folded [--weight alloc-count|alloc-bytes] [--debug-dir DIR]\n"
"                       [-q|-v] TRACE\n"
"\n"
"Reads TRACE (a file, or standard input for -), a trace of alloctapd in any of its forms:\n"
"text or binary (.atz), raw or munged, recognised by its first bytes. A binary trace taken\n"
"with alloctapd --stacks has a call stack per allocation; its addresses are symbolized from\n"
"the objects the trace names (checked by build-id) and their debug files.\n"
"\n"
"export --folded prints one line per distinct stack: its frames root first, separated by\n"
"';', then a space and the weight (Brendan Gregg's folded format, which flamegraph.pl,\n"
"inferno, speedscope and Pyroscope read). Lines are sorted by their stack text. The leaf frame\n"
"is the allocation function (malloc, calloc, realloc, memalign, posix_memalign,\n"
"aligned_alloc, valloc); a function inlined at a return address is a frame of its own. A\n"
"trace without stacks (a text log, or a trace taken without --stacks) gives stacks of one\n"
"frame, the function name. A stack cut at 128 frames starts with the frame [truncated], one\n"
"whose walk stopped early with [incomplete]. A frame that has no name is OBJECT+0xADDRESS\n"
"(the address in the object), or [unknown] for an address in no mapping. Frees weigh nothing\n"
"and make no line; failed allocations (result 0) count: they were called.\n"
"\n"
"Options:\n"
"      --folded         the folded format (the only export format)\n"
"      --weight W       alloc-count (default): allocation calls; alloc-bytes: bytes asked\n"
"                       (malloc n, calloc n*m saturating at 2^64-1, realloc the new size,\n"
"                       memalign, aligned_alloc and posix_memalign the size, valloc n);\n"
"                       lines of weight 0 are left out\n"
"      --debug-dir DIR  look for debug files under DIR/.build-id/ab/cdef....debug\n"
"                       (default: " AT_SYMBOLIZE_DEBUG_DIR ")\n"
"  -q, --quiet          no warning about objects missing or changed since the trace\n"
"  -v, --verbose        also print the number of distinct stacks\n"
"  -h, --help           this help\n"
"      --version        the version, then exit\n"
"\n"
"Example: alloctapd --stacks -f binary -o app.atz -- ./app\n"
"         " PROGRAM " export --folded app.atz | flamegraph.pl > app.svg\n"
"\n"
"An object whose build-id differs from the trace's (it changed since), or that cannot be\n"
"opened, is reported once on stderr and its frames are shown as OBJECT+0xOFFSET, never with\n"
"names that might be wrong.\n"
"\n"
"Exit status: 0 success; 1 input or output error (unreadable TRACE, malformed line, damaged\n"
"binary trace, failed write); 2 usage error.\n",
		stdout);
}

struct report_args {
	const char *input;
	const char *debug_dir;
	enum rep_weight weight;
};

/* Fills a from argv. Returns -1 to go on, else the exit code (0 after --help). */
static int parse_args(int argc, char **argv, struct report_args *a)
{
	enum { OPT_FOLDED = 256, OPT_WEIGHT, OPT_DEBUG_DIR };
	static const struct option longopts[] = {
		{ "folded", no_argument, NULL, OPT_FOLDED },
		{ "weight", required_argument, NULL, OPT_WEIGHT },
		{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
		AT_CLI_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	int c, folded = 0;

	memset(a, 0, sizeof(*a));
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":qvh", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_FOLDED:
			folded = 1;
			break;
		case OPT_WEIGHT:
			if (rep_weight_parse(optarg, &a->weight) < 0)
				return at_usage_error("--weight needs alloc-count or alloc-bytes, "
						      "not: %s", optarg);
			break;
		case OPT_DEBUG_DIR:
			a->debug_dir = optarg;
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
		return at_usage_error("no command: export");
	if (strcmp(argv[optind], "export") != 0)
		return at_usage_error("unknown command %s (the command is export)", argv[optind]);
	if (!folded)
		return at_usage_error("export needs an output format: --folded");
	if (argc - optind < 2)
		return at_usage_error("export needs a TRACE (a file, or - for standard input)");
	if (argc - optind > 2)
		return at_usage_error("more than one TRACE: %s", argv[optind + 2]);
	a->input = argv[optind + 1];
	return -1;
}

/* An object the trace names that cannot be used: said once, at the warning level. */
static void on_problem(void *arg, const char *path, const char *why)
{
	const char *slash = strrchr(path, '/');

	(void)arg;
	at_warn("%s: %s; its frames are shown as %s+0xOFFSET", path, why, slash ? slash + 1 : path);
}

int main(int argc, char **argv)
{
	struct report_args a;
	struct at_source src = { .kind = AT_SOURCE_TEXT };
	struct rep_export x;
	int rc, fd = -1;

	at_program_name = PROGRAM;
	rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	signal(SIGPIPE, SIG_IGN); /* a closed pipe becomes EPIPE, reported like any write error */
	if (rep_export_init(&x, a.weight, a.debug_dir, on_problem, NULL) < 0) {
		at_error("%s", strerror(errno));
		return AT_EXIT_FAILURE;
	}
	rc = AT_EXIT_FAILURE;
	if (rep_open_input(&src, a.input, &fd) < 0)
		goto out;
	if (rep_feed(&src, &x) < 0)
		goto out;
	at_verbose("%s: %zu distinct stacks", src.name, rep_folded_count(x.folded));
	if (rep_export_write(&x, stdout) < 0) {
		at_error("<stdout>: write error: %s", strerror(errno));
		goto out;
	}
	rc = AT_EXIT_OK;
out:
	if (fd >= 0) {
		at_source_close(&src);
		if (fd > 0)
			close(fd);
	}
	rep_export_free(&x);
	return rc;
}
