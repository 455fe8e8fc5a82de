/* oplist.h: a munged trace loaded whole before it is replayed, for a threaded replay and for
 * --emit.
 *
 * Each admitted event of the replayed process becomes an op, in log order, in mapped memory
 * (the allocator under test never sees the loading). Each recorded thread (tid) gets a replay
 * thread. Slots are renamed as the ops are loaded: every allocation stores its block in a slot
 * of its own (its instance, 1, 2, ... in log order), and a free or realloc takes the block
 * from the instance that held the slot at that point of the log (instance 0, always empty,
 * when the slot was empty). So no two ops share a slot unless one made the block the other
 * releases, and an op depends only on what the program's call depended on: its own thread's
 * previous op (implicit: a replay thread runs its ops in order) and, for a free or realloc,
 * the allocation of the block it releases when another thread made it. A slot reused by the
 * recording's allocator across threads is no dependency. Each thread's instances are numbered
 * together (rp_oplist_finish), so that threads do not write to the same cache lines of the
 * slot array. A jemalloc_stats() marker is a
 * barrier: every op before it is done before it runs, none after it starts before. */
#ifndef ALLOCTAP_REPLAY_OPLIST_H
#define ALLOCTAP_REPLAY_OPLIST_H

#include <stdint.h>

#include "event.h"

#define RP_MAX_THREADS 1024
#define RP_NO_OP UINT32_MAX
#define RP_MAX_OPS (UINT32_MAX - 2)

struct rp_oplist {
	struct at_event *ev;   /* the ops in log order, slots renamed to instances; a marker's
				* result holds its position in the input (its line, or its event
				* number for binary input) */
	uint32_t *thread;      /* each op's replay thread (RP_NO_OP for a marker) */
	uint32_t *dep;         /* the op of another thread each op waits for (RP_NO_OP: none) */
	uint8_t *awaited;      /* 1 for an op another op waits for */
	uint64_t n, cap;       /* ops, and room for them */
	uint32_t *holder;      /* per slot of the log: 1 + the op whose block it holds (0: empty) */
	uint64_t slot_limit;   /* slots of the log, and instances, stay below this */
	uint64_t instances;    /* instances handed out (the highest instance number) */
	uint32_t nthreads;
	uint32_t tid[RP_MAX_THREADS];  /* the recorded tid of each replay thread */
	uint32_t last_thread;          /* the thread of the last op added (a lookup cache) */
	uint64_t markers;              /* jemalloc_stats() ops */
	uint64_t overwritten;          /* allocations into a slot still holding a block */
	uint64_t live_bytes;           /* requested bytes live in log order, and their peak */
	uint64_t peak_live_bytes;
};

/* Sets up an empty list for slots below slot_limit. 0, or -1 with errno. */
int rp_oplist_init(struct rp_oplist *ol, uint64_t slot_limit);
void rp_oplist_fini(struct rp_oplist *ol);
/* Appends an admitted event (rp_engine_admit said RP_STEP_DONE); pos is its line or event
 * number. 0, or -1 with errno: ENOMEM, E2BIG past RP_MAX_OPS ops or slot_limit - 1
 * allocations, EMLINK past RP_MAX_THREADS threads. */
int rp_oplist_add(struct rp_oplist *ol, const struct at_event *ev, uint64_t pos);

/* Gives the instances their numbers once every op is added: each thread's allocations in one
 * range, in log order (the free or realloc of a block then names its instance). 0. */
int rp_oplist_finish(struct rp_oplist *ol);

#endif
