/* reorder.c: the merge of the event rings by time (reorder.h). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "prim.h"
#include "reorder.h"

#define RING_SKIPS 1024u /* late records copied out of one ring, not yet passed by its head */

/* One ring's reading: records in [head, scan) have been read and wait in the ring, in time
 * order but for those copied out: every realloc's return, and late records (their positions in
 * skips). */
struct at_reorder_ring {
	struct at_ring ring;
	uint64_t head;      /* the first record not yet out */
	uint64_t scan;      /* the first record not yet read */
	uint64_t end;       /* the producer's position when this drain began */
	uint64_t drained;   /* every record committed to the ring before this time has been read */
	uint64_t last;      /* the time of the last record read in order */
	uint64_t *head_time; /* the time of the record at head (UINT64_MAX: none waits), in the
			      * array of every ring's, r->head_times, which the merge scans */
	int stalled;        /* the last reading stopped for want of room to copy a record out */
	int cut;            /* the last reading stopped at its round's bytes, before end */
	uint64_t *skips;     /* RING_SKIPS positions, a circular queue */
	unsigned skip_first, nskips;
};

/* A realloc out of its ring: its return read, its entry not yet out (RETURNED); or its entry
 * given up on before its return was read (GIVEN_UP, the record holds the key only). Once its
 * entry is out, a realloc waits in r->waiting until its return time. */
enum held_state { HELD_FREE = 0, HELD_RETURNED, HELD_GIVEN_UP };

struct at_reorder_held {
	struct at_record rec;
	uint32_t state;
};

/* ---- the table of reallocs, by thread and entry time (open addressing) ------------------- */

/* The table starts at HELD_FIRST entries and doubles, up to max_held, when it is 3/4 full:
 * the reallocs out of their rings at once are few, and a table of its full size (several MB)
 * would take a cache miss at each look-up. */
#define HELD_FIRST 1024u

static unsigned held_slot(const struct at_reorder *r, uint32_t tid, uint64_t entry)
{
	uint64_t h = (entry ^ ((uint64_t)tid << 32)) * 0x9e3779b97f4a7c15ull;

	return (unsigned)(h >> 40) & (r->held_cap - 1);
}

/* The realloc of thread tid entered at entry, in any state; NULL when there is none. */
static struct at_reorder_held *held_find(struct at_reorder *r, uint32_t tid, uint64_t entry)
{
	for (unsigned i = held_slot(r, tid, entry), n = 0; n < r->held_cap;
	     i = (i + 1) & (r->held_cap - 1), n++) {
		struct at_reorder_held *h = &r->held[i];

		if (h->state == HELD_FREE)
			return NULL;
		if (h->rec.tid == tid && h->rec.time_entry == entry)
			return h;
	}
	return NULL;
}

/* Doubles the table, every entry placed again. 0, or -1 out of memory. */
static int held_grow(struct at_reorder *r)
{
	struct at_reorder_held *old = r->held;
	unsigned cap = r->held_cap;
	struct at_reorder_held *v = calloc((size_t)cap * 2, sizeof(*v));

	if (!v)
		return -1;
	r->held = v;
	r->held_cap = cap * 2;
	for (unsigned k = 0; k < cap; k++) {
		if (old[k].state == HELD_FREE)
			continue;
		unsigned i = held_slot(r, old[k].rec.tid, old[k].rec.time_entry);

		while (v[i].state != HELD_FREE)
			i = (i + 1) & (r->held_cap - 1);
		v[i] = old[k];
	}
	free(old);
	return 0;
}

/* A free entry for rec in state; NULL when the table is full (kept at most 3/4 full of
 * max_held, or out of memory to grow). */
static struct at_reorder_held *held_add(struct at_reorder *r, const struct at_record *rec,
					uint32_t state, unsigned *count)
{
	if (*count >= r->held_cap / 4 * 3 &&
	    (r->held_cap >= r->max_held || held_grow(r) < 0))
		return NULL;
	unsigned i = held_slot(r, rec->tid, rec->time_entry);

	while (r->held[i].state != HELD_FREE)
		i = (i + 1) & (r->held_cap - 1);
	r->held[i].rec = *rec;
	r->held[i].state = state;
	(*count)++;
	return &r->held[i];
}

