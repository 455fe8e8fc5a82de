/* sink_thread.c: a sink's events written from a thread of its own (sink.h,
 * at_sink_thread_start). One producer (the caller of at_sink_put) and one writer share a ring
 * of events: the producer publishes its tail every AT_SINK_PUBLISH events and at every kick,
 * sync or wait (a store per event would take the tail's line from the writer's core at every
 * event while the writer keeps up), the writer its head every 256, each with release; the
 * writer sleeps on an empty ring until kicked (a kick wakes it for AT_SINK_KICK_MIN items
 * queued at least; a quarter of the ring, or a sync, wakes it anyway), the producer on a full
 * one until the writer has made room, and a sync waits until the writer has written
 * everything queued. A record (a stack, a mapping, a thread's end...) travels in the ring too,
 * as a copy the writer frees once written, so that the producer never waits for the writer but
 * when the ring is full or the copies queued hold AT_SINK_RECORD_BYTES. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>

#include "sink.h"
#include "sink_thread.h"

struct at_sink_thread {
	struct at_sink *sink;
	struct at_event *items;
	uint64_t mask;
	/* each on a cache line of its own: the producer writes tail at every event */
	_Alignas(64) uint64_t head;   /* written by the writer, read by both */
	_Alignas(64) uint64_t tail;   /* written by the producer, read by both */
	_Alignas(64) uint64_t next;   /* the producer's own: where its next event goes */
	_Alignas(64) uint64_t record_bytes; /* of the record copies queued: both write it */
	_Alignas(64) int writer_waiting, producer_waiting, stop;
	pthread_mutex_t lock;
	pthread_cond_t wake, room;  /* the writer's, the producer's */
	pthread_t thread;
};

/* How many items ahead of its next one the producer asks for an item's line. */
#define AT_SINK_PREFETCH 8
/* Items that must wait unwritten for a kick to wake the writer. */
#define AT_SINK_KICK_MIN 4096
/* Events the producer queues between two publications of its tail. */
#define AT_SINK_PUBLISH 32
/* The func of a ring item that carries a record copy (arg[0]) of arg[1] bytes: no event's. */
#define AT_SINK_ITEM_RECORD 0xFF

static uint64_t load(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static void store(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}

/* The writer sleeps until the producer queued past head, or stops. 0 to go on, -1 to end. */
static int writer_wait(struct at_sink_thread *t, uint64_t head)
{
	pthread_mutex_lock(&t->lock);
	__atomic_store_n(&t->writer_waiting, 1, __ATOMIC_SEQ_CST);
	if (t->producer_waiting)
		pthread_cond_broadcast(&t->room); /* a sync waits for the empty ring */
	while (load(&t->tail) == head && !t->stop)
		pthread_cond_wait(&t->wake, &t->lock);
	__atomic_store_n(&t->writer_waiting, 0, __ATOMIC_SEQ_CST);
	int end = t->stop && load(&t->tail) == head;
	pthread_mutex_unlock(&t->lock);
	return end ? -1 : 0;
}

/* Writes one item of the ring: an event, or a record whose copy it then frees. */
static void write_item(struct at_sink_thread *t, const struct at_event *item)
{
	if (item->func != AT_SINK_ITEM_RECORD) {
		at_sink_put_now(t->sink, item);
		return;
	}
	struct at_sink_record *r = (struct at_sink_record *)(uintptr_t)item->arg[0];

	at_sink_put_record_now(t->sink, r);
	free(r);
	__atomic_fetch_sub(&t->record_bytes, item->arg[1], __ATOMIC_RELEASE);
}

static void *writer(void *arg)
{
	struct at_sink_thread *t = arg;
	uint64_t head = t->head;

	pthread_setname_np(pthread_self(), "sink-writer");

	for (;;) {
		uint64_t tail = load(&t->tail);

		if (head == tail) {
			if (writer_wait(t, head) < 0)
				break;
			continue;
		}
		while (head != tail) {
			write_item(t, &t->items[head & t->mask]);
			head++;
			if (!(head & 255))
				__atomic_store_n(&t->head, head, __ATOMIC_RELEASE);
		}
		store(&t->head, head);
		if (__atomic_load_n(&t->producer_waiting, __ATOMIC_SEQ_CST)) {
			pthread_mutex_lock(&t->lock);
			pthread_cond_broadcast(&t->room);
			pthread_mutex_unlock(&t->lock);
		}
	}
	return NULL;
}

int at_sink_thread_start(struct at_sink *s, unsigned log2)
{
	struct at_sink_thread *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	t->items = calloc((size_t)1 << log2, sizeof(*t->items));
	t->mask = ((uint64_t)1 << log2) - 1;
	t->sink = s;
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->wake, NULL);
	pthread_cond_init(&t->room, NULL);
	/* the writer takes no signal: they are the caller's (a program that waits for them in
	 * ppoll or sigwait must get them itself) */
	sigset_t all, before;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &before);
	int err = t->items ? pthread_create(&t->thread, NULL, writer, t) : ENOMEM;
	pthread_sigmask(SIG_SETMASK, &before, NULL);
	if (err) {
		free(t->items);
		free(t);
		errno = err;
		return -1;
	}
	s->thread = t;
	return 0;
}

