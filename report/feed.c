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
	return at_source_empty_line(s);
}

/* "FILE:LINE: " for text, "FILE: event N: " for binary input, then the reason. */
static void report_at(const struct at_source *s, uint64_t events, const char *why)
{
	at_source_report_at(s, events, why);
}

/* The records the reader meets before an event, handed to the sites as they come; the
 * first failure is kept for the feed loop to report (the callbacks cannot stop the reader). */
struct records {
	struct rep_sites *x;
	struct at_source *s; /* for its header's start time, given to the symbolizer */
	char failed[160]; /* what the first failure was, "": none */
};

static void on_stack(void *arg, const struct at_stack *st)
{
	struct records *r = arg;

	if (!r->failed[0] && rep_sites_stack(r->x, st) < 0)
		snprintf(r->failed, sizeof(r->failed), "stack record %" PRIu32 ": %s", st->id,
			 errno == EINVAL ? "invalid (id, or frame count)" : strerror(errno));
}

static void on_mapping(void *arg, const struct at_mapping *m)
{
	struct records *r = arg;
	const struct at_atz_header *h = at_source_header(r->s);

	at_symbolizer_trace_start(r->x->symbolizer, h ? h->start_ns : 0);
	if (!r->failed[0] && rep_sites_mapping(r->x, m) < 0)
		snprintf(r->failed, sizeof(r->failed), "mapping record of process %" PRIu32 ": %s",
			 m->pid, errno == EINVAL ? "invalid (empty range)" : strerror(errno));
}

/* A NAMES record: the name of frames that are not native, for the symbolizer. */
static void on_names(void *arg, const struct at_frame_name *n)
{
	struct records *r = arg;

	if (!r->failed[0] && at_symbolizer_add_name(r->x->symbolizer, n) < 0)
		snprintf(r->failed, sizeof(r->failed), "names record of process %" PRIu32 ": %s",
			 n->pid, errno == EINVAL ? "invalid (kind)" : strerror(errno));
}

static int export_event(void *arg, const struct at_event *ev)
{
	return rep_export_event(arg, ev, ev->stack);
}

int rep_feed(struct at_source *s, struct rep_sites *x, struct rep_damage *d)
{
	return rep_feed_events(s, x, export_event, x, d);
}

/* The malformed lines reported one by one; those after are only counted. */
#define LINES_SAID 10

/* The reader's error after events events: 1 to go on (an empty or, without d->strict, a
 * malformed line, skipped), 0 to end the feed there as at the end of the input (damage, said
 * and noted in d), -1 to fail (reported). */
static int take_damage(struct at_source *s, uint64_t events, struct rep_damage *d)
{
	if (is_empty_line(s))
		return 1;
	if (at_source_is_lines(s) && !s->fatal) {
		if (d->strict) {
			at_source_report(s);
			return -1;
		}
		if (++d->skipped_lines <= LINES_SAID)
			at_error_at(s->name, s->lineno, "%s; line skipped", s->why);
		return 1;
	}
	if (at_source_is_lines(s)) {
		at_error_at(s->name, s->lineno + 1, "read error: %s%s", s->why,
			    d->strict ? "" : "; the report covers the lines before it");
		d->stopped = !d->strict;
		return d->strict ? -1 : 0;
	}
	if (d->strict || !at_source_readable_damage(s)) {
		at_source_report(s);
		return -1;
	}
	at_error("%s; the report covers the %" PRIu64 " events before it",
		 at_source_message(s), events);
	d->stopped = 1;
	return 0;
}

int rep_feed_events(struct at_source *s, struct rep_sites *x, rep_event_fn fn, void *arg,
		    struct rep_damage *d)
{
	struct at_progress progress;
	struct at_event ev;
	uint64_t events = 0;
	struct records records = { .x = x, .s = s };
	int got, rc = 0;

	at_source_on_stack(s, on_stack, &records);
	at_source_on_mapping(s, on_mapping, &records);
	at_source_on_names(s, on_names, &records);
	at_progress_start(&progress, s->name, at_source_units(s));
	while ((got = at_source_next(s, &ev)) != 0) {
		at_progress_tick(&progress, events);
		if (got < 0) {
			int go_on = take_damage(s, events, d);
			if (go_on > 0)
				continue;
			rc = go_on;
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

			if (errno == ECANCELED) { /* refused by the watcher, which said why */
				rc = -1;
				break;
			}
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
	if (rc == 0 && d->skipped_lines)
		at_error("%s: %" PRIu64 " malformed line%s skipped; the report covers the others",
			 s->name, d->skipped_lines, d->skipped_lines == 1 ? "" : "s");
	at_progress_end(&progress);
	return rc;
}
