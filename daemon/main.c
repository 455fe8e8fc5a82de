/* alloctapd: traces the malloc family of running processes with eBPF and writes logalloc raw
 * lines or an .atz trace, in causal order with every lost event counted. This file reads the
 * command line; daemon/session.c runs the trace. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "cli.h"
#include "display.h"
#include "formats.h"
#include "probe_site.h"
#include "session.h"
#include "watch.h"
#include "table_cache.h"

/* Longer durations are this long (about 31 million years): its milliseconds fit 64 bits. */
#define DURATION_MAX 1e15
#define DEFAULT_RINGBUF (64u << 20)
#define DEFAULT_NICE (-10) /* --nice */
#define DEFAULT_BLOCK_MAP (1u << 20)
#define SAMPLE_BYTES_MAX (1ull << 32)

static const char usage_text[] =
	"Usage: alloctapd [OPTIONS] --pid PID[,PID...]   attach to running processes\n"
	"       alloctapd [OPTIONS] --all                every process on the system\n"
	"       alloctapd [OPTIONS] -- COMMAND [ARG...]  start COMMAND, trace it and every process\n"
	"                                                it starts, each from its first allocation\n"
	"\n"
	"Writes one logalloc raw line per malloc-family call (malloc, calloc, realloc, free,\n"
	"memalign, posix_memalign, aligned_alloc, valloc; pvalloc(n) is written as\n"
	"valloc(n rounded up to the page size), reallocarray(p,n,m) as realloc(p,n*m) with n*m\n"
	"saturated to 18446744073709551615 when it overflows). glibc's aligned_alloc and memalign\n"
	"are one function: a program using glibc gets memalign lines for both; aligned_alloc\n"
	"lines come from allocators where it is a function of its own. The pid column tells the\n"
	"processes apart. Lines are in causal order; events that could not be recorded are\n"
	"counted in the summary on stderr.\n"
	"\n"
	"Options:\n"
	"  -o, --output DEST     a decimal number below 10000 is a file descriptor, '-' stdout,\n"
	"                        anything else a path opened for append (default: stdout)\n"
	"      --format FMT      text (logalloc raw lines, the default) or binary (an .atz\n"
	"                        trace: one lz4 frame, with lost-event and process records; a\n"
	"                        path is then truncated at start, not appended to); -f FMT, with\n"
	"                        FMT a word, is --format too\n"
	"  -p, --pid LIST        comma-separated pids to trace (each once); ends when they have\n"
	"                        all exited. The programs they execute are followed: an exec\n"
	"                        waits until its program is probed, nothing else stops\n"
	"  -f, --follow          with --pid, follow the processes they start from now on too\n"
	"                        (with a COMMAND this is the default)\n"
	"      --no-follow       with a COMMAND, trace the command's process alone (and the\n"
	"                        programs it executes)\n"
	"  -a, --all             trace every process using a C library (every process then pays\n"
	"                        the probe cost)\n"
	"      --shared-probes   when following, probe each allocator file once for every\n"
	"                        process that maps it, instead of each traced process for\n"
	"                        itself: a call then costs the same however many processes of\n"
	"                        the tree are alive (each probe of a process's own passes by\n"
	"                        every other's, some 15 ns a call for each one alive), but every\n"
	"                        other process on the host that maps the file takes the trap on\n"
	"                        each of its calls while the trace lasts\n"
	"  -l, --lib PATH        the object whose malloc family to probe (default: found per\n"
	"                        target as its dynamic loader finds malloc: the first of the\n"
	"                        executable, LD_PRELOAD, the libraries it links (breadth\n"
	"                        first) that defines it)\n"
	"  -d, --duration SECS   stop after this many seconds\n"
	"      --ringbuf-size N  ring bytes, all CPUs' rings together: a power of two\n"
	"                        >= 4096 (default 67108864: 64 bytes a record)\n"
	"      --nice N          the priority of the daemon's loop and writing thread, from -20\n"
	"                        to 19 (default -10): they must keep up with the traced\n"
	"                        threads, or the rings fill and events are lost. A command it\n"
	"                        launches runs at the daemon's own priority\n"
	"      --probe-at-entry  put every probe at its function's first instruction (by default\n"
	"                        a function's probes move to the first instruction the kernel\n"
	"                        emulates, so its trap needs no single step; -v prints the\n"
	"                        chosen sites)\n"
	"      --floor           attach the same probes at the same sites but record nothing:\n"
	"                        the cost of the traps alone (for benchmarks)\n"
	"      --discard         record every call into the rings as a trace does, and give\n"
	"                        the records back unread: the cost of the probes' programs and\n"
	"                        rings without the daemon's reading and writing (for\n"
	"                        benchmarks). Nothing is written; the summary counts the\n"
	"                        records discarded (events, realloc entries, thread ends)\n"
	"      --stacks          every allocation call carries the user call stack taken at its\n"
	"                        entry (up to 128 frames, unwound in BPF from the objects'\n"
	"                        .eh_frame; frees none). Binary output only. An object mapped\n"
	"                        later (dlopen) gets its table when a stack first meets it: that\n"
	"                        stack is marked incomplete, later ones are whole. In a\n"
	"                        CPython 3.11, 3.12 or 3.13 process, each Python call stands in\n"
	"                        the stack where the interpreter ran it, with its file and line\n"
	"                        (read from the process; older interpreters: native frames)\n"
	"      --no-python       with --stacks, native frames only, in Python processes too: no\n"
	"                        walk of the interpreter's frames (cheaper, for a question about\n"
	"                        the interpreter's own C code)\n"
	"      --watch           show the trace as it is taken: alloctap-report top --follow\n"
	"                        on the terminal (q ends the trace), the trace itself in a\n"
	"                        pipe to it, or kept in the -o path it follows; implies\n"
	"                        --format binary. The exit status is the daemon's, 0 when q\n"
	"                        ended it, or the view's when it failed\n"
	"      --cache-dir DIR   with --stacks, keep the unwind tables built in DIR, by build-id,\n"
	"                        for later runs (default $ALLOCTAP_CACHE_DIR, else\n"
	"                        " AT_TABLE_CACHE_DIR "; created 0700; refused when another\n"
	"                        user owns it or group or others may write it)\n"
	"      --cache-size N    the cache's files take at most N bytes (a K, M or G suffix\n"
	"                        multiplies by 1024 each; default 512M): the least recently\n"
	"                        used go first\n"
	"      --no-cache        with --stacks, build every table, reading and writing no cache\n"
	"      --min-size N      record only the allocations of at least N bytes (calloc's\n"
	"                        n*size; a realloc's new size), the releases of their blocks,\n"
	"                        and every realloc of one of their blocks, whatever its new\n"
	"                        size. Binary output only: the trace's header says min-size N\n"
	"      --sample-bytes N  record a sample of the allocations: a Poisson process over\n"
	"                        each thread's allocated bytes, one point per N bytes on\n"
	"                        average (N up to 4294967296), records each allocation a point\n"
	"                        falls in (one of s bytes with probability 1 - exp(-s/N)), with\n"
	"                        its stack under --stacks (no other call is walked), and the\n"
	"                        release and reallocs of its block; nothing else. Binary output\n"
	"                        only: the header says so, alloctap-report scales every figure\n"
	"                        to an estimate, alloctap-munge and alloctap-replay refuse it.\n"
	"                        With --min-size, allocations below it are never sampled\n"
	"      --block-map N     with --min-size or --sample-bytes: the recorded blocks alive\n"
	"                        that the BPF program follows, all processes together (default\n"
	"                        1048576; memory grows with those alive). A block past it is\n"
	"                        counted lost, its allocation not recorded\n"
	"  -v, --verbose         more messages (a progress line every 2 s); -vv adds libbpf's\n"
	"  -q, --quiet           fewer messages (errors only)\n"
	"  -h, --help            this text\n"
	"      --version         the version, then exit\n"
	"\n"
	"Following uses ptrace for process events only: a new process waits at its first\n"
	"instruction, and an exec at the new program, until its probes are in; signals and job\n"
	"control pass through. Each traced process has probes of its own, planted while it\n"
	"waits: no process outside the traced ones takes a trap, except with --all, and a child\n"
	"that --no-follow or --pid alone does not trace, made by fork without exec, which takes\n"
	"its parent's breakpoints with its memory (unrecorded, until the trace ends). A process\n"
	"that cannot be ptraced is followed through process events instead, late: the summary\n"
	"counts it.\n"
	"\n"
	"Signals: SIGINT/SIGTERM detach, drain, flush and exit 0; SIGHUP reopens the output path;\n"
	"SIGUSR1 writes a 'PID PID jemalloc_stats()' line for every traced process (and, in a\n"
	"binary trace, an RSS record of each). A binary trace records each process's resident\n"
	"set (/proc/PID/statm) every 100 ms from its first event, for alloctap-report.\n"
	"\n"
	"Exit status: 0 ok, 1 runtime error (BPF, attach, output), 2 usage error; with a COMMAND,\n"
	"the command's own status (128+N if killed by signal N), or 0 when SIGINT, SIGTERM or\n"
	"--duration ended the trace first (the command then goes on untraced). A trace of a\n"
	"COMMAND ends when it and every process followed from it have exited. When the reader of\n"
	"the output goes away (| head), the trace ends quietly, the probes detached as at any\n"
	"end, and alloctapd ends killed by SIGPIPE (141 in a shell), as cat does.\n"
	"Needs root, or CAP_BPF and CAP_PERFMON; with --pid or --all also CAP_SYS_PTRACE, to\n"
	"read other processes' memory maps.\n";

