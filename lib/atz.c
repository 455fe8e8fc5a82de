/* atz.c: the atz writer (doc/FORMAT.md), and the page allocator both sides use. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define LZ4F_STATIC_LINKING_ONLY
#include <lz4frame.h>

#include "atz.h"
#include "atz_live.h"
#include "atz_model.h"
#include "atz_state.h"
#include "output.h"
#include "prim.h"

/* ---- memory --------------------------------------------------------------------------- */

/* lz4frame's allocations: a mapping with its length in the first 16 bytes. Fresh anonymous
 * pages are zero, so calloc is alloc. */
void *atz_lz4_alloc(void *opaque, size_t size)
{
	(void)opaque;
	uint8_t *p = atz_map(size + 16);
	if (!p)
		return NULL;
	memcpy(p, &size, sizeof(size));
	return p + 16;
}

void *atz_lz4_calloc(void *opaque, size_t size)
{
	return atz_lz4_alloc(opaque, size);
}

void atz_lz4_free(void *opaque, void *p)
{
	(void)opaque;
	if (!p)
		return;
	uint8_t *base = (uint8_t *)p - 16;
	size_t size;
	memcpy(&size, base, sizeof(size));
	atz_unmap(base, size + 16);
}

/* ---- writer --------------------------------------------------------------------------- */

/* The writer builds one lz4 block of content at a time in chunk, compresses it straight into
 * the output's buffer and writes it out in one write(): a file cut short then ends at a block
 * boundary, and events_written counts the events of the blocks that reached the file. Every
 * failure (a write, lz4, memory) is kept in the output's err; the writer stops after it. */
struct at_atz_writer {
	struct at_output *out;
	LZ4F_cctx *cctx;
	LZ4F_preferences_t prefs;
	uint8_t *chunk;        /* content of the block being built, ATZ_CHUNK bytes */
	size_t len;
	size_t block_cap;      /* bound of one compressed block, frame header or end mark */
	struct atz_pool pool;  /* every thread's state */
	struct atz_tmap by_tid;   /* (pid, tid) -> the state of a thread that has not ended */
	struct atz_tmap by_entry; /* thread table entry -> the same states */
	uint32_t entries;      /* thread table entries given (the next NEW_THREAD's) */
	uint64_t blocks;       /* 2.2: live blocks in all tables */
	size_t end_at;         /* where the next search of a state to end starts in by_entry */
	struct atz_thread *cur;
	struct at_atz_stats st;
	unsigned major, minor; /* the header's */
	unsigned kinds_minor;  /* the version whose frame kinds it writes: minor, or 255 with
				* test_kinds */
	int live_model;        /* 2.2: events coded against the live tables */
	int munged;            /* the header's munged flag: slot numbers, not addresses */
	int ends;              /* 2.3: END records release the states of threads that ended */
	struct atz_index index; /* 2.2: where each live block of every thread's table is */
	unsigned tail;         /* ATZ_TAIL_* bits: what follows each event record */
	uint64_t last_time;    /* 2.x: the reference of the next event's time delta */
	uint32_t nstacks;      /* 2.x: stack ids given so far */
	int ended;             /* the frame has its end mark (at_atz_writer_end_frame) */
};

/* Keeps err as the output's error unless it has one already. Returns -1. */
static int fail(struct at_atz_writer *w, int err)
{
	if (!w->out->err)
		w->out->err = err;
	return -1;
}

static int lz4_failed(struct at_atz_writer *w, size_t rc)
{
	if (!LZ4F_isError(rc))
		return 0;
	fail(w, EIO);
	return 1;
}

/* Commits n bytes compressed at the output's reserved room and writes the buffer out. */
static int write_out(struct at_atz_writer *w, size_t n)
{
	uint64_t before = w->out->written;

	at_output_commit(w->out, n);
	int rc = at_output_flush(w->out);
	w->st.file_bytes += w->out->written - before;
	if (rc == 0)
		w->st.events_written = w->st.events;
	return rc;
}

/* Compresses the chunk into one lz4 block and writes it. */
static int emit_block(struct at_atz_writer *w)
{
	if (w->out->err)
		return -1;
	if (w->len == 0)
		return 0;
	uint8_t *dst = (uint8_t *)at_output_reserve(w->out, w->block_cap);
	size_t n = LZ4F_compressUpdate(w->cctx, dst, w->block_cap, w->chunk, w->len, NULL);
	if (lz4_failed(w, n))
		return -1;
	size_t m = LZ4F_flush(w->cctx, dst + n, w->block_cap - n, NULL);
	if (lz4_failed(w, m))
		return -1;
	w->len = 0;
	return write_out(w, n + m);
}

/* Room for n more content bytes in the chunk (n <= ATZ_CHUNK). */
static int reserve(struct at_atz_writer *w, size_t n)
{
	if (w->out->err)
		return -1;
	if (w->len + n > ATZ_CHUNK)
		return emit_block(w);
	return 0;
}

static void put_bytes(struct at_atz_writer *w, const void *p, size_t n)
{
	memcpy(w->chunk + w->len, p, n);
	w->len += n;
	w->st.content_bytes += n;
}

static void put_varint(struct at_atz_writer *w, uint64_t v)
{
	size_t n = atz_put_varint(w->chunk + w->len, v);
	w->len += n;
	w->st.content_bytes += n;
}

