/* sink_record.c: a sink record copied whole, with what it points to, into one allocation, so
 * that the writing thread (sink_thread.c) writes it after at_sink_put_record has returned. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sink_thread.h"

/* n rounded up to the alignment of the structures a copy holds. */
static size_t aligned(size_t n)
{
	return (n + 15) & ~(size_t)15;
}

/* Bytes of string s with its NUL (0 for NULL). */
static size_t str_bytes(const char *s)
{
	return s ? strlen(s) + 1 : 0;
}

/* Copies n bytes of p to *at and moves *at past them; the copy, or NULL when p is. */
static void *put(char **at, const void *p, size_t n)
{
	void *d = *at;

	if (!p)
		return NULL;
	memcpy(d, p, n);
	*at += n;
	return d;
}

/* Bytes a copy of r takes beside the record itself. */
static size_t payload_bytes(const struct at_sink_record *r)
{
	switch (r->kind) {
	case AT_SINK_PROCESS:
		return str_bytes(r->process.name);
	case AT_SINK_OBJECT:
		return str_bytes(r->object.path);
	case AT_SINK_PROCESS_CHANGE:
		return r->change.exe_len + r->change.args_len;
	case AT_SINK_STACK:
		return sizeof(*r->stack);
	case AT_SINK_MAPPING:
		return aligned(sizeof(*r->mapping)) + str_bytes(r->mapping->path);
	case AT_SINK_NAMES:
		return aligned(sizeof(*r->names)) + str_bytes(r->names->function) +
		       str_bytes(r->names->file);
	default: /* LOST, RSS, THREAD_END: numbers alone */
		return 0;
	}
}

struct at_sink_record *at_sink_record_copy(const struct at_sink_record *r, size_t *bytes)
{
	size_t n = aligned(sizeof(*r)) + payload_bytes(r);
	struct at_sink_record *c = malloc(n);

	if (!c)
		return NULL;
	*c = *r;
	char *at = (char *)c + aligned(sizeof(*r));

	switch (r->kind) {
	case AT_SINK_PROCESS:
		c->process.name = put(&at, r->process.name, str_bytes(r->process.name));
		break;
	case AT_SINK_OBJECT:
		c->object.path = put(&at, r->object.path, str_bytes(r->object.path));
		break;
	case AT_SINK_PROCESS_CHANGE:
		c->change.exe = put(&at, r->change.exe, r->change.exe_len);
		c->change.args = put(&at, r->change.args, r->change.args_len);
		break;
	case AT_SINK_STACK: { /* the frames in use alone: the rest of the arrays is never read
			       * (a count out of range is refused by the writer, unread) */
		struct at_stack *s = (struct at_stack *)at;
		size_t frames = r->stack->count < AT_STACK_MAX_FRAMES ? r->stack->count
								     : AT_STACK_MAX_FRAMES;

		memcpy(s, r->stack, offsetof(struct at_stack, pcs));
		memcpy(s->pcs, r->stack->pcs, frames * sizeof(s->pcs[0]));
		memcpy(s->kinds, r->stack->kinds, frames);
		c->stack = s;
		break;
	}
	case AT_SINK_MAPPING: {
		struct at_mapping *m = put(&at, r->mapping, sizeof(*m));

		at = (char *)m + aligned(sizeof(*m));
		m->path = put(&at, r->mapping->path, str_bytes(r->mapping->path));
		c->mapping = m;
		break;
	}
	case AT_SINK_NAMES: {
		struct at_frame_name *f = put(&at, r->names, sizeof(*f));

		at = (char *)f + aligned(sizeof(*f));
		f->function = put(&at, r->names->function, str_bytes(r->names->function));
		f->file = put(&at, r->names->file, str_bytes(r->names->file));
		c->names = f;
		break;
	}
	default:
		break;
	}
	*bytes = n;
	return c;
}
