/* layout.c: blocks in address order and the pages they touch (layout.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "finish.h"
#include "annotate.h"
#include "json.h"
#include "layout.h"
#include "tables.h"
#include "units.h"
#include "u64map.h"

/* A treap node (index 0 is "none"): ordered by (pid, addr), a heap by prio. */
struct rep_layout_node {
	uint64_t addr, size;
	uint32_t pid, prio;
	size_t left, right;
};

static int before(const struct rep_layout_node *n, uint32_t pid, uint64_t addr)
{
	return n->pid < pid || (n->pid == pid && n->addr < addr);
}

static uint32_t next_prio(struct rep_layout *l)
{
	return (uint32_t)rep_u64map_mix(++l->made * UINT64_C(0x9e3779b97f4a7c15));
}

/* A new node for (pid, addr, size); 0 on ENOMEM. */
static size_t node_new(struct rep_layout *l, uint32_t pid, uint64_t addr, uint64_t size)
{
	size_t i = l->free_list;

	if (i) {
		l->free_list = l->nodes[i].left;
	} else {
		if (l->nnodes == l->cap) {
			size_t cap = l->cap ? 2 * l->cap : 1024;
			struct rep_layout_node *a = realloc(l->nodes, cap * sizeof(*a));
			if (!a)
				return 0;
			l->nodes = a;
			l->cap = cap;
			if (!l->nnodes)
				l->nnodes = 1; /* node 0: none */
		}
		i = l->nnodes++;
	}
	l->nodes[i] = (struct rep_layout_node){ addr, size, pid, next_prio(l), 0, 0 };
	return i;
}

/* Splits t into the nodes before (pid, addr) and the others. */
static void split(struct rep_layout *l, size_t t, uint32_t pid, uint64_t addr, size_t *lo, size_t *hi)
{
	if (!t) {
		*lo = *hi = 0;
	} else if (before(&l->nodes[t], pid, addr)) {
		split(l, l->nodes[t].right, pid, addr, &l->nodes[t].right, hi);
		*lo = t;
	} else {
		split(l, l->nodes[t].left, pid, addr, lo, &l->nodes[t].left);
		*hi = t;
	}
}

static size_t merge(struct rep_layout *l, size_t a, size_t b)
{
	if (!a || !b)
		return a ? a : b;
	if (l->nodes[a].prio > l->nodes[b].prio) {
		l->nodes[a].right = merge(l, l->nodes[a].right, b);
		return a;
	}
	l->nodes[b].left = merge(l, a, l->nodes[b].left);
	return b;
}

static void insert(struct rep_layout *l, size_t n)
{
	size_t lo, hi;

	split(l, l->root, l->nodes[n].pid, l->nodes[n].addr, &lo, &hi);
	l->root = merge(l, merge(l, lo, n), hi);
}

/* Removes the node of (pid, addr), if there is one. */
static void erase(struct rep_layout *l, uint32_t pid, uint64_t addr)
{
	size_t *link = &l->root;

	while (*link) {
		struct rep_layout_node *n = &l->nodes[*link];
		if (n->pid == pid && n->addr == addr) {
			size_t gone = *link;
			*link = merge(l, n->left, n->right);
			l->nodes[gone].left = l->free_list;
			l->free_list = gone;
			return;
		}
		link = before(n, pid, addr) ? &n->right : &n->left;
	}
}

/* The nearest node of pid below addr (prev) and above it (next); 0: none. */
static void neighbours(const struct rep_layout *l, uint32_t pid, uint64_t addr, size_t *prev,
		       size_t *next)
{
	*prev = *next = 0;
	for (size_t t = l->root; t;) {
		const struct rep_layout_node *n = &l->nodes[t];
		if (before(n, pid, addr)) {
			if (n->pid == pid)
				*prev = t;
			t = n->right;
		} else {
			if (n->pid == pid && n->addr != addr)
				*next = t;
			t = n->left;
		}
	}
}

static uint64_t last_page(uint64_t addr, uint64_t size)
{
	uint64_t end = addr + (size ? size - 1 : 0);
	return end < addr ? UINT64_MAX >> REP_PAGE_SHIFT : end >> REP_PAGE_SHIFT;
}

/* The pages of (addr, size) that no other live block of its process touches, given its
 * nearest neighbours (0: none). Blocks in address order that do not overlap can share a page
 * only with the nearest block below (its last page) or above (its first page), so the
 * neighbours tell; blocks that overlap (events lost) give an estimate, clamped to the block's
 * own pages. */
