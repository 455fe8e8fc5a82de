/* atz_state.c: the pool, the thread map and the thread states of the atz code (atz_state.h,
 * atz_model.h). */
#include <errno.h>
#include <string.h>

#include "atz_model.h"
#include "atz_state.h"
#include "prim.h"

struct atz_limits atz_limits = { ATZ_THREADS_MAX, ATZ_BLOCKS_MAX };

#define CHUNK_BYTES (1u << 20) /* a chunk of the pool: only its touched pages cost memory */
#define CHUNK_HEAD 64u         /* the chunk list's link, keeping blocks 64-byte aligned */

/* ---- pool ------------------------------------------------------------------------------- */

/* The class of a block of n bytes (0 < n <= ATZ_POOL_SMALL_MAX) and its size in *size. */
static unsigned pool_class(size_t n, size_t *size)
{
	if (n <= ATZ_POOL_STEP_MAX) {
		*size = (n + 15) & ~(size_t)15;
		return (unsigned)(*size / 16 - 1);
	}
	unsigned c = ATZ_POOL_STEP_MAX / 16;
	for (*size = 2 * ATZ_POOL_STEP_MAX; *size < n; *size *= 2)
		c++;
	return c;
}

/* A block of size bytes carved from the current chunk (a new one when it is used up). */
static void *pool_carve(struct atz_pool *p, size_t size)
{
	if (!p->chunk || p->chunk_used + size > CHUNK_BYTES) {
		uint8_t *c = at_map(CHUNK_BYTES, AT_MAP_NORESERVE);
		if (!c)
			return NULL;
		memcpy(c, &p->chunks, sizeof(void *));
		p->chunks = c;
		p->chunk = c;
		p->chunk_used = CHUNK_HEAD;
	}
	void *q = p->chunk + p->chunk_used;
	p->chunk_used += size;
	return q;
}

void *atz_pool_get(struct atz_pool *p, size_t n)
{
	if (n > ATZ_POOL_SMALL_MAX) {
		void *q = at_map(n, AT_MAP_NORESERVE);
		if (q)
			p->bytes += n;
		return q;
	}
	size_t size;
	unsigned c = pool_class(n, &size);
	void *q = p->free[c];
	if (q) {
		memcpy(&p->free[c], q, sizeof(void *));
		memset(q, 0, size);
	} else if (!(q = pool_carve(p, size))) {
		return NULL;
	}
	p->bytes += size;
	return q;
}

void atz_pool_put(struct atz_pool *p, void *q, size_t n)
{
	if (!q)
		return;
	if (n > ATZ_POOL_SMALL_MAX) {
		at_unmap(q, n);
		p->bytes -= n;
		return;
	}
	size_t size;
	unsigned c = pool_class(n, &size);
	memcpy(q, &p->free[c], sizeof(void *));
	p->free[c] = q;
	p->bytes -= size;
}

void atz_pool_free(struct atz_pool *p)
{
	while (p->chunks) {
		void *next;
		memcpy(&next, p->chunks, sizeof(next));
		at_unmap(p->chunks, CHUNK_BYTES);
		p->chunks = next;
	}
	memset(p, 0, sizeof(*p));
}

/* ---- thread map ------------------------------------------------------------------------- */

static size_t tmap_home(uint64_t key, size_t mask)
{
	uint64_t k = key * 0x9E3779B97F4A7C15ull;
	return (size_t)(k >> 32 ^ k) & mask;
}

struct atz_thread *atz_tmap_find(const struct atz_tmap *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	size_t mask = m->cap - 1;
	for (size_t i = tmap_home(key, mask); m->v[i].t; i = (i + 1) & mask)
		if (m->v[i].key == key)
			return m->v[i].t;
	return NULL;
}

/* Doubles the map and re-inserts every entry. */
static int tmap_grow(struct atz_tmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	struct atz_tslot *v = at_map(cap * sizeof(*v), AT_MAP_NORESERVE);

	if (!v)
		return -1;
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->v[i].t)
			continue;
		size_t j = tmap_home(m->v[i].key, cap - 1);
		while (v[j].t)
			j = (j + 1) & (cap - 1);
		v[j] = m->v[i];
	}
	at_unmap(m->v, m->cap * sizeof(*v));
	m->v = v;
	m->cap = cap;
	return 0;
}

