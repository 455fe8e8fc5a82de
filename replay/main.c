/* alloctap-replay: replays a munged logalloc log, text or binary (.atz), against the allocator
 * this process runs with (doc/LOGALLOC.md, section 3), without allocating anything of its own while
 * replaying. The input goes through lib/source, which tells the formats apart. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "allocator.h"
#include "cli.h"
#include "display.h"
#include "prim.h"
#include "engine.h"
#include "feed.h"
#include "report.h"
#include "slots.h"
#include "source.h"


struct options {
	const char *input;     /* NULL or "-" for stdin */
	const char *allocator; /* --allocator, or NULL */
	unsigned flags;        /* enum rp_flags */
	int summary;
};

static void usage(void)
{
	static const char text[] =
		"Usage: alloctap-replay [FILE|-] [-s] [-c] [--allocator NAME|PATH] [--summary]\n"
		"                       [-q|-v] [-h]\n"
		"Replays a munged logalloc log (alloctap-munge's output; stdin when FILE is - or\n"
		"absent) against an allocator. Only the lines of the first line's process are\n"
		"replayed, in file order, in one thread. Empty lines are skipped, CRLF and a\n"
		"missing final newline are fine; a malformed line stops the replay with\n"
		"FILE:LINE: reason. The replayer allocates nothing itself while replaying, so\n"
		"the allocator sees only the logged calls.\n"
		"\n"
		"The input may also be a munged binary trace (.atz, doc/FORMAT.md), told apart by\n"
		"its first bytes; it replays the same and faster. Its errors name the event\n"
		"(FILE: event N: reason) or the byte offset of a corrupt block; a truncated trace\n"
		"is replayed up to its last whole block, then reported (exit 1). A raw trace, text\n"
		"or binary, holds addresses, not slots: pipe it through alloctap-munge first.\n"
		"\n"
		"  -s                 account slop: malloc_usable_size - requested, over live blocks\n"
		"  -c                 fill every new block with 0x55 (realloc: the grown part), so\n"
		"                     its pages are really touched\n"
		"  --allocator NAME   (or --allocator=NAME) re-execute with NAME preloaded:\n"
		"                     jemalloc, tcmalloc, mimalloc (Debian's libjemalloc.so.2,\n"
		"                     libtcmalloc_minimal.so.4, libmimalloc.so.2), glibc (no\n"
		"                     preload), or a library PATH;\n"
		"                     the replayer checks in /proc/self/maps that malloc really\n"
		"                     comes from it\n"
		"  --summary          print a summary on stderr at the end\n"
		"  -q                 errors only (no statistics lines)\n"
		"  -v                 more messages\n"
		"  -h, --help         this text\n"
		"  --version          the version, then exit\n"
		"\n"
		"Slots: #0 to #268435455 (2^28 slots); a higher slot number stops the replay.\n"
		"A result slot that still holds a pointer is overwritten and the old block leaked,\n"
		"as Firefox's replay does (counted as \"overwritten live slots\"). A free or realloc\n"
		"of an empty slot passes NULL.\n"
		"\n"
		"At each jemalloc_stats() line, one line on stderr:\n"
		"  stats line=L ops=N objects=N slots=N requested=B arena=B mmap=B in_use=B free=B\n"
		"        rss=B own=B [slop=B]\n"
		"  (event=N instead of line=L for a binary trace: the call's event number from 1)\n"
		"  ops: calls replayed so far (jemalloc_stats excluded); objects: live blocks;\n"
		"  slots: highest slot number used + 1; requested: live requested bytes; arena,\n"
		"  mmap, in_use, free: mallinfo2() arena, hblkhd, uordblks, fordblks (glibc's\n"
		"  malloc only); rss: Rss of /proc/self/smaps_rollup minus own, the resident bytes\n"
		"  of the replayer's slot array and input buffer; slop with -s. Sizes in bytes.\n"
		"\n"
		"--summary prints \"key: value\" lines: allocator (name and library, as found in\n"
		"/proc/self/maps), replayed pid, lines of other pids, operations, operations FUNC\n"
		"(one per function), failed allocations, overwritten live slots, wall time ns,\n"
		"ns per operation, peak rss bytes (VmHWM), peak live requested bytes, final live\n"
		"requested bytes, final live objects, final slop bytes (with -s).\n"
		"\n"
		"Exit status: 0 replayed, 1 input or data error (unreadable or malformed line,\n"
		"truncated or corrupt binary trace, raw trace, slot beyond the limit, missing\n"
		"allocator library), 2 usage error.\n";

	if (write(STDOUT_FILENO, text, sizeof(text) - 1) < 0)
		return;
}