static uint64_t lone_pages(const struct rep_layout *l, uint64_t addr, uint64_t size, size_t prev,
			   size_t next)
{
	uint64_t first = addr >> REP_PAGE_SHIFT, last = last_page(addr, size);
	int low = prev && last_page(l->nodes[prev].addr, l->nodes[prev].size) >= first;
	int high = next && (l->nodes[next].addr >> REP_PAGE_SHIFT) <= last;

	if (first == last)
		return low || high ? 0 : 1;
	return last - first + 1 - (uint64_t)low - (uint64_t)high;
}

static void count_gap(struct rep_gaps *g, int have, int64_t gap)
{
	if (!have)
		g->none++;
	else if (gap < 0)
		g->overlap++;
	else
		g->bucket[rep_bucket_of((uint64_t)gap)]++;
}

/* "prev P, gap G, next N, gap G, pages [A, B]" of b among the live blocks (b itself not
 * among them), into w (sizeof l->where bytes; NULL: no text); counts the gaps of a block
 * placed. Returns b's pages that no
 * other live block touches. */
static uint64_t describe(struct rep_layout *l, const struct rep_block *b, int placed, char *w)
{
	size_t prev, next, n = 0, size = sizeof(l->where);
	int64_t below = 0, above = 0;

	neighbours(l, b->pid, b->addr, &prev, &next);
	if (prev)
		below = (int64_t)(b->addr - (l->nodes[prev].addr + l->nodes[prev].size));
	if (next)
		above = (int64_t)(l->nodes[next].addr - (b->addr + b->size));
	if (w && prev)
		n += (size_t)snprintf(w + n, size - n, "prev 0x%" PRIx64 ", gap %" PRId64,
				      l->nodes[prev].addr, below);
	else if (w)
		n += (size_t)snprintf(w + n, size - n, "prev none");
	if (w && next)
		n += (size_t)snprintf(w + n, size - n, ", next 0x%" PRIx64 ", gap %" PRId64,
				      l->nodes[next].addr, above);
	else if (w)
		n += (size_t)snprintf(w + n, size - n, ", next none");
	if (w)
		snprintf(w + n, size - n, ", pages [%" PRIu64 ", %" PRIu64 "]",
			 b->addr >> REP_PAGE_SHIFT, last_page(b->addr, b->size));
	if (placed) {
		l->placed++;
		count_gap(&l->below, prev != 0, below);
		count_gap(&l->above, next != 0, above);
	}
	return lone_pages(l, b->addr, b->size, prev, next);
}

static int own_pointer(const struct at_event *ev, const struct rep_block *b)
{
	return ev && at_func_takes_pointer(ev->func) && ev->pid == b->pid &&
	       ev->arg[0] == b->addr;
}

static void on_block(void *arg, const struct rep_block *b, int released)
{
	struct rep_layout *l = arg;

	if (released) {
		int own = own_pointer(l->w.ev, b);
		erase(l, b->pid, b->addr);
		/* the note describes the block freed, unless a block was placed (a realloc's new one) */
		uint64_t lone = describe(l, b, 0, own && !l->have_new ? l->where : NULL);
		if (own) {
			l->have_old = 1;
			l->old_size = b->size;
			l->old_ago = rep_heap_seq(l->w.h) - b->seq;
		}
		lone = lone < l->pages_now ? lone : l->pages_now;
		l->pages_now -= lone;
		l->delta -= (int64_t)lone;
		return;
	}
	uint64_t lone = describe(l, b, 1, l->where);
	l->have_new = 1;
	l->pages_now += lone;
	l->delta += (int64_t)lone;
	size_t n = node_new(l, b->pid, b->addr, b->size);
	if (!n) {
		l->failed = ENOMEM;
		return;
	}
	insert(l, n);
}

void rep_layout_start(struct rep_layout *l, struct rep_heap *h, FILE *out, int annotate,
		      const int *munged)
{
	memset(l, 0, sizeof(*l));
	rep_watch_start(&l->w, h, out, annotate, munged, on_block, l);
}

static void write_line(struct rep_layout *l, const struct at_event *ev)
{
	char note[320];
	size_t n = 0;

	note[0] = '\0';
	if (l->have_old)
		n += (size_t)snprintf(note, sizeof(note), "%" PRIu64 " bytes, allocated %" PRIu64
				      " lines ago, ", l->old_size, l->old_ago);
	if (l->have_old || l->have_new)
		snprintf(note + n, sizeof(note) - n, "%s, %" PRId64 " %s pages", l->where,
			 l->delta < 0 ? -l->delta : l->delta, l->delta < 0 ? "fewer" : "more");
	rep_put_annotated(l->w.out, ev, *l->w.munged == 1, note);
}

