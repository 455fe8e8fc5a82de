/* atz_state.h: the memory of the predictor states of the atz writer and reader. Internal to
 * lib/atz*.c.
 *
 * A trace may name millions of threads, most with few live blocks; each thread's state is
 * released when the trace says the thread ended (doc/FORMAT.md 5.9), so memory follows the
 * threads alive, not the threads ever seen. Hence:
 * - a pool of small blocks over page mappings (both sides keep off malloc: a replayer reads a
 *   trace without touching the allocator under test), with a free list per size class, so a
 *   thread's state and its small tables cost tens of bytes, not a page each;
 * - a map from a 64-bit key (a thread table entry, or pid and tid) to a thread's state, from
 *   which entries are removed when the thread ends;
 * - rings whose storage grows with their entries up to the model's capacity. */
#ifndef ALLOCTAP_ATZ_STATE_H
#define ALLOCTAP_ATZ_STATE_H

#include <stddef.h>
#include <stdint.h>

/* Size classes: 16-byte steps up to 512 bytes, then 1, 2 and 4 KiB; larger blocks are page
 * mappings of their own. */
#define ATZ_POOL_STEP_MAX 512u
#define ATZ_POOL_CLASSES (ATZ_POOL_STEP_MAX / 16 + 3)
#define ATZ_POOL_SMALL_MAX 4096u

struct atz_pool {
	void *free[ATZ_POOL_CLASSES]; /* per class: freed blocks, linked through their first word */
	uint8_t *chunk;               /* the chunk being carved, NULL before the first */
	size_t chunk_used;
	void *chunks;                 /* every chunk, linked through its first word */
	size_t bytes;                 /* bytes of blocks handed out and not put back */
};

/* A zeroed block of n bytes (n > 0), or NULL when out of memory. The caller puts it back with
 * atz_pool_put and the same n. */
void *atz_pool_get(struct atz_pool *p, size_t n);
/* Gives back a block of n bytes from atz_pool_get (NULL: nothing). */
void atz_pool_put(struct atz_pool *p, void *q, size_t n);
/* Unmaps every chunk. Blocks larger than ATZ_POOL_SMALL_MAX must have been put back. */
void atz_pool_free(struct atz_pool *p);

/* ---- map: 64-bit key -> thread state ----------------------------------------------------- */

struct atz_thread;

struct atz_tslot {
	uint64_t key;
	struct atz_thread *t; /* NULL: empty */
};

struct atz_tmap {
	struct atz_tslot *v;
	size_t cap, count; /* cap: a power of two, 0 before the first entry */
};

/* The state of key, or NULL. */
struct atz_thread *atz_tmap_find(const struct atz_tmap *m, uint64_t key);
/* Adds key (absent) -> t (not NULL). 0, or -1 when out of memory. */
int atz_tmap_put(struct atz_tmap *m, uint64_t key, struct atz_thread *t);
/* Removes key if present. */
void atz_tmap_remove(struct atz_tmap *m, uint64_t key);
/* The state in slot i of the map (NULL: empty); for walks over every state. */
static inline struct atz_thread *atz_tmap_at(const struct atz_tmap *m, size_t i)
{
	return m->v[i].t;
}
/* Removes every entry, keeping the memory. */
void atz_tmap_clear(struct atz_tmap *m);
void atz_tmap_free(struct atz_tmap *m);

/* The key of a thread by process and thread id. */
static inline uint64_t atz_tid_key(uint32_t pid, uint32_t tid)
{
	return (uint64_t)pid << 32 | tid;
}

#endif
