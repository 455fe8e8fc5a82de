/* link_closer.c: closing descriptors whose close blocks, on threads of their own. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "link_closer.h"
#include "prim.h"

/* A closing thread's stack: it calls close and nothing else. */
#define CLOSER_STACK (64 * 1024)

/* How often the timing thread looks again while the hold is above 0. */
#define POLL_NS 10000000ull

/* How long until the oldest descriptor may be taken (the lock held): 0 now (told to stop, or
 * its linger is over and nothing holds the closes), UINT64_MAX when none waits. */
static uint64_t due_in(const struct at_link_closer *c)
{
	if (c->first == c->n)
		return UINT64_MAX;
	if (c->stopping)
		return 0;
	if (c->hold && *c->hold > 0)
		return POLL_NS;
	uint64_t age = at_now_ns() - c->put_ns[c->first];

	return age >= AT_CLOSER_LINGER_NS ? 0 : AT_CLOSER_LINGER_NS - age;
}

/* Waits on the timer for ns at most (the lock held). */
static void wait_timed(struct at_link_closer *c, uint64_t ns)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)(ns / 1000000000);
	ts.tv_nsec += (long)(ns % 1000000000);
	ts.tv_sec += ts.tv_nsec / 1000000000;
	ts.tv_nsec %= 1000000000;
	c->timing = 1;
	c->timed_waits++;
	pthread_cond_timedwait(&c->timer, &c->lock, &ts);
	c->timing = 0;
}

/* Wakes one thread to take a descriptor or to wait for the oldest one's time (the lock held):
 * one that waits untimed, else the timing one when what it waits for is now. */
static void wake_one(struct at_link_closer *c, uint64_t due)
{
	if (c->waiting)
		pthread_cond_signal(&c->work);
	else if (c->timing && due == 0)
		pthread_cond_signal(&c->timer);
}

/* Closes descriptors one at a time as they come due, until told to stop with none left. Of
 * the threads with nothing to close, one waits for the oldest descriptor's time; the others
 * wait untimed until a thread that takes a descriptor wakes one of them (each wakes the next,
 * so a thread is woken for each descriptor due and no more). */
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
		uint64_t due = due_in(c);

		if (due == UINT64_MAX && c->stopping)
			break;
		if (due == 0) {
			int fd = c->fds[c->first++];

			c->busy++;
			if (c->first == c->n)
				c->first = c->n = 0;
			else
				wake_one(c, due_in(c));
			pthread_mutex_unlock(&c->lock);
			close(fd);
			pthread_mutex_lock(&c->lock);
			c->busy--;
			c->closed++;
			if (c->first == c->n && c->busy == 0)
				pthread_cond_broadcast(&c->idle);
			continue;
		}
		if (due != UINT64_MAX && !c->timing) {
			wait_timed(c, due);
			continue;
		}
		c->waiting++;
		pthread_cond_wait(&c->work, &c->lock);
		c->waiting--;
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

/* Room for n more descriptors at the queue's end (the lock held): the taken ones at its start
 * are dropped first. 0, or -1. */
static int make_room(struct at_link_closer *c, unsigned n)
{
	if (c->first) {
		memmove(c->fds, c->fds + c->first, (c->n - c->first) * sizeof(*c->fds));
		memmove(c->put_ns, c->put_ns + c->first, (c->n - c->first) * sizeof(*c->put_ns));
		c->n -= c->first;
		c->first = 0;
	}
	if (c->n + n <= c->cap)
		return 0;
	unsigned cap = c->cap ? c->cap : 64;
	while (cap < c->n + n)
		cap *= 2;
	int *fds = realloc(c->fds, cap * sizeof(*fds));
	if (!fds)
		return -1;
	c->fds = fds;
	uint64_t *put_ns = realloc(c->put_ns, cap * sizeof(*put_ns));
	if (!put_ns)
		return -1;
	c->put_ns = put_ns;
	c->cap = cap;
	return 0;
}

/* Queues the n descriptors (the lock held) and makes sure a thread will take each. 1, or 0
 * when none is queued (no memory, or no thread). */
static int queue(struct at_link_closer *c, const int *fds, unsigned n)
{
	uint64_t now = at_now_ns();

	if (make_room(c, n) < 0)
		return 0;
	for (unsigned i = 0; i < n; i++) {
		c->fds[c->n] = fds[i];
		c->put_ns[c->n++] = now;
	}
	unsigned queued = c->n - c->first, idle = c->nthreads - c->busy;

	if (queued > idle)
		start_threads(c, queued - idle);
	if (c->nthreads == 0) {
		c->n -= n;
		return 0;
	}
	if (!c->timing)
		wake_one(c, 0);
	return 1;
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
		pthread_cond_init(&c->work, NULL);
		pthread_cond_init(&c->timer, &clock);
		pthread_cond_init(&c->idle, NULL);
		pthread_condattr_destroy(&clock);
		c->ready = 1;
	}
	pthread_mutex_lock(&c->lock);
	int queued = queue(c, fds, n);
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
	pthread_cond_broadcast(&c->timer);
	while (c->first != c->n || c->busy)
		pthread_cond_wait(&c->idle, &c->lock);
	pthread_mutex_unlock(&c->lock);
	for (unsigned i = 0; i < c->nthreads; i++)
		pthread_join(c->threads[i], NULL);
	c->nthreads = 0;
	c->stopping = 0;
	free(c->fds);
	free(c->put_ns);
	c->fds = NULL;
	c->put_ns = NULL;
	c->first = c->n = c->cap = 0;
}
