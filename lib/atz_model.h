/* atz_model.h: what the atz writer and reader share: record kinds, varints, and the
 * per-thread predictor state machine (doc/FORMAT.md sections 4 to 6). Internal to lib/atz*.c. */
#ifndef ALLOCTAP_ATZ_MODEL_H
#define ALLOCTAP_ATZ_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "atz.h"
#include "atz_live.h"
#include "atz_state.h"
#include "event.h"
#include "prim.h"
#include "stack.h"

/* Stream magic, the first four content bytes: "ATZ" and NUL. */
#define ATZ_STREAM_MAGIC "ATZ\0"

/* Record kinds: the first byte of each record. */
#define ATZ_OP_QUICK_MALLOC 0x00 /* 0x00-0x3F: malloc, size hit (bits 5-3), address hit (2-0) */
#define ATZ_OP_QUICK_FREE   0x40 /* 0x40-0x5F: free of allocation-ring entry (bits 4-0) */
#define ATZ_OP_MALLOC_SIZE  0x60 /* 0x60-0x67: malloc, size hit (bits 2-0), adelta address */
#define ATZ_OP_MALLOC_ADDR  0x68 /* 0x68-0x6F: malloc, varint size, address hit (bits 2-0) */
#define ATZ_OP_MALLOC_NEW   0x70 /* malloc, varint size, adelta address */
#define ATZ_OP_FREE_NULL    0x71 /* free(0) */
#define ATZ_OP_FREE_DELTA   0x72 /* free, adelta address against the last release */
#define ATZ_OP_MALLOC_DEEP1 0x73 /* malloc, byte (size hit | address hit << 3) */
#define ATZ_OP_MALLOC_DEEP2 0x74 /* malloc, varint size, byte address hit */
#define ATZ_OP_REALLOC_SAME 0x75 /* realloc(allocs[byte k], varint size) = the same pointer */
#define ATZ_OP_REALLOC_NULL 0x76 /* realloc(0, varint size) = last_alloc + adelta */
#define ATZ_OP_REALLOC_MOVE 0x77 /* realloc(allocs[byte k], varint size) = last_alloc + adelta */
#define ATZ_OP_EVENT        0x80 /* 0x80-0x88: any event, func in bits 3-0, field byte follows */
#define ATZ_OP_THREAD       0x90 /* switch to thread table entry (varint index) */
#define ATZ_OP_NEW_THREAD   0x91 /* append (varint pid, varint tid) to the table, switch to it */
#define ATZ_OP_LOST         0x92 /* varint count of events lost here */
#define ATZ_OP_TIME         0x93 /* 2.x: varint time, the reference of the next time delta */
#define ATZ_OP_SIZED_FIRST  0xC0 /* 0xC0-0xFF: kind, varint length, payload (skippable) */
#define ATZ_OP_PROCESS      0xC0 /* payload: varint pid, name bytes */
#define ATZ_OP_OBJECT       0xC1 /* payload: varint pid, start, end, offset, path bytes */
#define ATZ_OP_PROCESS_CHANGE 0xC2 /* payload: varint change, flags, pid, parent, time, status,
				    * executable bytes, NUL, command line bytes (1.1) */
#define ATZ_OP_STACK        0xC3 /* 2.x payload: varint id, pid, count, flags, first pc, then
				  * zigzag(pc[i] - pc[i-1]) for each further frame */
#define ATZ_OP_RSS          0xC5 /* 2.1 payload: varint pid, time, bytes */
#define ATZ_OP_MAPPING      0xC4 /* 2.x payload: varint pid, start, end, offset, build-id
				  * length, build-id bytes, path bytes */
#define ATZ_OP_END          0xC6 /* 2.3 payload: varint thread table entry: the thread ended,
				  * its state is released (doc/FORMAT.md 5.9) */
#define ATZ_OP_NAMES        0xC7 /* reserved in 2.3 payload: varint pid, kind byte, varint
				  * value, line, function length, function bytes, file bytes
				  * (doc/FORMAT.md 5.10) */

/* What a reader holds at most in one frame (doc/FORMAT.md 8), and what a writer keeps within
 * by ending threads' states itself (2.3), so every trace it writes is read: thread states at
 * once (Linux's PID_MAX_LIMIT: no more threads can be alive at once), and live blocks in all
 * live tables together. */
