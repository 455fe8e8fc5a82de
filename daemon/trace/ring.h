/* ring.h: one BPF ring buffer read in place, as the kernel lays it out (kernel/bpf/ringbuf.c):
 * a consumer position the reader writes, a producer position the kernel writes, and the data
 * pages, mapped twice in a row so that a record that wraps reads as one piece. Each record is
 * an 8-byte header (its length, with a busy bit while its producer fills it and a discard bit)
 * then the record, the whole rounded up to 8 bytes. Positions only grow; a position's place in
 * the data is the position masked with the data's size less 1.
 *
 * daemon/bpf.c maps the real rings into this; a test builds an image of one in memory. */
#ifndef ALLOCTAP_RING_H
#define ALLOCTAP_RING_H

#include <stdint.h>

#define AT_RING_HEADER 8u
#define AT_RING_BUSY (1u << 31)
#define AT_RING_DISCARD (1u << 30)

struct at_ring {
	volatile uint64_t *consumer;       /* the reader's position (it frees the ring to there) */
	const volatile uint64_t *producer; /* the kernel's: records below it are reserved */
	const uint8_t *data;               /* 2 * (mask + 1) bytes: the data, mapped twice */
	uint64_t mask;                     /* the data's size less 1 (a power of two less 1) */
};

/* The header at pos: its length and flags, read with acquire (the kernel clears the busy bit
 * with a release once the record is whole). */
static inline uint32_t at_ring_header(const struct at_ring *r, uint64_t pos)
{
	return __atomic_load_n((const uint32_t *)(r->data + (pos & r->mask)), __ATOMIC_ACQUIRE);
}

/* The record at pos (after its header). */
static inline const void *at_ring_record(const struct at_ring *r, uint64_t pos)
{
	return r->data + (pos & r->mask) + AT_RING_HEADER;
}

/* How far a record with this header moves the position. */
static inline uint64_t at_ring_step(uint32_t header)
{
	return ((header & ~(AT_RING_BUSY | AT_RING_DISCARD)) + AT_RING_HEADER + 7) & ~7ull;
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