/* Empties h, moving back the entries after it that probed past it. */
static void held_remove(struct at_reorder *r, struct at_reorder_held *h, unsigned *count)
{
	unsigned mask = r->held_cap - 1, hole = (unsigned)(h - r->held);

	for (unsigned i = (hole + 1) & mask; r->held[i].state != HELD_FREE; i = (i + 1) & mask) {
		unsigned home = held_slot(r, r->held[i].rec.tid, r->held[i].rec.time_entry);

		/* i may move to the hole when its home is not in (hole, i] */
		if (((i - home) & mask) >= ((i - hole) & mask)) {
			r->held[hole] = r->held[i];
			hole = i;
		}
	}
	r->held[hole].state = HELD_FREE;
	(*count)--;
}

/* ---- records copied out of order: a min-heap by time ------------------------------------- */

static void late_push(struct at_reorder *r, const struct at_record *rec)
{
	unsigned i = r->nlate++;

	while (i > 0 && r->late[(i - 1) / 2].time > rec->time) {
		r->late[i] = r->late[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	r->late[i] = *rec;
}

static void late_pop(struct at_reorder *r)
{
	struct at_record last = r->late[--r->nlate];
	unsigned i = 0;

	for (;;) {
		unsigned c = 2 * i + 1;

		if (c >= r->nlate)
			break;
		if (c + 1 < r->nlate && r->late[c + 1].time < r->late[c].time)
			c++;
		if (r->late[c].time >= last.time)
			break;
		r->late[i] = r->late[c];
		i = c;
	}
	if (r->nlate)
		r->late[i] = last;
}

/* ---- set up ------------------------------------------------------------------------------- */

int at_reorder_init(struct at_reorder *r, const struct at_ring *rings, unsigned nrings,
		    unsigned max_returns, at_emit_fn emit, void *arg)
{
	unsigned max_copied = AT_REORDER_LATE;

	memset(r, 0, sizeof(*r));
	r->nrings = nrings;
	r->max_copied = max_copied;
	r->max_held = 4;
	while (r->max_held / 4 * 3 < max_returns)
		r->max_held <<= 1;
	r->emit = emit;
	r->arg = arg;
	r->rings = calloc(nrings ? nrings : 1, sizeof(*r->rings));
	r->head_times = calloc(nrings ? nrings : 1, sizeof(*r->head_times));
	r->skips = calloc((size_t)(nrings ? nrings : 1) * RING_SKIPS, sizeof(*r->skips));
	r->late = calloc(max_copied ? max_copied : 1, sizeof(*r->late));
	r->held_cap = r->max_held < HELD_FIRST ? r->max_held : HELD_FIRST;
	r->held = calloc(r->held_cap, sizeof(*r->held));
	r->waiting = calloc(max_copied ? max_copied : 1, sizeof(*r->waiting));
	if (!r->rings || !r->head_times || !r->skips || !r->late || !r->held || !r->waiting) {
		at_reorder_free(r);
		errno = ENOMEM;
		return -1;
	}
	for (unsigned i = 0; i < nrings; i++) {
		struct at_reorder_ring *q = &r->rings[i];

		q->ring = rings[i];
		q->head = q->scan = at_ring_consumer(&q->ring);
		q->head_time = &r->head_times[i];
		q->skips = &r->skips[(size_t)i * RING_SKIPS];
		*q->head_time = UINT64_MAX;
	}
	r->nheld = 0;
	return 0;
}

void at_reorder_free(struct at_reorder *r)
{
	free(r->rings);
	free(r->head_times);
	free(r->skips);
	r->head_times = NULL;
	r->skips = NULL;
	free(r->late);
	free(r->held);
	free(r->waiting);
	r->waiting = NULL;
	r->rings = NULL;
	r->late = NULL;
	r->held = NULL;
	r->nrings = 0;
}

/* How far ahead of its reading a ring's lines are prefetched, in records (a line another core
 * wrote takes longer to come than 8 records take to read). */
#define AT_REORDER_PREFETCH 16

/* ---- reading a ring ---------------------------------------------------------------------- */

/* A realloc's own record (at its return), whose entry record was written. */
static int is_realloc_return(const struct at_record *rec)
{
	return rec->func < AT_PROBE_THREAD_END && at_probe_reallocates(rec->func) &&
	       !(rec->flags & AT_REC_NO_ENTRY);
}

/* A realloc's return, read: kept until its entry goes out; dropped when the entry was given up
 * on. 0, or -1 when there is no room (the ring's reading stops there). */
static int take_return(struct at_reorder *r, const struct at_record *rec)
{
	struct at_reorder_held *h = held_find(r, rec->tid, rec->time_entry);

	if (h && h->state == HELD_GIVEN_UP) {
		held_remove(r, h, &r->nheld);
		r->late_returns++;
		r->settled++;
		return 0;
	}
	return held_add(r, rec, HELD_RETURNED, &r->nheld) ? 0 : -1;
}

/* Reads record rec at pos of q. 0, or -1 when it must stay unread for now (no room). */
static int take(struct at_reorder *r, struct at_reorder_ring *q, uint64_t pos,
		const struct at_record *rec)
{
	if (is_realloc_return(rec)) { /* passed over by its content */
		if (take_return(r, rec) < 0)
			return -1;
		if (rec->time > q->last)
			q->last = rec->time;
	} else if (rec->time < q->last) {
		if (q->nskips == RING_SKIPS || r->nlate == r->max_copied)
			return -1;
		late_push(r, rec);
		r->out_of_order++;
		q->skips[(q->skip_first + q->nskips++) % RING_SKIPS] = pos;
	} else {
		q->last = rec->time;
	}
	r->taken++;
	return 0;
}

/* Whether the record at pos, read, is one the merge passes over (copied out, or given up); a
 * skip it passes is forgotten. */
static int passed_over(struct at_reorder_ring *q, uint64_t pos)
{
	if (q->nskips && q->skips[q->skip_first] == pos) {
		q->skip_first = (q->skip_first + 1) % RING_SKIPS;
		q->nskips--;
		return 1;
	}
	return at_ring_state(&q->ring, pos) == AT_RING_DISCARDED ||
	       is_realloc_return(at_ring_record(&q->ring, pos));
}

/* Moves q's head to its first record that waits there, and notes that record's time. */
static void settle_head(struct at_reorder_ring *q)
{
	while (q->head < q->scan) {
		if (!passed_over(q, q->head)) {
			*q->head_time = at_ring_record(&q->ring, q->head)->time;
			return;
		}
		q->head++;
	}
	*q->head_time = UINT64_MAX;
}

/* A ring read up to its last record read in order, and no further: drained up to that
 * record's time. Every record after it in the ring was reserved after that record, which read
 * its clock before its own reserve, so a record that depends on one not yet read has a later
 * time (a record's time, not the daemon's clock: no slack, which safe_time takes off). */
static void drained_to_last(struct at_reorder_ring *q, uint64_t now)
{
	uint64_t last = q->last + AT_REORDER_CLOCK_SLACK_NS;

	if (last > q->drained)
		q->drained = last < now ? last : now;
}

/* Reads q to the producer's position as this drain found it, at most `bytes` of records; q is
 * drained at now when nothing stopped the reading there (a record still being written, no
 * room to copy one out, or the bytes read). A reading stopped for want of room or at its bytes
 * counts q drained up to its last record read in order instead (drained_to_last), so that the
 * output moves on; r->stalls counts the first. */
static void scan_ring(struct at_reorder *r, struct at_reorder_ring *q, uint64_t now,
		      uint64_t bytes)
{
	uint64_t left = q->end > q->scan ? q->end - q->scan : 0, most = bytes / AT_RING_STEP;
	uint64_t end = left > most ? q->scan + most : q->scan + left;

	q->stalled = 0;
	q->cut = 0;
	while (q->scan < end) {
		/* the records were written on another CPU: their lines are asked for well ahead */
		__builtin_prefetch(at_ring_record(&q->ring, q->scan + AT_REORDER_PREFETCH));
		enum at_ring_state state = at_ring_state(&q->ring, q->scan);

		if (state == AT_RING_UNWRITTEN)
			break;
		if (state == AT_RING_WRITTEN &&
		    take(r, q, q->scan, at_ring_record(&q->ring, q->scan)) < 0) {
			q->stalled = 1;
			break;
		}
		q->scan++;
	}
	if (q->scan >= q->end) {
		q->drained = now;
	} else if (q->stalled) {
		drained_to_last(q, now);
		r->stalls++;
	} else if (q->scan >= end) {
		q->cut = 1;
		drained_to_last(q, now);
	}
	if (*q->head_time == UINT64_MAX)
		settle_head(q);
}

/* ---- the output -------------------------------------------------------------------------- */

static int allocates(const struct at_record *rec)
{
	return !at_probe_frees(rec->func) && rec->result != 0;
}

/* Takes waiting realloc i out of the list. */
static struct at_record take_waiting(struct at_reorder *r, unsigned i)
{
	struct at_record rec = r->waiting[i];

	r->waiting[i] = r->waiting[--r->nwaiting];
	return rec;
}

/* Emits rec; first emits any waiting realloc whose old address rec allocates (same process). */
static void emit_in_order(struct at_reorder *r, const struct at_record *rec)
{
	if (allocates(rec)) {
		for (unsigned i = 0; i < r->nwaiting;) {
			const struct at_record *w = &r->waiting[i];

			if (w->pid == rec->pid && w->arg[0] == rec->result && w->arg[0] != 0) {
				struct at_record held = take_waiting(r, i);

				emit_in_order(r, &held);
				i = 0; /* the list changed */
				continue;
			}
			i++;
		}
	}
	r->emit(r->arg, rec);
	r->emitted++;
	r->settled++;
	if (rec->time > r->out)
		r->out = rec->time;
}

/* The entry record of a realloc reached the output: its return read, the realloc is held until
 * its return time (or goes now: it stayed in place, so nothing races with it); not read, the
 * output waits, unless the entry is older than the give-up time. 1 when the entry is done. */
static int pass_entry(struct at_reorder *r, const struct at_record *entry)
{
	struct at_reorder_held *h = held_find(r, entry->tid, entry->time);

	if (h && h->state == HELD_RETURNED) {
		struct at_record rec = h->rec;

		r->settled++; /* the entry record */
		held_remove(r, h, &r->nheld);
		if ((rec.result == rec.arg[0] && rec.arg[0] != 0) || r->nwaiting == r->max_copied)
			emit_in_order(r, &rec); /* in place: nothing races with it */
		else
			r->waiting[r->nwaiting++] = rec;
		return 1;
	}
	if (entry->time >= r->give_up)
		return 0;
	r->given_up++;
	r->settled++;
	struct at_record key = *entry;

	key.time_entry = entry->time;
	held_add(r, &key, HELD_GIVEN_UP, &r->nheld); /* full: a late return stays unmatched */
	return 1;
}

/* The waiting realloc with the earliest return time, its index in *i; its time, or UINT64_MAX
 * when none waits. */
static uint64_t first_waiting(const struct at_reorder *r, unsigned *i)
{
	uint64_t t = UINT64_MAX;

	for (unsigned k = 0; k < r->nwaiting; k++)
		if (r->waiting[k].time < t) {
			t = r->waiting[k].time;
			*i = k;
		}
	return t;
}

/* The ring whose head record is the earliest (NULL: none waits). */
static struct at_reorder_ring *first_ring(const struct at_reorder *r)
{
	uint64_t t = UINT64_MAX;
	unsigned best = 0;

	for (unsigned i = 0; i < r->nrings; i++)
		if (r->head_times[i] < t) {
			t = r->head_times[i];
			best = i;
		}
	return t == UINT64_MAX ? NULL : &r->rings[best];
}

/* Calls the first mark. */
static void emit_mark(struct at_reorder *r)
{
	if (r->mark)
		r->mark(r->arg);
	memmove(r->marks, r->marks + 1, (r->nmarks - 1) * sizeof(r->marks[0]));
	r->nmarks--;
}

/* Takes the record rec from where it waits (ring q, or the late heap when q is NULL) to the
 * output. 0, or -1 when the output must wait at it. */
static int pass(struct at_reorder *r, struct at_reorder_ring *q, const struct at_record *rec)
{
	if (rec->func == AT_PROBE_REALLOC_ENTRY) {
		if (!pass_entry(r, rec)) {
			r->blocked = 1;
			r->blocked_at = rec->time;
			return -1;
		}
	} else {
		emit_in_order(r, rec);
	}
	if (q) {
		q->head++;
		settle_head(q);
	} else {
		late_pop(r);
	}
	return 0;
}

/* Emits, in time order, every record up to r->safe, and the marks among them; stops at a
 * realloc entry whose return has not been read. */
static void emit_ready(struct at_reorder *r)
{
	r->blocked = 0;
	for (;;) {
		struct at_reorder_ring *q = first_ring(r);
		const struct at_record *rec = q ? at_ring_record(&q->ring, q->head) : NULL;
		unsigned w = 0;

		if (r->nlate && (!rec || r->late[0].time < rec->time)) {
			rec = &r->late[0];
			q = NULL;
		}
		uint64_t t = rec ? rec->time : UINT64_MAX, tw = first_waiting(r, &w);
		uint64_t first = t < tw ? t : tw;

		if (r->nmarks && r->marks[0] <= first && r->marks[0] <= r->safe) {
			emit_mark(r);
			continue;
		}
		if (first == UINT64_MAX || first > r->safe)
			break;
		if (tw < t) {
			struct at_record held = take_waiting(r, w);

			emit_in_order(r, &held);
			continue;
		}
		if (pass(r, q, rec) < 0)
			break;
	}
}

/* The time up to which every ring has been drained, less the clocks' slack. */
static uint64_t safe_time(const struct at_reorder *r)
{
	uint64_t t = UINT64_MAX;

	for (unsigned i = 0; i < r->nrings; i++)
		if (r->rings[i].drained < t)
			t = r->rings[i].drained;
	return t == UINT64_MAX ? t : t > AT_REORDER_CLOCK_SLACK_NS ? t - AT_REORDER_CLOCK_SLACK_NS : 0;
}

/* Whether some ring's last reading stopped for want of room. */
static int any_stalled(const struct at_reorder *r)
{
	for (unsigned i = 0; i < r->nrings; i++)
		if (r->rings[i].stalled)
			return 1;
	return 0;
}

/* Bytes of records one round of a drain reads, all rings together, before it lets out what
 * they allow: the records are still in the cache when they go out. (A drain that read every
 * ring to its end first, megabytes when the daemon is behind its producers, fetched each record
 * from memory twice.) Each ring reads at least AT_REORDER_ROUND_MIN of it. */
#define AT_REORDER_ROUND_BYTES (128u << 10)
#define AT_REORDER_ROUND_MIN (8u << 10)

static uint64_t round_bytes(const struct at_reorder *r)
{
	uint64_t b = AT_REORDER_ROUND_BYTES / (r->nrings ? r->nrings : 1);

	return b > AT_REORDER_ROUND_MIN ? b : AT_REORDER_ROUND_MIN;
}

/* Gives every ring back up to its head. */
static void release_rings(struct at_reorder *r)
{
	for (unsigned i = 0; i < r->nrings; i++)
		at_ring_release(&r->rings[i].ring, r->rings[i].head);
}

/* The output is stopped at a realloc's entry while a reading is stopped for want of room,
 * which only the output can make: the return it waits for may lie past that reading, so the
 * entry it waits at is given up on, one after the other while that lasts. */
static void unblock(struct at_reorder *r, uint64_t now)
{
	uint64_t give_up = r->give_up;

	while (r->blocked && any_stalled(r)) {
		uint64_t settled = r->settled;

		r->blocked_stalls++;
		r->give_up = r->blocked_at + 1;
		emit_ready(r);
		for (unsigned i = 0; i < r->nrings; i++)
			scan_ring(r, &r->rings[i], now, round_bytes(r));
		if (r->settled == settled)
			break;
	}
	r->give_up = give_up;
}

/* One round of a drain: every ring read at most round_bytes further, then what that lets out.
 * Whether some ring's reading stopped at its bytes (then no realloc entry is given up on in
 * this round: its return may lie in what the next round reads). */
static int drain_round(struct at_reorder *r, uint64_t now)
{
	uint64_t give_up = r->give_up, bytes = round_bytes(r);
	int cut = 0;

	for (unsigned i = 0; i < r->nrings; i++) {
		scan_ring(r, &r->rings[i], now, bytes);
		cut |= r->rings[i].cut;
	}
	r->safe = safe_time(r);
	if (cut)
		r->give_up = 0;
	emit_ready(r);
	r->give_up = give_up;
	if (r->blocked && any_stalled(r))
		unblock(r, now);
	release_rings(r);
	return cut;
}

/* at_reorder_drain with r->discard: every ring given back up to its producer position, not
 * one of its records' lines read. */
static uint64_t discard_rings(struct at_reorder *r, uint64_t now)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < r->nrings; i++) {
		struct at_reorder_ring *q = &r->rings[i];
		uint64_t producer = at_ring_producer(&q->ring);

		n += producer - q->scan;
		q->head = q->scan = q->end = producer;
		q->drained = now;
		at_ring_release(&q->ring, producer);
	}
	r->discarded += n;
	return n;
}

