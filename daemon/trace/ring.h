/* ring.h: one event ring read in place (alloctap.h: AT_RING_STEP, struct at_ring_pos): a
 * consumer position the reader writes, a producer position the programs write, and a power of
 * two of slots of AT_RING_STEP bytes, one record each. A position is a record's number (0, 1,
 * 2, ... as reserved); its slot is the number modulo the slots. A header is the record's length
 * (with AT_RING_DISCARD for a record given up, which the reader passes over) and its number; a
 * slot whose header does not carry its record's number (an older lap's, or the zeros of a ring
 * never used) is a record reserved and not yet written, read as AT_RING_BUSY.
 *
 * daemon/bpf.c maps the real rings into this; a test builds an image of one in memory. */
#ifndef ALLOCTAP_RING_H
#define ALLOCTAP_RING_H

#include <stdint.h>

#include "alloctap.h"

#define AT_RING_HEADER AT_RING_RECORD_HEADER
#define AT_RING_BUSY (1u << 31) /* the reader's: no program writes it */
#define AT_RING_DISCARD AT_RING_RECORD_DISCARD

struct at_ring {
	volatile uint64_t *consumer;       /* records read: the reader's (it frees the slots) */
	const volatile uint64_t *producer; /* records reserved: the programs' */
	const uint8_t *data;               /* mask + 1 slots of AT_RING_STEP bytes */
	uint64_t mask;                     /* the slots less 1 (a power of two less 1) */
};

/* The slots of a ring given at most bytes: the largest power of two that fits (5/8 of a power
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

/* The slot of the record at pos. */
static inline const uint8_t *at_ring_slot(const struct at_ring *r, uint64_t pos)
{
	return r->data + (pos & r->mask) * AT_RING_STEP;
}

/* The header at pos: its length and flags, read with acquire (a producer writes it once the
 * record is whole); AT_RING_BUSY while it does not carry the record's number. */
static inline uint32_t at_ring_header(const struct at_ring *r, uint64_t pos)
{
	uint64_t h = __atomic_load_n((const uint64_t *)at_ring_slot(r, pos), __ATOMIC_ACQUIRE);

	if ((uint32_t)(h >> 32) != (uint32_t)pos || !(uint32_t)h)
		return AT_RING_BUSY;
	return (uint32_t)h;
}

/* The record at pos (after its header). */
static inline const void *at_ring_record(const struct at_ring *r, uint64_t pos)
{
	return at_ring_slot(r, pos) + AT_RING_HEADER;
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
