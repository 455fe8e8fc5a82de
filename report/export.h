/* export.h: a trace's allocations aggregated by stack, for `alloctap-report export --folded`.
 *
 * The reader hands over mappings, stacks and events in trace order; each allocation event
 * adds its weight (report/weight.h) to the line of its stack: the callers' text of its stack
 * record (report/stacks.h), then the allocation function as the leaf, named as the event names
 * it (malloc, calloc, ...). An event without a stack (a text log, a trace taken without
 * --stacks) stands for the stack made of its function name alone. Frees weigh nothing and
 * make no line. Memory grows with the distinct stacks, never with the events. */
#ifndef ALLOCTAP_REPORT_EXPORT_H
#define ALLOCTAP_REPORT_EXPORT_H

#include <stdint.h>
#include <stdio.h>

#include "event.h"
#include "folded.h"
#include "stack.h"
#include "stacks.h"
#include "symbolize.h"
#include "u64map.h"
#include "weight.h"

struct rep_export {
	enum rep_weight weight;
	struct at_symbolizer *symbolizer;
	struct rep_stacks *stacks;
	struct rep_folded *folded;
	int64_t no_stack_entry[AT_FUNC_COUNT]; /* the line of each function without a stack */
	struct leaf_cache *leaves;              /* by stack id: its line per function */
	size_t nleaves;
	char *key;                              /* a line's stack text being built */
	struct at_mapping *objects;             /* one mapping record per path and build-id */
	size_t nobjects;                        /* (the first seen; paths owned) */
	struct rep_u64map object_index;         /* at_object_hash | 1 -> first object of it + 1 */
};

/* Sets x up: debug files under debug_dir (NULL: the default of lib/symbolize.h), unusable
 * objects reported through problem. 0, or -1 with errno set. */
int rep_export_init(struct rep_export *x, enum rep_weight weight, const char *debug_dir,
		    at_symbolize_problem_fn problem, void *arg);
void rep_export_free(struct rep_export *x);

/* A mapping record, given to the symbolizer and, the first of its object (path and build-id),
 * kept in x->objects. 0, or -1 with errno set. */
int rep_export_mapping(struct rep_export *x, const struct at_mapping *m);

/* A stack record: symbolized now, with the mappings given so far. 0, or -1 with errno set
 * (rep_stacks_add). */
int rep_export_stack(struct rep_export *x, const struct at_stack *s);

/* An event, with the id of its stack (0: none). 0, or -1 with errno set: ENOENT when no
 * record of that stack came before it, ENOMEM. */
int rep_export_event(struct rep_export *x, const struct at_event *ev, uint32_t stack);

/* The line (an entry of x->folded) an allocation event belongs to, without weighing it: its
 * site. -1 with errno set: ENOENT when no record of its stack came before it, ENOMEM. */
int64_t rep_export_site(struct rep_export *x, const struct at_event *ev);

/* Writes the folded lines, sorted by stack text; lines of weight 0 are left out. Called once,
 * at the end. 0, or -1 with errno set. */
int rep_export_write(struct rep_export *x, FILE *out);

#endif
