/* feed.c: the records of a source into the folded export, every error reported at its place. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "display.h"
#include "feed.h"
#include "linereader.h"
#include "progress.h"

int rep_open_input(struct at_source *s, const char *path, int *fd)
{
	const char *name;

	*fd = at_input_fd(path, &name);
	if (*fd < 0) {
		at_error("%s: %s", path ? path : "<stdin>", strerror(errno));
		return -1;
	}
	if (at_source_open_fd(s, *fd, name) < 0) {
		at_error_at(name, 1, "read error: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* lib/source reports an empty (or all-blank) text line as an error on that line. */
static int is_empty_line(const struct at_source *s)
{
	return s->kind == AT_SOURCE_TEXT && !s->fatal && s->why && strcmp(s->why, "empty line") == 0;
}

/* "FILE:LINE: " for text, "FILE: event N: " for binary input, then the reason. */
static void report_at(const struct at_source *s, uint64_t events, const char *why)
{
	if (s->kind == AT_SOURCE_BINARY)
		at_error("%s: event %" PRIu64 ": %s", s->name, events, why);
	else
		at_error_at(s->name, s->lineno, "%s", why);
}

/* The records the reader meets before an event, handed to the export as they come; the
 * first failure is kept for the feed loop to report (the callbacks cannot stop the reader). */
struct records {
	struct rep_export *x;
	struct at_source *s; /* for its header's start time, given to the symbolizer */
	char failed[160]; /* what the first failure was, "": none */
};

static void on_stack(void *arg, const struct at_stack *st)
{
	struct records *r = arg;

	if (!r->failed[0] && rep_export_stack(r->x, st) < 0)
		snprintf(r->failed, sizeof(r->failed), "stack record %" PRIu32 ": %s", st->id,
			 errno == EINVAL ? "invalid (id, or frame count)" : strerror(errno));
}

static void on_mapping(void *arg, const struct at_mapping *m)
{
	struct records *r = arg;
	const struct at_atz_header *h = r->s->atz ? at_atz_reader_header(r->s->atz) : NULL;

	at_symbolizer_trace_start(r->x->symbolizer, h ? h->start_ns : 0);
	if (!r->failed[0] && rep_export_mapping(r->x, m) < 0)
		snprintf(r->failed, sizeof(r->failed), "mapping record of process %" PRIu32 ": %s",
			 m->pid, errno == EINVAL ? "invalid (empty range)" : strerror(errno));
}

static int export_event(void *arg, const struct at_event *ev)
{
	return rep_export_event(arg, ev, ev->stack);
}

int rep_feed(struct at_source *s, struct rep_export *x)
{
	return rep_feed_events(s, x, export_event, x);
}

int rep_feed_events(struct at_source *s, struct rep_export *x, rep_event_fn fn, void *arg)
{
	struct at_progress progress;
	struct at_event ev;
	uint64_t events = 0;
	struct records records = { .x = x, .s = s };
	int got, rc = 0;

	at_source_on_stack(s, on_stack, &records);
	at_source_on_mapping(s, on_mapping, &records);
	at_progress_start(&progress, s->name, s->kind == AT_SOURCE_BINARY ? "events" : "lines");
	while ((got = at_source_next(s, &ev)) != 0) {
		at_progress_tick(&progress, events);
		if (got < 0) {
			if (is_empty_line(s))
				continue;
			if (s->kind == AT_SOURCE_TEXT && s->fatal)
				at_error_at(s->name, s->lineno + 1, "read error: %s", s->why);
			else
				at_source_report(s);
			rc = -1;
			break;
		}
		events++;
		if (records.failed[0]) {
			report_at(s, events, records.failed);
			rc = -1;
			break;
		}
		if (fn(arg, &ev) < 0) {
			char why[96];

			if (errno == ENOENT)
				snprintf(why, sizeof(why), "stack %" PRIu32 " was never defined",
					 ev.stack);
			else
				snprintf(why, sizeof(why), "%s", strerror(errno));
			report_at(s, events, why);
			rc = -1;
			break;
		}
	}
	if (rc == 0 && records.failed[0]) { /* records after the last event */
		at_error("%s: %s", s->name, records.failed);
		rc = -1;
	}
	at_progress_end(&progress);
	return rc;
}
