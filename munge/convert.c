/* convert.c: the event path of alloctap-munge: events munged or kept, to text or .atz. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "atz_relay.h"
#include "convert.h"
#include "display.h"
#include "progress.h"
#include "text.h"

/* One run over the events of a source, munged (m) or kept as they are (m == NULL). */
struct event_run {
	const struct at_convert_options *opt;
	struct at_source *src;
	struct at_munge *m;           /* NULL with --keep-pointers */
	struct at_sink *sink;
	int started;                  /* the sink is started (a binary one at the first event it
				       * needs) */
	int munged_out;               /* the output holds slots (#N), not addresses */
	struct at_event *pending;     /* kept events, text in, binary out: events read before
				       * the text showed whether it is raw or munged */
	size_t npending, pending_cap;
	struct at_munge_counts c;
	uint64_t lost;                /* events the recorder lost, not yet carried to the output */
	uint64_t lost_seen;           /* lost events announced before events so far */
	struct at_stack_relay relay;  /* a 2.x input's stack and mapping records, passed on */
};

/* Where the last event came from, for messages: "FILE:LINE" (text) or "FILE: event N". */
static void event_position(const struct event_run *r, char *buf, size_t size)
{
	if (r->src->kind == AT_SOURCE_TEXT)
		snprintf(buf, size, "%s:%llu", r->src->name, (unsigned long long)r->src->lineno);
	else
		snprintf(buf, size, "%s: event %llu", r->src->name, (unsigned long long)r->c.read);
}

/* Starts the sink as an .atz trace: munged or raw as decided, header from a binary input. */
static int start_atz(struct event_run *r)
{
	const struct at_atz_header *h =
		r->src->kind == AT_SOURCE_BINARY ? at_atz_reader_header(r->src->atz) : NULL;
	/* munge runs offline: LZ4HC level 9. A trace of slots is written as 2.1, whose events
	 * replay decodes faster; 2.2's model pays for raw pointers (doc/DESIGN.md, decision 6,
	 * measures both); but one whose stacks may hold Python frames needs 2.5 */
	struct at_sink_options o = {
		.format = AT_SINK_ATZ,
		.munged = r->munged_out,
		.atz = { .level = 9,
			 .host = h ? h->host : "", /* a text log does not say where it was recorded */
			 .start_ns = h ? h->start_ns : 0,
			 .flags = at_stack_relay_flags(r->src), /* times and stacks if it has */
			 .minor = r->munged_out && at_stack_relay_minor(r->src) < AT_ATZ_PYTHON_MINOR
					  ? 1
					  : at_stack_relay_minor(r->src) },
	};

	if (at_sink_start(r->sink, &o) < 0)
		return -1;
	r->started = 1;
	return 0;
}

/* Before a stack or mapping record goes to the output: a binary one starts now (a binary input
 * has said raw or munged in its header). 0, or -1 when it cannot start. */
static int ready_for_record(void *arg)
{
	struct event_run *r = arg;

	return r->opt->binary && !r->started && start_atz(r) < 0 ? -1 : 0;
}

/* Writes one event, after the losses noticed before it. 0, or -1 when the output failed (the
 * error is the sink's). */
static int emit(struct event_run *r, const struct at_event *ev)
{
	if (!r->started && start_atz(r) < 0)
		return -1;
	if (r->lost) {
		if (at_sink_lost(r->sink, r->lost) < 0)
			return -1;
		r->lost = 0;
	}
	return at_sink_put(r->sink, ev);
}

static int flush_pending(struct event_run *r);

/* Kept events from text to binary: holds events until the text has shown (by its first
 * pointer) whether it is raw or munged, which the .atz header must say before any event. Those
 * events hold no pointer, so they read the same either way. 0, or -1 (output or memory, both
 * reported or left in the sink). */
static int emit_kept(struct event_run *r, const struct at_event *ev)
{
	if (!r->opt->binary || r->started || r->src->kind == AT_SOURCE_BINARY)
		return emit(r, ev);
	if (r->src->munged < 0) {
		if (r->npending == r->pending_cap) {
			size_t cap = r->pending_cap ? r->pending_cap * 2 : 256;
			struct at_event *p = realloc(r->pending, cap * sizeof(*p));
			if (!p) {
				at_error("%s: out of memory after %llu events", r->src->name,
					 (unsigned long long)r->c.read);
				return -1;
			}
			r->pending = p;
			r->pending_cap = cap;
		}
		r->pending[r->npending++] = *ev;
		return 0;
	}
	return flush_pending(r) < 0 ? -1 : emit(r, ev);
}

