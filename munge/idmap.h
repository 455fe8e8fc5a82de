/* idmap.h: the reference munge's IdMapping, made fast.
 *
 * An id mapping gives every key a small id: the first key 1, the next 2, and so on. A released
 * key gives its id back to a FIFO queue, and a new key takes the OLDEST id waiting there before
 * the counter moves on (Firefox's logalloc_munge.py, class IdMapping).
 *
 * Keys are integers as Python sees them: a 64-bit magnitude and a sign (-16 and 16 are two keys;
 * -0 is 0). They live in an open-addressing table (linear probing, backward-shift deletion, so
 * no tombstones) that starts at 8 slots and doubles when half full; the FIFO queue is a ring
 * that starts at 8 ids and doubles when full. A table that grew past 64 slots is given back
 * when its last key is released. Nothing is allocated per operation, only when a table or the ring grows
 * (and when a grown table empties). */
#ifndef ALLOCTAP_MUNGE_IDMAP_H
#define ALLOCTAP_MUNGE_IDMAP_H

#include <stddef.h>
#include <stdint.h>

#define AT_IDMAP_NEG (UINT64_C(1) << 63)

/* One table slot. id_neg is the id with AT_IDMAP_NEG set for a negative key; 0 is empty. */
struct at_idmap_slot {
	uint64_t mag;
	uint64_t id_neg;
};

struct at_idmap {
	struct at_idmap_slot *slots;
	uint64_t mask;      /* slot count - 1 (a power of two minus one), 0 before the first use */
	unsigned shift;     /* 64 - log2(slot count) */
	uint64_t count;     /* keys present */
	uint64_t next_id;   /* the counter: the id a key takes when no released id waits */
	uint64_t *ring;     /* released ids, oldest at ring[head] */
	uint64_t ring_mask, ring_head, ring_len;
};

void at_idmap_init(struct at_idmap *m);
void at_idmap_free(struct at_idmap *m);


/* Whether key (neg, mag) has an id now (no special case for 0: the caller decides). */
int at_idmap_contains(const struct at_idmap *m, int neg, uint64_t mag);

/* Number of ids waiting in the FIFO queue. */
static inline uint64_t at_idmap_waiting(const struct at_idmap *m)
{
	return m->ring_len;
}

/* Gives an empty table's slots back when it has grown past 64 slots (the next key starts a
 * small one): the ids waiting in the queue and the counter stay, so the ids given
 * later are the same. Nothing when keys are present. */
void at_idmap_drop_table(struct at_idmap *m);

/* Slow paths of the inline functions below (idmap.c). */
int at_idmap_grow_table(struct at_idmap *m);
int at_idmap_grow_ring(struct at_idmap *m);
void at_idmap_remove_slot(struct at_idmap *m, uint64_t i);

/* Fibonacci hashing: addresses differ mostly in their middle bits, the multiply spreads them
 * to the top bits the shift keeps. The sign is folded into the top bit of the key. */
static inline uint64_t at_idmap_home(const struct at_idmap *m, uint64_t mag, uint64_t negbit)
{
	return ((mag ^ negbit) * UINT64_C(0x9E3779B97F4A7C15)) >> m->shift;
}

/* Index of key's slot, or of the empty slot where it would go. The table must have slots. */
static inline uint64_t at_idmap_probe(const struct at_idmap *m, uint64_t mag, uint64_t negbit)
{
	uint64_t i = at_idmap_home(m, mag, negbit);

	for (;;) {
		const struct at_idmap_slot *s = &m->slots[i];
		if (!s->id_neg || (s->mag == mag && (s->id_neg & AT_IDMAP_NEG) == negbit))
			return i;
		i = (i + 1) & m->mask;
	}
}

/* Takes the oldest released id, else the next counter value. */
static inline uint64_t at_idmap_new_id(struct at_idmap *m)
{
	if (m->ring_len) {
		uint64_t id = m->ring[m->ring_head];
		m->ring_head = (m->ring_head + 1) & m->ring_mask;
		m->ring_len--;
		return id;
	}
	return m->next_id++;
}

/* The id of key (neg, mag), giving it one if it has none (IdMapping.__getitem__).
 * Returns the id (>= 1), or 0 when memory ran out. */
static inline uint64_t at_idmap_get(struct at_idmap *m, int neg, uint64_t mag)
{
	uint64_t negbit = neg ? AT_IDMAP_NEG : 0;

	if ((m->count + 1) * 2 > m->mask + 1 && at_idmap_grow_table(m) < 0)
		return 0;
	struct at_idmap_slot *s = &m->slots[at_idmap_probe(m, mag, negbit)];
	if (s->id_neg)
		return s->id_neg & ~AT_IDMAP_NEG;
	uint64_t id = at_idmap_new_id(m);
	s->mag = mag;
	s->id_neg = id | negbit;
	m->count++;
	return id;
}

/* Releases key (neg, mag) if it has an id: the id goes to the back of the FIFO queue and is
 * stored in *id. Returns 1 if the key was present, 0 if not, -1 when memory ran out (the key is
 * then left in place). One probe sequence: lookup and removal share it. */
static inline int at_idmap_release(struct at_idmap *m, int neg, uint64_t mag, uint64_t *id)
{
	if (!m->count)
		return 0;
	uint64_t i = at_idmap_probe(m, mag, neg ? AT_IDMAP_NEG : 0);
	if (!m->slots[i].id_neg)
		return 0;
	if ((!m->ring || m->ring_len == m->ring_mask + 1) && at_idmap_grow_ring(m) < 0)
		return -1;
	*id = m->slots[i].id_neg & ~AT_IDMAP_NEG;
	m->ring[(m->ring_head + m->ring_len) & m->ring_mask] = *id;
	m->ring_len++;
	at_idmap_remove_slot(m, i);
	if (!m->count)
		at_idmap_drop_table(m);
	return 1;
}

#endif