uint64_t at_reorder_drain(struct at_reorder *r, uint64_t now)
{
	uint64_t before = r->taken, moved;
	int cut;

	r->last_now = now;
	if (r->discard)
		return discard_rings(r, now);
	for (unsigned i = 0; i < r->nrings; i++)
		r->rings[i].end = at_ring_producer(&r->rings[i].ring);
	do { /* again while a round stopped at its bytes, or a reading for want of room, and the
	      * output or the readings moved */
		moved = r->taken + r->settled;
		cut = drain_round(r, now);
	} while ((cut || any_stalled(r)) && r->taken + r->settled != moved);
	return r->taken - before;
}

int at_reorder_unwritten(const struct at_reorder *r)
{
	for (unsigned i = 0; i < r->nrings; i++) {
		const struct at_reorder_ring *q = &r->rings[i];

		if (q->scan < q->end && at_ring_state(&q->ring, q->scan) == AT_RING_UNWRITTEN)
			return 1;
	}
	return 0;
}

uint64_t at_reorder_out_to(const struct at_reorder *r)
{
	const struct at_reorder_ring *q = first_ring(r);
	unsigned w;
	uint64_t t = first_waiting(r, &w);

	if (q && *q->head_time < t)
		t = *q->head_time;
	if (r->nlate && r->late[0].time < t)
		t = r->late[0].time;
	return t < r->safe ? t : r->safe;
}

