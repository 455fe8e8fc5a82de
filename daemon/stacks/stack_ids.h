/* stack_ids.h: stack hashes (from the BPF program) to the dense ids a trace numbers its stacks
 * with: 1, 2, ... in order of first appearance. */
#ifndef ALLOCTAP_STACK_IDS_H
#define ALLOCTAP_STACK_IDS_H

#include <stdint.h>

struct at_stack_ids {
	uint64_t *hashes;  /* open addressing, 0 = empty */
	uint32_t *ids;
	uint32_t cap;      /* a power of two */
	uint32_t count;    /* ids handed out */
};

int at_stack_ids_init(struct at_stack_ids *s);
void at_stack_ids_free(struct at_stack_ids *s);

/* The id of a stack hash (non-zero). 1 when the hash is new (it got id count), 0 when it was
 * known, -1 with errno ENOMEM when the table cannot grow. */
int at_stack_ids_get(struct at_stack_ids *s, uint64_t hash, uint32_t *id);

/* Whether hash has an id already: 1 or 0. */
int at_stack_ids_known(const struct at_stack_ids *s, uint64_t hash);

#endif
