/* idmap.h: the reference munge's IdMapping, made fast.
 *
 * An id mapping gives every key a small id: the first key 1, the next 2, and so on. A released
 * key gives its id back to a FIFO queue, and a new key takes the OLDEST id waiting there before
 * the counter moves on (Firefox's logalloc_munge.py, class IdMapping).
 *
 * Keys are integers as Python sees them: a 64-bit magnitude and a sign (-16 and 16 are two keys;
 * -0 is 0). They live in an open-addressing table (linear probing, backward-shift deletion, so
 * no tombstones) that doubles when half full; the FIFO queue is a ring that doubles when full.
 * Nothing is allocated per operation, only when a table or the ring grows. */
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

/* The id of key (neg, mag), giving it one if it has none (IdMapping.__getitem__).
 * Returns the id (>= 1), or 0 when memory ran out. */
uint64_t at_idmap_get(struct at_idmap *m, int neg, uint64_t mag);

/* Whether key (neg, mag) has an id now (no special case for 0: the caller decides). */
int at_idmap_contains(const struct at_idmap *m, int neg, uint64_t mag);

/* Releases key (neg, mag) if it has an id: the id goes to the back of the FIFO queue and is
 * stored in *id. Returns 1 if the key was present, 0 if not, -1 when memory ran out (the key is
 * then left in place). One probe sequence: lookup and removal share it. */
int at_idmap_release(struct at_idmap *m, int neg, uint64_t mag, uint64_t *id);

/* Number of ids waiting in the FIFO queue. */
static inline uint64_t at_idmap_waiting(const struct at_idmap *m)
{
	return m->ring_len;
}

#endif
