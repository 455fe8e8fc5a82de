/* oplist.h: a munged trace loaded whole before it is replayed, for a threaded replay and for
 * --emit.
 *
 * Each admitted event of the replayed process becomes an op, in log order, in mapped memory
 * (the allocator under test never sees the loading). Each recorded thread (tid) gets a replay
 * thread. An op depends on the ops it must follow: its own thread's previous op (implicit: a
 * replay thread runs its ops in order) and, for each slot it uses, the last earlier op of
 * another thread that used that slot: the allocation that filled the slot it frees or
 * reallocs, and the free that emptied the slot its result goes into (a slot holds one block at
 * a time). Every other pair of ops may run in any order, as they could in the program. A
 * jemalloc_stats() marker is a barrier: every op before it is done before it runs, none after
 * it starts before. */
#ifndef ALLOCTAP_REPLAY_OPLIST_H
#define ALLOCTAP_REPLAY_OPLIST_H

#include <stdint.h>

#include "event.h"

#define RP_MAX_THREADS 1024
#define RP_NO_OP UINT32_MAX
#define RP_MAX_OPS (UINT32_MAX - 2)

struct rp_oplist {
	struct at_event *ev;   /* the ops in log order; a marker's result holds its position
				* in the input (its line, or its event number for binary input) */
	uint32_t *thread;      /* each op's replay thread */
	uint32_t (*dep)[2];    /* the ops of other threads each op waits for (RP_NO_OP: none) */
	uint64_t n, cap;       /* ops, and room for them */
	uint32_t *last;        /* per slot: 1 + the last op that used it (0: none) */
	uint64_t slot_limit;
	uint32_t nthreads;
	uint32_t tid[RP_MAX_THREADS];  /* the recorded tid of each replay thread */
	uint32_t last_thread;          /* the thread of the last op added (a lookup cache) */
	uint64_t markers;              /* jemalloc_stats() ops */
	uint64_t live_bytes;           /* requested bytes live in log order, and their peak */
	uint64_t peak_live_bytes;
};

/* Sets up an empty list for slots below slot_limit. 0, or -1 with errno. */
int rp_oplist_init(struct rp_oplist *ol, uint64_t slot_limit);
void rp_oplist_fini(struct rp_oplist *ol);
/* Appends an admitted event (rp_engine_admit said RP_STEP_DONE); pos is its line or event
 * number. 0, or -1 with errno: ENOMEM, E2BIG past RP_MAX_OPS ops, EMLINK past RP_MAX_THREADS
 * threads. */
int rp_oplist_add(struct rp_oplist *ol, const struct at_event *ev, uint64_t pos);

#endif
