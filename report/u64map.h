/* u64map.h: a map of non-zero 64-bit keys to 64-bit values (open addressing, linear probing,
 * at most half full; removal shifts the entries after it back, so there are no tombstones).
 * The report's tables of sites, threads, size buckets and pages. */
#ifndef ALLOCTAP_REPORT_U64MAP_H
#define ALLOCTAP_REPORT_U64MAP_H

#include <stddef.h>
#include <stdint.h>

struct rep_u64map {
	uint64_t *key, *val; /* key 0: an empty entry */
	size_t cap, count;
};

/* A 64-bit mix (murmur3's finalizer half), the home of a key. */
static inline uint64_t rep_u64map_mix(uint64_t k)
{
	k ^= k >> 33;
	k *= UINT64_C(0xff51afd7ed558ccd);
	k ^= k >> 33;
	return k;
}

/* The value of k, inserted with value 0 when new (*is_new says which); NULL on ENOMEM. A
 * pointer is valid until the next insertion or removal. k must not be 0. */
uint64_t *rep_u64map_slot(struct rep_u64map *m, uint64_t k, int *is_new);
/* The value of k, or NULL when k is not in the map. */
uint64_t *rep_u64map_find(const struct rep_u64map *m, uint64_t k);
/* Removes k (nothing when absent). */
void rep_u64map_remove(struct rep_u64map *m, uint64_t k);
void rep_u64map_free(struct rep_u64map *m);

#endif
