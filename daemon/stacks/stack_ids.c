/* stack_ids.c: stack hashes to dense ids (stack_ids.h), open addressing with linear probing,
 * doubled at 3/4 full. */
#include <errno.h>
#include <stdlib.h>

#include "stack_ids.h"

#define FIRST_CAP 1024u

static uint32_t slot_of(uint64_t hash, uint32_t cap)
{
	return (uint32_t)((hash * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

static int alloc_table(struct at_stack_ids *s, uint32_t cap)
{
	s->hashes = calloc(cap, sizeof(*s->hashes));
	s->ids = calloc(cap, sizeof(*s->ids));
	if (!s->hashes || !s->ids) {
		free(s->hashes);
		free(s->ids);
		s->hashes = NULL;
		s->ids = NULL;
		errno = ENOMEM;
		return -1;
	}
	s->cap = cap;
	return 0;
}

int at_stack_ids_init(struct at_stack_ids *s)
{
	s->count = 0;
	return alloc_table(s, FIRST_CAP);
}

void at_stack_ids_free(struct at_stack_ids *s)
{
	free(s->hashes);
	free(s->ids);
	s->hashes = NULL;
	s->ids = NULL;
	s->cap = s->count = 0;
}

/* Puts hash -> id in a slot of the current table (which has a free slot). */
static void place(struct at_stack_ids *s, uint64_t hash, uint32_t id)
{
	uint32_t i = slot_of(hash, s->cap);

	while (s->hashes[i])
		i = (i + 1) & (s->cap - 1);
	s->hashes[i] = hash;
	s->ids[i] = id;
}

static int grow(struct at_stack_ids *s)
{
	struct at_stack_ids old = *s;

	if (old.cap > (1u << 30) || alloc_table(s, old.cap * 2) < 0) {
		*s = old;
		errno = ENOMEM;
		return -1;
	}
	for (uint32_t i = 0; i < old.cap; i++)
		if (old.hashes[i])
			place(s, old.hashes[i], old.ids[i]);
	free(old.hashes);
	free(old.ids);
	return 0;
}

int at_stack_ids_get(struct at_stack_ids *s, uint64_t hash, uint32_t *id)
{
	uint32_t i = slot_of(hash, s->cap);

	while (s->hashes[i]) {
		if (s->hashes[i] == hash) {
			*id = s->ids[i];
			return 0;
		}
		i = (i + 1) & (s->cap - 1);
	}
	if ((uint64_t)(s->count + 1) * 4 > (uint64_t)s->cap * 3) {
		if (grow(s) < 0)
			return -1;
	}
	*id = ++s->count;
	place(s, hash, *id);
	return 1;
}

int at_stack_ids_known(const struct at_stack_ids *s, uint64_t hash)
{
	uint32_t i = slot_of(hash, s->cap);

	while (s->hashes[i]) {
		if (s->hashes[i] == hash)
			return 1;
		i = (i + 1) & (s->cap - 1);
	}
	return 0;
}