int atz_tmap_put(struct atz_tmap *m, uint64_t key, struct atz_thread *t)
{
	if ((m->count + 1) * 2 > m->cap && tmap_grow(m) < 0) {
		errno = ENOMEM;
		return -1;
	}
	size_t mask = m->cap - 1, i = tmap_home(key, mask);
	while (m->v[i].t)
		i = (i + 1) & mask;
	m->v[i].key = key;
	m->v[i].t = t;
	m->count++;
	return 0;
}

/* Linear probing's deletion without tombstones (as atz_index_remove). */
void atz_tmap_remove(struct atz_tmap *m, uint64_t key)
{
	if (!m->cap)
		return;
	size_t mask = m->cap - 1, hole = tmap_home(key, mask);
	for (; m->v[hole].t; hole = (hole + 1) & mask)
		if (m->v[hole].key == key)
			break;
	if (!m->v[hole].t)
		return;
	for (size_t j = (hole + 1) & mask; m->v[j].t; j = (j + 1) & mask) {
		size_t h = tmap_home(m->v[j].key, mask);
		if (((j - h) & mask) >= ((j - hole) & mask)) {
			m->v[hole] = m->v[j];
			hole = j;
		}
	}
	m->v[hole].t = NULL;
	m->count--;
}

void atz_tmap_clear(struct atz_tmap *m)
{
	if (m->count)
		memset(m->v, 0, m->cap * sizeof(*m->v));
	m->count = 0;
}

void atz_tmap_free(struct atz_tmap *m)
{
	at_unmap(m->v, m->cap * sizeof(*m->v));
	memset(m, 0, sizeof(*m));
}

/* ---- rings and thread states ------------------------------------------------------------ */

int atz_ring_grow(struct atz_pool *p, struct atz_ring *r, uint32_t cap, uint32_t need)
{
	uint32_t room = r->room ? r->room : 2;

	while (room < need && room < cap)
		room *= 2;
	if (room == r->room)
		return 0;
	uint64_t *v = atz_pool_get(p, room * sizeof(*v));
	if (!v)
		return -1;
	for (uint32_t k = 0; k < r->count; k++) /* entry k at count - 1 - k: head = count */
		v[r->count - 1 - k] = r->v[(r->head - 1 - k) & (r->room - 1)];
	atz_pool_put(p, r->v, r->room * sizeof(*v));
	r->v = v;
	r->head = r->count;
	r->room = room;
	return 0;
}

/* Bytes of a freed ring's storage of room entries: the entries, then (writer) the hint. */
static size_t freed_bytes(uint32_t room, int hints)
{
	return room * sizeof(struct atz_freed_entry) + (hints ? ATZ_FREED_HINTS : 0);
}

int atz_freed_grow(struct atz_pool *p, struct atz_freed *f, int hints, uint32_t need)
{
	uint32_t room = f->room ? f->room : 4;

	while (room < need && room < ATZ_FREED_CAP)
		room *= 2;
	if (room == f->room)
		return 0;
	struct atz_freed_entry *e = atz_pool_get(p, freed_bytes(room, hints));
	if (!e)
		return -1;
	for (uint32_t k = 0; k < f->count; k++)
		e[f->count - 1 - k] = f->e[atz_freed_at(f, k)];
	uint8_t *seen = hints ? (uint8_t *)(e + room) : NULL;
	if (seen && f->seen)
		memcpy(seen, f->seen, ATZ_FREED_HINTS);
	atz_pool_put(p, f->e, freed_bytes(f->room, hints));
	f->e = e;
	f->seen = seen;
	f->head = f->count;
	f->room = room;
	return 0;
}

struct atz_thread *atz_thread_new(struct atz_pool *p, uint32_t pid, uint32_t tid, uint32_t entry)
{
	struct atz_thread *t = atz_pool_get(p, sizeof(*t));

	if (!t)
		return NULL;
	t->pid = pid;
	t->tid = tid;
	t->entry = entry;
	return t;
}

void atz_thread_free(struct atz_pool *p, struct atz_thread *t, int hints)
{
	atz_pool_put(p, t->sizes.v, t->sizes.room * sizeof(uint64_t));
	atz_pool_put(p, t->releases.v, t->releases.room * sizeof(uint64_t));
	atz_pool_put(p, t->allocs.v, t->allocs.room * sizeof(uint64_t));
	atz_pool_put(p, t->freed.e, freed_bytes(t->freed.room, hints));
	atz_live_free(&t->live, p);
	atz_pool_put(p, t, sizeof(*t));
}
