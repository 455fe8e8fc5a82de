/* ring_image.h: an event ring's image in memory, laid out as alloctapd's rings are
 * (daemon/trace/ring.h: positions in records, slots of one record with a numbered commit
 * word), for unit drivers that feed daemon/trace/reorder.c without a kernel. Header-only: each
 * driver has its own. */
#ifndef ALLOCTAP_TESTS_RING_IMAGE_H
#define ALLOCTAP_TESTS_RING_IMAGE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../daemon/trace/ring.h"

struct ring_image {
	uint64_t consumer, producer; /* record numbers */
	uint8_t *data;               /* slots * AT_RING_STEP bytes */
	uint64_t slots;
	struct at_ring view;
};

/* An empty ring given size bytes (at_ring_slots_for: as alloctapd sizes its rings). 0, or -1
 * out of memory. */
static inline int ring_image_init(struct ring_image *ri, uint64_t size)
{
	memset(ri, 0, sizeof(*ri));
	ri->slots = at_ring_slots_for(size);
	ri->data = calloc(ri->slots, AT_RING_STEP);
	if (!ri->data)
		return -1;
	ri->view = (struct at_ring){ .consumer = &ri->consumer, .producer = &ri->producer,
				     .data = ri->data, .mask = ri->slots - 1 };
	return 0;
}

static inline void ring_image_free(struct ring_image *ri)
{
	free(ri->data);
	ri->data = NULL;
}

/* The slot of the record at position (number) pos. */
static inline struct at_record *ring_image_slot(struct ring_image *ri, uint64_t pos)
{
	return (struct at_record *)(ri->data + (pos & (ri->slots - 1)) * AT_RING_STEP);
}

/* Writes the commit word of the record at pos (state AT_RECORD_WRITTEN or
 * AT_RECORD_DISCARDED), as a program does last: its function and flags, the state and the
 * record's number. */
static inline void ring_image_seal(struct ring_image *ri, uint64_t pos, uint16_t state)
{
	struct at_record *slot = ring_image_slot(ri, pos);

	__atomic_store_n(&slot->state, state, __ATOMIC_RELAXED);
	__atomic_store_n(&slot->number, (uint32_t)pos, __ATOMIC_RELEASE);
}

/* Commits the record reserved at pos, as a program does once the record is whole. */
static inline void ring_image_commit(struct ring_image *ri, uint64_t pos)
{
	ring_image_seal(ri, pos, AT_RECORD_WRITTEN);
}

/* Gives up the record reserved at pos, as a program does whose free found recording off once
 * its record was reserved. */
static inline void ring_image_discard(struct ring_image *ri, uint64_t pos)
{
	ring_image_slot(ri, pos)->func = 0;
	ring_image_slot(ri, pos)->flags = 0;
	ring_image_seal(ri, pos, AT_RECORD_DISCARDED);
}

/* Reserves a slot as alloctapd's programs do and writes rec there (all but its commit word,
 * whose state and number are left as the slot had them); the record is committed unless busy
 * (ring_image_commit writes it then). Its position, or -1 when the ring has no room. */
static inline int64_t ring_image_put(struct ring_image *ri, const struct at_record *rec, int busy)
{
	uint64_t n = ri->producer;

	if (n + 1 - ri->consumer > ri->slots)
		return -1;
	ri->producer = n + 1;

	struct at_record *slot = ring_image_slot(ri, n);
	uint16_t state = slot->state;
	uint32_t number = slot->number;

	*slot = *rec;
	slot->state = state;
	slot->number = number;
	if (!busy)
		ring_image_commit(ri, n);
	return (int64_t)n;
}

#endif
