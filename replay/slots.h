/* slots.h: the replayer's slot array.
 *
 * A munged log names every pointer by a slot number (#N). The replayer keeps one lazily
 * mmapped array indexed by that number (MAP_NORESERVE: only the pages of slots really used
 * are ever backed), so holding a pointer never calls the allocator under test. */
#ifndef ALLOCTAP_REPLAY_SLOTS_H
#define ALLOCTAP_REPLAY_SLOTS_H

#include <stddef.h>
#include <stdint.h>

/* The largest slot count the replayer supports: slots #0 to #(2^28 - 1), 4 GiB of address
 * space of which only the touched pages cost memory. */
#define RP_SLOT_LIMIT (UINT64_C(1) << 28)

/* One slot: the pointer it holds (NULL when empty) and the size the log requested for it. */
struct rp_slot {
	void *ptr;
	uint64_t size;
};

struct rp_slots {
	struct rp_slot *slot; /* limit entries, mmapped */
	uint64_t limit;       /* slot numbers must be below this */
	uint64_t used;        /* highest slot number referenced + 1 (0 when none yet) */
};

/* Maps room for `limit` slots (1 <= limit <= RP_SLOT_LIMIT). Returns 0, or -1 with errno. */
int rp_slots_init(struct rp_slots *s, uint64_t limit);
void rp_slots_fini(struct rp_slots *s);

/* Notes that slot n is referenced (n must be below limit). */
static inline void rp_slots_touch(struct rp_slots *s, uint64_t n)
{
	if (n >= s->used)
		s->used = n + 1;
}

/* Bytes of the slot array that are resident in memory now (mincore over the used range). */
uint64_t rp_slots_resident(const struct rp_slots *s);

/* Bytes of [addr, addr + len) that are resident (mincore, page granular, no allocation). */
uint64_t rp_resident_bytes(const void *addr, size_t len);

#endif
