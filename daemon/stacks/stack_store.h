/* stack_store.h: every stack the daemon has read, kept by its session id, and the ids they
 * have in the file being written.
 *
 * A trace numbers its stacks 1, 2, ... in order of first appearance, and each lz4 frame starts
 * the numbering over (doc/FORMAT.md). The BPF program's stack map is read once per stack (and
 * the stack deleted there), so when SIGHUP moves the output to a new file the daemon writes the
 * stacks again from here: a session id (1, 2, ... over the whole run, from struct
 * at_stack_ids) gets a file id the first time an event of the new file refers to it. With each
 * frame the store keeps its kind (enum at_frame_kind) and the serial of the mapping its pc lay
 * in (daemon/stacks/stack_procs.h), which says which mapping record the frame needs before the
 * stack. */
#ifndef ALLOCTAP_STACK_STORE_H
#define ALLOCTAP_STACK_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "stack.h"

struct at_stack_store {
	struct at_stack_store_entry {
		size_t at;       /* first frame in pool */
		uint32_t pid;
		uint16_t count, flags; /* count 0: no stack under this id */
		uint32_t file_id; /* 0: not in the current file yet */
	} *v;
	uint32_t count, cap;  /* the highest id kept; v[0] unused: session ids start at 1 */
	uint64_t *pool;
	uint32_t *serials;    /* beside pool, frame for frame */
	uint8_t *kinds;       /* beside pool, frame for frame: enum at_frame_kind */
	size_t pool_len, pool_cap;
	uint32_t file_count;  /* file ids handed out in the current file */
};

void at_stack_store_init(struct at_stack_store *st);
void at_stack_store_free(struct at_stack_store *st);

/* Keeps s (s->id is ignored; its frames' kinds with its pcs) and its frames' mapping serials (s->count of them) as session id
 * sid, above every id kept so far (the ids between, whose stacks could not be read, stay
 * without a stack). 0, or -1 with errno (EINVAL for an id not above the last or a count of 0 or
 * above AT_STACK_MAX_FRAMES, ENOMEM). */
int at_stack_store_add(struct at_stack_store *st, uint32_t sid, const struct at_stack *s,
		       const uint32_t *serials);

/* The id session id sid has in the current file, taking the next one when it has none yet:
 * then *is_new is 1, *out holds the stack under that id, to be written before the event that
 * refers to it, and serials (AT_STACK_MAX_FRAMES of room) its frames' serials. 0 (and *is_new
 * 0) for an id without a stack. */
uint32_t at_stack_store_file_id(struct at_stack_store *st, uint32_t sid, struct at_stack *out,
				uint32_t *serials, int *is_new);

/* A new file starts: every stack gets a new file id at its next use. */
void at_stack_store_new_file(struct at_stack_store *st);

#endif
