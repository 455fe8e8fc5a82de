/* idmap.c: id mapping over an open-addressing table and a FIFO ring of released ids. */
#include <stdlib.h>
#include <string.h>

#include "idmap.h"

#define IDMAP_INITIAL_BITS 10
#define RING_INITIAL 1024

void at_idmap_init(struct at_idmap *m)
{
	memset(m, 0, sizeof(*m));
	m->next_id = 1;
}

void at_idmap_free(struct at_idmap *m)
{
	free(m->slots);
	free(m->ring);
	at_idmap_init(m);
}

/* Fibonacci hashing: addresses differ mostly in their middle bits, the multiply spreads them
 * to the top bits the shift keeps. The sign is folded into the top bit of the key. */
static inline uint64_t home_of(const struct at_idmap *m, uint64_t mag, uint64_t negbit)
{
	return ((mag ^ negbit) * UINT64_C(0x9E3779B97F4A7C15)) >> m->shift;
}

static int grow_table(struct at_idmap *m)
{
	unsigned bits = m->mask ? 64 - m->shift + 1 : IDMAP_INITIAL_BITS;
	uint64_t n = UINT64_C(1) << bits;
	struct at_idmap_slot *slots = calloc(n, sizeof(*slots));

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
		uint64_t j = home_of(m, old[i].mag, old[i].id_neg & AT_IDMAP_NEG);
		while (slots[j].id_neg)
			j = (j + 1) & m->mask;
		slots[j] = old[i];
	}
	free(old);
	return 0;
}

/* Index of key's slot, or of the empty slot where it would go. The table must have slots. */
static inline uint64_t probe(const struct at_idmap *m, uint64_t mag, uint64_t negbit)
{
	uint64_t i = home_of(m, mag, negbit);

	for (;;) {
		const struct at_idmap_slot *s = &m->slots[i];
		if (!s->id_neg || (s->mag == mag && (s->id_neg & AT_IDMAP_NEG) == negbit))
			return i;
		i = (i + 1) & m->mask;
	}
}

/* Takes the oldest released id, else the next counter value. */
static inline uint64_t new_id(struct at_idmap *m)
{
	if (m->ring_len) {
		uint64_t id = m->ring[m->ring_head];
		m->ring_head = (m->ring_head + 1) & m->ring_mask;
		m->ring_len--;
		return id;
	}
	return m->next_id++;
}

uint64_t at_idmap_get(struct at_idmap *m, int neg, uint64_t mag)
{
	uint64_t negbit = neg ? AT_IDMAP_NEG : 0;

	if ((m->count + 1) * 2 > m->mask + 1 && grow_table(m) < 0)
		return 0;
	struct at_idmap_slot *s = &m->slots[probe(m, mag, negbit)];
	if (s->id_neg)
		return s->id_neg & ~AT_IDMAP_NEG;
	uint64_t id = new_id(m);
	s->mag = mag;
	s->id_neg = id | negbit;
	m->count++;
	return id;
}

int at_idmap_contains(const struct at_idmap *m, int neg, uint64_t mag)
{
	if (!m->count)
		return 0;
	return m->slots[probe(m, mag, neg ? AT_IDMAP_NEG : 0)].id_neg != 0;
}

/* Empties slot i and shifts later members of its cluster back, so probing needs no
 * tombstones: a member moves into the hole unless its home lies cyclically in (hole, j]. */
static void remove_slot(struct at_idmap *m, uint64_t i)
{
	uint64_t j = i;

	for (;;) {
		j = (j + 1) & m->mask;
		const struct at_idmap_slot *s = &m->slots[j];
		if (!s->id_neg)
			break;
		uint64_t k = home_of(m, s->mag, s->id_neg & AT_IDMAP_NEG);
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

static int grow_ring(struct at_idmap *m)
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

int at_idmap_release(struct at_idmap *m, int neg, uint64_t mag, uint64_t *id)
{
	if (!m->count)
		return 0;
	uint64_t i = probe(m, mag, neg ? AT_IDMAP_NEG : 0);
	if (!m->slots[i].id_neg)
		return 0;
	if ((!m->ring || m->ring_len == m->ring_mask + 1) && grow_ring(m) < 0)
		return -1;
	*id = m->slots[i].id_neg & ~AT_IDMAP_NEG;
	m->ring[(m->ring_head + m->ring_len) & m->ring_mask] = *id;
	m->ring_len++;
	remove_slot(m, i);
	return 1;
}
