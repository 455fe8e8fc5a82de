/* alloctap-replay: replays a munged logalloc log against the allocator this process runs
 * with (LOGALLOC.md section 3), without allocating anything of its own while replaying. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "allocator.h"
#include "display.h"
#include "engine.h"
#include "linereader.h"
#include "report.h"
#include "text.h"

#define EXIT_DATA 1
#define EXIT_USAGE 2

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
		"\n"
		"Slots: #0 to #268435455 (2^28 slots); a higher slot number stops the replay.\n"
		"A result slot that still holds a pointer is overwritten and the old block leaked,\n"
		"as Firefox's replay does (counted as \"overwritten live slots\"). A free or realloc\n"
		"of an empty slot passes NULL.\n"
		"\n"
		"At each jemalloc_stats() line, one line on stderr:\n"
		"  stats line=L ops=N objects=N slots=N requested=B arena=B mmap=B in_use=B free=B\n"
		"        rss=B own=B [slop=B]\n"
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
		"Exit status: 0 replayed, 1 input or data error (unreadable or malformed line, slot\n"
		"beyond the limit, missing allocator library), 2 usage error.\n";

	if (write(STDOUT_FILENO, text, sizeof(text) - 1) < 0)
		return;
}

static int usage_error(const char *what, const char *arg)
{
	rp_error("%s '%s' (see --help)", what, arg);
	return -1;
}

/* Parses argv into o. Returns 0, 1 when --help was printed, or -1 on a usage error. */
static int parse_args(int argc, char **argv, struct options *o)
{
	int only_files = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (only_files || a[0] != '-' || strcmp(a, "-") == 0) {
			if (o->input)
				return usage_error("more than one input file:", a);
			o->input = a;
		} else if (strcmp(a, "--") == 0) {
			only_files = 1;
		} else if (strcmp(a, "--help") == 0) {
			usage();
			return 1;
		} else if (strcmp(a, "--summary") == 0) {
			o->summary = 1;
		} else if (strcmp(a, "--allocator") == 0) {
			if (++i == argc)
				return usage_error("missing value after", a);
			o->allocator = argv[i];
		} else if (strncmp(a, "--allocator=", 12) == 0) {
			o->allocator = a + 12;
		} else if (a[1] == '-') {
			return usage_error("unknown option", a);
		} else {
			for (const char *c = a + 1; *c; c++) {
				switch (*c) {
				case 's': o->flags |= RP_SLOP; break;
				case 'c': o->flags |= RP_FILL; break;
				case 'q': at_display_level = 1; break;
				case 'v': at_display_level++; break;
				case 'h': usage(); return 1;
				default: return usage_error("unknown option", a);
				}
			}
		}
	}
	if (o->allocator) {
		const char *path;
		if (rp_allocator_library(o->allocator, &path) < 0)
			return usage_error("unknown allocator (jemalloc, tcmalloc, mimalloc, glibc or "
					   "a path):", o->allocator);
	}
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int is_blank(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r' && p[i] != '\v' && p[i] != '\f')
			return 0;
	return 1;
}

/* Replays every line of r through e. Returns 0, or -1 after reporting FILE:LINE: reason. */
static int replay(struct at_linereader *r, struct rp_engine *e)
{
	const char *line, *why;
	size_t len;
	struct at_event ev;
	int got;

	while ((got = at_linereader_next(r, &line, &len)) > 0) {
		if (is_blank(line, len))
			continue;
		if (at_parse_munged(line, len, &ev, &why) < 0) {
			rp_error_at(r->name, r->lineno, "%s", why);
			return -1;
		}
		switch (rp_engine_step(e, &ev, &why)) {
		case RP_STEP_ERROR:
			if (e->has_bad_slot)
				rp_error_at(r->name, r->lineno,
					    "%s: #%" PRIu64 " (slots #0 to #%" PRIu64 ")", why,
					    e->bad_slot, e->slots.limit - 1);
			else
				rp_error_at(r->name, r->lineno, "%s", why);
			return -1;
		case RP_STEP_STATS:
			rp_report_stats(e, r->lineno, rp_resident_bytes(r->buf, r->cap));
			break;
		case RP_STEP_DONE:
		case RP_STEP_SKIPPED:
			break;
		}
	}
	if (got < 0) {
		rp_error_at(r->name, r->lineno + 1, "read error: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	struct at_linereader r = { 0 };
	struct rp_engine e;
	struct rp_run run = { 0 };
	char allocator_path[PATH_MAX];
	int status = EXIT_DATA, engine_ready = 0;

	at_program_name = "alloctap-replay";
	switch (parse_args(argc, argv, &o)) {
	case 1:
		return 0;
	case -1:
		return EXIT_USAGE;
	}
	if (o.allocator && rp_allocator_select(o.allocator, argv) < 0)
		return EXIT_DATA;
	rp_allocator_identify(&run.allocator, allocator_path, sizeof(allocator_path));
	run.allocator_path = allocator_path;
	rp_verbose("malloc comes from %s (%s)", run.allocator, allocator_path);

	if (at_linereader_open(&r, o.input) < 0) {
		rp_error("%s: %s", o.input ? o.input : "<stdin>", strerror(errno));
		goto cleanup;
	}
	if (rp_engine_init(&e, RP_SLOT_LIMIT, o.flags) < 0) {
		rp_error("cannot map the slot array: %s", strerror(errno));
		goto cleanup;
	}
	engine_ready = 1;

	uint64_t start = now_ns();
	if (replay(&r, &e) < 0)
		goto cleanup;
	run.wall_ns = now_ns() - start;
	if (o.summary)
		rp_report_summary(&e, &run);
	status = 0;
cleanup:
	if (engine_ready)
		rp_engine_fini(&e);
	at_linereader_close(&r);
	return status;
}
