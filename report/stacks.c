/* stacks.c: stack records to their callers' locations, by stack id; their texts built from
 * the locations' (stacks.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stacks.h"

struct stack_record {
	uint32_t *locations; /* root first; NULL: no record */
	uint16_t count, flags;
};

struct rep_stacks {
	struct stack_record *by_id; /* index: id */
	size_t cap;
	uint32_t highest;
};

struct rep_stacks *rep_stacks_new(void)
{
	return calloc(1, sizeof(struct rep_stacks));
}

void rep_stacks_free(struct rep_stacks *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->cap; i++)
		free(st->by_id[i].locations);
	free(st->by_id);
	free(st);
}

void rep_append_frame(char *buf, size_t size, size_t *len, const char *text)
{
	size_t n = *len;

	if (n && n < size)
		buf[n++] = ';';
	for (; *text && n < size; text++)
		buf[n++] = (*text == ';' || (unsigned char)*text < 0x20 || *text == 0x7f) ? '_'
											  : *text;
	*len = n;
}

/* Appends text[0..n) (words already made safe, ';' between them) to buf[*len..size), after a
 * ';' unless at the start; cut at size. */
static void append_words(char *buf, size_t size, size_t *len, const char *text, size_t n)
{
	size_t k = *len;

	if (k && k < size)
		buf[k++] = ';';
	if (n > size - k)
		n = size - k;
	memcpy(buf + k, text, n);
	*len = k + n;
}

/* Room for stack id in st->by_id: 0, or -1 on ENOMEM. */
static int id_room(struct rep_stacks *st, uint32_t id)
{
	if (id < st->cap)
		return 0;
	size_t cap = st->cap ? st->cap : 256;

	while (cap <= id)
		cap *= 2;
	struct stack_record *a = realloc(st->by_id, cap * sizeof(*a));
	if (!a)
		return -1;
	memset(a + st->cap, 0, (cap - st->cap) * sizeof(*a));
	st->by_id = a;
	st->cap = cap;
	return 0;
}

/* The stack's callers as locations, root first, into locs: 0, or -1 on ENOMEM. */
static int locate(struct rep_frames *t, struct at_symbolizer *z, const struct at_stack *s,
		  uint32_t *locs)
{
	for (int i = s->count - 1, k = 0; i >= 1; i--, k++) {
		int64_t id = rep_frames_locate(t, z, s->pid,
					       s->flags & AT_STACK_KINDS ? s->kinds[i]
									 : AT_FRAME_NATIVE,
					       s->pcs[i], 1);
		if (id < 0)
			return -1;
		locs[k] = (uint32_t)id;
	}
	return 0;
}

int rep_stacks_add(struct rep_stacks *st, struct rep_frames *t, struct at_symbolizer *z,
		   const struct at_stack *s)
{
	struct stack_record r = { .count = (uint16_t)(s->count ? s->count - 1 : 0),
				  .flags = s->flags };

	if (s->id == 0 || s->count == 0 || s->count > AT_STACK_MAX_FRAMES ||
	    s->id > (uint64_t)st->highest + REP_STACKS_MAX_GAP) {
		errno = EINVAL;
		return -1;
	}
	if (id_room(st, s->id) < 0)
		return -1;
	r.locations = malloc((r.count ? r.count : 1) * sizeof(*r.locations));
	if (!r.locations || locate(t, z, s, r.locations) < 0) {
		free(r.locations);
		return -1;
	}
	free(st->by_id[s->id].locations);
	st->by_id[s->id] = r;
	if (s->id > st->highest)
		st->highest = s->id;
	return 0;
}

ssize_t rep_stacks_text(const struct rep_stacks *st, const struct rep_frames *t, uint32_t id,
			int located, char *buf, size_t size)
{
	size_t len = 0;

	if (id >= st->cap || !st->by_id[id].locations)
		return -1;
	const struct stack_record *r = &st->by_id[id];
	if (r->flags & AT_STACK_INCOMPLETE)
		rep_append_frame(buf, size, &len, "[incomplete]");
	if (r->flags & AT_STACK_TRUNCATED)
		rep_append_frame(buf, size, &len, "[truncated]");
	for (uint16_t i = 0; i < r->count; i++) {
		const struct rep_location *l = rep_frames_location(t, r->locations[i]);
		append_words(buf, size, &len, l->text[!!located], l->text_len[!!located]);
	}
	return (ssize_t)len;
}

const uint32_t *rep_stacks_locations(const struct rep_stacks *st, uint32_t id, size_t *n,
				     unsigned *flags)
{
	if (id >= st->cap || !st->by_id[id].locations)
		return NULL;
	*n = st->by_id[id].count;
	*flags = st->by_id[id].flags;
	return st->by_id[id].locations;
}
