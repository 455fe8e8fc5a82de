/* atz_live.h: the live tables of the 2.2 model (doc/FORMAT.md 6.5) and the writer's index of
 * the blocks they hold. Internal to lib/atz*.c.
 *
 * A live table lists the blocks a thread allocated that are still live, oldest first, so that
 * a free can be coded by the block's position in it (its rank) instead of its address. Each
 * block sits in a slot; slots are taken in allocation order and never reordered, and a bitmap
 * says which hold a live block. A Fenwick tree over the live count of each 64-slot word turns
 * slot into rank and rank into slot in O(log n). When the slots run out the live blocks are
 * packed to the front (the table doubles when more than half are live), so memory follows the
 * live blocks, and a table holds at most ATZ_LIVE_CAP of them: the oldest is dropped first.
 * A table starts with a few slots from the pool (atz_state.h): a thread with one live block
 * costs some 80 bytes.
 *
 * The index (writer only) finds the table and slot of a live block from its process and
 * address: one hash over every thread's table, so a free by another thread finds the block
 * too. Both live in page mappings, like the rest of the atz code. */
#ifndef ALLOCTAP_ATZ_LIVE_H
#define ALLOCTAP_ATZ_LIVE_H

#include <stddef.h>
#include <stdint.h>

struct atz_pool;

/* Live blocks one table holds at most (doc/FORMAT.md 6.5). */
#define ATZ_LIVE_CAP 65536u
/* The slot a dropped block goes to, for atz_live_moved_fn. */
#define ATZ_LIVE_DROPPED UINT32_MAX

/* A block of a live table: its address and the size it was allocated with. */
struct atz_block {
	uint64_t addr, size;
};

struct atz_live {
	struct atz_block *block; /* per slot */
	uint64_t *bits;          /* per slot: 1 while it holds a live block */
	uint32_t *tree;          /* Fenwick tree (1-based) of the live count of each 64-slot word */
	uint32_t cap;            /* slots: a power of two, 0 before the first block */
	uint32_t next;           /* slots taken: the next block goes to slot next */
	uint32_t count;          /* live blocks */
	uint32_t mark, mark_rank; /* mark_rank live blocks are in the slots below mark: where the
				  * last removal was, so that ranks near it are found nearby */
	uint64_t cursor;         /* the model's cursor: rank of the last block a release took */
};

/* Told of every live block whose slot changes (packing: from -> to), or that is dropped for
 * a new one when the table is full (to = ATZ_LIVE_DROPPED). */
typedef void (*atz_live_moved_fn)(void *arg, uint64_t addr, uint32_t from, uint32_t to);

/* Appends a block as the newest, dropping the oldest first when the table holds ATZ_LIVE_CAP;
 * its slot goes to *slot. Memory comes from pool. moved (may be NULL) is told of the blocks
 * that move or go. 0, or -1 when out of memory (the table is unchanged). */
int atz_live_append(struct atz_live *t, struct atz_pool *pool, uint64_t addr, uint64_t size,
		    uint32_t *slot, atz_live_moved_fn moved, void *arg);
/* The rank of the live block in slot: how many live blocks are older. */
uint32_t atz_live_rank(const struct atz_live *t, uint32_t slot);
/* The slot of the live block of rank r (r < t->count). */
uint32_t atz_live_slot(const struct atz_live *t, uint32_t r);
/* Takes the live block in slot, of rank r, out of the table. */
void atz_live_remove(struct atz_live *t, uint32_t slot, uint32_t r);
/* Whether slot holds a live block (slot < t->next). */
static inline int atz_live_holds(const struct atz_live *t, uint32_t slot)
{
	return t->bits[slot / 64] >> (slot % 64) & 1;
}
/* Gives the table's memory back to pool; it is empty and usable again. */
void atz_live_free(struct atz_live *t, struct atz_pool *pool);

/* ---- the writer's index: (pid, address) -> (thread, slot) --------------------------------- */

struct atz_owner {
	uint64_t addr;   /* 0: empty */
	uint32_t pid;
	uint32_t thread; /* index in the writer's thread table */
	uint32_t slot;   /* in that thread's live table */
	uint32_t cls;    /* the block's size class, ATZ_CLASS_FAR when it does not fit: the
			  * writer then reads it from the table (a block it need not touch) */
};
#define ATZ_CLASS_FAR UINT32_MAX

struct atz_index {
	struct atz_owner *v;
	size_t cap, count; /* cap: a power of two, 0 before the first entry */
};

/* The entry of (pid, addr), or NULL. */
struct atz_owner *atz_index_find(const struct atz_index *ix, uint32_t pid, uint64_t addr);
/* Sets (pid, addr) (addr != 0) to (thread, slot, cls), adding it if absent. 0, or -1 when out
 * of memory. */
int atz_index_put(struct atz_index *ix, uint32_t pid, uint64_t addr, uint32_t thread,
		  uint32_t slot, uint32_t cls);
/* Removes an entry atz_index_find returned (other entries may move). */
void atz_index_remove(struct atz_index *ix, struct atz_owner *e);
/* Removes every entry, keeping the memory. */
void atz_index_clear(struct atz_index *ix);
void atz_index_free(struct atz_index *ix);

#endif
