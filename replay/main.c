/* alloctap-replay: replays a munged logalloc log, text or binary (.atz), against the allocator
 * this process runs with (LOGALLOC.md section 3), without allocating anything of its own while
 * replaying. The input goes through lib/source, which tells the formats apart. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "allocator.h"
#include "display.h"
#include "engine.h"
#include "report.h"
#include "slots.h"
#include "source.h"

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

/* Where an event sits in the input, for messages: its line in a text log, its number
 * (from 1) in a binary one. */
struct position {
	const char *unit; /* "line" or "event" */
	uint64_t n;
};

static struct position position_of(const struct at_source *s, uint64_t events)
{
	if (s->kind == AT_SOURCE_BINARY)
		return (struct position){ "event", events };
	return (struct position){ "line", s->lineno };
}

/* "FILE:LINE: " for text, "FILE: event N: " for binary input, then the reason. */
static void report_at(const struct at_source *s, uint64_t events, const char *why)
{
	struct position at = position_of(s, events);

	if (s->kind == AT_SOURCE_BINARY)
		rp_error("%s: event %" PRIu64 ": %s", s->name, at.n, why);
	else
		rp_error_at(s->name, at.n, "%s", why);
}

/* A raw trace holds addresses, not slots: it must go through alloctap-munge first. */
static void report_raw_trace(const struct at_source *s)
{
	if (s->fd == 0)
		rp_error("%s: this is a raw trace; munge it first: ... | alloctap-munge | "
			 "alloctap-replay", s->name);
	else
		rp_error("%s: this is a raw trace; munge it first: alloctap-munge %s | "
			 "alloctap-replay", s->name, s->name);
}

/* lib/source reports an empty (or all-blank) text line as an error on that line; the
 * replayer skips such lines. */
static int is_empty_line(const struct at_source *s)
{
	return s->kind == AT_SOURCE_TEXT && !s->fatal && s->why && strcmp(s->why, "empty line") == 0;
}

/* Reports why at_source_next failed: a read error as FILE:LINE with the line being read, a
 * bad text line as FILE:LINE: reason, a binary input with the reader's message (truncation,
 * corrupt block with its offset, newer version). */
static void report_input_error(const struct at_source *s)
{
	if (s->kind == AT_SOURCE_TEXT && s->munged == 0)
		report_raw_trace(s);
	else if (s->kind == AT_SOURCE_TEXT && s->fatal)
		rp_error_at(s->name, s->lineno + 1, "read error: %s", s->why);
	else
		at_source_report(s);
}

/* A text line before the first one with '#N' or '0x' is read as raw (lib/source); an event
 * from such a line that has a pointer field is neither munged nor raw. Returns the munged
 * parser's reason for it, or NULL when the event reads the same either way. */
static const char *undecided_pointer(const struct at_source *s, const struct at_event *ev)
{
	if (s->munged != -1)
		return NULL;
	if (at_func_takes_pointer(ev->func))
		return "expected a slot (#N) as the pointer argument";
	if (ev->has_result)
		return "expected '=#N' after ')'";
	return NULL;
}

/* Resident bytes of the replayer's input buffer (the text line buffer; the binary reader's
 * buffers are internal to lib/atz_read.c and not counted). */
static uint64_t input_resident(const struct at_source *s)
{
	if (s->kind == AT_SOURCE_TEXT)
		return rp_resident_bytes(s->lines.buf, s->lines.cap);
	return 0;
}

/* Replays every event of s through e. Returns 0, or -1 after reporting the error with its
 * place (FILE:LINE for text, FILE: event N or the reader's message for binary input). */
static int replay(struct at_source *s, struct rp_engine *e)
{
	struct at_event ev;
	const char *why;
	uint64_t events = 0;
	int got;

	while ((got = at_source_next(s, &ev)) != 0) {
		if (got < 0) {
			if (is_empty_line(s))
				continue;
			report_input_error(s);
			return -1;
		}
		events++;
		if (s->munged == 0) {
			report_raw_trace(s);
			return -1;
		}
		if ((why = undecided_pointer(s, &ev))) {
			report_at(s, events, why);
			return -1;
		}
		switch (rp_engine_step(e, &ev, &why)) {
		case RP_STEP_ERROR:
			if (e->has_bad_slot) {
				char msg[160];
				snprintf(msg, sizeof(msg), "%s: #%" PRIu64 " (slots #0 to #%" PRIu64 ")",
					 why, e->bad_slot, e->slots.limit - 1);
				report_at(s, events, msg);
			} else {
				report_at(s, events, why);
			}
			return -1;
		case RP_STEP_STATS: {
			struct position at = position_of(s, events);
			rp_report_stats_at(e, at.unit, at.n, input_resident(s));
			break;
		}
		case RP_STEP_DONE:
		case RP_STEP_SKIPPED:
			break;
		}
	}
	return 0;
}

/* Opens the input and sniffs its format (text or .atz). The fd is the caller's to close.
 * Returns 0, or -1 after reporting: "FILE: reason" when it cannot be opened, "FILE:1: read
 * error: reason" when its first bytes cannot be read (a directory). */
static int open_input(struct at_source *s, const char *path, int *fd)
{
	const char *name;

	*fd = at_input_fd(path, &name);
	if (*fd < 0) {
		rp_error("%s: %s", path, strerror(errno));
		return -1;
	}
	if (at_source_open_fd(s, *fd, name) < 0) {
		rp_error_at(name, 1, "read error: %s", strerror(errno));
		return -1;
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
	int status = EXIT_DATA, engine_ready = 0, source_ready = 0, fd = -1;

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

	if (open_input(&src, o.input, &fd) < 0)
		goto cleanup;
	source_ready = 1;
	rp_verbose("%s: %s input", src.name, src.kind == AT_SOURCE_BINARY ? "binary" : "text");
	if (src.kind == AT_SOURCE_BINARY && src.munged == 0) {
		report_raw_trace(&src);
		goto cleanup;
	}
	if (rp_engine_init(&e, RP_SLOT_LIMIT, o.flags) < 0) {
		rp_error("cannot map the slot array: %s", strerror(errno));
		goto cleanup;
	}
	engine_ready = 1;

	uint64_t start = now_ns();
	if (replay(&src, &e) < 0)
		goto cleanup;
	run.wall_ns = now_ns() - start;
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