void at_reorder_mark(struct at_reorder *r, uint64_t before)
{
	unsigned i = r->nmarks;

	if (r->nmarks == AT_REORDER_MARKS) {
		r->marks_dropped++;
		return;
	}
	while (i > 0 && r->marks[i - 1] > before) {
		r->marks[i] = r->marks[i - 1];
		i--;
	}
	r->marks[i] = before;
	r->nmarks++;
	emit_ready(r);
}

/* Forgets the reallocs given up on before `before` whose return never came (their thread died
 * inside the call, or was stopped there for good): a return that late is not waited for. */
static void forget_given_up(struct at_reorder *r, uint64_t before)
{
	for (unsigned i = 0; i < r->held_cap && r->nheld; i++) {
		struct at_reorder_held *h = &r->held[i];

		/* a removal moves a later entry back into i: looked at again */
		while (h->state == HELD_GIVEN_UP && h->rec.time_entry < before && r->nheld)
			held_remove(r, h, &r->nheld);
	}
}

void at_reorder_tick(struct at_reorder *r)
{
	r->give_up = r->tick_now;
	r->tick_now = r->last_now;
	emit_ready(r);
	if (r->nheld && r->give_up > AT_REORDER_GIVEN_UP_KEPT_NS)
		forget_given_up(r, r->give_up - AT_REORDER_GIVEN_UP_KEPT_NS);
	release_rings(r);
}

void at_reorder_finish(struct at_reorder *r)
{
	uint64_t moved;

	r->give_up = UINT64_MAX;
	do { /* until nothing moves: a want of room may have stopped a reading */
		moved = r->taken + r->settled;
		at_reorder_drain(r, UINT64_MAX);
	} while (r->taken + r->settled != moved);
	r->safe = UINT64_MAX;
	emit_ready(r);
	while (r->nmarks)
		emit_mark(r);
	/* returns whose entry never came out (no entry record was read for them) */
	for (unsigned i = 0; i < r->held_cap; i++) {
		if (r->held[i].state == HELD_RETURNED) {
			r->late_returns++;
			r->settled++;
		}
		r->held[i].state = HELD_FREE;
	}
	r->nheld = 0;
	release_rings(r);
}
