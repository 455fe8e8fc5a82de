/* pidset.c: the set of processes seen. */
#include <stddef.h>

#include "pidset.h"
#include "prim.h"

int at_pidset_init(struct at_pidset *s)
{
	s->count = 0;
	s->slots = at_map(AT_PIDSET_CAPACITY * sizeof(uint32_t), 0);
	return s->slots ? 0 : -1;
}

void at_pidset_free(struct at_pidset *s)
{
	at_unmap(s->slots, AT_PIDSET_CAPACITY * sizeof(uint32_t));
	s->slots = NULL;
}

int at_pidset_add(struct at_pidset *s, uint32_t pid)
{
	uint32_t mask = AT_PIDSET_CAPACITY - 1, i = (pid * 2654435761u) & mask;

	if (s->count >= AT_PIDSET_CAPACITY - 1)
		return 0;
	while (s->slots[i]) {
		if (s->slots[i] == pid)
			return 0;
		i = (i + 1) & mask;
	}
	s->slots[i] = pid;
	s->count++;
	return 1;
}

/* The slot holding pid, or the empty slot where its run ends. */
static uint32_t slot_of(const struct at_pidset *s, uint32_t pid)
{
	uint32_t mask = AT_PIDSET_CAPACITY - 1, i = (pid * 2654435761u) & mask;

	while (s->slots[i] && s->slots[i] != pid)
		i = (i + 1) & mask;
	return i;
}

int at_pidset_has(const struct at_pidset *s, uint32_t pid)
{
	return pid && s->slots[slot_of(s, pid)] == pid;
}

int at_pidset_remove(struct at_pidset *s, uint32_t pid)
{
	uint32_t mask = AT_PIDSET_CAPACITY - 1, hole = slot_of(s, pid);

	if (!pid || s->slots[hole] != pid)
		return 0;
	s->slots[hole] = 0;
	s->count--;
	/* the entries after the hole in its run move back into it when their home allows */
	for (uint32_t i = (hole + 1) & mask; s->slots[i]; i = (i + 1) & mask) {
		uint32_t home = (s->slots[i] * 2654435761u) & mask;

		if (((i - home) & mask) >= ((i - hole) & mask)) {
			s->slots[hole] = s->slots[i];
			s->slots[i] = 0;
			hole = i;
		}
	}
	return 1;
}
