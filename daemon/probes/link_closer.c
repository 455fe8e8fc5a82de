/* link_closer.c: closing descriptors whose close blocks, on threads of their own. */
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "link_closer.h"
#include "prim.h"

/* A closing thread's stack: it calls close and nothing else. */
#define CLOSER_STACK (64 * 1024)

/* How often a thread looks again at the descriptors waiting (lingering or held). */
#define POLL_NS 10000000L

/* Whether a thread may take a descriptor now (the lock held): always when told to stop;
 * else when one waits, none has come for AT_CLOSER_LINGER_NS (or a batch waits) and nothing
 * holds the closes. */
static int may_close(struct at_link_closer *c)
{
	if (c->stopping)
		return 1;
	if (c->n == 0 || (c->hold && *c->hold > 0))
		return 0;
	return c->n >= AT_CLOSER_BATCH || at_now_ns() - c->last_put_ns >= AT_CLOSER_LINGER_NS;
}

/* Takes descriptors one at a time and closes them, until told to stop with none left. */
static void *closer_thread(void *arg)
{
	struct at_link_closer *c = arg;

	/* a close is background work: it must not take the CPU the traced processes and the
	 * loop wait for (the loop may run at a higher priority than the daemon was started at) */
	pthread_setname_np(pthread_self(), "link-closer");
	if (c->nice_set)
		setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), c->nice);
	pthread_mutex_lock(&c->lock);
	for (;;) {
		c->waiting++;
		while (!may_close(c)) {
			if (c->n == 0) {
				pthread_cond_wait(&c->work, &c->lock);
				continue;
			}
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_nsec += POLL_NS;
			ts.tv_sec += ts.tv_nsec / 1000000000;
			ts.tv_nsec %= 1000000000;
			pthread_cond_timedwait(&c->work, &c->lock, &ts);
		}
		c->waiting--;
		if (c->n == 0)
			break;
		int fd = c->fds[--c->n];
		c->busy++;
		pthread_mutex_unlock(&c->lock);
		close(fd);
		pthread_mutex_lock(&c->lock);
		c->busy--;
		c->closed++;
		if (c->n == 0 && c->busy == 0)
			pthread_cond_broadcast(&c->idle);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

/* Starts up to want more threads (the lock held), with every signal blocked in them. */
static void start_threads(struct at_link_closer *c, unsigned want)
{
	sigset_t all, old;
	unsigned limit = c->nthreads + want < AT_CLOSER_THREADS ? c->nthreads + want
								 : AT_CLOSER_THREADS;
	pthread_attr_t attr;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, CLOSER_STACK);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	while (c->nthreads < limit &&
	       pthread_create(&c->threads[c->nthreads], &attr, closer_thread, c) == 0)
		c->nthreads++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
}

/* Room for n more descriptors in the queue (the lock held). 0, or -1. */
static int make_room(struct at_link_closer *c, unsigned n)
{
	if (c->n + n <= c->cap)
		return 0;
	unsigned cap = c->cap ? c->cap : 64;
	while (cap < c->n + n)
		cap *= 2;
	int *fds = realloc(c->fds, cap * sizeof(*fds));
	if (!fds)
		return -1;
	c->fds = fds;
	c->cap = cap;
	return 0;
}

void at_link_closer_put(struct at_link_closer *c, const int *fds, unsigned n)
{
	if (n == 0)
		return;
	if (!c->ready) {
		pthread_condattr_t clock;

		pthread_condattr_init(&clock);
		pthread_condattr_setclock(&clock, CLOCK_MONOTONIC);
		pthread_mutex_init(&c->lock, NULL);
		pthread_cond_init(&c->work, &clock);
		pthread_cond_init(&c->idle, NULL);
		pthread_condattr_destroy(&clock);
		c->ready = 1;
	}
	pthread_mutex_lock(&c->lock);
	c->last_put_ns = at_now_ns();
	int queued = make_room(c, n) == 0;
	if (queued) {
		for (unsigned i = 0; i < n; i++)
			c->fds[c->n++] = fds[i];
		if (c->n > c->waiting)
			start_threads(c, c->n - c->waiting);
		queued = c->nthreads > 0;
		if (!queued)
			c->n -= n;
		pthread_cond_broadcast(&c->work);
	}
	pthread_mutex_unlock(&c->lock);
	if (queued)
		return;
	for (unsigned i = 0; i < n; i++)
		close(fds[i]);
	pthread_mutex_lock(&c->lock);
	c->closed += n;
	pthread_mutex_unlock(&c->lock);
}

void at_link_closer_finish(struct at_link_closer *c)
{
	if (c->nthreads == 0)
		return;
	pthread_mutex_lock(&c->lock);
	c->stopping = 1;
	pthread_cond_broadcast(&c->work);
	while (c->n || c->busy)
		pthread_cond_wait(&c->idle, &c->lock);
	pthread_mutex_unlock(&c->lock);
	for (unsigned i = 0; i < c->nthreads; i++)
		pthread_join(c->threads[i], NULL);
	c->nthreads = 0;
	c->stopping = 0;
	free(c->fds);
	c->fds = NULL;
	c->cap = 0;
}