/* Adds the pids of a list to o, each once (a pid given twice would be probed twice and every
 * call recorded twice). */
static int parse_pids(const char *s, struct at_session_options *o)
{
	while (*s) {
		char *end;
		long v;
		int known = 0;

		errno = 0;
		v = strtol(s, &end, 10);
		if (errno || end == s || v <= 0 || v > 0x3fffffff || (*end && *end != ','))
			return -1;
		for (unsigned i = 0; i < o->npids; i++)
			known |= o->pids[i] == (pid_t)v;
		if (!known && o->npids == AT_MAX_TARGETS)
			return -1;
		if (!known)
			o->pids[o->npids++] = (pid_t)v;
		s = *end ? end + 1 : end;
	}
	return o->npids ? 0 : -1;
}

/* A --duration in seconds: a finite number above 0 (nan and inf are refused; ERANGE too,
 * except for overflow, which saturates like any value past DURATION_MAX). 0, or -1. */
static int parse_duration(const char *s, double *seconds)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(s, &end);
	if (end == s || *end || isnan(d) || isinf(d) || d <= 0 || (errno && d < 1))
		return -1;
	*seconds = d < DURATION_MAX ? d : DURATION_MAX;
	return 0;
}

/* A --cache-size: a number of bytes above 0, with an optional K, M or G suffix. 0, or -1. */
static int parse_size(const char *s, unsigned long long *bytes)
{
	char *end;
	unsigned shift = 0;

	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || s[0] == '-' || v == 0)
		return -1;
	if (*end && !end[1])
		shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 64;
	if ((*end && (end[1] || shift == 64)) || (shift && v > (~0ull >> shift)))
		return -1;
	*bytes = v << shift;
	return 0;
}

