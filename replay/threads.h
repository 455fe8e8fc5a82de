/* threads.h: replaying a loaded trace (oplist.h), each recorded thread on a thread of its own
 * or all in log order on the calling thread.
 *
 * Threaded: every replay thread runs its own ops in order; before an op it waits for the ops
 * of other threads it depends on (spinning briefly, then sleeping on a futex), and after it
 * marks it done. Threads are created, with stacks mapped by the replayer, before the clock
 * starts and all start at one instant; the replayer itself makes no allocation while
 * replaying. The C library allocates each thread's TLS vector (calloc) in pthread_create and
 * frees it in pthread_join: those two calls per thread reach the allocator outside the timed
 * replay, on the main thread, which replays nothing. At a jemalloc_stats() marker every thread
 * stops, the statistics line is printed, then all go on. */
#ifndef ALLOCTAP_REPLAY_THREADS_H
#define ALLOCTAP_REPLAY_THREADS_H

#include <stdint.h>

#include "engine.h"
#include "oplist.h"

/* Per-op pointers, for --emit: what free and realloc passed, what each allocation returned.
 * A threaded replay also numbers the calls in the order they happened, as alloctapd does: a
 * free takes its number before the call, an allocation after it, a realloc one before (its
 * release) and one after (its allocation); the numbers of a replay are 0, 1, ... with none
 * left out. */
struct rp_results {
	void **taken, **result; /* ol->n entries each, mapped */
	uint64_t *seq, *seq_entry; /* threaded replays: each op's number (a realloc's return),
				    * and a realloc's entry number */
	uint64_t n, numbers;       /* ops, and numbers handed out (threaded) */
};

int rp_results_init(struct rp_results *r, uint64_t n);
void rp_results_fini(struct rp_results *r);

struct rp_thread_figures {
	uint32_t tid;     /* the recorded thread it replays */
	uint64_t ops;     /* calls it made */
	uint64_t waits;   /* ops that had to wait for another thread */
	uint64_t wait_ns; /* time spent waiting */
};

struct rp_threads_run {
	uint64_t wall_ns;
	uint32_t nthreads;
	struct rp_thread_figures *thread; /* nthreads entries, mapped; rp_threads_run_fini frees */
};

/* Replays ol on ol->nthreads threads with e's slots, flags and latency histogram; the
 * threads' counters (calls, live bytes and objects, failures...) are added into e at the end,
 * and e's peak is the log order's. unit names a marker's position in the statistics line
 * ("line" or "event"). res (NULL: none) receives each op's pointers. 0, or -1 with errno when
 * the threads could not be set up (nothing was replayed then). */
int rp_replay_threads(struct rp_oplist *ol, struct rp_engine *e, const char *unit,
		      struct rp_results *res, struct rp_threads_run *run);
void rp_threads_run_fini(struct rp_threads_run *run);

/* Replays ol in log order on the calling thread; *wall_ns receives the time it took. */
void rp_replay_serial(struct rp_oplist *ol, struct rp_engine *e, const char *unit,
		      struct rp_results *res, uint64_t *wall_ns);

#endif
