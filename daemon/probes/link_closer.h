/* link_closer.h: closing descriptors whose close blocks, on threads of their own. Destroying a
 * uprobe link waits for the kernel's grace periods (doc/DESIGN.md, decision 11, measures it),
 * so the links of a process that ended are handed here and the daemon's loop goes on at once.
 * The closing threads are started at the first hand-over and block every signal (the loop
 * takes them). Starts zeroed; not for use from several threads at once. */
#ifndef ALLOCTAP_LINK_CLOSER_H
#define ALLOCTAP_LINK_CLOSER_H

#include <pthread.h>
#include <stdint.h>

/* Threads that close at most at once: destroys that run side by side share their grace
 * periods, so a thread is started for each descriptor waiting, up to this many. */
#define AT_CLOSER_THREADS 256
/* A descriptor waits this long after it was handed over before it is closed, so that a
 * process's leader that exits just after another process ended holds the closes (hold)
 * before the first of them starts. */
#define AT_CLOSER_LINGER_NS (50 * 1000000ull)

struct at_link_closer {
	pthread_mutex_t lock;
	pthread_cond_t work;  /* threads with nothing to close now wait here, untimed */
	pthread_cond_t timer; /* the one thread that waits for the oldest descriptor's time */
	pthread_cond_t idle;
	int *fds;            /* handed over, not taken by a thread yet: fds[first..n) */
	uint64_t *put_ns;    /* when each was handed over, oldest first */
	unsigned first, n, cap;
	unsigned busy;       /* descriptors a thread is closing now */
	unsigned waiting;    /* threads waiting on work */
	int timing;          /* a thread waits on timer */
	const volatile uint64_t *hold; /* NULL, or a count: nothing is closed while it is above 0
					* (but at_link_closer_finish closes everything) */
	pthread_t threads[AT_CLOSER_THREADS];
	unsigned nthreads;
	int ready, stopping;
	uint64_t closed;     /* descriptors closed, by the threads or by the caller */
	uint64_t timed_waits; /* waits for a descriptor's time or for the hold, all threads */
	int nice, nice_set;  /* the threads' priority, when set (else their creator's) */
};

/* Hands over n descriptors to be closed; the caller must not use them again. Each is closed
 * once AT_CLOSER_LINGER_NS have passed since it was handed over, and never while *hold is
 * above 0. Threads are started for those no idle thread is left for. When no thread can be
 * started or no memory had, they are closed here, before the return. One thread at most waits
 * with a timeout at any time, so descriptors waiting cost no thread a wakeup but that one. */
void at_link_closer_put(struct at_link_closer *c, const int *fds, unsigned n);

/* Closes every descriptor handed over, now (in parallel, whatever their age and the hold),
 * waits until all are closed, then stops the threads. The closer can be used again after. */
void at_link_closer_finish(struct at_link_closer *c);

#endif