/* The cache options' checks, once the line is read: -1 to go on, else an exit status. */
static int check_cache(struct at_session_options *o, int cache_options, int no_cache)
{
	if (cache_options && !o->stacks)
		return at_usage_error("--cache-dir, --cache-size and --no-cache are for --stacks");
	if (no_cache && cache_options > 1)
		return at_usage_error("--no-cache reads and writes no cache: --cache-dir and "
				      "--cache-size do not apply");
	if (no_cache)
		o->cache_dir = NULL;
	else if (o->cache_dir && o->cache_dir[0] != '/')
		return at_usage_error("--cache-dir must be an absolute path, not '%s'",
				      o->cache_dir);
	return -1;
}

static void usage(void)
{
	fputs(usage_text, stdout);
}

/* A count for option name: a decimal number from 1 to max. 0, or the exit status of a usage
 * error. */
static int parse_count(const char *name, const char *s, uint64_t max, uint64_t *n)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v == 0 || v > max)
		return at_usage_error("%s must be a whole number from 1 to %llu, not '%s'", name,
				      (unsigned long long)max, s);
	*n = v;
	return 0;
}

/* --nice N: a priority from -20 to 19. 0, or the exit status of a usage error. */
static int parse_nice(const char *s, int *nice)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < -20 || v > 19)
		return at_usage_error("--nice must be a whole number from -20 to 19, not '%s'", s);
	*nice = (int)v;
	return 0;
}

