/* stacks.c: stack records to their callers' locations and texts, by stack id. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stacks.h"

struct stack_text {
	char *text[2];   /* folded, located (NULL: no record) */
	size_t len[2];
	uint32_t *locations; /* root first */
	uint16_t count, flags;
};

struct rep_stacks {
	struct stack_text *by_id; /* index: id */
	size_t cap;
	uint32_t highest;
	char *scratch[2];         /* TEXT_MAX bytes each: a stack's texts being built */
};

struct rep_stacks *rep_stacks_new(void)
{
	return calloc(1, sizeof(struct rep_stacks));
}

static void forget(struct stack_text *t)
{
	free(t->text[0]);
	free(t->text[1]);
	free(t->locations);
	memset(t, 0, sizeof(*t));
}

void rep_stacks_free(struct rep_stacks *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->cap; i++)
		forget(&st->by_id[i]);
	free(st->by_id);
	free(st->scratch[0]);
	free(st->scratch[1]);
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

/* The longest text kept: every frame of a full stack with some inlines, generously. */
#define TEXT_MAX (64 * 1024)

/* Appends the frames of location l (caller first) to both texts. */
static void append_location(const struct rep_frames *t, const struct rep_location *l,
			    char *const text[2], size_t len[2])
{
	char word[1024];

	for (uint32_t i = l->count; i-- > 0;)
		for (int located = 0; located < 2; located++) {
			rep_frame_word(rep_frames_line(t, l, i), located, word, sizeof(word));
			rep_append_frame(text[located], TEXT_MAX, &len[located], word);
		}
}

/* Room for stack id in st->by_id: 0, or -1 on ENOMEM. */
static int id_room(struct rep_stacks *st, uint32_t id)
{
	if (id < st->cap)
		return 0;
	size_t cap = st->cap ? st->cap : 256;

	while (cap <= id)
		cap *= 2;
	struct stack_text *a = realloc(st->by_id, cap * sizeof(*a));
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

/* A copy of text[0..len) (at least one byte allocated); NULL on ENOMEM. */
static char *copy_text(const char *text, size_t len)
{
	char *c = malloc(len ? len : 1);

	if (c)
		memcpy(c, text, len);
	return c;
}

int rep_stacks_add(struct rep_stacks *st, struct rep_frames *t, struct at_symbolizer *z,
		   const struct at_stack *s)
{
	struct stack_text n = { .count = (uint16_t)(s->count ? s->count - 1 : 0),
				.flags = s->flags };
	size_t len[2] = { 0, 0 };

	if (s->id == 0 || s->count == 0 || s->count > AT_STACK_MAX_FRAMES ||
	    s->id > (uint64_t)st->highest + REP_STACKS_MAX_GAP) {
		errno = EINVAL;
		return -1;
	}
	if (id_room(st, s->id) < 0)
		return -1;
	for (int k = 0; k < 2; k++)
		if (!st->scratch[k] && !(st->scratch[k] = malloc(TEXT_MAX)))
			return -1;
	n.locations = malloc((n.count ? n.count : 1) * sizeof(*n.locations));
	if (!n.locations || locate(t, z, s, n.locations) < 0) {
		free(n.locations);
		return -1;
	}
	for (int k = 0; k < 2; k++) { /* built in scratch, then copied at their lengths */
		if (s->flags & AT_STACK_INCOMPLETE)
			rep_append_frame(st->scratch[k], TEXT_MAX, &len[k], "[incomplete]");
		if (s->flags & AT_STACK_TRUNCATED)
			rep_append_frame(st->scratch[k], TEXT_MAX, &len[k], "[truncated]");
	}
	for (uint16_t i = 0; i < n.count; i++)
		append_location(t, rep_frames_location(t, n.locations[i]), st->scratch, len);
	for (int k = 0; k < 2; k++) {
		n.len[k] = len[k];
		if (!(n.text[k] = copy_text(st->scratch[k], len[k]))) {
			forget(&n);
			return -1;
		}
	}
	forget(&st->by_id[s->id]);
	st->by_id[s->id] = n;
	if (s->id > st->highest)
		st->highest = s->id;
	return 0;
}

const char *rep_stacks_text(const struct rep_stacks *st, uint32_t id, int located, size_t *len)
{
	if (id >= st->cap || !st->by_id[id].text[0])
		return NULL;
	*len = st->by_id[id].len[!!located];
	return st->by_id[id].text[!!located];
}

const uint32_t *rep_stacks_locations(const struct rep_stacks *st, uint32_t id, size_t *n,
				     unsigned *flags)
{
	if (id >= st->cap || !st->by_id[id].text[0])
		return NULL;
	*n = st->by_id[id].count;
	*flags = st->by_id[id].flags;
	return st->by_id[id].locations;
}