#define ATZ_THREADS_MAX (1u << 22)
#define ATZ_BLOCKS_MAX  (1u << 24)

/* The limits in force: ATZ_THREADS_MAX and ATZ_BLOCKS_MAX, lowered only by unit tests (so
 * that a writer's ending states itself is tested without millions of them). */
struct atz_limits {
	uint32_t threads, blocks;
};
extern struct atz_limits atz_limits;

/* Record kinds of a 2.2 frame where they differ (doc/FORMAT.md 5.8): the events are coded
 * against the live tables and the freed rings, and the thread records move so that a 2.0 or
 * 2.1 reader stops at the first one instead of misreading the events. */
#define ATZ_OP22_QUICK_MALLOC 0x00 /* 0x00-0x3F: malloc, size hit (bits 5-3), address (2-0) */
#define ATZ_OP22_MALLOC       0x40 /* 0x40-0x47: malloc, varint size, address (bits 2-0) */
#define ATZ_OP22_QUICK_FREE   0x48 /* 0x48-0x67: free of the live block of recency 0-31 */
#define ATZ_OP22_FREE_NEAR    0x68 /* 0x68-0x77: free of rank cursor + unzigzag(0-15) */
#define ATZ_OP22_FREE_FAR     0x78 /* free, varint release code */
#define ATZ_OP22_FREE_NULL    0x79 /* free(0) */
#define ATZ_OP22_FREE_ADDR    0x7A /* free, adelta against last_release (a block of no table) */
#define ATZ_OP22_REALLOC_SAME 0x7B /* varint release code, varint size: the same pointer */
#define ATZ_OP22_REALLOC_MOVE 0x7C /* varint release code, varint size, varint address code */
#define ATZ_OP22_REALLOC_NULL 0x7D /* realloc(0, varint size) = varint address code */
#define ATZ_OP22_OTHER        0x7E /* varint thread: the next event releases from its table */
#define ATZ_OP22_THREAD       0x94 /* as ATZ_OP_THREAD */
#define ATZ_OP22_NEW_THREAD   0x95 /* as ATZ_OP_NEW_THREAD */
/* The address field (bits 2-0) of the 2.2 malloc forms: 0-5 the freed block of that class
 * rank, ATZ_ADDR22_TOP the top, ATZ_ADDR22_CODE a varint address code follows. */
#define ATZ_ADDR22_TOP  6
#define ATZ_ADDR22_CODE 7
#define ATZ_ADDR22_CLASSES 6
#define ATZ_QUICK_FREES22  32 /* recency indexes of QUICK_FREE */
#define ATZ_NEAR_FREES22   16 /* zigzag cursor deltas of FREE_NEAR */

/* 2.x: what follows every event record, as the header's flags say (doc/FORMAT.md 5.5):
 * times and stacks: varint zigzag(time - previous time) << 1 | S, then when S is 1 the varint
 * stack id; times only: varint zigzag(time - previous time); stacks only: varint stack id
 * (0: none); neither: nothing. */
#define ATZ_TAIL_TIME  1u
#define ATZ_TAIL_STACK 2u
#define ATZ_EVENT_TAIL_MAX 20

/* The tail of a stream of version major with header flags. */
static inline unsigned atz_tail_of(unsigned major, uint64_t flags)
{
	if (major < 2)
		return 0;
	return (flags & AT_ATZ_FLAG_NO_TIMES ? 0 : ATZ_TAIL_TIME) |
	       (flags & AT_ATZ_FLAG_NO_STACKS ? 0 : ATZ_TAIL_STACK);
}

/* Field modes in the field byte of an ATZ_OP_EVENT record. */
#define ATZ_MODE_ZERO    0 /* the value is 0, no bytes */
#define ATZ_MODE_RING    1 /* one byte k: entry k of the field's ring */
#define ATZ_MODE_DELTA   2 /* varint delta code of value - reference (adelta for addresses) */
#define ATZ_MODE_LITERAL 3 /* varint value */
#define ATZ_MODE_TABLE   1 /* 2.2, release and result fields: varint release or address code */
#define ATZ_FIELD_HAS_RESULT 0x40
#define ATZ_FIELD_RESERVED   0x80

