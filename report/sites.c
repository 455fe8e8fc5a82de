/* sites.c: each allocation's site, named once: the folded line of its stack's symbolized text
 * and its function. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sites.h"

/* The lines of a stack, one per allocation function, so that its events add to them without
 * building their text again. */
struct leaf_cache {
	int32_t entry[AT_FUNC_COUNT]; /* -1: none yet */
};

static void leaf_clear(struct leaf_cache *l)
{
	for (int f = 0; f < AT_FUNC_COUNT; f++)
		l->entry[f] = -1;
}

/* A line's text: callers, ';', the function (stacks.c bounds the callers' text). */
#define KEY_MAX (64 * 1024 + 2 * AT_FUNC_NAME_SIZE)

int rep_sites_init(struct rep_sites *x, enum rep_weight weight, const char *debug_dir,
		    at_symbolize_problem_fn problem, void *arg)
{
	memset(x, 0, sizeof(*x));
	x->weight = weight;
	for (int f = 0; f < AT_FUNC_COUNT; f++)
		x->no_stack_entry[f] = -1;
	x->symbolizer = at_symbolizer_new(debug_dir, problem, arg);
	x->stacks = rep_stacks_new();
	x->folded = rep_folded_new();
	x->key = malloc(KEY_MAX);
	if (!x->symbolizer || !x->stacks || !x->folded || !x->key) {
		rep_sites_free(x);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void rep_sites_free(struct rep_sites *x)
{
	at_symbolizer_free(x->symbolizer);
	rep_stacks_free(x->stacks);
	rep_folded_free(x->folded);
	free(x->leaves);
	free(x->key);
	for (size_t i = 0; i < x->nobjects; i++)
		free((char *)x->objects[i].path);
	free(x->objects);
	rep_u64map_free(&x->object_index);
	memset(x, 0, sizeof(*x));
}

static int same_object(const struct at_mapping *o, const struct at_mapping *m)
{
	return o->build_id_len == m->build_id_len &&
	       memcmp(o->build_id, m->build_id, m->build_id_len) == 0 && strcmp(o->path, m->path) == 0;
}

/* Whether a record of m's object came before: found by its hash in O(1), or for another
 * object of the same hash (rare) by a scan. */
static int known_object(const struct rep_sites *x, const struct at_mapping *m, uint64_t key)
{
	const uint64_t *first = rep_u64map_find(&x->object_index, key);

	if (!first)
		return 0;
	if (same_object(&x->objects[*first - 1], m))
		return 1;
	for (size_t i = 0; i < x->nobjects; i++)
		if (same_object(&x->objects[i], m))
			return 1;
	return 0;
}

/* Keeps m in x->objects unless a record of its object came before. 0, or -1 on ENOMEM. */
static int keep_object(struct rep_sites *x, const struct at_mapping *m)
{
	uint64_t key = at_object_hash(m->path, m->build_id, m->build_id_len) | 1;
	int is_new;

	if (known_object(x, m, key))
		return 0;
	uint64_t *first = rep_u64map_slot(&x->object_index, key, &is_new);
	if (!first)
		return -1;
	if (is_new)
		*first = x->nobjects + 1; /* the slot this object takes below */
	if ((x->nobjects & (x->nobjects - 1)) == 0) { /* 0, 1, 2, 4...: full */
		struct at_mapping *a = realloc(x->objects, (x->nobjects ? 2 * x->nobjects : 1) *
							      sizeof(*a));
		if (!a) {
			if (is_new)
				rep_u64map_remove(&x->object_index, key);
			return -1;
		}
		x->objects = a;
	}
	char *path = strdup(m->path);
	if (!path) {
		if (is_new)
			rep_u64map_remove(&x->object_index, key);
		return -1;
	}
	x->objects[x->nobjects] = *m;
	x->objects[x->nobjects++].path = path;
	return 0;
}

int rep_sites_mapping(struct rep_sites *x, const struct at_mapping *m)
{
	if (at_symbolizer_add_mapping(x->symbolizer, m) < 0)
		return -1;
	return keep_object(x, m);
}

int rep_sites_stack(struct rep_sites *x, const struct at_stack *s)
{
	if (rep_stacks_add(x->stacks, x->symbolizer, s) < 0)
		return -1;
	if (s->id < x->nleaves)
		leaf_clear(&x->leaves[s->id]); /* a record again: its text may have changed */
	return 0;
}

/* The cache slot of stack id, grown as needed; NULL on allocation failure. */
static struct leaf_cache *leaf_of(struct rep_sites *x, uint32_t id)
{
	if (id >= x->nleaves) {
		size_t n = x->nleaves ? x->nleaves : 256;

		while (n <= id)
			n *= 2;
		struct leaf_cache *a = realloc(x->leaves, n * sizeof(*a));
		if (!a)
			return NULL;
		for (size_t i = x->nleaves; i < n; i++)
			leaf_clear(&a[i]);
		x->leaves = a;
		x->nleaves = n;
	}
	return &x->leaves[id];
}

int64_t rep_sites_line(struct rep_sites *x, uint32_t stack, unsigned f)
{
	const char *callers;
	size_t len = 0, n;
	struct leaf_cache *leaf;
	int64_t entry;

	if (stack == 0) {
		if (x->no_stack_entry[f] < 0)
			x->no_stack_entry[f] = rep_folded_intern(x->folded, at_func_name[f],
								 at_func_name_len[f]);
		return x->no_stack_entry[f];
	}
	callers = rep_stacks_text(x->stacks, stack, &len);
	if (!callers) {
		errno = ENOENT;
		return -1;
	}
	leaf = leaf_of(x, stack);
	if (!leaf)
		return -1;
	if (leaf->entry[f] >= 0)
		return leaf->entry[f];
	n = len;
	memcpy(x->key, callers, len);
	rep_append_frame(x->key, KEY_MAX, &n, at_func_name[f]);
	entry = rep_folded_intern(x->folded, x->key, n);
	if (entry >= 0 && entry <= INT32_MAX)
		leaf->entry[f] = (int32_t)entry;
	return entry;
}

int64_t rep_sites_site(struct rep_sites *x, const struct at_event *ev)
{
	return rep_sites_line(x, ev->stack, ev->func);
}

void rep_sites_forget_entries(struct rep_sites *x)
{
	for (size_t i = 0; i < x->nleaves; i++)
		leaf_clear(&x->leaves[i]);
	for (int f = 0; f < AT_FUNC_COUNT; f++)
		x->no_stack_entry[f] = -1;
}
