/* ring_image.h: a BPF ring buffer's image in memory, laid out as the kernel lays out a real one
 * (daemon/trace/ring.h: positions, 8-byte headers, the data twice in a row), for unit drivers
 * that feed daemon/trace/reorder.c without a kernel. Header-only: each driver has its own. */
#ifndef ALLOCTAP_TESTS_RING_IMAGE_H
#define ALLOCTAP_TESTS_RING_IMAGE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../daemon/trace/ring.h"

struct ring_image {
	uint64_t consumer, producer;
	uint8_t *data; /* 2 * size */
	uint64_t size;
	struct at_ring view;
};

/* An empty ring of size bytes (a power of two). 0, or -1 out of memory. */
static inline int ring_image_init(struct ring_image *ri, uint64_t size)
{
	memset(ri, 0, sizeof(*ri));
	ri->data = calloc(2, size);
	if (!ri->data)
		return -1;
	ri->size = size;
	ri->view = (struct at_ring){ .consumer = &ri->consumer, .producer = &ri->producer,
				     .data = ri->data, .mask = size - 1 };
	return 0;
}

static inline void ring_image_free(struct ring_image *ri)
{
	free(ri->data);
	ri->data = NULL;
}

/* Writes n bytes at position pos, in both copies of the data. */
static inline void ring_image_write(struct ring_image *ri, uint64_t pos, const void *p, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		uint64_t at = (pos + k) & (ri->size - 1);

		ri->data[at] = ri->data[at + ri->size] = ((const uint8_t *)p)[k];
	}
}

/* Reserves len bytes as the kernel does, and writes rec there; the record is committed unless
 * busy (ring_image_commit then). Its position, or -1 when the ring has no room. */
static inline int64_t ring_image_put(struct ring_image *ri, const void *rec, uint32_t len,
				     int busy)
{
	uint64_t pos = ri->producer, step = at_ring_step(len);
	uint32_t header[2] = { len | (busy ? AT_RING_BUSY : 0), 0 };

	if (pos + step - ri->consumer > ri->size)
		return -1;
	ring_image_write(ri, pos, header, sizeof(header));
	ring_image_write(ri, pos + AT_RING_HEADER, rec, len);
	ri->producer = pos + step;
	return (int64_t)pos;
}

/* Commits the busy record at pos. */
static inline void ring_image_commit(struct ring_image *ri, uint64_t pos)
{
	uint32_t header;

	memcpy(&header, ri->data + (pos & (ri->size - 1)), sizeof(header));
	header &= ~AT_RING_BUSY;
	ring_image_write(ri, pos, &header, sizeof(header));
}

#endif
