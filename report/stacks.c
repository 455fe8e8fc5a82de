/* stacks.c: stack records to callers' text, by stack id. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stacks.h"

struct stack_text {
	char *text; /* NULL: no record */
	size_t len;
};

struct rep_stacks {
	struct stack_text *by_id; /* index: id */
	size_t cap;
	uint32_t highest;
	char *scratch;            /* TEXT_MAX bytes: a stack's text being built */
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
		free(st->by_id[i].text);
	free(st->by_id);
	free(st->scratch);
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

/* Appends the frames of frame value pc of kind of pid (for a native frame, a return address:
 * itself and the functions inlined there, caller first) to text[*len..TEXT_MAX).
 * lib/symbolize.c keeps what it found per address. */
static void append_pc(struct at_symbolizer *z, uint32_t pid, unsigned kind, uint64_t pc,
		      char *text, size_t *len)
{
	struct at_frame frames[AT_SYMBOLIZE_MAX_INLINE];
	char word[512];
	int count = at_symbolize_frame(z, pid, kind, pc, 1, frames, AT_SYMBOLIZE_MAX_INLINE);

	while (count-- > 0) {
		at_frame_text(&frames[count], word, sizeof(word));
		rep_append_frame(text, TEXT_MAX, len, word);
	}
}

int rep_stacks_add(struct rep_stacks *st, struct at_symbolizer *z, const struct at_stack *s)
{
	char *text;
	size_t len = 0;

	if (s->id == 0 || s->count == 0 || s->count > AT_STACK_MAX_FRAMES ||
	    s->id > (uint64_t)st->highest + REP_STACKS_MAX_GAP) {
		errno = EINVAL;
		return -1;
	}
	if (s->id >= st->cap) {
		size_t cap = st->cap ? st->cap : 256;

		while (cap <= s->id)
			cap *= 2;
		struct stack_text *a = realloc(st->by_id, cap * sizeof(*a));
		if (!a)
			return -1;
		memset(a + st->cap, 0, (cap - st->cap) * sizeof(*a));
		st->by_id = a;
		st->cap = cap;
	}
	if (!st->scratch && !(st->scratch = malloc(TEXT_MAX)))
		return -1;
	text = st->scratch; /* built here, then copied at its length */
	if (s->flags & AT_STACK_INCOMPLETE)
		rep_append_frame(text, TEXT_MAX, &len, "[incomplete]");
	if (s->flags & AT_STACK_TRUNCATED)
		rep_append_frame(text, TEXT_MAX, &len, "[truncated]");
	for (int i = s->count - 1; i >= 1; i--)
		append_pc(z, s->pid, s->flags & AT_STACK_KINDS ? s->kinds[i] : AT_FRAME_NATIVE,
			  s->pcs[i], text, &len);
	text = malloc(len ? len : 1);
	if (!text)
		return -1;
	memcpy(text, st->scratch, len);
	free(st->by_id[s->id].text);
	st->by_id[s->id] = (struct stack_text){ text, len };
	if (s->id > st->highest)
		st->highest = s->id;
	return 0;
}

const char *rep_stacks_text(const struct rep_stacks *st, uint32_t id, size_t *len)
{
	if (id >= st->cap || !st->by_id[id].text)
		return NULL;
	*len = st->by_id[id].len;
	return st->by_id[id].text;
}