/* Field roles, fixed by the function and the field's position. */
enum atz_role { ATZ_ROLE_SIZE, ATZ_ROLE_RELEASE, ATZ_ROLE_ALLOC, ATZ_ROLE_EXTRA };

#define ATZ_SIZES_CAP    8  /* ring of recent sizes (move to front) */
#define ATZ_RELEASES_CAP 32 /* ring of recently released addresses */
#define ATZ_ALLOCS_CAP   64 /* ring of recently allocated addresses */

/* The largest record we write: a process change record */
#define ATZ_RECORD_MAX   (8 + 8 * 10 + AT_ATZ_NAME_MAX + 1 + AT_ATZ_ARGS_MAX)
/* The largest stack record: kind, length, four numbers, the frames and their kinds. */
#define ATZ_STACK_RECORD_MAX (1 + 10 + 4 * 10 + AT_STACK_MAX_FRAMES * 11)
#define ATZ_SIZED_MAX    (1u << 20) /* largest length-prefixed payload a reader accepts */
/* Keys of the header extension's entries (2.4, doc/FORMAT.md 3.1). */
#define ATZ_EXT_MIN_SIZE     1
#define ATZ_EXT_SAMPLE_BYTES 2
#define ATZ_CHUNK        (64u * 1024) /* content bytes per lz4 block, as written */

/* A ring of recent values of the model's capacity cap (a power of two, given by the caller):
 * entry 0 is the newest. Its storage (room entries, a power of two up to cap) grows with its
 * entries: atz_thread_reserve makes room before each event, so a push never needs memory and
 * drops the oldest entry only when the ring holds cap. Address rings never hold 0. */
struct atz_ring {
	uint64_t *v;      /* room entries from the pool, NULL while room is 0 */
	uint32_t head, count, room;
};

/* Grows r's storage to at least need entries (at most cap). 0, or -1 when out of memory. */
int atz_ring_grow(struct atz_pool *p, struct atz_ring *r, uint32_t cap, uint32_t need);

#define ATZ_FREED_CAP    64 /* 2.2: ring of recently released blocks and their classes */
#define ATZ_FREED_HINTS 256 /* writer: entries per hash of their address */

/* 2.2: the blocks a thread released last, newest first, each with the size class it was
 * allocated with (0 when no table held it). Its storage grows as the rings'. */
struct atz_freed_entry {
	uint64_t addr, cls;
};

struct atz_freed {
	struct atz_freed_entry *e; /* room entries from the pool */
	uint8_t *seen;             /* writer: entries per hash of their address, after e, so a
				    * search stops early; NULL in a reader */
	uint32_t head, count, room;
};

/* Grows f's storage to at least need entries (at most ATZ_FREED_CAP), with the writer's hints
 * when hints is set. 0 or -1. */
int atz_freed_grow(struct atz_pool *p, struct atz_freed *f, int hints, uint32_t need);

static inline uint32_t atz_freed_hash(uint64_t addr)
{
	return (uint32_t)((addr >> 4) ^ (addr >> 12)) & (ATZ_FREED_HINTS - 1);
}

/* Predictor state of one thread. 1.x, 2.0 and 2.1 use the rings sizes, releases and allocs;
 * 2.2 sizes, live (the thread's live table, with its cursor), freed and top. Every part
 * starts empty and grows with what it holds. */
struct atz_thread {
	uint32_t pid, tid;
	uint32_t entry;        /* its thread table entry (doc/FORMAT.md 6.1) */
	uint64_t last_size, last_release, last_alloc;
	struct atz_ring sizes, releases, allocs;
	uint64_t top;          /* 2.2: where the next allocation from fresh memory is expected */
	struct atz_freed freed;
	struct atz_live live;
};

/* A fresh state of thread (pid, tid), table entry entry, from the pool; NULL out of memory. */
struct atz_thread *atz_thread_new(struct atz_pool *p, uint32_t pid, uint32_t tid,
				  uint32_t entry);
/* Gives back t and all it holds (hints: the writer's freed-ring hints were allocated). */
void atz_thread_free(struct atz_pool *p, struct atz_thread *t, int hints);

/* Makes room, before an event of t, for what one event may add: two sizes, one release, one
 * allocation (1.x to 2.1), one freed block (2.2). 0, or -1 when out of memory. */
