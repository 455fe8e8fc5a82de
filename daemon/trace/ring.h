/* ring.h: one event ring read in place (alloctap.h: AT_RING_STEP, struct at_ring_pos): a
 * consumer position the reader writes, a producer position the programs write, and a power of
 * two of slots of AT_RING_STEP bytes, one struct at_record each. A position is a record's
 * number (0, 1, 2, ... as reserved); its slot is the number modulo the slots. A record's commit
 * word (its last 8 bytes) says whether it is written or given up, and carries its number; a
 * slot whose commit word does not carry its record's number (an older lap's, or the zeros of a
 * ring never used) is a record reserved and not yet written.
 *
 * daemon/bpf.c maps the real rings into this; a test builds an image of one in memory. */
#ifndef ALLOCTAP_RING_H
#define ALLOCTAP_RING_H

#include <stddef.h>
#include <stdint.h>

#include "alloctap.h"

/* What a slot holds (at_ring_state). */
enum at_ring_state {
	AT_RING_UNWRITTEN, /* a record reserved and not yet written */
	AT_RING_WRITTEN,
	AT_RING_DISCARDED, /* a record given up: the reader passes over it */
};

struct at_ring {
	volatile uint64_t *consumer;       /* records read: the reader's (it frees the slots) */
	const volatile uint64_t *producer; /* records reserved: the programs' */
	const uint8_t *data;               /* mask + 1 slots of AT_RING_STEP bytes */
	uint64_t mask;                     /* the slots less 1 (a power of two less 1) */
};

/* The slots of a ring given at most bytes: the largest power of two that fits (all of a power
 * of two of bytes); 0 when not one fits. */
static inline uint64_t at_ring_slots_for(uint64_t bytes)
{
	uint64_t slots = 1;

	if (bytes < AT_RING_STEP)
		return 0;
	while (slots * 2 * AT_RING_STEP <= bytes)
		slots *= 2;
	return slots;
}

/* A ring wakes the daemon when this many bytes wait in it: an eighth of the ring at most (the
 * rest is room for a burst while the daemon wakes), and its share of AT_RING_WAKEUP_ALL among
 * the rings, AT_RING_WAKEUP_MIN at least. The daemon reads every ring at each wakeup, in rounds
 * that stay in the cache whatever the wakeup's size (reorder.c): a smaller wakeup costs it a
 * sleep and a wakeup for fewer records, a larger one holds events back longer. */
#define AT_RING_WAKEUP_MIN (128u << 10)
#define AT_RING_WAKEUP_ALL (1u << 20)

/* The records a ring of slots (at_ring_slots_for) holds when it wakes the daemon, one of
 * nrings rings: 1 at least. */
static inline uint64_t at_ring_wakeup_records(uint64_t slots, uint64_t nrings)
{
	uint64_t most = nrings ? AT_RING_WAKEUP_ALL / nrings : AT_RING_WAKEUP_ALL;
	uint64_t records = slots / 8;

	if (most < AT_RING_WAKEUP_MIN)
		most = AT_RING_WAKEUP_MIN;
	if (records > most / AT_RING_STEP)
		records = most / AT_RING_STEP;
	return records ? records : 1;
}

/* The record at pos (its slot). */
static inline const struct at_record *at_ring_record(const struct at_ring *r, uint64_t pos)
{
	return (const struct at_record *)(r->data + (pos & r->mask) * AT_RING_STEP);
}

/* What the slot of the record at pos holds, read with acquire from its commit word (a producer
 * writes it once the record is whole). */
static inline enum at_ring_state at_ring_state(const struct at_ring *r, uint64_t pos)
{
	const uint8_t *commit = (const uint8_t *)at_ring_record(r, pos) +
				offsetof(struct at_record, func);
	uint64_t word = __atomic_load_n((const uint64_t *)commit, __ATOMIC_ACQUIRE);
	uint16_t state = (uint16_t)(word >> 16);

	if ((uint32_t)(word >> 32) != (uint32_t)pos)
		return AT_RING_UNWRITTEN;
	return state == AT_RECORD_WRITTEN     ? AT_RING_WRITTEN
	       : state == AT_RECORD_DISCARDED ? AT_RING_DISCARDED
					      : AT_RING_UNWRITTEN;
}

static inline uint64_t at_ring_producer(const struct at_ring *r)
{
	return __atomic_load_n(r->producer, __ATOMIC_ACQUIRE);
}

static inline uint64_t at_ring_consumer(const struct at_ring *r)
{
	return __atomic_load_n(r->consumer, __ATOMIC_ACQUIRE);
}

/* Gives the ring back to the producers up to pos (everything before it has been read). */
static inline void at_ring_release(struct at_ring *r, uint64_t pos)
{
	__atomic_store_n(r->consumer, pos, __ATOMIC_RELEASE);
}

#endif
