/* ranges.c: a treap of address ranges keyed by (pid, start) (ranges.h). */
#include <errno.h>
#include <stdlib.h>

#include "ranges.h"

struct node {
	struct at_range r;
	uint32_t priority; /* a max-heap on these keeps the tree balanced, expected */
	struct node *left, *right;
};

struct at_ranges {
	struct node *root;
	size_t count;
	uint32_t seed; /* xorshift state for the priorities */
};

struct at_ranges *at_ranges_new(void)
{
	struct at_ranges *t = calloc(1, sizeof(*t));

	if (t)
		t->seed = 0x9e3779b9u;
	return t;
}

/* Frees the subtree n; returns how many nodes it held. */
static size_t free_tree(struct node *n)
{
	size_t count = 0;

	while (n) {
		struct node *right = n->right;
		count += 1 + free_tree(n->left);
		free(n);
		n = right;
	}
	return count;
}

void at_ranges_free(struct at_ranges *t)
{
	if (!t)
		return;
	free_tree(t->root);
	free(t);
}

/* Whether (pid, start) orders before the node's key. */
static int before(uint32_t pid, uint64_t start, const struct node *n)
{
	return pid < n->r.pid || (pid == n->r.pid && start < n->r.start);
}

/* Whether the node's key orders before (pid, start). */
static int node_before(const struct node *n, uint32_t pid, uint64_t start)
{
	return n->r.pid < pid || (n->r.pid == pid && n->r.start < start);
}

/* Splits n into the keys before (pid, start) (*lo) and the others (*hi). */
static void split(struct node *n, uint32_t pid, uint64_t start, struct node **lo,
		  struct node **hi)
{
	if (!n) {
		*lo = *hi = NULL;
	} else if (node_before(n, pid, start)) {
		split(n->right, pid, start, &n->right, hi);
		*lo = n;
	} else {
		split(n->left, pid, start, lo, &n->left);
		*hi = n;
	}
}

/* Joins lo and hi, every key of lo before every key of hi. */
static struct node *merge(struct node *lo, struct node *hi)
{
	if (!lo)
		return hi;
	if (!hi)
		return lo;
	if (lo->priority >= hi->priority) {
		lo->right = merge(lo->right, hi);
		return lo;
	}
	hi->left = merge(lo, hi->left);
	return hi;
}

/* Removes the node of the greatest key from *n and returns it (NULL: *n empty). */
static struct node *take_last(struct node **n)
{
	while (*n && (*n)->right)
		n = &(*n)->right;
	struct node *last = *n;
	if (last)
		*n = last->left;
	return last;
}

int at_ranges_put(struct at_ranges *t, const struct at_range *r)
{
	struct node *lo, *mid, *hi, *n;

	if (r->end <= r->start) {
		errno = EINVAL;
		return -1;
	}
	n = malloc(sizeof(*n));
	if (!n)
		return -1;
	t->seed ^= t->seed << 13;
	t->seed ^= t->seed >> 17;
	t->seed ^= t->seed << 5;
	*n = (struct node){ .r = *r, .priority = t->seed };
	split(t->root, r->pid, r->start, &lo, &hi);
	/* of the ranges that start before r, only the last can reach into it (they are disjoint) */
	const struct node *last = lo;
	while (last && last->right)
		last = last->right;
	if (last && last->r.pid == r->pid && last->r.end > r->start) {
		free(take_last(&lo));
		t->count--;
	}
	split(hi, r->pid, r->end, &mid, &hi); /* mid: the ranges of pid starting inside r */
	t->count -= free_tree(mid);
	t->root = merge(merge(lo, n), hi);
	t->count++;
	return 0;
}

const struct at_range *at_ranges_find(const struct at_ranges *t, uint32_t pid, uint64_t addr)
{
	const struct node *n = t->root, *best = NULL;

	while (n) {
		if (before(pid, addr, n)) {
			n = n->left;
		} else {
			best = n; /* the greatest key <= (pid, addr) so far */
			n = n->right;
		}
	}
	if (best && best->r.pid == pid && addr < best->r.end)
		return &best->r;
	return NULL;
}

size_t at_ranges_count(const struct at_ranges *t)
{
	return t->count;
}
