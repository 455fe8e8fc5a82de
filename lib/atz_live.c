/* atz_live.c: the live tables of the 2.2 model and the writer's block index (atz_live.h). */
#include <errno.h>
#include <string.h>

#include "atz_live.h"
#include "atz_state.h"
#include "prim.h"

#define FIRST_CAP 4u   /* slots of a table's first block: most threads hold few */
#define NEAR_WORDS 4u  /* words atz_live_slot scans back from the newest before the tree */

/* ---- live tables ------------------------------------------------------------------------ */

/* 64-slot words of a table of cap slots (the last one partly used below 64 slots). */
static uint32_t table_words(uint32_t cap)
{
	return (cap + 63) / 64;
}

/* Bytes of one block holding cap slots: blocks, then bits, then the tree. */
static size_t table_bytes(uint32_t cap)
{
	return (size_t)cap * sizeof(struct atz_block) + table_words(cap) * sizeof(uint64_t) +
	       (table_words(cap) + 1) * sizeof(uint32_t);
}

/* Points t's arrays into the mapping m of cap slots. */
static void table_place(struct atz_live *t, void *m, uint32_t cap)
{
	t->block = m;
	t->bits = (uint64_t *)(t->block + cap);
	t->tree = (uint32_t *)(t->bits + table_words(cap));
	t->cap = cap;
}

/* The set bits of w, without the out-of-line libgcc call __builtin_popcountll makes on
 * baseline x86-64. */