static inline int atz_thread_reserve(struct atz_pool *p, struct atz_thread *t, int live_model,
				     int hints)
{
	if (t->sizes.count + 2 > t->sizes.room && t->sizes.room < ATZ_SIZES_CAP &&
	    atz_ring_grow(p, &t->sizes, ATZ_SIZES_CAP, t->sizes.count + 2) < 0)
		return -1;
	if (live_model)
		return t->freed.count + 1 > t->freed.room && t->freed.room < ATZ_FREED_CAP
		       ? atz_freed_grow(p, &t->freed, hints, t->freed.count + 1) : 0;
	if (t->releases.count + 1 > t->releases.room && t->releases.room < ATZ_RELEASES_CAP &&
	    atz_ring_grow(p, &t->releases, ATZ_RELEASES_CAP, t->releases.count + 1) < 0)
		return -1;
	if (t->allocs.count + 1 > t->allocs.room && t->allocs.room < ATZ_ALLOCS_CAP &&
	    atz_ring_grow(p, &t->allocs, ATZ_ALLOCS_CAP, t->allocs.count + 1) < 0)
		return -1;
	return 0;
}

/* Newest index of x in the ring, or -1. Scans the array in two straight runs (newest
 * first): slots top..0, then the older slots mask down past top. */
static inline int atz_ring_find(const uint64_t *v, uint32_t head, uint32_t count,
				uint32_t mask, uint64_t x)
{
	uint32_t top = (head - 1) & mask;
	uint32_t first = count < top + 1 ? count : top + 1;

	for (uint32_t k = 0; k < first; k++)
		if (v[top - k] == x)
			return (int)k;
	for (uint32_t k = first; k < count; k++)
		if (v[mask + first - k] == x)
			return (int)k;
	return -1;
}

/* Pushes x as entry 0 of a ring of room entries (room > count, or the ring is full). */
static inline void atz_ring_push(uint64_t *v, uint32_t *head, uint32_t *count, uint32_t room,
				 uint64_t x)
{
	v[*head & (room - 1)] = x;
	(*head)++;
	if (*count < room)
		(*count)++;
}

/* Removes entry k (< count): the k newer entries each move one place older. */
static inline void atz_ring_remove(uint64_t *v, uint32_t *head, uint32_t *count, uint32_t room,
				   uint32_t k)
{
	uint32_t mask = room - 1;

	for (uint32_t i = k; i > 0; i--)
		v[(*head - 1 - i) & mask] = v[(*head - i) & mask];
	(*head)--;
	(*count)--;
}

#define RING_FIND(r, x) ((r).count ? atz_ring_find((r).v, (r).head, (r).count, \
						    (r).room - 1, (x)) : -1)
#define RING_PUSH(r, x) atz_ring_push((r).v, &(r).head, &(r).count, (r).room, (x))
#define RING_REMOVE(r, k) atz_ring_remove((r).v, &(r).head, &(r).count, (r).room, (k))
#define RING_GET(r, k) ((r).v[((r).head - 1 - (k)) & ((r).room - 1)])

static inline enum atz_role atz_field_role(unsigned func, unsigned field)
{
	if (field == 2)
		return ATZ_ROLE_ALLOC;
	if (field == 0 && at_func_takes_pointer(func))
		return ATZ_ROLE_RELEASE;
	return field < at_func_nargs[func] ? ATZ_ROLE_SIZE : ATZ_ROLE_EXTRA;
}

/* The value a delta of this role is taken against. */
static inline uint64_t atz_delta_ref(const struct atz_thread *t, enum atz_role role)
{
	return role == ATZ_ROLE_SIZE ? t->last_size
	     : role == ATZ_ROLE_RELEASE ? t->last_release : t->last_alloc;
}

/* Applies one field of a decoded or encoded event to the thread's state (FORMAT.md 6.3).
 * ring_k is the ring index when the field was coded as a ring hit, else -1. */
