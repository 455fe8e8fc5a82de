/* slots.c: the lazily mmapped slot array. */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "slots.h"
#include "prim.h"

int rp_slots_init(struct rp_slots *s, uint64_t limit)
{
	s->slot = NULL;
	s->limit = 0;
	s->used = 0;
	if (limit == 0 || limit > RP_SLOT_LIMIT) {
		errno = EINVAL;
		return -1;
	}
	void *p = at_map(limit * sizeof(struct rp_slot), AT_MAP_NORESERVE);
	if (!p)
		return -1;
	s->slot = p;
	s->limit = limit;
	return 0;
}

void rp_slots_fini(struct rp_slots *s)
{
	at_unmap(s->slot, s->limit * sizeof(struct rp_slot));
	s->slot = NULL;
	s->limit = 0;
	s->used = 0;
}

uint64_t rp_resident_bytes(const void *addr, size_t len)
{
	unsigned char vec[4096];
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)addr & ~(uintptr_t)(page - 1);
	uintptr_t end = (uintptr_t)addr + len;
	uint64_t resident = 0;

	if (!addr || !len)
		return 0;
	/* At most sizeof(vec) pages per mincore call: the vector lives on the stack. */
	while (start < end) {
		size_t pages = (end - start + page - 1) / page;
		if (pages > sizeof(vec))
			pages = sizeof(vec);
		if (mincore((void *)start, pages * page, vec) < 0)
			return resident;
		for (size_t i = 0; i < pages; i++)
			resident += (vec[i] & 1) ? page : 0;
		start += pages * page;
	}
	return resident;
}

uint64_t rp_slots_resident(const struct rp_slots *s)
{
	return rp_resident_bytes(s->slot, (size_t)s->used * sizeof(struct rp_slot));
}
