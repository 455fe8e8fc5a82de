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
