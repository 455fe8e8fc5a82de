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
 * when the ring is full or the copies queued hold AT_SINK_RECORD_BYTES.
 *
 * With encoders (2 or more), the producer cuts the ring into chunks of chunk_items (and cuts
 * the one begun at every sync). Each encoder takes the next chunk, encodes it into an lz4 frame
 * in memory (a memfd), waits for its turn (the chunks in the order cut) and copies the frame to
 * the sink's file: the frames follow each other as the events do, each a whole trace whose
 * stacks go on from the frames before it (doc/FORMAT.md 2.1). The head moves past a chunk once
 * its frame is written.
 *
 * A frame costs bytes (its coding starts over), so the next chunk is the encoder's that took
 * the last one as long as that one is not busy with it: an encoder that keeps up takes every
 * chunk and goes on in its frame, a chunk after another; another encoder takes a chunk only
 * while it is busy, in a frame of its own. Such frames carry no content checksum: the turn that
 * writes another encoder's frame, or the thread's end, writes the end mark of the frame left
 * open. (With AT_SINK_FRAME_EACH_RUN every chunk is a frame of its own, ended by its encoder:
 * the bytes do not depend on how fast the encoders were.) */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sink.h"
#include "sink_thread.h"

/* A run of the ring's items that one encoder encodes at once (into a frame of its own, or on
 * in the frame of its run before). */
struct at_sink_chunk {
	uint64_t start, end;    /* [start, end) */
	uint32_t stacks_before; /* the trace's stacks defined by the items before start */
};

/* What a frame's encoding counted, added to the sink's in its turn. */
struct at_sink_frame_counts {
	uint64_t written, content_bytes, refused, lost;
	int err; /* the first error of a record refused or of the encoding */
	int goes_on; /* the chunk went on in the frame of the encoder's chunk before it */
};

/* One of the threads that encode frames. */
struct at_sink_encoder {
	struct at_sink_thread *t;
	pthread_t thread;
	int memfd;
	struct at_output out; /* the frame being encoded, into memfd */
	struct at_atz_writer *w; /* its writer, kept from frame to frame */
	struct at_atz_stats before; /* the writer's counters at the chunk's start */
	int index;
	int busy;            /* under lock: a chunk taken, its frame not yet written */
	uint64_t next_chunk; /* under lock: one past the last chunk it took */
};

/* Encoders at most, and the chunks cut and not yet written at most (a power of 2): 2 an
 * encoder, and one a sync cut. */
#define AT_SINK_ENCODERS_MAX 4
#define AT_SINK_CHUNKS 16

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
	/* frames encoded apart (encoders >= 2; else 0): the producer's, then the lock's */
	unsigned encoders;
	struct at_sink_encoder *enc;
	uint64_t chunk_items;    /* items of a chunk the producer cuts before a sync */
	uint64_t chunk_start;    /* the producer's: where the chunk it fills starts */
	uint32_t chunk_stacks;   /* the producer's: stacks put before chunk_start */
	struct at_sink_chunk chunks[AT_SINK_CHUNKS];
	uint64_t cut, taken, turn; /* under lock: chunks cut, taken by an encoder, written */
	pthread_cond_t work, turned; /* the encoders': a chunk cut, a frame written */
	int each_chunk;  /* AT_SINK_FRAME_EACH_RUN: every chunk a frame of its own */
	int last_taker;  /* under lock: the encoder that took the last chunk taken (-1: none) */
	int open;        /* the turn's: the encoder whose frame the file's bytes end in, not
			  * ended yet (-1: none) */
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

/* ---- frames encoded apart ------------------------------------------------------------- */

int at_sink_thread_frames(const struct at_sink_thread *t)
{
	return t->encoders != 0;
}

/* One item into the frame's writer w (NULL: it could not open): an event, or a record whose
 * copy it then frees. */
static void encode_item(struct at_sink_encoder *e, struct at_atz_writer *w,
			const struct at_event *item, struct at_sink_frame_counts *n)
{
	struct at_sink_thread *t = e->t;

	if (item->func != AT_SINK_ITEM_RECORD) {
		if (w && at_atz_append(w, item) < 0 && errno == EINVAL && !e->out.err)
			n->refused++; /* a stack id not written yet: refused, as by atz_put */
		return;
	}
	struct at_sink_record *r = (struct at_sink_record *)(uintptr_t)item->arg[0];

	if (w && at_sink_frame_record(w, r, &n->lost) < 0 && !n->err)
		n->err = errno ? errno : EIO;
	free(r);
	__atomic_fetch_sub(&t->record_bytes, item->arg[1], __ATOMIC_RELEASE);
}

