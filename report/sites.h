/* sites.h: the sites of a trace's allocations, named once for every command.
 *
 * A site is a stack and the allocation function, told apart by where each frame is: its key
 * is one line of a table (report/folded.h), the located text of its stack (report/stacks.h:
 * each frame its function and line), then the function as the leaf, named as the event names
 * it (malloc, calloc, ...). Each site also has its line in the folded table: the same without
 * lines (frames by function), which the folded export writes and weighs. An event without a
 * stack (a text log, a trace taken without --stacks) has the site made of its function name
 * alone. The reader hands over mappings and stacks in trace order; stacks are symbolized as
 * they come, their frames kept as records (report/frames.h). Memory grows with the distinct
 * stacks, never with the events. The engine (report/heap.h), pprof, diff and the folded
 * export (report/export.h) all name their sites here. */
#ifndef ALLOCTAP_REPORT_SITES_H
#define ALLOCTAP_REPORT_SITES_H

#include <stdint.h>
#include <stdio.h>

#include "event.h"
#include "folded.h"
#include "frames.h"
#include "stack.h"
#include "stacks.h"
#include "symbolize.h"
#include "weight.h"

/* The stack and function a site key was made of (the first stack that made it). */
struct key_origin {
	uint32_t stack;
	uint8_t func; /* enum at_func */
};

struct rep_sites {
	enum rep_weight weight;                 /* what an event weighs (export --folded) */
	struct at_symbolizer *symbolizer;
	struct rep_stacks *stacks;
	struct rep_frames frames;               /* the stacks' frames, locations and mappings */
	struct rep_folded *folded;              /* folded lines (the folded export's table) */
	struct rep_folded *located;             /* site keys: located lines */
	int64_t *folded_of;                     /* by site key: its folded line, -1 not yet */
	struct key_origin *origins;             /* by site key: its stack and function */
	size_t folded_cap;
	int64_t no_stack_entry[AT_FUNC_COUNT]; /* the site key of each function without a stack */
	struct leaf_cache *leaves;              /* by stack id: its site key per function */
	size_t nleaves;
	char *key;                              /* a line's stack text being built */
	uint64_t sample_bytes;                  /* a sampled trace's (report/sample.h): the
						 * folded export's weights are estimates */
};

/* Sets x up: debug files under debug_dir (NULL: the default of lib/symbolize.h), unusable
 * objects reported through problem. 0, or -1 with errno set. */
int rep_sites_init(struct rep_sites *x, enum rep_weight weight, const char *debug_dir,
		    at_symbolize_problem_fn problem, void *arg);
void rep_sites_free(struct rep_sites *x);

/* A mapping record, given to the symbolizer. 0, or -1 with errno set. */
int rep_sites_mapping(struct rep_sites *x, const struct at_mapping *m);

/* A stack record: symbolized now, with the mappings given so far. 0, or -1 with errno set
 * (rep_stacks_add). */
int rep_sites_stack(struct rep_sites *x, const struct at_stack *s);

/* The site key (an entry of x->located) of an allocation event. -1 with errno set: ENOENT
 * when no record of its stack came before it, ENOMEM. */
int64_t rep_sites_site(struct rep_sites *x, const struct at_event *ev);

/* The site key of stack (0: none) ending in function func, or -1 with errno set (as
 * rep_sites_site). */
int64_t rep_sites_key(struct rep_sites *x, uint32_t stack, unsigned func);

/* The folded line (an entry of x->folded) of site key key: -1 on ENOMEM. */
int64_t rep_sites_folded(struct rep_sites *x, int64_t key);

/* The folded line of stack (0: none) ending in function func: its entry in x->folded, or -1
 * with errno set (as rep_sites_site). */
int64_t rep_sites_line(struct rep_sites *x, uint32_t stack, unsigned func);

/* Forgets the folded line of every site key, after x->folded's entries moved
 * (rep_folded_write): the next rep_sites_line or rep_sites_folded finds them again. */
void rep_sites_forget_entries(struct rep_sites *x);

#endif
