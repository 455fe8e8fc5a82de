/* reorder.h: merges the event rings, one per CPU, into causal order (doc/DESIGN.md, decision 4).
 *
 * Every record carries its time (CLOCK_MONOTONIC, read just before the record is reserved:
 * frees at entry, allocations at return). A call that depends on another (the free of a block,
 * after the allocation that returned it) read its clock after that other's record was
 * committed. So once every ring has been read to its end after time W (each ring's "drained"
 * time, taken before its producer position is read), every record that any record up to W
 * depends on has been read: the records up to W go out in time order. A ring keeps its records
 * where they are until they go out; a record older than the one before it in its ring (its
 * producer was preempted between its clock and its reserve) is copied aside and merged from
 * there. Nothing waits for an idle ring.
 *
 * A realloc is an allocation and a release at once. Its entry writes an AT_PROBE_REALLOC_ENTRY
 * record; its own record, at the return, carries the entry's time. The output stops at the entry
 * record until the return has been read (the old block may go to another thread before realloc
 * returns), then holds the realloc until its return time, unless an allocation of its old address
 * comes first: then it goes just before that allocation. An entry whose return is still missing
 * after one to two ticks is given up on (counted lost; the return, if it comes within
 * AT_REORDER_GIVEN_UP_KEPT_NS, is dropped; a tick forgets older ones).
 *
 * Marks (at_reorder_mark) go out between the records before a time and those after it. Nothing
 * here allocates after init. */
#ifndef ALLOCTAP_REORDER_H
#define ALLOCTAP_REORDER_H

#include <linux/types.h>
#include <stdint.h>

#include "alloctap.h"
#include "ring.h"

typedef void (*at_emit_fn)(void *arg, const struct at_record *r);
/* Called where a mark stands in the output (at_reorder_mark). */
typedef void (*at_mark_fn)(void *arg);

#define AT_REORDER_MARKS 64
/* Late records (older than the one before them in their ring) held out of their ring at once,
 * and reallocs held until their return time. */
#define AT_REORDER_LATE 4096
/* A ring's drained time must pass a record's by this much before the record goes out: the
 * daemon's clock and the program's are the same clock read through two paths (the vDSO's and
 * the kernel's NMI-safe one), which may differ by microseconds while the clock's rate is being
 * adjusted. */
#define AT_REORDER_CLOCK_SLACK_NS 20000
/* How long a realloc given up on is remembered, so that its return, if it still comes, is
 * dropped (a tick forgets older ones: their threads died inside the call). */
#define AT_REORDER_GIVEN_UP_KEPT_NS (10ull * 1000000000ull)

struct at_reorder_ring;
struct at_reorder_held;

struct at_reorder {
	struct at_reorder_ring *rings;
	unsigned nrings;
	uint64_t *head_times;   /* each ring's first record's time, side by side */
	uint64_t *skips;        /* each ring's positions of records copied out */
	uint64_t safe;          /* records up to this time may go out (every ring's drained) */
	uint64_t out;           /* the time of the last record that went out */
	uint64_t last_now;      /* the time of the last drain */
	uint64_t tick_now;      /* last_now at the last tick */
	uint64_t give_up;       /* realloc entries before it whose return is missing are given up */
	/* records copied out of their ring: a min-heap by time of late records, and reallocs
	 * (returns read, waiting for their entry; then held until their return time) */
	struct at_record *late; /* heap of max_copied */
	unsigned nlate, max_copied;
	struct at_reorder_held *held; /* returns waiting for their entry, and given up on */
	unsigned held_cap;            /* entries of held: doubles as needed, up to max_held */
	unsigned max_held, nheld;
	struct at_record *waiting; /* reallocs held until their return time */
	unsigned nwaiting;
	at_emit_fn emit;
	at_mark_fn mark;        /* NULL: marks are dropped */
	void *arg;
	uint64_t marks[AT_REORDER_MARKS]; /* times before which a mark goes, ascending */
	unsigned nmarks;
	/* accounting */
	uint64_t emitted;       /* records handed to emit */
	uint64_t taken;         /* records read from the rings */
	uint64_t settled;       /* of those, the ones out, given up on or dropped */
	uint64_t given_up;      /* reallocs given up on: their return never came in time */
	uint64_t late_returns;  /* returns read after their realloc was given up on (dropped) */
	uint64_t out_of_order;  /* records older than the one before them in their ring */
	uint64_t stalls;        /* readings stopped for want of room to copy a record out */
	uint64_t blocked_stalls; /* of those, with the output waiting at a realloc's entry */
	int blocked;            /* the last output stopped at a realloc's entry, of this time: */
	uint64_t blocked_at;
	uint64_t marks_dropped; /* marks asked for while AT_REORDER_MARKS were waiting */
	int discard;            /* set by the caller: every drain gives the rings back unread
				 * (at_reorder_drain) */
	uint64_t discarded;     /* records given back unread so */
};

/* Merges nrings rings (copied; r keeps its own reading state of each); max_returns: realloc
 * returns read and held out of their ring at once, until their entry goes out (a reading stops
 * when they are that many). 0, or -1 with errno. */
int at_reorder_init(struct at_reorder *r, const struct at_ring *rings, unsigned nrings,
		    unsigned max_returns, at_emit_fn emit, void *arg);
void at_reorder_free(struct at_reorder *r);

/* Reads every ring to its end at time now (CLOCK_MONOTONIC, taken before this call), emitting
 * every record that is in order and giving the rings back up to there. It reads in rounds of
 * 128 KB, all rings together, each round's records let out before the next round: a ring read
 * to its last record read in order, not to its end, is drained up to that record's time (every
 * record after it was reserved after that time). The records read. With r->discard, it gives
 * every ring back up to its producer position instead, reading none of its records (each
 * counted in r->discarded, reserved and written or not), and emits nothing: the records
 * discarded. */
uint64_t at_reorder_drain(struct at_reorder *r, uint64_t now);

/* Whether the last drain stopped a ring's reading at a record reserved and not yet written,
 * below that ring's producer position as the drain found it. */
int at_reorder_unwritten(const struct at_reorder *r);

/* Asks for a mark (r->mark is called) after every record before time `before` and before any
 * record from it on. A mark for a time already passed goes out at once. */
void at_reorder_mark(struct at_reorder *r, uint64_t before);

/* Called periodically: gives up on the realloc entries that were waiting for their return at
 * the last tick already. */
void at_reorder_tick(struct at_reorder *r);

/* End of input (the probes detached: nothing more will come): reads and emits everything,
 * giving up on the realloc entries whose return never came. */
void at_reorder_finish(struct at_reorder *r);

/* Events lost in the merge: the reallocs given up on, less those whose return the program
 * could not write (lost_returns: it counted them already). */
static inline uint64_t at_reorder_lost_events(const struct at_reorder *r, uint64_t lost_returns)
{
	return r->given_up > lost_returns ? r->given_up - lost_returns : 0;
}

/* The time before which every record read has gone out (the process table forgets and writes
 * what happened before it). */
uint64_t at_reorder_out_to(const struct at_reorder *r);

/* Records read but not yet out (they wait in their rings, or copied). */
static inline uint64_t at_reorder_backlog(const struct at_reorder *r)
{
	return r->taken - r->settled;
}

#endif