/* Begins e's next frame, for a chunk after stacks_before stacks (the frame it wrote before,
 * if any, was ended: by e itself, or apart). 0, or -1 with errno. */
static int begin_frame(struct at_sink_encoder *e, uint32_t stacks_before)
{
	struct at_atz_options o;

	at_sink_frame_options(e->t->sink, stacks_before, &o);
	o.end_apart = !e->t->each_chunk;
	if (!e->w)
		return (e->w = at_atz_writer_open(&e->out, &o)) ? 0 : -1;
	if (o.end_apart && at_atz_writer_ended_apart(e->w) < 0)
		return -1;
	return at_atz_writer_next_frame(e->w, &o);
}

/* Encodes chunk c into e's memfd, in a frame of its own or, when n->goes_on, on in the frame
 * of e's chunk before it; counting into n. */
static void encode_chunk(struct at_sink_encoder *e, const struct at_sink_chunk *c,
			 struct at_sink_frame_counts *n)
{
	struct at_sink_thread *t = e->t;
	struct at_atz_stats st;

	if (!n->goes_on && begin_frame(e, c->stacks_before) < 0)
		n->err = errno ? errno : EIO;
	if (n->goes_on && !e->w)
		n->err = EIO;
	struct at_atz_writer *w = n->err ? NULL : e->w;

	for (uint64_t i = c->start; i != c->end; i++)
		encode_item(e, w, &t->items[i & t->mask], n);
	if (!w)
		return;
	if ((t->each_chunk ? at_atz_writer_end_frame(w) : at_atz_flush(w)) < 0 && !n->err)
		n->err = errno;
	at_atz_writer_stats(w, &st);
	n->written = st.events_written - e->before.events_written;
	n->content_bytes = st.content_bytes - e->before.content_bytes;
	e->before = st;
}

/* Copies the size bytes of fd through o (its buffer, its writes, its error). 0 or -1. */
static int copy_frame(int fd, uint64_t size, struct at_output *o)
{
	for (uint64_t at = 0; at < size && !o->err;) {
		char *d = at_output_reserve(o, 1u << 16);
		size_t room = AT_OUTPUT_BUFSIZE - o->len;
		ssize_t k = pread(fd, d, size - at < room ? (size_t)(size - at) : room, (off_t)at);

		if (k <= 0) {
			o->err = k < 0 ? errno : EIO;
			break;
		}
		at_output_commit(o, (size_t)k);
		at += (uint64_t)k;
	}
	return o->err ? -1 : at_output_flush(o);
}

/* The frame the file's bytes end in, if an encoder left it open, ends: its end mark. */
static void end_open_frame(struct at_sink_thread *t)
{
	struct at_output *o = &t->sink->out;

	if (t->open < 0)
		return;
	t->open = -1;
	if (!o->err) {
		memset(at_output_reserve(o, 4), 0, 4);
		at_output_commit(o, 4);
	}
}

/* In its turn: e's frame goes to the sink's file, after the frame the sink began itself (its
 * header, the records put before the thread started) and the end of another encoder's frame
 * left open, and its counts become the sink's (every event written once its blocks are). A
 * sink that failed takes no more frames. */
static void write_frame(struct at_sink_encoder *e, const struct at_sink_frame_counts *n)
{
	struct at_sink_thread *t = e->t;
	struct at_sink *s = t->sink;
	struct at_output *o = &s->out;

	at_sink_end_frame(s);
	if (!n->goes_on)
		end_open_frame(t);
	if (!t->each_chunk)
		t->open = e->index;
	if (!o->err)
		o->err = n->err ? n->err : e->out.err;
	s->content_bytes += n->content_bytes;
	s->refused += n->refused;
	s->lost += n->lost;
	if (!o->err && copy_frame(e->memfd, e->out.written, o) == 0)
		s->written += n->written;
	e->out.written = 0;
	if ((ftruncate(e->memfd, 0) < 0 || lseek(e->memfd, 0, SEEK_SET) < 0) && !e->out.err)
		e->out.err = errno;
}

/* Whether encoder e may take the next chunk (one is cut): the encoder that took the last one
 * takes it, unless that one is busy with it (under lock). */
