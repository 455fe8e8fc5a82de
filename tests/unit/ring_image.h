/* ring_image.h: an event ring's image in memory, laid out as alloctapd's rings are
 * (daemon/trace/ring.h: positions in records, slots with numbered headers), for unit drivers
 * that feed daemon/trace/reorder.c without a kernel. Header-only: each driver has its own. */
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
static inline uint8_t *ring_image_slot(struct ring_image *ri, uint64_t pos)
{
	return ri->data + (pos & (ri->slots - 1)) * AT_RING_STEP;
}

/* Commits the record reserved at pos: writes its header (its length, 72, and its number), as a
 * program does once the record is whole. */
static inline void ring_image_commit(struct ring_image *ri, uint64_t pos)
{
	uint64_t header = sizeof(struct at_record) | pos << 32;

	memcpy(ring_image_slot(ri, pos), &header, sizeof(header));
}

/* Gives up the record reserved at pos, as a program does whose free found recording off once
 * its record was reserved: a header with its number and the discard bit. */
static inline void ring_image_discard(struct ring_image *ri, uint64_t pos)
{
	uint64_t header = (AT_RING_RECORD_DISCARD | sizeof(struct at_record)) | pos << 32;

	memcpy(ring_image_slot(ri, pos), &header, sizeof(header));
}

/* Reserves a slot as alloctapd's programs do and writes rec there; the record is committed
 * unless busy (its header then left as it was: ring_image_commit writes it). Its position, or
 * -1 when the ring has no room. */
static inline int64_t ring_image_put(struct ring_image *ri, const struct at_record *rec, int busy)
{
	uint64_t n = ri->producer;

	if (n + 1 - ri->consumer > ri->slots)
		return -1;
	ri->producer = n + 1;
	memcpy(ring_image_slot(ri, n) + AT_RING_HEADER, rec, sizeof(*rec));
	if (!busy)
		ring_image_commit(ri, n);
	return (int64_t)n;
}

#endif