static int usage_error(const char *what, const char *arg)
{
	at_error("%s '%s' (see --help)", what, arg);
	return -1;
}

/* Parses argv into o. Returns 0, 1 when --help was printed, or -1 on a usage error. */
static int parse_args(int argc, char **argv, struct options *o)
{
	enum { OPT_ALLOCATOR = 256, OPT_SUMMARY };
	static const struct option longopts[] = {
		{ "allocator", required_argument, NULL, OPT_ALLOCATOR },
		{ "summary", no_argument, NULL, OPT_SUMMARY },
		AT_CLI_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	char shortopt[3] = "-?";
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":scqvh", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			o->flags |= RP_SLOP;
			break;
		case 'c':
			o->flags |= RP_FILL;
			break;
		case OPT_ALLOCATOR:
			o->allocator = optarg;
			break;
		case OPT_SUMMARY:
			o->summary = 1;
			break;
		case ':':
			return usage_error("missing value after", argv[optind - 1]);
		default:
			switch (at_cli_option(c, usage)) {
			case AT_CLI_GO_ON:
				break;
			case AT_CLI_EXIT_OK:
				return 1;
			case AT_CLI_UNKNOWN:
				shortopt[1] = (char)optopt;
				return usage_error("unknown option",
						   optopt ? shortopt : argv[optind - 1]);
			}
		}
	}
	if (optind < argc)
		o->input = argv[optind];
	if (argc - optind > 1)
		return usage_error("more than one input file:", argv[optind + 1]);
	if (o->allocator) {
		const char *path;
		if (rp_allocator_library(o->allocator, &path) < 0)
			return usage_error("unknown allocator (jemalloc, tcmalloc, mimalloc, glibc or "
					   "a path):", o->allocator);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	struct at_source src;
	struct rp_engine e;
	struct rp_run run = { 0 };
	char allocator_path[PATH_MAX];
	int status = AT_EXIT_FAILURE, engine_ready = 0, source_ready = 0, fd = -1;

	at_program_name = "alloctap-replay";
	switch (parse_args(argc, argv, &o)) {
	case 1:
		return 0;
	case -1:
		return AT_EXIT_USAGE;
	}
	if (o.allocator && rp_allocator_select(o.allocator, argv) < 0)
		return AT_EXIT_FAILURE;
	rp_allocator_identify(&run.allocator, allocator_path, sizeof(allocator_path));
	run.allocator_path = allocator_path;
	at_verbose("malloc comes from %s (%s)", run.allocator, allocator_path);

	if (rp_open_input(&src, o.input, &fd) < 0)
		goto cleanup;
	source_ready = 1;
	at_verbose("%s: %s input", src.name, src.kind == AT_SOURCE_BINARY ? "binary" : "text");
	if (src.kind == AT_SOURCE_BINARY && src.munged == 0) {
		rp_report_raw_trace(&src);
		goto cleanup;
	}
	if (rp_engine_init(&e, RP_SLOT_LIMIT, o.flags) < 0) {
		at_error("cannot map the slot array: %s", strerror(errno));
		goto cleanup;
	}
	engine_ready = 1;

	uint64_t start = at_now_ns();
	if (rp_feed(&src, &e) < 0)
		goto cleanup;
	run.wall_ns = at_now_ns() - start;
	if (o.summary)
		rp_report_summary(&e, &run);
	status = 0;
cleanup:
	if (engine_ready)
		rp_engine_fini(&e);
	if (source_ready)
		at_source_close(&src);
	if (fd > 0)
		close(fd);
	return status;
}