int rep_layout_event(struct rep_layout *l, const struct at_event *ev)
{
	int selected;

	l->have_old = l->have_new = 0;
	l->delta = 0;
	int rc = rep_watch_event(&l->w, ev, &selected);
	if (rc == 0 && l->failed) {
		errno = l->failed;
		rc = -1;
	}
	if (rc < 0)
		return rc;
	if (l->pages_now > l->pages_max) {
		uint64_t blocks;
		l->pages_max = l->pages_now;
		l->pages_max_seq = rep_heap_seq(l->w.h);
		rep_heap_live(l->w.h, &l->live_at_max, &blocks);
	}
	if (l->w.annotate && selected)
		write_line(l, ev);
	return 0;
}

static void put_gaps(FILE *out, const char *what, const struct rep_gaps *g)
{
	char label[48];

	fprintf(out, "== gap to the block %s (bytes), blocks placed\n", what);
	if (g->none)
		fprintf(out, "%-24s %12" PRIu64 "\n", "none", g->none);
	if (g->overlap)
		fprintf(out, "%-24s %12" PRIu64 "\n", "overlap", g->overlap);
	for (unsigned k = 0; k < REP_SIZE_BUCKETS; k++)
		if (g->bucket[k]) {
			rep_bucket_label(k, label, sizeof(label));
			fprintf(out, "%-24s %12" PRIu64 "\n", label, g->bucket[k]);
		}
}

static void json_gaps(struct rep_json *j, const char *key, const struct rep_gaps *g)
{
	rep_json_key(j, key);
	rep_json_object(j);
	rep_json_key_u64(j, "none", g->none);
	rep_json_key_u64(j, "overlap", g->overlap);
	rep_json_key(j, "buckets");
	rep_json_array(j);
	for (unsigned k = 0; k < REP_SIZE_BUCKETS; k++)
		if (g->bucket[k]) {
			rep_json_object(j);
			rep_json_key_u64(j, "min", rep_bucket_min(k));
			rep_json_key_u64(j, "max", rep_bucket_max(k));
			rep_json_key_u64(j, "blocks", g->bucket[k]);
			rep_json_object_end(j);
		}
	rep_json_array_end(j);
	rep_json_object_end(j);
}

static int write_json(struct rep_layout *l)
{
	struct rep_json j;
	uint64_t bytes, blocks;

	rep_heap_live(l->w.h, &bytes, &blocks);
	rep_json_init(&j, l->w.out);
	rep_json_object(&j);
	rep_json_key_u64(&j, "blocks_placed", l->placed);
	json_gaps(&j, "gap_below", &l->below);
	json_gaps(&j, "gap_above", &l->above);
	rep_json_key_u64(&j, "page_bytes", UINT64_C(1) << REP_PAGE_SHIFT);
	rep_json_key_u64(&j, "pages_end", l->pages_now);
	rep_json_key_u64(&j, "live_bytes_end", bytes);
	rep_json_key_u64(&j, "pages_max", l->pages_max);
	rep_json_key_u64(&j, "pages_max_after_event", l->pages_max_seq);
	rep_json_key_u64(&j, "live_bytes_at_pages_max", l->live_at_max);
	rep_json_object_end(&j);
	rep_json_done(&j);
	return rep_finish_output(l->w.out);
}

int rep_layout_end(struct rep_layout *l)
{
	if (l->json)
		return write_json(l);
	if (!l->w.annotate) {
		uint64_t bytes, blocks;
		char b[REP_BYTES_SIZE];
		rep_heap_live(l->w.h, &bytes, &blocks);
		fprintf(l->w.out, "blocks placed: %" PRIu64 "\n", l->placed);
		put_gaps(l->w.out, "below", &l->below);
		put_gaps(l->w.out, "above", &l->above);
		fprintf(l->w.out, "pages in use (4096 bytes): %" PRIu64 " at the end, for %s live\n",
			l->pages_now, rep_bytes_said(bytes, b));
		fprintf(l->w.out, "most pages in use: %" PRIu64 " after event %" PRIu64 ", for %s live",
			l->pages_max, l->pages_max_seq, rep_bytes_said(l->live_at_max, b));
		if (l->pages_max)
			fprintf(l->w.out, " (%.2f%% of their bytes)",
				100.0 * (double)l->live_at_max / (double)(l->pages_max << REP_PAGE_SHIFT));
		fputc('\n', l->w.out);
	}
	return rep_finish_output(l->w.out);
}

void rep_layout_free(struct rep_layout *l)
{
	free(l->nodes);
	l->nodes = NULL;
}
