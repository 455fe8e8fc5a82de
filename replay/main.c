/* alloctap-replay: replays a munged logalloc log, text or binary (.atz), against the allocator
 * this process runs with (doc/LOGALLOC.md, section 3), without allocating anything of its own while
 * replaying. The input goes through lib/source, which tells the formats apart. */
#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allocator.h"
#include "cli.h"
#include "compare.h"
#include "display.h"
#include "prim.h"
#include "emit.h"
#include "engine.h"
#include "feed.h"
#include "latency.h"
#include "loaded.h"
#include "oplist.h"
#include "report.h"
#include "slots.h"
#include "source.h"
#include "threads.h"

struct options {
	const char *input;     /* NULL or "-" for stdin */
	const char *allocator; /* --allocator, or NULL */
	unsigned flags;        /* enum rp_flags */
	int summary;
	int threads;           /* --threads */
	int load;              /* --load (also implied by --threads and --emit) */
	const char *emit;      /* --emit FILE, or NULL */
	int latency;           /* --latency: 1, --latency=size: 2 */
	char *compare;         /* --compare LIST, or NULL */
	int repeat;            /* --repeat N: runs of each allocator; 0: not given */
};

static void usage(void)
{
	static const char text[] =
		"Usage: alloctap-replay [FILE|-] [-s] [-c] [--allocator NAME|PATH] [--summary]\n"
		"                       [--threads] [--load] [--emit OUT] [--latency[=size]] [-q|-v]\n"
		"       alloctap-replay --compare NAME,... [--repeat N] [-s] [-c] [--threads] [--load]\n"
		"                       [--latency[=size]] FILE\n"
		"Replays a munged logalloc log (alloctap-munge's output; stdin when FILE is - or\n"
		"absent) against an allocator. Only the lines of the first line's process are\n"
		"replayed, in file order, in one thread (see --threads). Empty lines are skipped, CRLF and a\n"
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
		"  --threads          replay each recorded thread on a thread of its own; a call\n"
		"                     waits only for the calls it depends on (its thread's previous\n"
		"                     call, the allocation of the slot it frees or reallocs, the free\n"
		"                     that emptied the slot its result goes into), so a block freed\n"
		"                     by another thread is freed by that thread's replay; the trace\n"
		"                     is loaded first and the time is the replay's alone; --summary\n"
		"                     adds the threads' waits (count and ns, total and per thread)\n"
		"  --load             read the whole trace into memory first (48 bytes a call),\n"
		"                     then replay it: the time is the calls' alone, not the reading\n"
		"                     (--threads and --emit load too)\n"
		"  --emit OUT         after the replay, write it to OUT (- for stdout) as a raw log\n"
		"                     with the pointers the allocator returned, the munged pid and\n"
		"                     tid numbers, in the log's order: munging OUT gives back FILE\n"
		"  --latency[=size]   time every call (CLOCK_MONOTONIC through the vDSO, read around\n"
		"                     the call; its cost per read is printed, not subtracted) and print\n"
		"                     per function (=size: and per log2 size class) count, mean, p50,\n"
		"                     p90, p99, p99.9 and max ns on stderr (histogram buckets with -v;\n"
		"                     16 buckets per power of two: within 1/16)\n"
		"  --compare LIST     replay FILE against each allocator of LIST (names or paths, as\n"
		"                     --allocator takes), each in a process of its own, and print one\n"
		"                     table on stdout with a column per allocator\n"
		"  --repeat N         with --compare: replay against each allocator N times (1 to\n"
		"                     100, default 5), interleaved (run 1 of each, then run 2...);\n"
		"                     the table gives a row \"runs\", each figure's median and, after\n"
		"                     each measured one (times, RSS, waits, latencies), its min-max.\n"
		"                     One run's time says little: runs of one trace differ by several\n"
		"                     times; the median of 5 holds whatever two of them do\n"
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
		"allocator library, failed write), 2 usage error. When the reader of stdout goes\n"
		"away (| head), it stops quietly and ends killed by SIGPIPE (141 in a shell), as\n"
		"cat does.\n";

	if (write(STDOUT_FILENO, text, sizeof(text) - 1) < 0)
		return;
}

static int usage_error(const char *what, const char *arg)
{
	at_error("%s '%s' (see --help)", what, arg);
	return -1;
}

/* --repeat N: 1 to RP_REPEAT_MAX into *n. 0, or -1. */
static int parse_repeat(const char *arg, int *n)
{
	char *end;

	errno = 0;
	long v = strtol(arg, &end, 10);
	if (end == arg || *end || errno || v < 1 || v > RP_REPEAT_MAX || arg[0] < '0' ||
	    arg[0] > '9')
		return -1;
	*n = (int)v;
	return 0;
}

