/* feed.c: the events of a munged source, text or binary, into the replay engine, with every
 * error reported at its place. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "display.h"
#include "feed.h"
#include "procinfo.h"
#include "progress.h"
#include "report.h"

/* Where an event sits in the input, for messages: its line in a text log, its number
 * (from 1) in a binary one (the source's reader says which). */
struct position {
	const char *unit; /* "line" or "event" */
	uint64_t n;
};

static struct position position_of(const struct at_source *s, uint64_t events)
{
	return (struct position){ at_source_unit(s), at_source_place(s, events) };
}

/* "FILE:LINE: " for text, "FILE: event N: " for binary input, then the reason. */
static void report_at(const struct at_source *s, uint64_t events, const char *why)
{
	at_source_report_at(s, events, why);
}

/* A raw trace holds addresses, not slots: it must go through alloctap-munge first. */
void rp_report_raw_trace(const struct at_source *s)
{
	if (s->fd == 0)
		at_error("%s: this is a raw trace; munge it first: ... | alloctap-munge | "
			 "alloctap-replay", s->name);
	else
		at_error("%s: this is a raw trace; munge it first: alloctap-munge %s | "
			 "alloctap-replay", s->name, s->name);
}

/* lib/source reports an empty (or all-blank) text line as an error on that line; the
 * replayer skips such lines. */
static int is_empty_line(const struct at_source *s)
{
	return at_source_empty_line(s);
}

/* Reports why at_source_next failed: a read error as FILE:LINE with the line being read, a
 * bad text line as FILE:LINE: reason, a binary input with the reader's message (truncation,
 * corrupt block with its offset, newer version). */
static void report_input_error(const struct at_source *s)
{
	if (at_source_is_lines(s) && s->munged == 0)
		rp_report_raw_trace(s);
	else if (at_source_is_lines(s) && s->fatal)
		at_error_at(s->name, s->lineno + 1, "read error: %s", s->why);
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
	if (at_source_is_lines(s))
		return rp_resident_bytes(s->lines.buf, s->lines.cap);
	return 0;
}

/* Reports a slot error of the engine, or why, at the event's place. */
static void report_step_error(const struct at_source *s, const struct rp_engine *e,
			      uint64_t events, const char *why)
{
	char msg[160];

	if (!e->has_bad_slot) {
		report_at(s, events, why);
		return;
	}
	snprintf(msg, sizeof(msg), "%s: #%" PRIu64 " (slots #0 to #%" PRIu64 ")", why, e->bad_slot,
		 e->slots.limit - 1);
	report_at(s, events, msg);
}

/* Replays every event of s through e, or, with ol, loads them into ol. Returns 0, or -1 after
 * reporting the error with its place (FILE:LINE for text, FILE: event N or the reader's
 * message for binary input). */
static int feed(struct at_source *s, struct rp_engine *e, struct rp_oplist *ol,
		struct at_progress *progress)
{
	struct at_event ev;
	const char *why;
	uint64_t events = 0;
	int got;

	while ((got = at_source_next(s, &ev)) != 0) {
		at_progress_tick(progress, events);
		if (got < 0) {
			if (is_empty_line(s))
				continue;
			report_input_error(s);
			return -1;
		}
		events++;
		if (s->munged == 0) {
			rp_report_raw_trace(s);
			return -1;
		}
		if ((why = undecided_pointer(s, &ev))) {
			report_at(s, events, why);
			return -1;
		}
		switch (rp_engine_admit(e, &ev, &why)) {
		case RP_STEP_ERROR:
			report_step_error(s, e, events, why);
			return -1;
		case RP_STEP_SKIPPED:
			continue;
		default:
			break;
		}
		struct position at = position_of(s, events);
		if (ol) {
			if (rp_oplist_add(ol, &ev, at.n) < 0) {
				report_at(s, events, errno == EMLINK ? "more threads than a threaded "
						     "replay runs (1024)" : strerror(errno));
				return -1;
			}
		} else if (rp_engine_call(e, &ev) == RP_STEP_STATS) {
			rp_report_stats_at(e, at.unit, at.n, input_resident(s));
		}
	}
	return 0;
}

int rp_feed(struct at_source *s, struct rp_engine *e, struct rp_oplist *ol)
{
	struct at_progress progress;

	at_progress_start(&progress, s->name, at_source_units(s));
	int rc = feed(s, e, ol, &progress);
	at_progress_end(&progress);
	return rc;
}

/* Opens the input and sniffs its format (text or .atz). The fd is the caller's to close.
 * Returns 0, or -1 after reporting: "FILE: reason" when it cannot be opened, "FILE:1: read
 * error: reason" when its first bytes cannot be read (a directory). */
int rp_open_input(struct at_source *s, const char *path, int *fd)
{
	const char *name;

	*fd = at_input_fd(path, &name);
	if (*fd < 0) {
		at_error("%s: %s", path, strerror(errno));
		return -1;
	}
	if (at_source_open_fd(s, *fd, name) < 0) {
		at_error_at(name, 1, "read error: %s", strerror(errno));
		return -1;
	}
	return 0;
}