static int may_take(const struct at_sink_thread *t, const struct at_sink_encoder *e)
{
	return t->taken != t->cut &&
	       (t->each_chunk || t->last_taker < 0 || t->last_taker == e->index ||
		t->enc[t->last_taker].busy);
}

/* Takes the next chunk cut that e may take (waits for one); whether it goes on in e's frame in
 * n->goes_on. 0, or -1 once the thread stops. */
static int take_chunk(struct at_sink_encoder *e, uint64_t *c, struct at_sink_chunk *chunk,
		      struct at_sink_frame_counts *n)
{
	struct at_sink_thread *t = e->t;

	pthread_mutex_lock(&t->lock);
	while (!may_take(t, e) && !(t->stop && t->taken == t->cut))
		pthread_cond_wait(&t->work, &t->lock);
	int end = t->taken == t->cut;

	if (!end) {
		*c = t->taken++;
		*chunk = t->chunks[*c & (AT_SINK_CHUNKS - 1)];
		n->goes_on = !t->each_chunk && t->last_taker == e->index && e->next_chunk == *c;
		t->last_taker = e->index;
		e->next_chunk = *c + 1;
		e->busy = 1;
	}
	pthread_mutex_unlock(&t->lock);
	return end ? -1 : 0;
}

static void *encoder(void *arg)
{
	struct at_sink_encoder *e = arg;
	struct at_sink_thread *t = e->t;
	struct at_sink_chunk chunk;
	uint64_t c;

	pthread_setname_np(pthread_self(), "sink-encoder");
	for (;;) {
		struct at_sink_frame_counts n = { 0 };

		if (take_chunk(e, &c, &chunk, &n) < 0)
			break;
		encode_chunk(e, &chunk, &n);
		pthread_mutex_lock(&t->lock);
		while (t->turn != c)
			pthread_cond_wait(&t->turned, &t->lock);
		pthread_mutex_unlock(&t->lock);
		write_frame(e, &n); /* the turn's own: no other encoder writes now */
		pthread_mutex_lock(&t->lock);
		t->turn++;
		e->busy = 0;
		store(&t->head, chunk.end);
		pthread_cond_broadcast(&t->turned);
		pthread_cond_broadcast(&t->room);
		pthread_mutex_unlock(&t->lock);
	}
	return NULL;
}

/* The producer's chunk, if it holds anything, goes to the encoders. There is room for it: the
 * chunks not yet written lie in the ring, each of chunk_items but the one a sync cut, and a
 * sync waits for them all. */
static void cut_chunk(struct at_sink_thread *t)
{
	if (t->next == t->chunk_start)
		return;
	pthread_mutex_lock(&t->lock);
	t->chunks[t->cut & (AT_SINK_CHUNKS - 1)] = (struct at_sink_chunk){
		.start = t->chunk_start, .end = t->next, .stacks_before = t->chunk_stacks };
	t->cut++;
	pthread_cond_broadcast(&t->work); /* the one it is for among them */
	pthread_mutex_unlock(&t->lock);
	t->chunk_start = t->next;
}

/* ---- starting and stopping ------------------------------------------------------------- */

/* Frees t and what it holds (its threads ended or never started). */
static void free_thread(struct at_sink_thread *t)
{
	for (unsigned i = 0; t->enc && i < t->encoders; i++) {
		if (t->enc[i].w)
			at_atz_writer_close(t->enc[i].w);
		if (t->enc[i].out.buf)
			at_output_close(&t->enc[i].out);
		if (t->enc[i].memfd >= 0)
			close(t->enc[i].memfd);
	}
	free(t->enc);
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->wake);
	pthread_cond_destroy(&t->room);
	pthread_cond_destroy(&t->work);
	pthread_cond_destroy(&t->turned);
	free(t->items);
	free(t);
}

/* Ends the threads started (every encoder up to n, or the writer) once all is written. */
static void end_threads(struct at_sink_thread *t, unsigned n)
{
	pthread_mutex_lock(&t->lock);
	t->stop = 1;
	pthread_cond_signal(&t->wake);
	pthread_cond_broadcast(&t->work);
	pthread_mutex_unlock(&t->lock);
	if (!t->encoders)
		pthread_join(t->thread, NULL);
	for (unsigned i = 0; i < n; i++)
		pthread_join(t->enc[i].thread, NULL);
}