/* Parses argv into o. Returns 0, 1 when --help was printed, or -1 on a usage error. */
static int parse_args(int argc, char **argv, struct options *o)
{
	enum { OPT_ALLOCATOR = 256, OPT_SUMMARY, OPT_THREADS, OPT_LOAD, OPT_EMIT, OPT_LATENCY,
	       OPT_COMPARE, OPT_REPEAT };
	static const struct option longopts[] = {
		{ "allocator", required_argument, NULL, OPT_ALLOCATOR },
		{ "summary", no_argument, NULL, OPT_SUMMARY },
		{ "threads", no_argument, NULL, OPT_THREADS },
		{ "load", no_argument, NULL, OPT_LOAD },
		{ "emit", required_argument, NULL, OPT_EMIT },
		{ "latency", optional_argument, NULL, OPT_LATENCY },
		{ "compare", required_argument, NULL, OPT_COMPARE },
		{ "repeat", required_argument, NULL, OPT_REPEAT },
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
		case OPT_THREADS:
			o->threads = 1;
			break;
		case OPT_LOAD:
			o->load = 1;
			break;
		case OPT_EMIT:
			o->emit = optarg;
			break;
		case OPT_LATENCY:
			if (optarg && strcmp(optarg, "size") != 0)
				return usage_error("--latency takes nothing or =size, not", optarg);
			o->latency = optarg ? 2 : 1;
			break;
		case OPT_COMPARE:
			o->compare = optarg;
			break;
		case OPT_REPEAT:
			if (parse_repeat(optarg, &o->repeat) < 0)
				return usage_error("--repeat takes a count of runs from 1 to 100, not",
						   optarg);
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
	if (o->repeat && !o->compare)
		return usage_error("--repeat goes with --compare, not without:", "--repeat");
	if (o->compare && (o->allocator || o->emit))
		return usage_error("--compare chooses the allocators itself; it does not go with",
				   o->allocator ? "--allocator" : "--emit");
	if (o->compare && (!o->input || strcmp(o->input, "-") == 0))
		return usage_error("--compare replays the input once per allocator: it needs a FILE, "
				   "not", "stdin");
	if (o->allocator) {
		const char *path;
		if (rp_allocator_library(o->allocator, &path) < 0)
			return usage_error("unknown allocator (jemalloc, tcmalloc, mimalloc, glibc or "
					   "a path):", o->allocator);
	}
	return 0;
}

/* --compare: the list checked, the options passed on to each replay. */
static int compare(struct options *o)
{
	const char *names[RP_COMPARE_MAX], *bad, *pass[8];
	int n = rp_compare_parse(o->compare, names, &bad), k = 0;

	if (n < 0) {
		usage_error("--compare: not an allocator (jemalloc, tcmalloc, mimalloc, glibc or a "
			    "path), or more than 16:", bad);
		return AT_EXIT_USAGE;
	}
	if (o->flags & RP_SLOP)
		pass[k++] = "-s";
	if (o->flags & RP_FILL)
		pass[k++] = "-c";
	if (o->threads)
		pass[k++] = "--threads";
	if (o->load)
		pass[k++] = "--load";
	if (o->latency)
		pass[k++] = o->latency == 2 ? "--latency=size" : "--latency";
	pass[k] = NULL;
	return rp_compare_run(names, n, o->repeat ? o->repeat : RP_REPEAT_DEFAULT, o->input, pass);
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	struct at_source src;
	struct rp_engine e;
	struct rp_latency latency = { 0 };
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
	signal(SIGPIPE, SIG_IGN); /* a closed pipe becomes EPIPE: at_write_error, at_exit_status */
	if (o.compare)
		return at_exit_status(compare(&o));
	if (o.allocator && rp_allocator_select(o.allocator, argv) < 0)
		return AT_EXIT_FAILURE;
	rp_allocator_identify(&run.allocator, allocator_path, sizeof(allocator_path));
	run.allocator_path = allocator_path;
	at_verbose("malloc comes from %s (%s)", run.allocator, allocator_path);

	if (rp_open_input(&src, o.input, &fd) < 0)
		goto cleanup;
	source_ready = 1;
	at_verbose("%s: %s input", src.name, at_format_name(src.kind));
	if (at_source_refuse_filtered(&src, "replaying") < 0)
		goto cleanup;
	if (!at_source_is_lines(&src) && src.munged == 0) {
		rp_report_raw_trace(&src);
		goto cleanup;
	}
	if (rp_engine_init(&e, RP_SLOT_LIMIT, o.flags) < 0) {
		at_error("cannot map the slot array: %s", strerror(errno));
		goto cleanup;
	}
	engine_ready = 1;
	if (o.latency) {
		if (rp_latency_init(&latency, o.latency == 2) < 0) {
			at_error("cannot map the latency histograms: %s", strerror(errno));
			goto cleanup;
		}
		e.latency = &latency;
	}

	if (o.threads || o.emit || o.load) {
		struct rp_loaded_options lo = { o.threads, o.summary, o.emit };
		if (rp_replay_loaded(&src, &e, &lo, &run) < 0)
			goto cleanup;
	} else {
		uint64_t start = at_now_ns();
		if (rp_feed(&src, &e, NULL) < 0)
			goto cleanup;
		run.wall_ns = at_now_ns() - start;
		if (o.summary)
			rp_report_summary(&e, &run);
	}
	if (o.latency)
		rp_latency_report(&latency);
	status = 0;
cleanup:
	if (latency.cell)
		rp_latency_fini(&latency);
	if (engine_ready)
		rp_engine_fini(&e);
	if (source_ready)
		at_source_close(&src);
	if (fd > 0)
		close(fd);
	return at_exit_status(status);
}
