/* stack_store.c: stacks by session id, and their ids in the file being written. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stack_store.h"

void at_stack_store_init(struct at_stack_store *st)
{
	memset(st, 0, sizeof(*st));
}

void at_stack_store_free(struct at_stack_store *st)
{
	free(st->v);
	free(st->pool);
	free(st->serials);
	free(st->kinds);
	memset(st, 0, sizeof(*st));
}

/* Grows *p (elements of size each, *cap of them) to hold at least need. 0 or -1 (ENOMEM). */
static int grow(void **p, size_t size, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 256;
	while (n < need)
		n *= 2;
	void *q = realloc(*p, n * size);
	if (!q) {
		errno = ENOMEM;
		return -1;
	}
	*p = q;
	*cap = n;
	return 0;
}

int at_stack_store_add(struct at_stack_store *st, uint32_t sid, const struct at_stack *s,
		       const uint32_t *serials)
{
	size_t cap = st->cap, serials_cap = st->pool_cap, kinds_cap = st->pool_cap;

	if (sid <= st->count || s->count == 0 || s->count > AT_STACK_MAX_FRAMES) {
		errno = EINVAL;
		return -1;
	}
	if (grow((void **)&st->v, sizeof(*st->v), &cap, (size_t)sid + 1) < 0 ||
	    grow((void **)&st->serials, sizeof(*st->serials), &serials_cap,
		 st->pool_len + s->count) < 0 ||
	    grow((void **)&st->kinds, sizeof(*st->kinds), &kinds_cap, st->pool_len + s->count) < 0 ||
	    grow((void **)&st->pool, sizeof(*st->pool), &st->pool_cap, st->pool_len + s->count) < 0)
		return -1;
	st->cap = (uint32_t)cap;
	for (uint32_t gap = st->count + 1; gap < sid; gap++)
		st->v[gap] = (struct at_stack_store_entry){ 0 };
	st->v[sid] = (struct at_stack_store_entry){ .at = st->pool_len, .pid = s->pid,
						    .count = s->count, .flags = s->flags };
	memcpy(st->pool + st->pool_len, s->pcs, s->count * sizeof(*s->pcs));
	memcpy(st->serials + st->pool_len, serials, s->count * sizeof(*serials));
	memcpy(st->kinds + st->pool_len, s->kinds, s->count);
	st->pool_len += s->count;
	st->count = sid;
	return 0;
}

uint32_t at_stack_store_file_id(struct at_stack_store *st, uint32_t sid, struct at_stack *out,
				uint32_t *serials, int *is_new)
{
	*is_new = 0;
	if (sid == 0 || sid > st->count)
		return 0;
	struct at_stack_store_entry *e = &st->v[sid];
	if (e->count == 0)
		return 0;
	if (e->file_id)
		return e->file_id;
	e->file_id = ++st->file_count;
	out->id = e->file_id;
	out->pid = e->pid;
	out->count = e->count;
	out->flags = e->flags;
	memcpy(out->pcs, st->pool + e->at, e->count * sizeof(*out->pcs));
	memcpy(out->kinds, st->kinds + e->at, e->count);
	memcpy(serials, st->serials + e->at, e->count * sizeof(*serials));
	*is_new = 1;
	return e->file_id;
}

void at_stack_store_new_file(struct at_stack_store *st)
{
	for (uint32_t i = 1; i <= st->count; i++)
		st->v[i].file_id = 0;
	st->file_count = 0;
}