static inline unsigned popcount64(uint64_t w)
{
	w -= (w >> 1) & 0x5555555555555555ull;
	w = (w & 0x3333333333333333ull) + ((w >> 2) & 0x3333333333333333ull);
	w = (w + (w >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (unsigned)((w * 0x0101010101010101ull) >> 56);
}

/* select_in_byte[b][r]: the position of the r-th set bit of byte b (0 past its last). */
static uint8_t select_in_byte[256][8];

static void build_select_table(void)
{
	for (unsigned b = 0; b < 256; b++)
		for (unsigned i = 0, r = 0; i < 8; i++)
			if (b >> i & 1)
				select_in_byte[b][r++] = (uint8_t)i;
}

/* Adds d to the live count of word w. */
static void tree_add(struct atz_live *t, uint32_t w, int32_t d)
{
	uint32_t n = t->cap / 64;

	for (uint32_t i = w + 1; i <= n; i += i & -i)
		t->tree[i] += (uint32_t)d;
}

/* Live blocks in the words before w. */
static uint32_t tree_prefix(const struct atz_live *t, uint32_t w)
{
	uint32_t s = 0;

	for (uint32_t i = w; i > 0; i -= i & -i)
		s += t->tree[i];
	return s;
}

/* The word slots are being appended to: the tree counts the words before it only, so that
 * appends (and releases of the newest blocks) leave the tree alone. t->cap / 64 when full. */
static uint32_t tail_word(const struct atz_live *t)
{
	return t->next / 64;
}

/* Live blocks in the words before the tail word. */
static uint32_t sealed_count(const struct atz_live *t)
{
	uint32_t w = tail_word(t);
	return w < table_words(t->cap) ? t->count - popcount64(t->bits[w]) : t->count;
}

/* Builds the tree of the words before the tail word from the bits, in O(words). */
static void tree_build(struct atz_live *t)
{
	uint32_t n = t->cap / 64, tail = tail_word(t);

	t->tree[0] = 0;
	for (uint32_t i = 1; i <= n; i++)
		t->tree[i] = i - 1 < tail ? popcount64(t->bits[i - 1]) : 0;
	for (uint32_t i = 1; i <= n; i++) {
		uint32_t j = i + (i & -i);
		if (j <= n)
			t->tree[j] += t->tree[i];
	}
}

/* Moves the live blocks of t, in order, to the first slots of a table of cap slots (t's own
 * mapping when cap is t->cap), telling moved of each that changes slot. 0 or -1. */
static int pack(struct atz_live *t, struct atz_pool *pool, uint32_t cap,
		atz_live_moved_fn moved, void *arg)
{
	struct atz_live n = *t;
	void *m = t->block;

	if (cap != t->cap) {
		m = atz_pool_get(pool, table_bytes(cap));
		if (!m)
			return -1;
	}
	table_place(&n, m, cap);
	uint32_t to = 0;
	for (uint32_t from = 0; from < t->next; from++) {
		if (!(t->bits[from / 64] >> (from % 64) & 1))
			continue;
		n.block[to] = t->block[from];
		if (moved && from != to)
			moved(arg, n.block[to].addr, from, to);
		to++;
	}
	memset(n.bits, 0, table_words(cap) * sizeof(uint64_t));
	for (uint32_t w = 0; w < to / 64; w++)
		n.bits[w] = ~0ull;
	if (to % 64)
		n.bits[to / 64] = (1ull << (to % 64)) - 1;
	if (cap != t->cap)
		atz_pool_put(pool, t->block, table_bytes(t->cap));
	n.next = to;
	n.mark = n.mark_rank; /* the block of rank r is in slot r now */
	*t = n;
	tree_build(t);
	return 0;
}

/* Room for one more slot: packs, or doubles when more than half the slots are live. */
static int make_room(struct atz_live *t, struct atz_pool *pool, atz_live_moved_fn moved,
		     void *arg)
{
	if (t->cap == 0) {
		if (!select_in_byte[255][7])
			build_select_table();
		void *m = atz_pool_get(pool, table_bytes(FIRST_CAP));
		if (!m)
			return -1;
		table_place(t, m, FIRST_CAP);
		return 0;
	}
	return pack(t, pool, t->count * 2 > t->cap ? t->cap * 2 : t->cap, moved, arg);
}

int atz_live_append(struct atz_live *t, struct atz_pool *pool, uint64_t addr, uint64_t size,
		    uint32_t *slot, atz_live_moved_fn moved, void *arg)
{
	if (t->next == t->cap && make_room(t, pool, moved, arg) < 0) {
		errno = ENOMEM;
		return -1;
	}
	if (t->count == ATZ_LIVE_CAP) {
		uint32_t oldest = atz_live_slot(t, 0);
		if (moved)
			moved(arg, t->block[oldest].addr, oldest, ATZ_LIVE_DROPPED);
		atz_live_remove(t, oldest, 0);
	}
	uint32_t s = t->next++;
	t->block[s].addr = addr;
	t->block[s].size = size;
	t->bits[s / 64] |= 1ull << (s % 64);
	t->count++;
	if (t->next % 64 == 0) /* the word is full: the tree counts it from now on */
		tree_add(t, s / 64, (int32_t)popcount64(t->bits[s / 64]));
	*slot = s;
	return 0;
}

uint32_t atz_live_rank(const struct atz_live *t, uint32_t slot)
{
	uint32_t w = slot / 64;
	uint64_t below = t->bits[w] & ((1ull << (slot % 64)) - 1);

	if (w == tail_word(t))
		return sealed_count(t) + popcount64(below);
	return tree_prefix(t, w) + popcount64(below);
}

/* The position of the r-th set bit of w (r < popcount(w)), without branches: the running
 * count of set bits up to each byte (one multiply), the bytes whose count is <= r (a bytewise
 * compare: every count is below 128), then a table for the bits of the byte found. */
static uint32_t select_bit(uint64_t w, uint32_t r)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	uint64_t b = w - ((w >> 1) & 0x5555555555555555ull);
	b = (b & 0x3333333333333333ull) + ((b >> 2) & 0x3333333333333333ull);
	b = (b + (b >> 4)) & 0x0f0f0f0f0f0f0f0full;
	uint64_t upto = b * ones; /* byte i: set bits in bytes 0..i */
	uint64_t le = ((r * ones | highs) - upto) & highs; /* byte i: upto_i <= r */
	uint32_t byte = (uint32_t)(((le >> 7) * ones) >> 56);
	uint32_t before = byte ? (uint32_t)(upto >> (8 * byte - 8)) & 0xff : 0;

	return 8 * byte + select_in_byte[(w >> (8 * byte)) & 0xff][r - before];
}

/* The slot of rank r when it is within NEAR_WORDS words of the mark (the cursor's rank is
 * usually near the last removal): 1 with it in *slot, else 0. */
static int near_mark(const struct atz_live *t, uint32_t r, uint32_t *slot)
{
	uint32_t w = t->mark / 64;

	if (r >= t->mark_rank) {
		/* forward: skip the live blocks of the mark's word below it */
		uint32_t skip = r - t->mark_rank, lim = t->next / 64 + 1;
		uint64_t bits = t->bits[w] & ~((1ull << (t->mark % 64)) - 1);
		for (uint32_t k = 0; k < NEAR_WORDS && w < lim && w < t->cap / 64; k++) {
			uint32_t c = popcount64(bits);
			if (skip < c) {
				*slot = w * 64 + select_bit(bits, skip);
				return 1;
			}
			skip -= c;
			bits = ++w < t->cap / 64 ? t->bits[w] : 0;
		}
		return 0;
	}
	/* backward: the live blocks below the mark, newest first */
	uint32_t back = t->mark_rank - 1 - r;
	uint64_t bits = t->bits[w] & ((1ull << (t->mark % 64)) - 1);
	for (uint32_t k = 0; k < NEAR_WORDS; k++) {
		uint32_t c = popcount64(bits);
		if (back < c) {
			*slot = w * 64 + select_bit(bits, c - 1 - back);
			return 1;
		}
		back -= c;
		if (w-- == 0)
			return 0;
		bits = t->bits[w];
	}
	return 0;
}

/* The descent of the tree (its size a power of two, and r below its total): the word where
 * the r-th live block of the sealed words is, with the loads' results picked without branches,
 * which a random rank would mispredict. */
uint32_t atz_live_slot(const struct atz_live *t, uint32_t r)
{
	uint32_t newer = t->count - 1 - r, pos = 0;

	/* most releases take one of the newest blocks: a few words back from the last slot */
	for (uint32_t w = (t->next - 1) / 64, k = 0; k < NEAR_WORDS && w < t->next; k++, w--) {
		uint32_t c = popcount64(t->bits[w]);
		if (newer < c)
			return w * 64 + select_bit(t->bits[w], c - 1 - newer);
		newer -= c;
	}
	if (near_mark(t, r, &pos))
		return pos;
	for (uint32_t step = t->cap / 128; step; step >>= 1) {
		uint32_t v = t->tree[pos + step];
		uint32_t take = -(uint32_t)(v <= r);
		pos += step & take;
		r -= v & take;
	}
	return pos * 64 + select_bit(t->bits[pos], r);
}

void atz_live_remove(struct atz_live *t, uint32_t slot, uint32_t r)
{
	t->mark = slot;
	t->mark_rank = r;
	t->bits[slot / 64] &= ~(1ull << (slot % 64));
	if (slot / 64 < tail_word(t))
		tree_add(t, slot / 64, -1);
	t->count--;
}

void atz_live_free(struct atz_live *t, struct atz_pool *pool)
{
	if (t->cap)
		atz_pool_put(pool, t->block, table_bytes(t->cap));
	memset(t, 0, sizeof(*t));
}

/* ---- the block index -------------------------------------------------------------------- */

static size_t home(uint32_t pid, uint64_t addr, size_t mask)
{
	uint64_t k = (addr ^ ((uint64_t)pid << 32)) * 0x9E3779B97F4A7C15ull;
	return (size_t)(k >> 32 ^ k) & mask;
}

struct atz_owner *atz_index_find(const struct atz_index *ix, uint32_t pid, uint64_t addr)
{
	if (!ix->cap)
		return NULL;
	size_t mask = ix->cap - 1;
	for (size_t i = home(pid, addr, mask); ix->v[i].addr; i = (i + 1) & mask)
		if (ix->v[i].addr == addr && ix->v[i].pid == pid)
			return &ix->v[i];
	return NULL;
}

/* Doubles the hash and re-inserts every entry. */
static int index_grow(struct atz_index *ix)
{
	size_t cap = ix->cap ? ix->cap * 2 : 1024;
	struct atz_owner *v = at_map(cap * sizeof(*v), AT_MAP_NORESERVE);

	if (!v)
		return -1;
	for (size_t i = 0; i < ix->cap; i++) {
		if (!ix->v[i].addr)
			continue;
		size_t j = home(ix->v[i].pid, ix->v[i].addr, cap - 1);
		while (v[j].addr)
			j = (j + 1) & (cap - 1);
		v[j] = ix->v[i];
	}
	at_unmap(ix->v, ix->cap * sizeof(*v));
	ix->v = v;
	ix->cap = cap;
	return 0;
}

int atz_index_put(struct atz_index *ix, uint32_t pid, uint64_t addr, uint32_t thread,
		  uint32_t slot, uint32_t cls)
{
	if ((ix->count + 1) * 2 > ix->cap && index_grow(ix) < 0) {
		errno = ENOMEM;
		return -1;
	}
	size_t mask = ix->cap - 1, i = home(pid, addr, mask);
	while (ix->v[i].addr && (ix->v[i].addr != addr || ix->v[i].pid != pid))
		i = (i + 1) & mask;
	struct atz_owner *e = &ix->v[i];
	if (!e->addr) {
		e->addr = addr;
		e->pid = pid;
		ix->count++;
	}
	e->thread = thread;
	e->slot = slot;
	e->cls = cls;
	return 0;
}

/* Linear probing's deletion without tombstones: each later entry of the run that may move
 * back into the hole does, and the hole moves to where it was. */
void atz_index_remove(struct atz_index *ix, struct atz_owner *e)
{
	size_t mask = ix->cap - 1, hole = (size_t)(e - ix->v);

	for (size_t j = (hole + 1) & mask; ix->v[j].addr; j = (j + 1) & mask) {
		size_t h = home(ix->v[j].pid, ix->v[j].addr, mask);
		/* the entry at j may fill the hole when its home is not in (hole, j] */
		if (((j - h) & mask) >= ((j - hole) & mask)) {
			ix->v[hole] = ix->v[j];
			hole = j;
		}
	}
	ix->v[hole].addr = 0;
	ix->count--;
}

void atz_index_clear(struct atz_index *ix)
{
	if (ix->count)
		memset(ix->v, 0, ix->cap * sizeof(*ix->v));
	ix->count = 0;
}

void atz_index_free(struct atz_index *ix)
{
	at_unmap(ix->v, ix->cap * sizeof(*ix->v));
	memset(ix, 0, sizeof(*ix));
}