/* The filter's options once all are read: binary output only. -1 to go on, else the exit
 * status of a usage error. */
static int check_filter(const struct at_session_options *o)
{
	if ((o->min_size || o->sample_bytes) && !at_format_records(o->format))
		return at_usage_error("%s needs --format binary: logalloc's text format has no "
				      "place to say that the trace holds a part of the calls",
				      o->min_size ? "--min-size" : "--sample-bytes");
	if ((o->min_size || o->sample_bytes) && o->floor)
		return at_usage_error("--floor records nothing: --min-size and --sample-bytes do "
				      "not apply");
	return -1;
}

/* --discard: the rings' records go unread, so nothing that reads them goes with it. -1 to go
 * on, else the exit status of a usage error. */
static int check_discard(const struct at_session_options *o)
{
	const char *other = o->floor ? "--floor" : o->stacks ? "--stacks" : o->watch ? "--watch"
			  : o->min_size ? "--min-size" : o->sample_bytes ? "--sample-bytes" : NULL;

	if (o->discard && other)
		return at_usage_error("--discard gives the records back unread: %s does not go "
				      "with it", other);
	return -1;
}

/* --format FMT. -1 to go on, else the exit status of a usage error. */
static int take_format(const char *fmt, struct at_session_options *o)
{
	enum at_format f;

	if (at_format_parse(fmt, &f) < 0)
		return at_usage_error("--format must be %s, not '%s'", at_format_list(), fmt);
	o->format = (enum at_sink_format)f;
	return -1;
}

/* -f: --format when a word follows (-f binary, as before --follow existed), else --follow.
 * optarg is the word getopt took; a word starting with '-' is given back. */
static int take_f(int argc, char **argv, struct at_session_options *o, int *follow)
{
	if (optarg && optarg[0] != '-' && optarg[0] != '\0')
		return take_format(optarg, o);
	if (optarg && optind > 1 && optind <= argc && argv[optind - 1] == optarg)
		optind--; /* "-f --pid 1": the option after -f is its own */
	*follow = 1;
	return -1;
}

/* --watch: a binary trace, into a pipe to the viewer or into the -o path it follows. -1 to go
 * on, else an exit status. */
static int watch_options(struct at_session_options *o, int format_given, int dest_given)
{
	if (format_given && !at_format_records(o->format))
		return at_usage_error("--watch shows a binary trace: --format %s does not go with it",
				      at_format_name((enum at_format)o->format));
	o->format = AT_SINK_ATZ;
	if (dest_given && !o->dest.path)
		return at_usage_error("--watch shows the trace on the terminal: -o takes a path then "
				      "(the trace is kept there and followed), not a descriptor");
	if (!dest_given)
		o->dest.fd = -1; /* a pipe, made by at_watch_split */
	return -1;
}