/* Writes the events emit_kept held, once the output kind is known (raw if it never was). */
static int flush_pending(struct event_run *r)
{
	if (!r->opt->binary || r->started || r->m)
		return 0;
	r->munged_out = r->src->munged == 1;
	for (size_t i = 0; i < r->npending; i++)
		if (emit(r, &r->pending[i]) < 0)
			return -1;
	r->npending = 0;
	return r->started || start_atz(r) == 0 ? 0 : -1;
}

/* The event as a text line (AT_LINE_MAX bytes, no newline) in the input's kind, and its
 * position in the input for messages. */
static void describe_event(struct event_run *r, const struct at_event *ev, char *line, char *pos,
			   size_t pos_size)
{
	size_t n = r->src->munged == 1 ? at_format_munged(line, ev) : at_format_raw(line, ev);

	line[n - 1] = 0;
	event_position(r, pos, pos_size);
}

/* Reports an event the munge dropped, as the text path reports a line; with --strict an
 * error. Returns non-zero to stop. */
static int report_dropped_event(struct event_run *r, const struct at_event *ev, const char *why)
{
	char line[AT_LINE_MAX], pos[4200];

	r->c.ignored++;
	if (!r->opt->strict && at_munge_unseen_pointer(why)) {
		r->c.unseen++; /* counted, said one by one only at -v */
		if (at_display_level < 3)
			return 0;
	}
	describe_event(r, ev, line, pos, sizeof(pos));
	if (r->opt->strict) {
		at_error("%s: Ignored \"%s\": %s (--strict)", pos, line, why);
		return 1;
	}
	DISPLAYLEVEL(2, "%s: %s: Ignored \"%s\": %s\n", at_program_name, pos, line, why);
	return 0;
}

/* Reports an event written as it is although a replay cannot read it (munged output only; the
 * text path writes such lines as the reference does). */
static void report_unreplayable(struct event_run *r, const struct at_event *ev, const char *why)
{
	char line[AT_LINE_MAX], pos[4200];

	describe_event(r, ev, line, pos, sizeof(pos));
	r->c.unreplayable++;
	DISPLAYLEVEL(2, "%s: %s: Written, but not replayable \"%s\": %s\n", at_program_name, pos,
		     line, why);
}

/* Reports a text line that does not fit the event model (skipped); with --strict an error.
 * Returns non-zero to stop. */
static int report_bad_line(struct event_run *r)
{
	r->c.read++;
	r->c.ignored++;
	if (r->opt->strict) {
		at_error_at(r->src->name, r->src->lineno, "Ignored: %s (--strict)", r->src->why);
		return 1;
	}
	DISPLAYLEVEL(2, "%s: %s:%llu: Ignored: %s\n", at_program_name, r->src->name,
		     (unsigned long long)r->src->lineno, r->src->why);
	return 0;
}

static int refuse_munged(const struct event_run *r)
{
	if (r->src->kind == AT_SOURCE_BINARY)
		at_error("%s: already munged (the trace's header says so): nothing to munge; "
			 "--keep-pointers converts it as it is", r->src->name);
	else
		at_error_at(r->src->name, r->src->lineno,
			    "already munged (#slots, not addresses): nothing to munge; "
			    "--keep-pointers converts it as it is");
	return 1;
}

