/* sites.c: each allocation's site, named once: the located line of its stack's symbolized
 * text and its function, and the folded line beside it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "sites.h"

/* The site keys of a stack, one per allocation function, so that its events find them
 * without building their text again. */
struct leaf_cache {
	int32_t entry[AT_FUNC_COUNT]; /* -1: none yet */
};

static void leaf_clear(struct leaf_cache *l)
{
	for (int f = 0; f < AT_FUNC_COUNT; f++)
		l->entry[f] = -1;
}

/* A line's text: callers (at most CALLERS_MAX bytes), ';', the function. */
#define CALLERS_MAX (64 * 1024)
#define KEY_MAX (CALLERS_MAX + 2 * AT_FUNC_NAME_SIZE)

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
	x->located = rep_folded_new();
	x->key = malloc(KEY_MAX);
	if (!x->symbolizer || !x->stacks || !x->folded || !x->located || !x->key ||
	    rep_frames_init(&x->frames) < 0) {
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
	rep_frames_free(&x->frames);
	rep_folded_free(x->folded);
	rep_folded_free(x->located);
	free(x->folded_of);
	free(x->origins);
	free(x->leaves);
	free(x->key);
	memset(x, 0, sizeof(*x));
}

int rep_sites_mapping(struct rep_sites *x, const struct at_mapping *m)
{
	return at_symbolizer_add_mapping(x->symbolizer, m);
}

int rep_sites_stack(struct rep_sites *x, const struct at_stack *s)
{
	if (rep_stacks_add(x->stacks, &x->frames, x->symbolizer, s) < 0)
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

/* The text of stack (0: none) ending in func, folded (located 0) or located, into x->key:
 * its length, or -1 with errno ENOENT when no record of the stack came. */
static ssize_t line_text(struct rep_sites *x, uint32_t stack, unsigned f, int located)
{
	size_t n;

	if (stack == 0) {
		memcpy(x->key, at_func_name[f], at_func_name_len[f]);
		return (ssize_t)at_func_name_len[f];
	}
	ssize_t len = rep_stacks_text(x->stacks, &x->frames, stack, located, x->key, CALLERS_MAX);
	if (len < 0) {
		errno = ENOENT;
		return -1;
	}
	n = (size_t)len;
	rep_append_frame(x->key, KEY_MAX, &n, at_func_name[f]);
	return (ssize_t)n;
}

/* Records a new site key's origin and an unknown folded line: 0, or -1 on ENOMEM. */
static int note_key(struct rep_sites *x, int64_t key, uint32_t stack, unsigned f)
{
	if ((size_t)key >= x->folded_cap) {
		size_t cap = x->folded_cap ? 2 * x->folded_cap : 256;
		int64_t *a = realloc(x->folded_of, cap * sizeof(*a));
		if (!a)
			return -1;
		x->folded_of = a;
		struct key_origin *o = realloc(x->origins, cap * sizeof(*o));
		if (!o)
			return -1;
		x->origins = o;
		x->folded_cap = cap;
	}
	x->folded_of[key] = -1;
	x->origins[key] = (struct key_origin){ stack, (uint8_t)f };
	return 0;
}

int64_t rep_sites_key(struct rep_sites *x, uint32_t stack, unsigned f)
{
	struct leaf_cache *leaf = NULL;
	int64_t *cached = &x->no_stack_entry[f], key;
	size_t before = rep_folded_count(x->located), len;
	unsigned flags;
	ssize_t n;

	if (stack) {
		if (!rep_stacks_locations(x->stacks, stack, &len, &flags)) {
			errno = ENOENT;
			return -1;
		}
		if (!(leaf = leaf_of(x, stack)))
			return -1;
		if (leaf->entry[f] >= 0)
			return leaf->entry[f];
	} else if (*cached >= 0) {
		return *cached;
	}
	n = line_text(x, stack, f, 1);
	if (n < 0)
		return -1;
	key = rep_folded_intern(x->located, x->key, (size_t)n);
	if (key < 0 || key > INT32_MAX)
		return -1;
	if ((size_t)key == before && note_key(x, key, stack, f) < 0)
		return -1;
	if (leaf)
		leaf->entry[f] = (int32_t)key;
	else
		*cached = key;
	return key;
}

int64_t rep_sites_folded(struct rep_sites *x, int64_t key)
{
	if (x->folded_of[key] >= 0)
		return x->folded_of[key];
	ssize_t n = line_text(x, x->origins[key].stack, x->origins[key].func, 0);
	if (n < 0)
		return -1;
	return x->folded_of[key] = rep_folded_intern(x->folded, x->key, (size_t)n);
}

int64_t rep_sites_line(struct rep_sites *x, uint32_t stack, unsigned f)
{
	int64_t key = rep_sites_key(x, stack, f);

	return key < 0 ? -1 : rep_sites_folded(x, key);
}

int64_t rep_sites_site(struct rep_sites *x, const struct at_event *ev)
{
	return rep_sites_key(x, ev->stack, ev->func);
}

void rep_sites_forget_entries(struct rep_sites *x)
{
	for (size_t i = 0; i < rep_folded_count(x->located); i++)
		x->folded_of[i] = -1;
}
