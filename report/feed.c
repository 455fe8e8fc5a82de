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

/* The stack id an event refers to (0: none). */
static uint32_t stack_of(const struct at_event *ev)
{
	(void)ev;
	return 0;
}

int rep_feed(struct at_source *s, struct rep_export *x)
{
	struct at_progress progress;
	struct at_event ev;
	uint64_t events = 0;
	int got, rc = 0;

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
		uint32_t stack = stack_of(&ev);
		if (rep_export_event(x, &ev, stack) < 0) {
			char why[96];

			if (errno == ENOENT)
				snprintf(why, sizeof(why), "stack %" PRIu32 " was never defined", stack);
			else
				snprintf(why, sizeof(why), "%s", strerror(errno));
			report_at(s, events, why);
			rc = -1;
			break;
		}
	}
	at_progress_end(&progress);
	return rc;
}
