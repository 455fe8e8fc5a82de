/* atz_relay.c: stack, mapping, names and RSS records from a source to a sink (atz_relay.h). */
#include <string.h>

#include "atz_relay.h"

/* Whether the sink's format holds stacks and mappings: a binary trace of 2.x. */
static int sink_holds_stacks(const struct at_sink *s)
{
	return s->opt.format == AT_SINK_ATZ && s->opt.atz.major != 1;
}

/* Whether a record may go to the sink now: nothing failed so far, the sink is ready (its
 * ready callback may fail it) and it holds stacks. */
static int relay_admits(struct at_stack_relay *r)
{
	if (r->failed)
		return 0;
	if (r->ready && r->ready(r->ready_arg)) {
		r->failed = 1;
		return 0;
	}
	return sink_holds_stacks(r->sink);
}

/* A stack record: id 1 starts a new input frame, whose ids follow the ones put so far. */
static void relay_stack(void *arg, const struct at_stack *s)
{
	struct at_stack_relay *r = arg;

	if (s->id == 1)
		r->offset = r->stacks;
	if (!relay_admits(r))
		return;
	r->copy = *s;
	r->copy.id = s->id + r->offset;
	struct at_sink_record rec = { .kind = AT_SINK_STACK, .stack = &r->copy };
	if (at_sink_put_record(r->sink, &rec) < 0)
		r->failed = 1;
	else
		r->stacks++;
}

static void relay_mapping(void *arg, const struct at_mapping *m)
{
	struct at_stack_relay *r = arg;

	if (!relay_admits(r))
		return;
	struct at_sink_record rec = { .kind = AT_SINK_MAPPING, .mapping = m };
	if (at_sink_put_record(r->sink, &rec) < 0)
		r->failed = 1;
	else
		r->mappings++;
}

static void relay_names(void *arg, const struct at_frame_name *n)
{
	struct at_stack_relay *r = arg;

	if (!relay_admits(r))
		return;
	struct at_sink_record rec = { .kind = AT_SINK_NAMES, .names = n };
	if (at_sink_put_record(r->sink, &rec) < 0)
		r->failed = 1;
	else
		r->names++;
}

static void relay_rss(void *arg, const struct at_rss *m)
{
	struct at_stack_relay *r = arg;

	if (r->no_rss || !relay_admits(r))
		return;
	struct at_sink_record rec = { .kind = AT_SINK_RSS, .rss = *m };
	if (at_sink_put_record(r->sink, &rec) < 0)
		r->failed = 1;
	else
		r->rss++;
}

void at_stack_relay_attach(struct at_stack_relay *r, struct at_source *src,
			   struct at_sink *sink)
{
	memset(r, 0, sizeof(*r));
	r->sink = sink;
	at_source_on_stack(src, relay_stack, r);
	at_source_on_mapping(src, relay_mapping, r);
	at_source_on_names(src, relay_names, r);
	at_source_on_rss(src, relay_rss, r);
}

void at_stack_relay_detach(struct at_source *src)
{
	at_source_on_stack(src, NULL, NULL);
	at_source_on_mapping(src, NULL, NULL);
	at_source_on_names(src, NULL, NULL);
	at_source_on_rss(src, NULL, NULL);
}

unsigned at_stack_relay_minor(const struct at_source *src)
{
	const struct at_atz_header *h = at_source_header(src);

	return h && h->major == 2 && h->minor >= AT_ATZ_PYTHON_MINOR ? AT_ATZ_PYTHON_MINOR
								      : AT_ATZ_V2_MINOR;
}

unsigned at_stack_relay_flags(const struct at_source *src)
{
	const unsigned none = AT_ATZ_FLAG_NO_TIMES | AT_ATZ_FLAG_NO_STACKS;

	const struct at_atz_header *h = at_source_header(src);
	if (!h || h->major < 2)
		return none;
	return h->flags & none;
}