/* Each encoder's memfd and output; 0, or an errno. */
static int open_encoders(struct at_sink_thread *t)
{
	t->enc = calloc(t->encoders, sizeof(*t->enc));
	if (!t->enc)
		return ENOMEM;
	for (unsigned i = 0; i < t->encoders; i++)
		t->enc[i].memfd = -1;
	for (unsigned i = 0; i < t->encoders; i++) {
		struct at_sink_encoder *e = &t->enc[i];

		e->t = t;
		e->index = (int)i;
		e->memfd = memfd_create("alloctap-frame", MFD_CLOEXEC);
		if (e->memfd < 0 || at_output_open_fd(&e->out, e->memfd, t->sink->out.name) < 0)
			return errno;
	}
	return 0;
}

/* The writer, or every encoder, started; 0, or an errno (none left running). */
static int start_threads(struct at_sink_thread *t)
{
	if (!t->encoders)
		return pthread_create(&t->thread, NULL, writer, t);
	int err = open_encoders(t);

	for (unsigned i = 0; !err && i < t->encoders; i++) {
		err = pthread_create(&t->enc[i].thread, NULL, encoder, &t->enc[i]);
		if (err)
			end_threads(t, i);
	}
	return err;
}

int at_sink_thread_start(struct at_sink *s, unsigned log2, unsigned encoders)
{
	struct at_sink_thread *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	t->items = calloc((size_t)1 << log2, sizeof(*t->items));
	t->mask = ((uint64_t)1 << log2) - 1;
	t->sink = s;
	t->each_chunk = (encoders & AT_SINK_FRAME_EACH_RUN) != 0;
	encoders &= ~AT_SINK_FRAME_EACH_RUN;
	t->last_taker = t->open = -1;
	t->encoders = encoders >= 2 && at_sink_frames_possible(s) ? encoders : 0;
	if (t->encoders > AT_SINK_ENCODERS_MAX)
		t->encoders = AT_SINK_ENCODERS_MAX;
	/* two chunks an encoder fill the ring (at most 8 < AT_SINK_CHUNKS, and one more a sync
	 * cut): each encoder finds the next chunk cut when it is done with one */
	t->chunk_items = t->encoders ? (t->mask + 1) / (2 * t->encoders) : 0;
	if (t->encoders && !t->chunk_items)
		t->chunk_items = 1;
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->wake, NULL);
	pthread_cond_init(&t->room, NULL);
	pthread_cond_init(&t->work, NULL);
	pthread_cond_init(&t->turned, NULL);
	/* the threads take no signal: they are the caller's (a program that waits for them in
	 * ppoll or sigwait must get them itself) */
	sigset_t all, before;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &before);
	int err = t->items ? start_threads(t) : ENOMEM;
	pthread_sigmask(SIG_SETMASK, &before, NULL);
	if (err) {
		free_thread(t);
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

/* at_sink_thread_put with encoders: the item goes into the producer's chunk, cut when full. */
static void put_in_chunk(struct at_sink_thread *t, const struct at_event *ev)
{
	uint64_t next = t->next;

	if (next - __atomic_load_n(&t->head, __ATOMIC_ACQUIRE) > t->mask)
		wait_head(t, next - t->mask);
	if (next == t->chunk_start)
		t->chunk_stacks = t->sink->stacks_put;
	__builtin_prefetch(&t->items[(next + AT_SINK_PREFETCH) & t->mask], 1);
	t->items[next & t->mask] = *ev;
	t->next = ++next;
	if (next - t->chunk_start >= t->chunk_items)
		cut_chunk(t);
}

void at_sink_thread_put(struct at_sink_thread *t, const struct at_event *ev)
{
	uint64_t next = t->next;

	if (t->encoders) {
		put_in_chunk(t, ev);
		return;
	}
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
	if (t->encoders)
		cut_chunk(t);
	wait_head(t, t->next);
}

void at_sink_thread_end_frame(struct at_sink_thread *t)
{
	at_sink_thread_sync(t);
	pthread_mutex_lock(&t->lock);
	t->last_taker = -1; /* the next chunk begins a frame */
	pthread_mutex_unlock(&t->lock);
	end_open_frame(t);
}

void at_sink_thread_stop(struct at_sink *s)
{
	struct at_sink_thread *t = s->thread;

	if (!t)
		return;
	at_sink_thread_end_frame(t);
	end_threads(t, t->encoders);
	free_thread(t);
	s->thread = NULL;
}