static inline void atz_update(struct atz_thread *t, enum atz_role role, uint64_t x, int ring_k)
{
	switch (role) {
	case ATZ_ROLE_SIZE:
		if (ring_k >= 0)
			RING_REMOVE(t->sizes, (uint32_t)ring_k);
		RING_PUSH(t->sizes, x);
		t->last_size = x;
		break;
	case ATZ_ROLE_RELEASE:
		if (ring_k >= 0)
			RING_REMOVE(t->allocs, (uint32_t)ring_k);
		if (x) {
			RING_PUSH(t->releases, x);
			t->last_release = x;
		}
		break;
	case ATZ_ROLE_ALLOC:
		if (ring_k >= 0)
			RING_REMOVE(t->releases, (uint32_t)ring_k);
		if (x) {
			RING_PUSH(t->allocs, x);
			t->last_alloc = x;
		}
		break;
	case ATZ_ROLE_EXTRA:
		break;
	}
}

/* ---- 2.2 (doc/FORMAT.md 6.5) ----------------------------------------------------------- */

/* The size class of an allocation of n bytes: glibc's chunk size over 16, at least 2, so that
 * blocks an allocator hands out again for a request of the same class are found by class. In
 * a munged trace every size is of class 2: slot numbers come back whatever the size. */
static inline uint64_t atz_size_class(uint64_t n, int munged)
{
	uint64_t c = (n >> 4) + (((n & 15) + 23) >> 4);
	return c < 2 || munged ? 2 : c;
}

/* The size an event allocates: malloc and valloc arg[0], calloc arg[0] * arg[1], realloc and
 * the memalign family arg[1]; free and jemalloc_stats 0. */
static inline uint64_t atz_alloc_size(unsigned func, uint64_t arg0, uint64_t arg1)
{
	switch (func) {
	case AT_MALLOC:
	case AT_VALLOC:
		return arg0;
	case AT_CALLOC:
		return arg0 * arg1;
	case AT_FREE:
	case AT_JEMALLOC_STATS:
		return 0;
	default:
		return arg1;
	}
}

/* Pushes a released block onto the freed ring (the oldest drops out of a full ring). The
 * caller made room (atz_thread_reserve). */
static inline void atz_freed_push(struct atz_freed *f, uint64_t addr, uint64_t cls)
{
	uint32_t i = f->head++ & (f->room - 1);

	if (f->count < f->room)
		f->count++;
	else if (f->seen)
		f->seen[atz_freed_hash(f->e[i].addr)]--;
	f->e[i].addr = addr;
	f->e[i].cls = cls;
	if (f->seen)
		f->seen[atz_freed_hash(addr)]++;
}

/* The array index of ring entry k (0 the newest). */
static inline uint32_t atz_freed_at(const struct atz_freed *f, uint32_t k)
{
	return (f->head - 1 - k) & (f->room - 1);
}

/* Removes ring entry k: the newer entries each move one place older. */
static inline void atz_freed_remove(struct atz_freed *f, uint32_t k)
{
	if (f->seen)
		f->seen[atz_freed_hash(f->e[atz_freed_at(f, k)].addr)]--;
	for (uint32_t i = k; i > 0; i--)
		f->e[atz_freed_at(f, i)] = f->e[atz_freed_at(f, i - 1)];
	f->head--;
	f->count--;
}

/* Writer: the newest ring entry holding addr with class cls, or -1; *rank gets how many newer
 * entries have class cls (the address code's class rank). Addresses are compared first: most
 * allocations from fresh memory are in no entry. */
static inline int atz_freed_find(const struct atz_freed *f, uint64_t cls, uint64_t addr,
				 uint32_t *rank)
{
	if (!f->count || !f->seen[atz_freed_hash(addr)])
		return -1;
	for (uint32_t k = 0; k < f->count; k++) {
		const struct atz_freed_entry *e = &f->e[atz_freed_at(f, k)];
		if (e->addr != addr || e->cls != cls)
			continue;
		*rank = 0;
		for (uint32_t j = 0; j < k; j++)
			*rank += f->e[atz_freed_at(f, j)].cls == cls;
		return (int)k;
	}
	return -1;
}

/* Reader: the ring entry of class rank j within class cls, or -1. */
static inline int atz_freed_class(const struct atz_freed *f, uint64_t cls, uint64_t j)
{
	for (uint32_t k = 0; k < f->count; k++)
		if (f->e[atz_freed_at(f, k)].cls == cls && j-- == 0)
			return (int)k;
	return -1;
}

/* After block x of n bytes was allocated from fresh memory: where the next one is expected
 * (the chunk after it, or the next slot number in a munged trace). */