/* Parses the command line; returns -1 to go on, else an exit status. */
static int parse_options(int argc, char **argv, struct at_session_options *o)
{
	static const struct option longs[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'T' },
		{ "follow", no_argument, NULL, 'L' },
		{ "no-follow", no_argument, NULL, 'N' },
		{ "pid", required_argument, NULL, 'p' },
		{ "all", no_argument, NULL, 'a' },
		{ "lib", required_argument, NULL, 'l' },
		{ "duration", required_argument, NULL, 'd' },
		{ "ringbuf-size", required_argument, NULL, 'r' },
		{ "probe-at-entry", no_argument, NULL, 'E' },
		{ "floor", no_argument, NULL, 'F' },
		{ "discard", no_argument, NULL, 'X' },
		{ "stacks", no_argument, NULL, 'S' },
		{ "shared-probes", no_argument, NULL, 'P' },
		{ "watch", no_argument, NULL, 'W' },
		{ "cache-dir", required_argument, NULL, 'D' },
		{ "cache-size", required_argument, NULL, 'Z' },
		{ "no-cache", no_argument, NULL, 'C' },
		{ "min-size", required_argument, NULL, 'M' },
		{ "sample-bytes", required_argument, NULL, 'B' },
		{ "block-map", required_argument, NULL, 'K' },
		{ "nice", required_argument, NULL, 'I' },
		{ "no-python", no_argument, NULL, 'Y' },
		AT_CLI_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	int c, follow = 0, no_follow = 0, rc, format_given = 0, dest_given = 0;
	int cache_options = 0, no_cache = 0;
	uint64_t count;

	memset(o, 0, sizeof(*o));
	o->ringbuf_size = DEFAULT_RINGBUF;
	o->nice = DEFAULT_NICE;
	/* ALLOCTAP_CACHE_DIR: the tests' and benchmarks' own folder, never the machine's */
	o->cache_dir = getenv("ALLOCTAP_CACHE_DIR") ? getenv("ALLOCTAP_CACHE_DIR")
						     : AT_TABLE_CACHE_DIR;
	o->cache_size = AT_TABLE_CACHE_LIMIT;
	o->block_map = DEFAULT_BLOCK_MAP;
	const char *dest = "-";
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+o:f:p:al:d:vqh", longs, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'o':
			dest = optarg;
			dest_given = 1;
			break;
		case 'T':
			format_given = 1;
			if ((rc = take_format(optarg, o)) >= 0)
				return rc;
			break;
		case 'f':
			format_given |= optarg && optarg[0] != '-' && optarg[0] != '\0';
			if ((rc = take_f(argc, argv, o, &follow)) >= 0)
				return rc;
			break;
		case 'L':
			follow = 1;
			break;
		case 'N':
			no_follow = 1;
			break;
		case 'p':
			if (parse_pids(optarg, o) < 0)
				return at_usage_error("bad pid list '%s'", optarg);
			break;
		case 'a':
			o->all = 1;
			break;
		case 'l':
			o->lib = optarg;
			break;
		case 'd':
			if (parse_duration(optarg, &o->duration) < 0)
				return at_usage_error("bad duration '%s': a number of seconds above 0",
						      optarg);
			break;
		case 'r':
			errno = 0;
			o->ringbuf_size = strtoul(optarg, &end, 0);
			if (errno || *end || end == optarg || o->ringbuf_size < 4096 ||
			    (o->ringbuf_size & (o->ringbuf_size - 1)) || o->ringbuf_size > (1ul << 30))
				return at_usage_error("--ringbuf-size must be a power of two from 4096 "
						   "to 1073741824, not '%s'", optarg);
			break;
		case 'E':
			at_probe_placement = 0;
			break;
		case 'F':
			o->floor = 1;
			break;
		case 'X':
			o->discard = 1;
			break;
		case 'S':
			o->stacks = 1;
			break;
		case 'P':
			o->shared_probes = 1;
			break;
		case 'W':
			o->watch = 1;
			break;
		case 'D':
			o->cache_dir = optarg;
			cache_options += 2;
			break;
		case 'Z':
			if (parse_size(optarg, &o->cache_size) < 0)
				return at_usage_error("bad --cache-size '%s': a number of bytes above 0, "
						      "with K, M or G after it or not", optarg);
			cache_options += 2;
			break;
		case 'C':
			no_cache = 1;
			cache_options |= 1;
			break;
		case 'Y':
			o->no_python = 1;
			break;
		case 'M':
			if ((rc = parse_count("--min-size", optarg, UINT64_MAX, &o->min_size)))
				return rc;
			break;
		case 'B':
			if ((rc = parse_count("--sample-bytes", optarg, SAMPLE_BYTES_MAX,
					      &o->sample_bytes)))
				return rc;
			break;
		case 'K':
			if ((rc = parse_count("--block-map", optarg, 1u << 30, &count)))
				return rc;
			o->block_map = (uint32_t)count;
			break;
		case 'I':
			if ((rc = parse_nice(optarg, &o->nice)))
				return rc;
			o->nice_given = 1;
			break;
		default:
			if (c == '?' && optopt == 'f') { /* -f last on the line: --follow */
				follow = 1;
				break;
			}
			switch (at_cli_option(c, usage)) {
			case AT_CLI_GO_ON:
				break;
			case AT_CLI_EXIT_OK:
				return 0;
			case AT_CLI_UNKNOWN:
				return at_usage_error("unknown option '%s'", argv[optind - 1]);
			}
		}
	}
	if (optind < argc)
		o->command = argv + optind;
	int modes = (o->npids > 0) + o->all + (o->command != NULL);
	if (modes != 1)
		return at_usage_error(modes ? "give only one of --pid, --all and a COMMAND"
					 : "give --pid PID, --all or -- COMMAND");
	if (follow && no_follow)
		return at_usage_error("give only one of --follow and --no-follow");
	if ((follow || no_follow) && o->all)
		return at_usage_error("--all traces every process: --follow and --no-follow do not "
				      "apply");
	if (no_follow && o->npids)
		return at_usage_error("--no-follow is for a COMMAND: --pid follows only with "
				      "--follow");
	if (at_dest_parse(dest, &o->dest) < 0)
		return at_usage_error("empty output");
	if (o->watch && (rc = watch_options(o, format_given, dest_given)) >= 0)
		return rc;
	if (o->stacks && !at_format_records(o->format))
		return at_usage_error("--stacks needs --format binary: logalloc's text format has "
				      "no place for stacks");
	if ((rc = check_cache(o, cache_options, no_cache)) >= 0)
		return rc;
	if (o->no_python && !o->stacks)
		return at_usage_error("--no-python is for --stacks: without, no stack is taken");
	if ((rc = check_filter(o)) >= 0 || (rc = check_discard(o)) >= 0)
		return rc;
	o->follow = o->command ? !no_follow : follow;
	if (o->shared_probes && !o->follow)
		return at_usage_error("--shared-probes is for following a tree (a COMMAND, or --pid "
				      "with --follow)");
	return -1;
}

int main(int argc, char **argv)
{
	static struct at_session d;
	int status = 1;

	at_program_name = "alloctapd";
	int rc = parse_options(argc, argv, &d.opt);
	if (rc >= 0)
		return rc;
	/* before any descriptor of the daemon's own; --watch's pipe (no fd yet) is made next */
	if ((d.opt.dest.path || d.opt.dest.fd >= 0) && at_dest_check(&d.opt.dest) < 0)
		return 1;
	if (at_watch_split(&d.opt) < 0)
		return 1;
	if (at_session_open(&d) == 0 && at_session_attach(&d) == 0) {
		at_watch_ready();
		status = at_session_finish(&d, at_session_run(&d));
	}
	return at_exit_status(at_session_close(&d, status));
}
