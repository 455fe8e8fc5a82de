/* engine.h: replays munged events against the allocator the process runs with.
 *
 * The engine owns the slot array and the live-bytes accounting; it calls malloc and friends
 * and nothing else that allocates. Semantics (doc/LOGALLOC.md, section 3):
 *   malloc, calloc, memalign, aligned_alloc, valloc: the result goes into the result slot;
 *   posix_memalign: its pointer, or NULL when it returned an error;
 *   realloc(#a,n)=#b: the pointer is taken out of slot a (NULL if empty), then the result is
 *     stored in slot b (a and b may be the same slot);
 *   free(#a): frees what slot a holds (NULL if empty) and empties it.
 * A realloc that fails leaves slot b empty; the old block, still allocated, is not put back
 * (Firefox does the same). Every allocation fails the same way it would in a program: NULL.
 * A result slot that still holds a pointer is overwritten as Firefox's replay does: the old
 * block is leaked on purpose (it stays allocated, the allocator sees no free) and is counted in
 * `overwritten`; it leaves the live accounting, since the log says its address was reused. */
#ifndef ALLOCTAP_REPLAY_ENGINE_H
#define ALLOCTAP_REPLAY_ENGINE_H

#include <stdint.h>

#include "event.h"
#include "latency.h"
#include "slots.h"

#define RP_FILL_BYTE 0x55

enum rp_flags {
	RP_FILL = 1, /* -c: fill each new block (realloc: the grown part) with RP_FILL_BYTE */
	RP_SLOP = 2, /* -s: account malloc_usable_size - requested over live blocks */
};

struct rp_engine {
	struct rp_slots slots;
	unsigned flags;
	int have_pid;
	uint32_t pid;                   /* the process replayed: the first event's pid */
	uint64_t calls[AT_FUNC_COUNT];  /* events replayed, by function */
	uint64_t ops;                   /* allocation-family calls made (jemalloc_stats excluded) */
	uint64_t other_pid_events;      /* events of other processes, skipped */
	uint64_t live_bytes;            /* requested bytes of the blocks the slots hold */
	uint64_t peak_live_bytes;
	uint64_t live_objects;          /* slots holding a pointer */
	uint64_t slop_bytes;            /* with RP_SLOP: usable - requested over those blocks */
	uint64_t overwritten;           /* results stored over a slot still holding a pointer */
	uint64_t failed;                /* allocations of a non-zero size that returned NULL */
	void *taken;                    /* after a step: the pointer free or realloc passed */
	void *result;                   /* after a step: the pointer the allocation returned */
	struct rp_latency *latency;     /* NULL, or where each call's time goes (latency.h) */
	int has_bad_slot;               /* after RP_STEP_ERROR: whether the error is a slot number */
	uint64_t bad_slot;              /* beyond the limit, and which */
};

/* What rp_engine_step did. */
enum rp_step {
	RP_STEP_ERROR = -1, /* nothing done; *why says why (a slot beyond the limit) */
	RP_STEP_DONE = 0,   /* the call was made */
	RP_STEP_SKIPPED,    /* another process's event, ignored */
	RP_STEP_STATS,      /* jemalloc_stats(): the caller prints statistics now */
};

/* Sets up an engine whose slot numbers must stay below slot_limit. 0, or -1 with errno. */
int rp_engine_init(struct rp_engine *e, uint64_t slot_limit, unsigned flags);
/* Unmaps the slots. Blocks still held are left allocated (the process is about to end). */
void rp_engine_fini(struct rp_engine *e);
/* Replays one munged event. The first event fixes the process replayed. With e->latency set,
 * the time of the call (the clock read just before and after it) goes into that histogram. */
static inline enum rp_step rp_engine_step(struct rp_engine *e, const struct at_event *ev,
					  const char **why);
/* The two halves of a step. rp_engine_admit checks ev (its process, function and slots, the
 * first event fixing the process) and marks its slots used: RP_STEP_DONE when it may be
 * replayed, RP_STEP_SKIPPED or RP_STEP_ERROR as for a step. rp_engine_call replays an admitted
 * event: RP_STEP_DONE, or RP_STEP_STATS for jemalloc_stats(). */
enum rp_step rp_engine_admit(struct rp_engine *e, const struct at_event *ev, const char **why);
enum rp_step rp_engine_call(struct rp_engine *e, const struct at_event *ev);

static inline enum rp_step rp_engine_step(struct rp_engine *e, const struct at_event *ev,
					  const char **why)
{
	enum rp_step r = rp_engine_admit(e, ev, why);

	return r == RP_STEP_DONE ? rp_engine_call(e, ev) : r;
}

#endif