/* Munges (or with --keep-pointers copies) one event. 0 to go on, else the exit code. */
static int take_event(struct event_run *r, const struct at_event *input)
{
	struct at_event munged[2];
	unsigned n;
	const char *why = NULL;
	struct at_event in = *input;
	const struct at_event *ev = &in;

	in.stack = at_stack_relay_id(&r->relay, input->stack); /* ids of the output */
	if (r->relay.failed)
		return 1;
	/* kept: a text line read before the log showed raw or munged, yet with a pointer field,
	 * had a pointer that is neither a slot nor an address ("=c"); written as either kind it
	 * would make the output a log of two kinds that no reader takes */
	if (!r->m && r->src->kind == AT_SOURCE_TEXT && r->src->munged < 0 &&
	    (ev->has_result || at_func_takes_pointer(ev->func))) {
		r->src->why = "a pointer that is neither a slot (#N) nor an address (0x...)";
		return report_bad_line(r);
	}

	r->c.read++;
	if (r->src->kind == AT_SOURCE_BINARY) {
		uint64_t lost = at_atz_lost_before(r->src->atz);
		r->lost += lost;
		r->lost_seen += lost;
	}
	if (!r->m) {
		if (r->src->munged == 1 && !r->munged_out) {
			r->munged_out = 1;
			at_sink_set_munged(r->sink, 1);
		}
		/* munged in, munged out: a replay reads the output, so it is checked as the
		 * munge's own; so are the lines of a text log before it shows whether it is raw
		 * or munged (a replay reads those as munged) */
		if (r->src->munged != 0 && (why = at_munge_unreplayable_event(ev))) {
			if (r->opt->strict)
				return report_dropped_event(r, ev, why);
			report_unreplayable(r, ev, why);
		}
		r->c.written++;
		return emit_kept(r, ev) < 0 ? 1 : 0;
	}
	if (r->src->munged == 1)
		return refuse_munged(r);
	switch (at_munge_event(r->m, ev, munged, &n, &why)) {
	case AT_MUNGE_WRITTEN:
		r->c.written++;
		if (why) /* the munge's way, which is the reference's; --strict drops it */
			report_unreplayable(r, ev, why);
		for (unsigned i = 0; i < n; i++)
			if (emit(r, &munged[i]) < 0)
				return 1;
		return 0;
	case AT_MUNGE_FILTERED:
		r->c.filtered++;
		return 0;
	case AT_MUNGE_IGNORED:
		return report_dropped_event(r, ev, why);
	default:
		at_error("%s: out of memory after %llu events", r->src->name,
			 (unsigned long long)r->c.read);
		return 1;
	}
}

/* Reads every event through take_event, up to the end or a failed write (the sink keeps its
 * error for the caller to report). Returns the exit code. */
static int read_events(struct event_run *r)
{
	struct at_event ev;
	struct at_progress progress;
	uint64_t n = 0;
	int got, rc = 0;

	at_progress_start(&progress, r->src->name,
			  r->src->kind == AT_SOURCE_BINARY ? "events" : "lines");
	while (!rc && !at_sink_error(r->sink) && (got = at_source_next(r->src, &ev)) != 0) {
		at_progress_tick(&progress, ++n);
		if (got > 0)
			rc = take_event(r, &ev);
		else if (r->src->fatal) {
			at_source_report(r->src); /* truncated, corrupt, newer, read error */
			rc = 1;
		} else {
			rc = report_bad_line(r);
		}
	}
	at_progress_end(&progress);
	return rc;
}

/* After the last event: the losses after it, and a binary output started even when empty. */
static int end_events(struct event_run *r)
{
	if (r->src->kind == AT_SOURCE_BINARY && r->src->atz) {
		struct at_atz_stats st;
		at_atz_reader_stats(r->src->atz, &st);
		r->c.lost_total = st.lost;
		r->lost += st.lost - r->lost_seen; /* lost after the last event */
	}
	if (!r->opt->binary || at_sink_error(r->sink))
		return 0;
	if (flush_pending(r) < 0 || (!r->started && start_atz(r) < 0))
		return 1;
	return at_sink_lost(r->sink, r->lost) < 0;
}

/* Text output: started at once, its lines following the input's pointers. */
static int start_text(struct event_run *r)
{
	struct at_sink_options o = { .format = AT_SINK_TEXT, .munged = r->munged_out };

	if (at_sink_start(r->sink, &o) < 0)
		return -1;
	r->started = 1;
	return 0;
}

int at_convert_run(struct at_source *src, struct at_munge *m, struct at_sink *sink,
		   const struct at_convert_options *opt, struct at_munge_counts *c)
{
	struct event_run r = { .opt = opt, .src = src, .m = m, .sink = sink };
	int rc = 1;

	r.munged_out = m != NULL || src->munged == 1;
	if (m && src->munged == 1) {
		refuse_munged(&r);
	} else if (opt->binary || start_text(&r) == 0) {
		at_stack_relay_attach(&r.relay, src, sink);
		r.relay.no_rss = m != NULL; /* munged pids are numbered anew */
		r.relay.ready = ready_for_record;
		r.relay.ready_arg = &r;
		rc = read_events(&r);
		rc |= end_events(&r);
		at_stack_relay_detach(src);
	}
	free(r.pending);
	*c = r.c;
	return rc;
}
