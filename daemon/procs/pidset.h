/* pidset.h: a set of processes (those held at their dynamic loader), without allocation per
 * event. */
#ifndef ALLOCTAP_PIDSET_H
#define ALLOCTAP_PIDSET_H

#include <stdint.h>

#define AT_PIDSET_CAPACITY 65536u

struct at_pidset {
	uint32_t *slots; /* open addressing, 0 = empty */
	uint32_t count;
};

int at_pidset_init(struct at_pidset *s);
void at_pidset_free(struct at_pidset *s);
/* Adds pid (non-zero). 1 if it was new, 0 if known or the set is full. */
int at_pidset_add(struct at_pidset *s, uint32_t pid);
/* Whether pid is in the set. */
int at_pidset_has(const struct at_pidset *s, uint32_t pid);
/* Removes pid (a process that has ended: its number may come back as another process). 1 if it
 * was there. */
int at_pidset_remove(struct at_pidset *s, uint32_t pid);

#endif