static void put_byte(struct at_atz_writer *w, uint8_t b)
{
	w->chunk[w->len++] = b;
	w->st.content_bytes++;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

const char *at_atz_filter_text(const struct at_atz_header *h, char *buf, size_t n)
{
	unsigned long long m = h->min_size, b = h->sample_bytes;

	if (!n)
		return buf;
	buf[0] = 0;
	if (m && b)
		snprintf(buf, n, "a sample of the allocations of at least %llu bytes, one per %llu "
			 "bytes on average (alloctapd --min-size, --sample-bytes)", m, b);
	else if (m)
		snprintf(buf, n, "only the allocations of at least %llu bytes (alloctapd "
			 "--min-size)", m);
	else if (b)
		snprintf(buf, n, "a sample of the allocations, one per %llu bytes on average "
			 "(alloctapd --sample-bytes)", b);
	return buf;
}

/* One entry of the header extension (doc/FORMAT.md 3.1) at buf + *n: its key, then its
 * value as a sized varint. */
static void put_extension_entry(uint8_t *buf, size_t *n, uint64_t key, uint64_t value)
{
	*n += atz_put_varint(buf + *n, key);
	*n += atz_put_varint(buf + *n, atz_varint_len(value));
	*n += atz_put_varint(buf + *n, value);
}

/* The header extension: empty, or the trace's filter (2.4). */
static void put_extension(struct at_atz_writer *w, const struct at_atz_options *opt)
{
	uint8_t buf[64];
	size_t n = 0;

	if (opt->min_size)
		put_extension_entry(buf, &n, ATZ_EXT_MIN_SIZE, opt->min_size);
	if (opt->sample_bytes)
		put_extension_entry(buf, &n, ATZ_EXT_SAMPLE_BYTES, opt->sample_bytes);
	put_varint(w, n);
	put_bytes(w, buf, n);
}

/* The stream header (doc/FORMAT.md 3). */
static void put_header(struct at_atz_writer *w, const struct at_atz_options *opt)
{
	struct utsname u;
	const char *host = opt->host;

	if (!host) {
		host = "";
		if (uname(&u) == 0)
			host = u.nodename;
	}
	size_t hl = strnlen(host, AT_ATZ_HOST_MAX);
	put_bytes(w, ATZ_STREAM_MAGIC, 4);
	put_byte(w, (uint8_t)w->major);
	put_byte(w, (uint8_t)w->minor);
	/* NO_TIMES and NO_STACKS mean nothing in 1.x, where those bits are 0 */
	put_varint(w, w->major == 1 ? opt->flags & ~(AT_ATZ_FLAG_NO_TIMES | AT_ATZ_FLAG_NO_STACKS)
				    : opt->flags);
	put_varint(w, opt->start_ns ? opt->start_ns : now_ns());
	put_varint(w, hl);
	put_bytes(w, host, hl);
	put_extension(w, opt);
}

/* Every thread's state back to the pool (the maps still name them). */
static void free_states(struct at_atz_writer *w)
{
	for (size_t i = 0; i < w->by_entry.cap; i++)
		if (atz_tmap_at(&w->by_entry, i))
			atz_thread_free(&w->pool, atz_tmap_at(&w->by_entry, i), 1);
}

static void free_writer(struct at_atz_writer *w)
{
	if (w->cctx)
		LZ4F_freeCompressionContext(w->cctx);
	atz_unmap(w->chunk, ATZ_CHUNK);
	free_states(w);
	atz_index_free(&w->index);
	atz_tmap_free(&w->by_tid);
	atz_tmap_free(&w->by_entry);
	atz_pool_free(&w->pool);
	atz_unmap(w, sizeof(*w));
}

/* Frees w and returns NULL with errno set to err. */
static struct at_atz_writer *open_failed(struct at_atz_writer *w, int err)
{
	free_writer(w);
	errno = err;
	return NULL;
}

/* Whether a writer can write what opt asks for (a version it knows, a filter and the flags
 * that version holds). */
static int options_valid(const struct at_atz_options *opt)
{
	unsigned major = opt->major ? opt->major : AT_ATZ_VERSION_MAJOR;
	int filtered = opt->min_size || opt->sample_bytes;
	/* a frame that goes on from others is 2.5's with stacks, written as 2.6 */
	int go_on = (opt->flags & AT_ATZ_FLAG_STACKS_GO_ON) != 0;

	if ((major != 1 && major != AT_ATZ_VERSION_MAJOR) ||
	    opt->minor > (major == 1 ? AT_ATZ_V1_MINOR : AT_ATZ_PYTHON_MINOR))
		return 0;
	/* 2.4 is a filtered trace's: asked for alone, it is refused */
	if ((filtered && (major != 2 || opt->minor < 3)) ||
	    (!filtered && major == 2 && opt->minor == AT_ATZ_FILTER_MINOR))
		return 0;
	return go_on ? major == 2 && opt->minor == AT_ATZ_PYTHON_MINOR &&
			       !(opt->flags & AT_ATZ_FLAG_NO_STACKS)
		     : opt->stacks_before == 0;
}

/* What the header of a frame by opt (valid) says, and the state it starts from. */
static void configure(struct at_atz_writer *w, const struct at_atz_options *opt)
{
	unsigned major = opt->major ? opt->major : AT_ATZ_VERSION_MAJOR;
	int filtered = opt->min_size || opt->sample_bytes;
	int go_on = (opt->flags & AT_ATZ_FLAG_STACKS_GO_ON) != 0;

	w->major = major;
	/* 1.0, 1.1; 2.0 to 2.6 (a filtered trace at least 2.4) */
	w->minor = go_on ? AT_ATZ_GO_ON_MINOR
		   : filtered && opt->minor < AT_ATZ_FILTER_MINOR ? AT_ATZ_FILTER_MINOR
								   : opt->minor;
	w->nstacks = opt->stacks_before;
	w->live_model = major == 2 && opt->minor >= 2;
	w->munged = (opt->flags & AT_ATZ_FLAG_MUNGED) != 0;
	w->ends = major == 2 && opt->minor >= 3;
	w->kinds_minor = opt->test_kinds ? 255 : opt->minor;
	w->tail = atz_tail_of(major, opt->flags);
	w->last_time = 0;
	w->prefs.compressionLevel = opt->level;
	w->prefs.frameInfo.contentChecksumFlag = opt->end_apart ? LZ4F_noContentChecksum
								: LZ4F_contentChecksumEnabled;
}

/* Begins a frame: its lz4 header, then the stream header by opt, written out. 0 or -1. */
static int begin_frame(struct at_atz_writer *w, const struct at_atz_options *opt)
{
	/* the frame header is buffered and goes out with the block of the stream header */
	uint8_t *dst = (uint8_t *)at_output_reserve(w->out, w->block_cap);
	size_t n = LZ4F_compressBegin(w->cctx, dst, w->block_cap, &w->prefs);

	if (lz4_failed(w, n))
		return -1;
	at_output_commit(w->out, n);
	put_header(w, opt);
	return emit_block(w);
}

struct at_atz_writer *at_atz_writer_open(struct at_output *out, const struct at_atz_options *opt)
{
	static const struct at_atz_options defaults;
	LZ4F_CustomMem mem = { atz_lz4_alloc, atz_lz4_calloc, atz_lz4_free, NULL };
	struct at_atz_writer *w;

	if (out->err) {
		errno = out->err;
		return NULL;
	}
	if (!opt)
		opt = &defaults;
	if (!options_valid(opt)) {
		errno = EINVAL;
		return NULL;
	}
	w = atz_map(sizeof(*w));
	if (!w)
		return NULL;
	configure(w, opt);
	w->out = out;
	w->prefs.frameInfo.blockSizeID = LZ4F_max64KB;
	w->prefs.frameInfo.blockMode = LZ4F_blockLinked;
	w->prefs.frameInfo.blockChecksumFlag = LZ4F_blockChecksumEnabled;
	w->prefs.autoFlush = 1;
	/* about 64 KiB, well below AT_OUTPUT_BUFSIZE */
	w->block_cap = LZ4F_compressBound(ATZ_CHUNK, &w->prefs) + LZ4F_HEADER_SIZE_MAX;
	w->cctx = LZ4F_createCompressionContext_advanced(mem, LZ4F_VERSION);
	w->chunk = atz_map(ATZ_CHUNK);
	if (!w->cctx || !w->chunk)
		return open_failed(w, ENOMEM);
	if (begin_frame(w, opt) < 0)
		return open_failed(w, out->err);
	return w;
}

int at_atz_writer_end_frame(struct at_atz_writer *w)
{
	if (w->ended)
		return 0;
	w->ended = 1;
	if (emit_block(w) < 0)
		return -1;
	uint8_t *dst = (uint8_t *)at_output_reserve(w->out, w->block_cap);
	size_t n = LZ4F_compressEnd(w->cctx, dst, w->block_cap, NULL);

	return lz4_failed(w, n) ? -1 : write_out(w, n);
}

int at_atz_writer_ended_apart(struct at_atz_writer *w)
{
	if (w->ended)
		return 0;
	if (emit_block(w) < 0) {
		errno = w->out->err;
		return -1;
	}
	/* lz4's end of the frame, made and dropped: room reserved, never committed */
	uint8_t *dst = (uint8_t *)at_output_reserve(w->out, w->block_cap);
	size_t n = LZ4F_compressEnd(w->cctx, dst, w->block_cap, NULL);

	w->ended = 1;
	if (lz4_failed(w, n)) {
		errno = w->out->err;
		return -1;
	}
	return 0;
}

/* Every thread's state released, the maps and the index emptied (their memory kept for the
 * next frame's). */
static void drop_states(struct at_atz_writer *w)
{
	free_states(w);
	atz_tmap_clear(&w->by_tid);
	atz_tmap_clear(&w->by_entry);
	atz_index_clear(&w->index);
	w->entries = 0;
	w->blocks = 0;
	w->end_at = 0;
	w->cur = NULL;
}

int at_atz_writer_next_frame(struct at_atz_writer *w, const struct at_atz_options *opt)
{
	if (!options_valid(opt))
	{
		errno = EINVAL;
		return -1;
	}
	if (w->out->err || at_atz_writer_end_frame(w) < 0) {
		errno = w->out->err;
		return -1;
	}
	drop_states(w);
	configure(w, opt);
	w->ended = 0;
	if (begin_frame(w, opt) < 0) {
		errno = w->out->err;
		return -1;
	}
	return 0;
}

/* ---- thread states and their ends (doc/FORMAT.md 5.9) ----------------------------------- */

/* Keeps the index in step with a table whose blocks move or drop out: only entries that
 * still name this table and slot (a block allocated again at the same address elsewhere, its
 * free missed, keeps its old entry in its table, unreachable). */
struct index_ctx {
	struct at_atz_writer *w;
	uint32_t thread, pid;
};

static void index_follow(void *arg, uint64_t addr, uint32_t from, uint32_t to)
{
	struct index_ctx *c = arg;
	struct atz_owner *e = atz_index_find(&c->w->index, c->pid, addr);

	if (!e || e->thread != c->thread || e->slot != from)
		return;
	if (to == ATZ_LIVE_DROPPED)
		atz_index_remove(&c->w->index, e);
	else
		e->slot = to;
}

/* Writes an END record for t and releases its state: its blocks leave the index (a later
 * free of one is coded by address), it leaves the maps. The caller reserved room. */
static void end_state(struct at_atz_writer *w, struct atz_thread *t)
{
	struct index_ctx c = { w, t->entry, t->pid };

	put_byte(w, ATZ_OP_END);
	put_varint(w, atz_varint_len(t->entry));
	put_varint(w, t->entry);
	for (uint32_t s = 0; s < t->live.next; s++)
		if (atz_live_holds(&t->live, s))
			index_follow(&c, t->live.block[s].addr, s, ATZ_LIVE_DROPPED);
	w->blocks -= t->live.count;
	atz_tmap_remove(&w->by_tid, atz_tid_key(t->pid, t->tid));
	atz_tmap_remove(&w->by_entry, t->entry);
	if (w->cur == t)
		w->cur = NULL;
	atz_thread_free(&w->pool, t, 1);
	w->st.ended++;
}

/* Bytes an END record takes at most: kind, length, entry. */
#define END_RECORD_MAX 8

/* Ends one state to keep within the reader's limits (ATZ_THREADS_MAX, ATZ_BLOCKS_MAX): the
 * next one from where the last search stopped, one holding live blocks when with_blocks. The
 * thread, if it goes on, comes back with a NEW_THREAD record and fresh state. */
static void end_some_state(struct at_atz_writer *w, int with_blocks)
{
	for (size_t k = 0; k < w->by_entry.cap; k++) {
		size_t i = (w->end_at + k) & (w->by_entry.cap - 1);
		struct atz_thread *t = atz_tmap_at(&w->by_entry, i);
		if (t && (!with_blocks || t->live.count)) {
			w->end_at = i + 1;
			end_state(w, t);
			return;
		}
	}
}

/* Adds a thread with fresh predictor state, as the next table entry; NULL out of memory. */
static struct atz_thread *add_thread(struct at_atz_writer *w, uint32_t pid, uint32_t tid)
{
	if (w->entries == UINT32_MAX)
		return NULL;
	if (w->ends && w->by_entry.count >= atz_limits.threads)
		end_some_state(w, 0);
	struct atz_thread *t = atz_thread_new(&w->pool, pid, tid, w->entries);
	if (!t)
		return NULL;
	if (atz_tmap_put(&w->by_tid, atz_tid_key(pid, tid), t) < 0) {
		atz_thread_free(&w->pool, t, 1);
		return NULL;
	}
	if (atz_tmap_put(&w->by_entry, t->entry, t) < 0) {
		atz_tmap_remove(&w->by_tid, atz_tid_key(pid, tid));
		atz_thread_free(&w->pool, t, 1);
		return NULL;
	}
	w->entries++;
	w->st.threads++;
	return t;
}

/* Makes (pid, tid) the current thread, writing a THREAD or NEW_THREAD record if it is not.
 * The caller reserved room. */
static struct atz_thread *switch_thread(struct at_atz_writer *w, uint32_t pid, uint32_t tid)
{
	if (w->cur && w->cur->pid == pid && w->cur->tid == tid)
		return w->cur;
	struct atz_thread *t = atz_tmap_find(&w->by_tid, atz_tid_key(pid, tid));
	if (t) {
		put_byte(w, w->live_model ? ATZ_OP22_THREAD : ATZ_OP_THREAD);
		put_varint(w, t->entry);
		return w->cur = t;
	}
	t = add_thread(w, pid, tid);
	if (!t) {
		fail(w, ENOMEM);
		return NULL;
	}
	put_byte(w, w->live_model ? ATZ_OP22_NEW_THREAD : ATZ_OP_NEW_THREAD);
	put_varint(w, pid);
	put_varint(w, tid);
	return w->cur = t;
}

int at_atz_end_thread(struct at_atz_writer *w, uint32_t pid, uint32_t tid)
{
	struct atz_thread *t = w->ends ? atz_tmap_find(&w->by_tid, atz_tid_key(pid, tid)) : NULL;

	if (!t)
		return 0;
	if (reserve(w, END_RECORD_MAX) < 0) {
		errno = w->out->err;
		return -1;
	}
	end_state(w, t);
	return 0;
}

/* Removing a state moves later ones of its probe run back, maybe into slot i: slot i is
 * looked at again after each end, and the walk misses none. */
int at_atz_end_process(struct at_atz_writer *w, uint32_t pid)
{
	if (!w->ends)
		return 0;
	for (size_t i = 0; i < w->by_entry.cap;) {
		struct atz_thread *t = atz_tmap_at(&w->by_entry, i);
		if (!t || t->pid != pid) {
			i++;
			continue;
		}
		if (reserve(w, END_RECORD_MAX) < 0) {
			errno = w->out->err;
			return -1;
		}
		end_state(w, t);
	}
	return 0;
}

/* The delta code of x against the role's reference. 0 if it cannot be coded. */
static int delta_code(const struct atz_thread *t, enum atz_role role, uint64_t x, uint64_t *code)
{
	uint64_t d = x - atz_delta_ref(t, role);

	if (atz_role_is_address(role))
		return atz_adelta(d, code);
	*code = atz_zigzag(d);
	return 1;
}

/* Chooses the cheapest mode for one field (doc/FORMAT.md 6.2); *k gets the ring index, *code
 * the delta code. */
static unsigned choose_mode(const struct atz_thread *t, enum atz_role role, uint64_t x, int *k,
			    uint64_t *code)
{
	*k = -1;
	if (x == 0)
		return ATZ_MODE_ZERO;
	if (role == ATZ_ROLE_EXTRA)
		return ATZ_MODE_LITERAL;
	*k = role == ATZ_ROLE_SIZE ? RING_FIND(t->sizes, x)
	   : role == ATZ_ROLE_RELEASE ? RING_FIND(t->allocs, x) : RING_FIND(t->releases, x);
	if (*k >= 0)
		return ATZ_MODE_RING;
	if (delta_code(t, role, x, code) && atz_varint_len(*code) < atz_varint_len(x))
		return ATZ_MODE_DELTA;
	return ATZ_MODE_LITERAL;
}

/* malloc(size) = result in one of the compact forms (doc/FORMAT.md 5.1). 1 if written. */
static int put_compact_malloc(struct at_atz_writer *w, struct atz_thread *t,
			      const struct at_event *ev)
{
	int s = RING_FIND(t->sizes, ev->arg[0]);
	int a = RING_FIND(t->releases, ev->result);
	uint64_t code = 0;

	if (a < 0 && !delta_code(t, ATZ_ROLE_ALLOC, ev->result, &code))
		return 0;
	if (s >= 0 && a >= 8) {
		put_byte(w, ATZ_OP_MALLOC_DEEP1);
		put_byte(w, (uint8_t)(s | a << 3));
	} else if (a >= 8) {
		put_byte(w, ATZ_OP_MALLOC_DEEP2);
		put_varint(w, ev->arg[0]);
		put_byte(w, (uint8_t)a);
	} else if (s >= 0 && a >= 0) {
		put_byte(w, (uint8_t)(ATZ_OP_QUICK_MALLOC | s << 3 | a));
	} else if (s >= 0) {
		put_byte(w, (uint8_t)(ATZ_OP_MALLOC_SIZE | s));
		put_varint(w, code);
	} else if (a >= 0) {
		put_byte(w, (uint8_t)(ATZ_OP_MALLOC_ADDR | a));
		put_varint(w, ev->arg[0]);
	} else {
		put_byte(w, ATZ_OP_MALLOC_NEW);
		put_varint(w, ev->arg[0]);
		put_varint(w, code);
	}
	atz_update(t, ATZ_ROLE_SIZE, ev->arg[0], s);
	atz_update(t, ATZ_ROLE_ALLOC, ev->result, a);
	return 1;
}

/* free(pointer) in one of the compact forms (doc/FORMAT.md 5.1). 1 if written. */
static int put_compact_free(struct at_atz_writer *w, struct atz_thread *t, uint64_t ptr)
{
	uint64_t code;

	if (ptr == 0) {
		put_byte(w, ATZ_OP_FREE_NULL);
		return 1;
	}
	int k = RING_FIND(t->allocs, ptr);
	if (k >= 0 && k < 32) {
		put_byte(w, (uint8_t)(ATZ_OP_QUICK_FREE | k));
	} else if (k < 0 && delta_code(t, ATZ_ROLE_RELEASE, ptr, &code)) {
		put_byte(w, ATZ_OP_FREE_DELTA);
		put_varint(w, code);
	} else {
		return 0;
	}
	atz_update(t, ATZ_ROLE_RELEASE, ptr, k);
	return 1;
}

/* realloc(p, size) = result in one of the compact forms (doc/FORMAT.md 5.1). 1 if written. */
static int put_compact_realloc(struct at_atz_writer *w, struct atz_thread *t,
			       const struct at_event *ev)
{
	uint64_t p = ev->arg[0], r = ev->result, code = 0;
	int k = -1;

	if (p) {
		k = RING_FIND(t->allocs, p);
		if (k < 0)
			return 0;
	}
	if (r != p && (!r || RING_FIND(t->releases, r) >= 0 ||
		       !delta_code(t, ATZ_ROLE_ALLOC, r, &code)))
		return 0;
	put_byte(w, !p ? ATZ_OP_REALLOC_NULL : r == p ? ATZ_OP_REALLOC_SAME : ATZ_OP_REALLOC_MOVE);
	if (p)
		put_byte(w, (uint8_t)k);
	put_varint(w, ev->arg[1]);
	if (r != p)
		put_varint(w, code);
	atz_update(t, ATZ_ROLE_RELEASE, p, k);
	atz_update(t, ATZ_ROLE_SIZE, ev->arg[1], -1);
	atz_update(t, ATZ_ROLE_ALLOC, r, r == p ? 0 : -1);
	return 1;
}

/* The compact forms cover malloc, free and realloc as a normal log has them. */
static int put_compact(struct at_atz_writer *w, struct atz_thread *t, const struct at_event *ev)
{
	if (ev->func == AT_MALLOC && ev->has_result && ev->arg[1] == 0 && ev->result)
		return put_compact_malloc(w, t, ev);
	if (ev->func == AT_FREE && !ev->has_result && ev->arg[1] == 0 && ev->result == 0)
		return put_compact_free(w, t, ev->arg[0]);
	if (ev->func == AT_REALLOC && ev->has_result && ev->result)
		return put_compact_realloc(w, t, ev);
	return 0;
}

/* ---- 2.2: events coded against the live tables (doc/FORMAT.md 5.8, 6.5) ----------------- */

/* Block x of n bytes was allocated by t: from its freed ring entry k (>= 0), or from fresh
 * memory (the top moves past it). It becomes t's newest live block. 0, or -1 (ENOMEM kept). */
static int allocated22(struct at_atz_writer *w, struct atz_thread *t, uint64_t x, uint64_t n,
		       int k)
{
	struct index_ctx c = { w, t->entry, t->pid };
	uint32_t slot, before = t->live.count;

	if (k >= 0)
		atz_freed_remove(&t->freed, (uint32_t)k);
	else
		t->top = atz_next_top(x, n, w->munged);
	uint64_t cls = atz_size_class(n, w->munged);
	if (atz_live_append(&t->live, &w->pool, x, n, &slot, index_follow, &c) < 0 ||
	    atz_index_put(&w->index, t->pid, x, c.thread, slot,
			  cls < ATZ_CLASS_FAR ? (uint32_t)cls : ATZ_CLASS_FAR) < 0)
		return fail(w, ENOMEM);
	w->blocks += t->live.count - before;
	return 0;
}

/* The address code of x, the result of an allocation of n bytes by t (doc/FORMAT.md 6.5): its
 * class rank among t's freed blocks (*k the ring entry), else its adelta from the top (*k -1).
 * 0 when it has neither. */
static int address_code(const struct at_atz_writer *w, const struct atz_thread *t, uint64_t n,
			uint64_t x, uint64_t *a, int *k)
{
	uint32_t j;
	uint64_t c;

	*k = atz_freed_find(&t->freed, atz_size_class(n, w->munged), x, &j);
	if (*k >= 0) {
		*a = (uint64_t)j << 1;
		return 1;
	}
	if (!atz_adelta(x - t->top, &c) || c >> 63)
		return 0;
	*a = c << 1 | 1;
	return 1;
}

/* An OTHER record when the block of e is in another thread's table than t's. */
static void put_other(struct at_atz_writer *w, const struct atz_thread *t,
		      const struct atz_owner *e)
{
	if (e->thread == t->entry)
		return;
	put_byte(w, ATZ_OP22_OTHER);
	put_varint(w, e->thread);
}

/* How a release through a table was coded: its recency index and the zigzag of its rank's
 * distance from the cursor (doc/FORMAT.md 6.5). */
struct release_code {
	uint64_t recency, near;
};

/* The shorter release code P of r. */
static uint64_t release_p(const struct release_code *r)
{
	uint64_t even = r->recency << 1, odd = r->near << 1 | 1;
	return even < odd ? even : odd;
}

/* Takes the live block of e out of its table for a release by t; its codes in *rc. */
static void release_block(struct at_atz_writer *w, struct atz_thread *t, struct atz_owner *e,
			  struct release_code *rc)
{
	struct atz_thread *o = e->thread == t->entry ? t : atz_tmap_find(&w->by_entry, e->thread);
	uint32_t slot = e->slot, r = atz_live_rank(&o->live, slot);
	uint64_t x = e->addr, cls = e->cls != ATZ_CLASS_FAR ? e->cls
				   : atz_size_class(o->live.block[slot].size, w->munged);

	rc->recency = o->live.count - 1 - r;
	rc->near = atz_zigzag(r - o->live.cursor);
	atz_index_remove(&w->index, e);
	atz_release_known(t, o, slot, r, x, cls);
	w->blocks--;
}

/* The live block x of t's process, or NULL. */
static struct atz_owner *owner_of(struct at_atz_writer *w, const struct atz_thread *t, uint64_t x)
{
	return x ? atz_index_find(&w->index, t->pid, x) : NULL;
}

/* free(x) in one of the compact forms. 1 if written, 0 if it needs the EVENT form. */
static int put_free22(struct at_atz_writer *w, struct atz_thread *t, uint64_t x)
{
	struct atz_owner *e = owner_of(w, t, x);
	struct release_code rc;
	uint64_t code;

	if (!x) {
		put_byte(w, ATZ_OP22_FREE_NULL);
		return 1;
	}
	if (!e) {
		if (!atz_adelta(x - t->last_release, &code))
			return 0;
		put_byte(w, ATZ_OP22_FREE_ADDR);
		put_varint(w, code);
		atz_release_addr(t, x);
		return 1;
	}
	put_other(w, t, e);
	release_block(w, t, e, &rc);
	if (rc.recency < ATZ_QUICK_FREES22) {
		put_byte(w, (uint8_t)(ATZ_OP22_QUICK_FREE + rc.recency));
	} else if (rc.near < ATZ_NEAR_FREES22) {
		put_byte(w, (uint8_t)(ATZ_OP22_FREE_NEAR + rc.near));
	} else {
		put_byte(w, ATZ_OP22_FREE_FAR);
		put_varint(w, release_p(&rc));
	}
	return 1;
}

/* malloc(n) = x in one of the compact forms. 1 if written, 0 if it needs the EVENT form, -1
 * out of memory. */
static int put_malloc22(struct at_atz_writer *w, struct atz_thread *t, uint64_t n, uint64_t x)
{
	uint64_t a;
	int k;

	if (!address_code(w, t, n, x, &a, &k))
		return 0;
	int s = RING_FIND(t->sizes, n);
	unsigned field = !(a & 1) && a >> 1 < ATZ_ADDR22_CLASSES ? (unsigned)(a >> 1)
		       : a == 1 ? ATZ_ADDR22_TOP : ATZ_ADDR22_CODE;
	if (s >= 0) {
		put_byte(w, (uint8_t)(ATZ_OP22_QUICK_MALLOC | s << 3 | field));
	} else {
		put_byte(w, (uint8_t)(ATZ_OP22_MALLOC | field));
		put_varint(w, n);
	}
	if (field == ATZ_ADDR22_CODE)
		put_varint(w, a);
	atz_update(t, ATZ_ROLE_SIZE, n, s);
	return allocated22(w, t, x, n, k) < 0 ? -1 : 1;
}

/* realloc(p, n) = x (x != 0) in one of the compact forms: p is 0 or a block of a table. 1 if
 * written, 0 if it needs the EVENT form, -1 out of memory. */
static int put_realloc22(struct at_atz_writer *w, struct atz_thread *t, uint64_t p, uint64_t n,
			 uint64_t x)
{
	struct atz_owner *e = owner_of(w, t, p);
	struct release_code rc = { 0, 0 };
	uint64_t a = 0, code;
	int k = 0;

	/* the address code is taken after the release; a top delta tells beforehand it exists */
	if ((p && !e) || (x != p && (!atz_adelta(x - t->top, &code) || code >> 63)))
		return 0;
	if (e) {
		put_other(w, t, e);
		release_block(w, t, e, &rc);
	}
	atz_update(t, ATZ_ROLE_SIZE, n, -1);
	if (x == p) {
		put_byte(w, ATZ_OP22_REALLOC_SAME);
		put_varint(w, release_p(&rc));
		put_varint(w, n);
	} else {
		address_code(w, t, n, x, &a, &k);
		put_byte(w, p ? ATZ_OP22_REALLOC_MOVE : ATZ_OP22_REALLOC_NULL);
		if (p)
			put_varint(w, release_p(&rc));
		put_varint(w, n);
		put_varint(w, a);
	}
	return allocated22(w, t, x, n, k) < 0 ? -1 : 1;
}

/* One field of the EVENT form in 2.2: its mode, its data written, the state updated. e is the
 * table block of a release (NULL: none). Returns the mode, or -1 out of memory. */
static int put_field22(struct at_atz_writer *w, struct atz_thread *t, const struct at_event *ev,
		       unsigned f, struct atz_owner *e)
{
	uint64_t x = f < 2 ? ev->arg[f] : ev->result, code;
	enum atz_role role = atz_field_role(ev->func, f);
	struct release_code rc;
	int k;

	if (role == ATZ_ROLE_SIZE) {
		unsigned mode = choose_mode(t, role, x, &k, &code);
		if (mode == ATZ_MODE_RING)
			put_byte(w, (uint8_t)k);
		else if (mode != ATZ_MODE_ZERO)
			put_varint(w, mode == ATZ_MODE_DELTA ? code : x);
		atz_update(t, role, x, k);
		return (int)mode;
	}
	if (x == 0)
		return ATZ_MODE_ZERO;
	if (role == ATZ_ROLE_EXTRA) {
		put_varint(w, x);
		return ATZ_MODE_LITERAL;
	}
	if (role == ATZ_ROLE_RELEASE) {
		if (e) {
			release_block(w, t, e, &rc);
			put_varint(w, release_p(&rc));
			return ATZ_MODE_TABLE;
		}
		int delta = atz_adelta(x - t->last_release, &code) &&
			    atz_varint_len(code) < atz_varint_len(x);
		put_varint(w, delta ? code : x);
		atz_release_addr(t, x);
		return delta ? ATZ_MODE_DELTA : ATZ_MODE_LITERAL;
	}
	uint64_t n = atz_alloc_size(ev->func, ev->arg[0], ev->arg[1]);
	int table = address_code(w, t, n, x, &code, &k) &&
		    (k >= 0 || atz_varint_len(code) < atz_varint_len(x));
	put_varint(w, table ? code : x);
	if (allocated22(w, t, x, n, table ? k : -1) < 0)
		return -1;
	return table ? ATZ_MODE_TABLE : ATZ_MODE_LITERAL;
}

/* Any event in the EVENT form of 2.2. 0 or -1. */
static int put_event22(struct at_atz_writer *w, struct atz_thread *t, const struct at_event *ev)
{
	struct atz_owner *e = at_func_takes_pointer(ev->func) ? owner_of(w, t, ev->arg[0]) : NULL;

	if (e)
		put_other(w, t, e);
	size_t op = w->len;
	uint8_t fields = ev->has_result ? ATZ_FIELD_HAS_RESULT : 0;
	put_byte(w, (uint8_t)(ATZ_OP_EVENT | ev->func));
	put_byte(w, 0);
	for (unsigned f = 0; f < 3; f++) {
		int mode = put_field22(w, t, ev, f, f == 0 ? e : NULL);
		if (mode < 0)
			return -1;
		fields |= (uint8_t)(mode << (2 * f));
	}
	w->chunk[op + 1] = fields;
	return 0;
}

/* One event of a 2.2 trace: a compact form when one fits, else the EVENT form. 0 or -1. */
static int put_live_event(struct at_atz_writer *w, struct atz_thread *t, const struct at_event *ev)
{
	int rc = 0;

	if (ev->func == AT_MALLOC && ev->has_result && ev->arg[1] == 0 && ev->result)
		rc = put_malloc22(w, t, ev->arg[0], ev->result);
	else if (ev->func == AT_FREE && !ev->has_result && ev->arg[1] == 0 && ev->result == 0)
		rc = put_free22(w, t, ev->arg[0]);
	else if (ev->func == AT_REALLOC && ev->has_result && ev->result)
		rc = put_realloc22(w, t, ev->arg[0], ev->arg[1], ev->result);
	if (rc)
		return rc < 0 ? -1 : 0;
	return put_event22(w, t, ev);
}

/* 2.x: a TIME record before an event whose time delta has no code (doc/FORMAT.md 5.5). */
static void put_time_reference(struct at_atz_writer *w, uint64_t time_ns)
{
	if (!(w->tail & ATZ_TAIL_STACK) || atz_zigzag(time_ns - w->last_time) >> 63 == 0)
		return;
	put_byte(w, ATZ_OP_TIME);
	put_varint(w, time_ns);
	w->last_time = time_ns;
}

/* 2.x: the time and stack id that follow each event record, as the header's flags say. */
static void put_event_tail(struct at_atz_writer *w, const struct at_event *ev)
{
	uint64_t z = atz_zigzag(ev->time_ns - w->last_time);

	switch (w->tail) {
	case ATZ_TAIL_TIME | ATZ_TAIL_STACK:
		put_varint(w, z << 1 | (ev->stack != 0));
		if (ev->stack)
			put_varint(w, ev->stack);
		break;
	case ATZ_TAIL_TIME:
		put_varint(w, z);
		break;
	case ATZ_TAIL_STACK:
		put_varint(w, ev->stack);
		break;
	}
	w->last_time = ev->time_ns;
}

int at_atz_append(struct at_atz_writer *w, const struct at_event *ev)
{
	if (ev->func >= AT_FUNC_COUNT || ev->has_result > 1 ||
	    (w->major >= 2 && (ev->stack > w->nstacks ||
			       (!(w->tail & ATZ_TAIL_TIME) && ev->time_ns) ||
			       (!(w->tail & ATZ_TAIL_STACK) && ev->stack)))) {
		errno = EINVAL;
		return -1;
	}
	if (reserve(w, 64 + 11 + ATZ_EVENT_TAIL_MAX + 2 * END_RECORD_MAX) < 0)
		goto fail;
	if (w->tail & ATZ_TAIL_TIME)
		put_time_reference(w, ev->time_ns);
	if (w->ends && w->blocks >= atz_limits.blocks)
		end_some_state(w, 1); /* an event adds one block at most */
	struct atz_thread *t = switch_thread(w, ev->pid, ev->tid);
	if (!t)
		goto fail;
	if (atz_thread_reserve(&w->pool, t, w->live_model, 1) < 0) {
		fail(w, ENOMEM);
		goto fail;
	}
	w->st.events++;
	if (w->live_model) {
		if (put_live_event(w, t, ev) < 0)
			goto fail;
		if (w->tail)
			put_event_tail(w, ev);
		return 0;
	}
	if (put_compact(w, t, ev)) {
		if (w->tail)
			put_event_tail(w, ev);
		return 0;
	}
	size_t op = w->len;
	uint8_t fields = ev->has_result ? ATZ_FIELD_HAS_RESULT : 0;
	put_byte(w, (uint8_t)(ATZ_OP_EVENT | ev->func));
	put_byte(w, 0);
	for (unsigned f = 0; f < 3; f++) {
		uint64_t x = f < 2 ? ev->arg[f] : ev->result;
		enum atz_role role = atz_field_role(ev->func, f);
		int k;
		uint64_t code;
		unsigned mode = choose_mode(t, role, x, &k, &code);
		fields |= (uint8_t)(mode << (2 * f));
		if (mode == ATZ_MODE_RING)
			put_byte(w, (uint8_t)k);
		else if (mode == ATZ_MODE_DELTA)
			put_varint(w, code);
		else if (mode == ATZ_MODE_LITERAL)
			put_varint(w, x);
		atz_update(t, role, x, k);
	}
	w->chunk[op + 1] = fields;
	if (w->tail)
		put_event_tail(w, ev);
	return 0;
fail:
	errno = w->out->err;
	return -1;
}

int at_atz_append_lost(struct at_atz_writer *w, uint64_t n)
{
	if (n == 0)
		return 0;
	if (reserve(w, 16) < 0) {
		errno = w->out->err;
		return -1;
	}
	put_byte(w, ATZ_OP_LOST);
	put_varint(w, n);
	w->st.lost += n;
	return 0;
}

/* A length-prefixed record: kind, varint payload length, numbers, then text. */
static int put_sized(struct at_atz_writer *w, uint8_t kind, const uint64_t *nums, unsigned count,
		     const char *text)
{
	uint8_t payload[4 * 10 + 10];
	size_t n = 0;
	size_t tl = text ? strnlen(text, AT_ATZ_NAME_MAX) : 0;

	for (unsigned i = 0; i < count; i++)
		n += atz_put_varint(payload + n, nums[i]);
	if (reserve(w, 1 + 10 + n + tl) < 0) {
		errno = w->out->err;
		return -1;
	}
	put_byte(w, kind);
	put_varint(w, n + tl);
	put_bytes(w, payload, n);
	put_bytes(w, text, tl);
	return 0;
}

int at_atz_append_process(struct at_atz_writer *w, uint32_t pid, const char *name)
{
	uint64_t nums[1] = { pid };
	return put_sized(w, ATZ_OP_PROCESS, nums, 1, name);
}

int at_atz_append_object(struct at_atz_writer *w, uint32_t pid, uint64_t start, uint64_t end,
			 uint64_t offset, const char *path)
{
	uint64_t nums[4] = { pid, start, end, offset };
	return put_sized(w, ATZ_OP_OBJECT, nums, 4, path);
}

int at_atz_append_process_change(struct at_atz_writer *w, const struct at_atz_process *p)
{
	if ((w->major == 1 && w->minor < 1) || p->change < AT_ATZ_PROCESS_START || p->change > AT_ATZ_PROCESS_EXIT) {
		errno = EINVAL;
		return -1;
	}
	size_t el = p->exe_len < AT_ATZ_NAME_MAX ? p->exe_len : AT_ATZ_NAME_MAX;
	size_t al = p->args_len < AT_ATZ_ARGS_MAX ? p->args_len : AT_ATZ_ARGS_MAX;
	const char *nul = p->exe ? memchr(p->exe, '\0', el) : NULL;
	if (nul)
		el = (size_t)(nul - p->exe);
	uint64_t nums[6] = { p->change, p->flags | (al < p->args_len ? AT_ATZ_PROCESS_ARGS_CUT : 0),
			     p->pid, p->parent, p->time_ns, p->status };
	uint8_t head[6 * 10];
	size_t n = 0;

	for (unsigned i = 0; i < 6; i++)
		n += atz_put_varint(head + n, nums[i]);
	if (reserve(w, 1 + 10 + n + el + 1 + al) < 0) {
		errno = w->out->err;
		return -1;
	}
	put_byte(w, ATZ_OP_PROCESS_CHANGE);
	put_varint(w, n + el + 1 + al);
	put_bytes(w, head, n);
	if (el)
		put_bytes(w, p->exe, el);
	put_byte(w, 0);
	if (al)
		put_bytes(w, p->args, al);
	w->st.processes++;
	if (p->change == AT_ATZ_PROCESS_EXIT) /* its threads' states go with it (2.3) */
		return at_atz_end_process(w, p->pid);
	return 0;
}

/* Whether every frame of s has a kind that w's version defines (lib/frames.h; always, without
 * AT_STACK_KINDS). */
static int frame_kinds_known(const struct at_atz_writer *w, const struct at_stack *s)
{
	if (!(s->flags & AT_STACK_KINDS))
		return 1;
	for (unsigned i = 0; i < s->count; i++)
		if (!at_frame_kind_known(s->kinds[i], w->kinds_minor))
			return 0;
	return 1;
}

int at_atz_append_stack(struct at_atz_writer *w, const struct at_stack *s)
{
	if (w->major < 2 || s->id != w->nstacks + 1 || s->count == 0 ||
	    s->count > AT_STACK_MAX_FRAMES || !frame_kinds_known(w, s)) {
		errno = EINVAL;
		return -1;
	}
	uint8_t payload[ATZ_STACK_RECORD_MAX];
	size_t n = 0;

	n += atz_put_varint(payload + n, s->id);
	n += atz_put_varint(payload + n, s->pid);
	n += atz_put_varint(payload + n, s->count);
	n += atz_put_varint(payload + n, s->flags);
	n += atz_put_varint(payload + n, s->pcs[0]);
	for (unsigned i = 1; i < s->count; i++)
		n += atz_put_varint(payload + n, atz_zigzag(s->pcs[i] - s->pcs[i - 1]));
	if (s->flags & AT_STACK_KINDS) {
		memcpy(payload + n, s->kinds, s->count);
		n += s->count;
	}
	if (reserve(w, 1 + 10 + n) < 0) {
		errno = w->out->err;
		return -1;
	}
	put_byte(w, ATZ_OP_STACK);
	put_varint(w, n);
	put_bytes(w, payload, n);
	w->nstacks++;
	w->st.stacks++;
	return 0;
}

int at_atz_append_mapping(struct at_atz_writer *w, const struct at_mapping *m)
{
	if (w->major < 2 || m->end < m->start || m->build_id_len > AT_BUILD_ID_MAX) {
		errno = EINVAL;
		return -1;
	}
	uint8_t head[5 * 10];
	size_t n = 0;
	size_t pl = m->path ? strnlen(m->path, AT_ATZ_NAME_MAX) : 0;

	n += atz_put_varint(head + n, m->pid);
	n += atz_put_varint(head + n, m->start);
	n += atz_put_varint(head + n, m->end);
	n += atz_put_varint(head + n, m->offset);
	n += atz_put_varint(head + n, m->build_id_len);
	if (reserve(w, 1 + 10 + n + m->build_id_len + pl) < 0) {
		errno = w->out->err;
		return -1;
	}
	put_byte(w, ATZ_OP_MAPPING);
	put_varint(w, n + m->build_id_len + pl);
	put_bytes(w, head, n);
	put_bytes(w, m->build_id, m->build_id_len);
	if (pl)
		put_bytes(w, m->path, pl);
	w->st.mappings++;
	return 0;
}

int at_atz_append_names(struct at_atz_writer *w, const struct at_frame_name *n)
{
	if (w->major < 2 || at_frame_naming(n->kind) != AT_NAMED_NAMES ||
	    !at_frame_kind_known(n->kind, w->kinds_minor)) {
		errno = EINVAL;
		return -1;
	}
	uint8_t head[5 * 10];
	size_t h = 0;
	size_t fl = n->function ? strnlen(n->function, AT_ATZ_NAME_MAX) : 0;
	size_t pl = n->file ? strnlen(n->file, AT_ATZ_NAME_MAX) : 0;

	h += atz_put_varint(head + h, n->pid);
	head[h++] = n->kind;
	h += atz_put_varint(head + h, n->value);
	h += atz_put_varint(head + h, n->line);
	h += atz_put_varint(head + h, fl);
	if (reserve(w, 1 + 10 + h + fl + pl) < 0) {
		errno = w->out->err;
		return -1;
	}
	put_byte(w, ATZ_OP_NAMES);
	put_varint(w, h + fl + pl);
	put_bytes(w, head, h);
	if (fl)
		put_bytes(w, n->function, fl);
	if (pl)
		put_bytes(w, n->file, pl);
	w->st.names++;
	return 0;
}

int at_atz_append_rss(struct at_atz_writer *w, const struct at_rss *m)
{
	uint8_t payload[3 * 10];
	size_t n = 0;

	if (w->major < 2 || w->minor < 1) {
		errno = EINVAL;
		return -1;
	}
	n += atz_put_varint(payload + n, m->pid);
	n += atz_put_varint(payload + n, m->time_ns);
	n += atz_put_varint(payload + n, m->bytes);
	if (reserve(w, 1 + 10 + n) < 0) {
		errno = w->out->err;
		return -1;
	}
	put_byte(w, ATZ_OP_RSS);
	put_varint(w, n);
	put_bytes(w, payload, n);
	w->st.rss++;
	return 0;
}

int at_atz_flush(struct at_atz_writer *w)
{
	if (emit_block(w) < 0) {
		errno = w->out->err;
		return -1;
	}
	return 0;
}

int at_atz_writer_close(struct at_atz_writer *w)
{
	struct at_output *out = w->out;

	at_atz_writer_end_frame(w);
	free_writer(w);
	errno = out->err;
	return out->err ? -1 : 0;
}

void at_atz_writer_stats(const struct at_atz_writer *w, struct at_atz_stats *st)
{
	*st = w->st;
}