static inline uint64_t atz_next_top(uint64_t x, uint64_t n, int munged)
{
	return munged ? x + 1 : x + 16 * atz_size_class(n, 0);
}

/* A release that no table held: the block goes on the freed ring with class 0. */
static inline void atz_release_addr(struct atz_thread *t, uint64_t x)
{
	atz_freed_push(&t->freed, x, 0);
	t->last_release = x;
}

/* Takes the live block x of class cls in slot (rank r) out of owner's table onto t's freed
 * ring. */
static inline void atz_release_known(struct atz_thread *t, struct atz_thread *owner,
				     uint32_t slot, uint32_t r, uint64_t x, uint64_t cls)
{
	atz_live_remove(&owner->live, slot, r);
	owner->live.cursor = r;
	atz_freed_push(&t->freed, x, cls);
	t->last_release = x;
}

/* Takes the live block in slot (rank r) out of owner's table onto t's freed ring. Returns
 * its address. */
static inline uint64_t atz_release_block(struct atz_thread *t, struct atz_thread *owner,
					 uint32_t slot, uint32_t r, int munged)
{
	struct atz_block b = owner->live.block[slot];

	atz_release_known(t, owner, slot, r, b.addr, atz_size_class(b.size, munged));
	return b.addr;
}

static inline uint64_t atz_zigzag(uint64_t d)
{
	return (d << 1) ^ (uint64_t)((int64_t)d >> 63);
}

static inline uint64_t atz_unzigzag(uint64_t z)
{
	return (z >> 1) ^ (uint64_t)-(int64_t)(z & 1);
}

/* The address delta code ("adelta"): a delta d that is a multiple of 16 (as allocators align)
 * is coded zigzag(d >> 4) << 1, any other zigzag(d) << 1 | 1. Returns 0 when d cannot be
 * coded (unaligned with |d| >= 2^62): the caller then writes the value literally. */
static inline int atz_adelta(uint64_t d, uint64_t *code)
{
	if ((d & 15) == 0) {
		*code = atz_zigzag((uint64_t)((int64_t)d >> 4)) << 1;
		return 1;
	}
	uint64_t z = atz_zigzag(d);
	if (z >> 63)
		return 0;
	*code = z << 1 | 1;
	return 1;
}

static inline uint64_t atz_unadelta(uint64_t code)
{
	uint64_t d = atz_unzigzag(code >> 1);
	return code & 1 ? d : d << 4;
}

/* Whether a role's deltas use the adelta code (addresses) or plain zigzag (sizes). */
static inline int atz_role_is_address(enum atz_role role)
{
	return role == ATZ_ROLE_RELEASE || role == ATZ_ROLE_ALLOC;
}

/* LEB128: 7 bits per byte, low group first, high bit set on every byte but the last. */
static inline size_t atz_put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

static inline unsigned atz_varint_len(uint64_t v)
{
	unsigned bits = v ? 64 - (unsigned)__builtin_clzll(v) : 1;
	return (bits + 6) / 7;
}

/* Reads a varint from [*pp, end). Returns 0, 1 when it runs past end, -1 when it is longer
 * than 10 bytes or overflows 64 bits. */
static inline int atz_get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t x = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (p == end)
			return 1;
		uint8_t b = *p++;
		if (shift == 63 && b > 1)
			return -1;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*pp = p;
			*v = x;
			return 0;
		}
	}
	return -1;
}

/* Page-granular allocation (lib/prim.h), so neither side touches malloc: mappings that
 * reserve no swap, since only touched pages count. */
static inline void *atz_map(size_t size)
{
	return at_map(size, AT_MAP_NORESERVE);
}

static inline void atz_unmap(void *p, size_t size)
{
	at_unmap(p, size);
}

/* Grows a mapping from old_size to new_size bytes (a new one for p NULL), keeping its
 * contents. NULL on failure (the old mapping is then still valid). */
static inline void *atz_remap(void *p, size_t old_size, size_t new_size)
{
	return p ? at_remap(p, old_size, new_size) : atz_map(new_size);
}

/* lz4frame custom allocator over atz_map. */
void *atz_lz4_alloc(void *opaque, size_t size);
void *atz_lz4_calloc(void *opaque, size_t size);
void atz_lz4_free(void *opaque, void *p);

#endif