/* Wakes the writer if it sleeps (the fence orders the tail's store before the look at the
 * writer's flag, as the writer orders its flag's store before its look at the tail). */
static void wake_writer(struct at_sink_thread *t)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&t->writer_waiting, __ATOMIC_SEQ_CST))
		return;
	pthread_mutex_lock(&t->lock);
	pthread_cond_signal(&t->wake);
	pthread_mutex_unlock(&t->lock);
}

/* The producer's events queued so far, seen by the writer from now on. */
static void publish(struct at_sink_thread *t)
{
	if (t->next != t->tail)
		__atomic_store_n(&t->tail, t->next, __ATOMIC_RELEASE);
}

/* The producer waits, the writer woken, until the writer's head is at least `until`. */
static void wait_head(struct at_sink_thread *t, uint64_t until)
{
	publish(t);
	if (load(&t->head) >= until)
		return;
	pthread_mutex_lock(&t->lock);
	__atomic_store_n(&t->producer_waiting, 1, __ATOMIC_SEQ_CST);
	pthread_cond_signal(&t->wake);
	while (load(&t->head) < until)
		pthread_cond_wait(&t->room, &t->lock);
	__atomic_store_n(&t->producer_waiting, 0, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&t->lock);
}

void at_sink_thread_put(struct at_sink_thread *t, const struct at_event *ev)
{
	uint64_t next = t->next;

	if (next - __atomic_load_n(&t->head, __ATOMIC_ACQUIRE) > t->mask)
		wait_head(t, next - t->mask);
	/* the item's line, last read by the writer a lap ago, is asked for ahead: its store
	 * would otherwise wait for it */
	__builtin_prefetch(&t->items[(next + AT_SINK_PREFETCH) & t->mask], 1);
	t->items[next & t->mask] = *ev;
	t->next = ++next;
	if (!(next & (t->mask >> 2))) { /* a quarter of the ring queued since the last */
		publish(t);
		wake_writer(t);
	} else if (!(next & (AT_SINK_PUBLISH - 1))) {
		publish(t);
	}
}

int at_sink_thread_put_record(struct at_sink_thread *t, const struct at_sink_record *r)
{
	size_t bytes;
	struct at_sink_record *c = at_sink_record_copy(r, &bytes);

	if (!c)
		return -1;
	if (__atomic_load_n(&t->record_bytes, __ATOMIC_ACQUIRE) + bytes > AT_SINK_RECORD_BYTES)
		at_sink_thread_sync(t); /* the writer frees every copy queued */
	__atomic_fetch_add(&t->record_bytes, bytes, __ATOMIC_RELAXED);
	struct at_event item = { .func = AT_SINK_ITEM_RECORD,
				 .arg = { (uint64_t)(uintptr_t)c, bytes } };

	at_sink_thread_put(t, &item);
	return 0;
}

void at_sink_thread_kick(struct at_sink_thread *t)
{
	publish(t);
	if (t->next - __atomic_load_n(&t->head, __ATOMIC_ACQUIRE) >= AT_SINK_KICK_MIN)
		wake_writer(t);
}

void at_sink_thread_sync(struct at_sink_thread *t)
{
	wait_head(t, t->next);
}

void at_sink_thread_stop(struct at_sink *s)
{
	struct at_sink_thread *t = s->thread;

	if (!t)
		return;
	at_sink_thread_sync(t);
	pthread_mutex_lock(&t->lock);
	t->stop = 1;
	pthread_cond_signal(&t->wake);
	pthread_mutex_unlock(&t->lock);
	pthread_join(t->thread, NULL);
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->wake);
	pthread_cond_destroy(&t->room);
	free(t->items);
	free(t);
	s->thread = NULL;
}
