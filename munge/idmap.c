/* idmap.c: id mapping over an open-addressing table and a FIFO ring of released ids. */
#include <stdlib.h>
#include <string.h>

#include "idmap.h"
#include "prim.h"

/* Tables and rings start small: a trace of a large build holds some 10^5 processes, most with
 * a few live blocks, and each process has two tables (threads, pointers) and a ring. */
#define IDMAP_INITIAL_BITS 3
#define RING_INITIAL 8
/* An empty table is given back only above this size (1 KiB), so a process whose few blocks
 * come and go does not allocate a table at each turn. */
#define IDMAP_KEEP_BITS 6

void at_idmap_init(struct at_idmap *m)
{
	memset(m, 0, sizeof(*m));
	m->next_id = 1;
}

/* Tables from this many bytes on are mmapped and populated in one call, where first touches
 * would take a page fault each (several microseconds a page in a virtual machine: it was most
 * of the time spent growing). */
#define POPULATE_BYTES (64u << 10)

/* Tables of AT_HUGE_PAGE bytes and more are also backed by transparent huge pages where the
 * kernel allows it (madvise mode): random probes into a table of many 4 KiB pages miss the
 * TLB. */
static struct at_idmap_slot *alloc_slots(uint64_t n)
{
	size_t bytes = n * sizeof(struct at_idmap_slot);

	if (bytes < POPULATE_BYTES)
		return calloc(n, sizeof(struct at_idmap_slot));
	return at_map(bytes, AT_MAP_POPULATE | (bytes >= AT_HUGE_PAGE ? AT_MAP_HUGE : 0));
}

static void free_slots(struct at_idmap_slot *slots, uint64_t n)
{
	if (!slots)
		return;
	if (n * sizeof(*slots) < POPULATE_BYTES)
		free(slots);
	else
		at_unmap(slots, n * sizeof(*slots));
}

void at_idmap_free(struct at_idmap *m)
{
	free_slots(m->slots, m->mask ? m->mask + 1 : 0);
	free(m->ring);
	at_idmap_init(m);
}

int at_idmap_grow_table(struct at_idmap *m)
{
	unsigned bits = m->mask ? 64 - m->shift + 1 : IDMAP_INITIAL_BITS;
	uint64_t n = UINT64_C(1) << bits;
	struct at_idmap_slot *slots = alloc_slots(n);

	if (!slots)
		return -1;
	struct at_idmap_slot *old = m->slots;
	uint64_t old_n = m->mask ? m->mask + 1 : 0;
	m->slots = slots;
	m->mask = n - 1;
	m->shift = 64 - bits;
	for (uint64_t i = 0; i < old_n; i++) {
		if (!old[i].id_neg)
			continue;
		uint64_t j = at_idmap_home(m, old[i].mag, old[i].id_neg & AT_IDMAP_NEG);
		while (slots[j].id_neg)
			j = (j + 1) & m->mask;
		slots[j] = old[i];
	}
	free_slots(old, old_n);
	return 0;
}

void at_idmap_drop_table(struct at_idmap *m)
{
	if (m->count || m->mask + 1 <= (UINT64_C(1) << IDMAP_KEEP_BITS))
		return;
	free_slots(m->slots, m->mask + 1);
	m->slots = NULL;
	m->mask = 0;
	m->shift = 0;
}

int at_idmap_contains(const struct at_idmap *m, int neg, uint64_t mag)
{
	if (!m->count)
		return 0;
	return m->slots[at_idmap_probe(m, mag, neg ? AT_IDMAP_NEG : 0)].id_neg != 0;
}

/* Empties slot i and shifts later members of its cluster back, so probing needs no
 * tombstones: a member moves into the hole unless its home lies cyclically in (hole, j]. */
void at_idmap_remove_slot(struct at_idmap *m, uint64_t i)
{
	uint64_t j = i;

	for (;;) {
		j = (j + 1) & m->mask;
		const struct at_idmap_slot *s = &m->slots[j];
		if (!s->id_neg)
			break;
		uint64_t k = at_idmap_home(m, s->mag, s->id_neg & AT_IDMAP_NEG);
		int stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
		if (!stays) {
			m->slots[i] = *s;
			i = j;
		}
	}
	m->slots[i].id_neg = 0;
	m->slots[i].mag = 0;
	m->count--;
}

int at_idmap_grow_ring(struct at_idmap *m)
{
	uint64_t cap = m->ring ? (m->ring_mask + 1) * 2 : RING_INITIAL;
	uint64_t *ring = malloc(cap * sizeof(*ring));

	if (!ring)
		return -1;
	for (uint64_t k = 0; k < m->ring_len; k++)
		ring[k] = m->ring[(m->ring_head + k) & m->ring_mask];
	free(m->ring);
	m->ring = ring;
	m->ring_mask = cap - 1;
	m->ring_head = 0;
	return 0;
}

