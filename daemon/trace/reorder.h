/* reorder.h: puts ring-buffer records back into causal order (doc/DESIGN.md, decision 4).
 *
 * Records carry numbers from one global counter: frees numbered at entry, allocations at
 * return, realloc numbered at entry (seq_entry) and at return (seq). The window emits records
 * in number order. A realloc is held from its entry number until its return number and
 * written at the return, unless an allocation of its old address comes first (another thread
 * received the block realloc released): then it is written just before that allocation.
 * A number that never arrives is a lost event: counted when the window must move past it, or
 * after two ticks, so the output never stalls. Nothing here allocates after init. */
#ifndef ALLOCTAP_REORDER_H
#define ALLOCTAP_REORDER_H

#include <linux/types.h>
#include <stdint.h>

#include "alloctap.h"

typedef void (*at_emit_fn)(void *arg, const struct at_record *r);
/* Called where a mark stands in the output (at_reorder_mark). */
typedef void (*at_mark_fn)(void *arg);

#define AT_REORDER_MARKS 64

struct at_reorder_slot;

struct at_reorder {
	struct at_reorder_slot *slots;
	uint64_t size;          /* slots, a power of two */
	uint64_t next;          /* the next number to emit */
	uint64_t end;           /* one past the highest number seen */
	uint64_t horizon;       /* numbers below it still missing at the next tick are lost */
	struct at_record *pending; /* reallocs between their two numbers */
	unsigned npending, max_pending;
	at_emit_fn emit;
	at_mark_fn mark;        /* NULL: marks are dropped */
	void *arg;
	uint64_t marks[AT_REORDER_MARKS]; /* numbers before which a mark goes, ascending */
	unsigned nmarks;
	/* accounting */
	uint64_t emitted;       /* records handed to emit */
	uint64_t missing;       /* numbers given up on */
	uint64_t double_missed; /* reallocs whose two numbers were both given up on */
	uint64_t late;          /* records that arrived after their number was given up on */
	uint64_t marks_dropped; /* marks asked for while AT_REORDER_MARKS were waiting */
};

/* window_log2: log2 of the window in events; max_pending: reallocs held at once.
 * 0, or -1 with errno. */
int at_reorder_init(struct at_reorder *r, unsigned window_log2, unsigned max_pending,
		    at_emit_fn emit, void *arg);
void at_reorder_free(struct at_reorder *r);

/* Takes one record; emits everything that is now in order. */
void at_reorder_push(struct at_reorder *r, const struct at_record *rec);

/* Asks for a mark (r->mark is called) after every number below `before` and before any number
 * from it on: what happened before a moment, then the mark, then what came after. `before` is
 * the counter's value at that moment. A mark for a number already passed goes out at once. */
void at_reorder_mark(struct at_reorder *r, uint64_t before);

/* Called periodically: gives up on the numbers that have been missing since the last tick. */
void at_reorder_tick(struct at_reorder *r);

/* End of input: final is the counter's value (every number below it was handed out). Emits
 * everything, counting what never arrived as missing. */
void at_reorder_finish(struct at_reorder *r, uint64_t final);

/* Events lost, from the numbers: each missing number is one event, except that a realloc owns
 * two. lost_reallocs: realloc returns the BPF program could not reserve. */
static inline uint64_t at_reorder_lost_events(const struct at_reorder *r, uint64_t lost_reallocs)
{
	uint64_t dup = r->double_missed + lost_reallocs;

	return r->missing > dup ? r->missing - dup : 0;
}

/* Records waiting in the window (numbers seen but not yet emitted, roughly). */
static inline uint64_t at_reorder_backlog(const struct at_reorder *r)
{
	return r->end - r->next;
}

#endif
