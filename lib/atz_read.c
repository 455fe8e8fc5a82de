/* atz_read.c: the atz reader (doc/FORMAT.md).
 *
 * The lz4 frame is walked block by block here (header, block sizes, end mark), each whole block
 * handed to lz4frame to check and decompress, so every error has an exact file offset and a
 * cut-off file still yields every event of its whole blocks. Decoded content collects in one
 * buffer; a record may span blocks, not frames. Frames may follow one another, as the lz4 tool
 * reads them (a trace appended to after a SIGHUP): each starts with its own stream header and
 * fresh predictor state, and continues the trace of the first. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#define LZ4F_STATIC_LINKING_ONLY
#include <lz4frame.h>

#include "atz.h"
#include "atz_live.h"
#include "atz_model.h"
#include "atz_state.h"
#include "prim.h"

/* op, field byte, three 10-byte varints, the 2.x time and stack, with margin */
#define EVENT_RECORD_MAX (40 + ATZ_EVENT_TAIL_MAX)

/* Everything but the thread states lives in one mapping (munmap is costly in some VMs, and one
 * mapping is one munmap): the reader, the input slot, the content slot, and an arena for
 * lz4frame's buffers. Only touched pages cost memory. */
#define BLOCK_MAX_ANY (4u << 20)
#define IN_AT       (64u << 10)
#define IN_SLOT     (BLOCK_MAX_ANY + (64u << 10))
#define BUF_AT      (IN_AT + IN_SLOT)
#define BUF_SLOT    (BLOCK_MAX_ANY + ATZ_SIZED_MAX + (64u << 10))
#define ARENA_AT    (BUF_AT + BUF_SLOT)
#define ARENA_SIZE  (12u << 20)
#define REGION_SIZE ((size_t)ARENA_AT + ARENA_SIZE)

struct at_atz_reader {
	int fd;
	const char *name;
	enum at_atz_status status;
	enum at_atz_status ending;  /* set when the input stopped early: reported once drained */
	const char *cut_where;      /* where it stopped ("inside ...", "after ...") */
	char msg[320];
	LZ4F_dctx *dctx;
	/* file bytes */
	uint8_t *in;
	size_t in_cap, in_pos, in_len;
	uint64_t in_off;            /* file offset of in[0] */
	int in_eof;
	/* the frame */
	int block_checksum, content_checksum;
	size_t block_max;
	uint64_t block_off;         /* file offset of the block being decoded or next */
	uint64_t frame_off;         /* file offset of the current frame */
	int frame_done;             /* no more content will come from this frame */
	int another_frame;          /* input follows the frame that ended */
	/* decoded content */
	uint8_t *buf;
	size_t buf_cap, pos, len;
	size_t arena_used;          /* bytes of the lz4frame arena handed out */
	uint64_t buf_off;           /* content offset of buf[0] */
	/* predictor state */
	struct atz_pool pool;       /* the thread states and their tables */
	struct atz_tmap threads;    /* thread table entry -> state, for threads not ended */
	uint32_t entries;           /* thread table entries of the frame so far */
	uint64_t blocks;            /* 2.2: live blocks in all tables (at most ATZ_BLOCKS_MAX) */
	struct atz_thread *cur;
	struct at_atz_header hdr;
	int have_header;
	uint64_t lost_before;
	struct at_atz_stats st;
	at_atz_process_fn on_process;
	void *on_process_arg;
	/* 2.x, per frame */
	unsigned frame_major;       /* the current frame's major version */
	unsigned kinds_minor;       /* the version whose frame kinds the current frame may hold:
				     * its minor, or 255 with at_atz_reader_test_kinds */
	int test_kinds;             /* at_atz_reader_test_kinds was called */
	int live_model;             /* 2.2: events coded against the live tables */
	int64_t other;              /* 2.2: the thread whose table the next event releases from
				     * (an OTHER record), or -1: the current thread's */
	unsigned tail;              /* ATZ_TAIL_* bits of the current frame */
	uint64_t last_time;         /* the reference of the next time delta */
	uint32_t nstacks;           /* stack ids defined so far */
	at_atz_stack_fn on_stack;
	void *on_stack_arg;
	at_atz_mapping_fn on_mapping;
	void *on_mapping_arg;
	at_atz_rss_fn on_rss;
	void *on_rss_arg;
	at_atz_names_fn on_names;
	void *on_names_arg;
	struct at_stack stack;      /* the stack record being handed to on_stack */
	char path[AT_ATZ_NAME_MAX + 1]; /* the mapping path being handed to on_mapping, or the
					 * file of the names being handed to on_names */
	char function[AT_ATZ_NAME_MAX + 1]; /* the function being handed to on_names */
	at_atz_wait_fn wait;        /* following a growing input (NULL: not) */
	void *wait_arg;
};

static int fail(struct at_atz_reader *r, enum at_atz_status status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Stops the reader with a message "NAME: ...". Returns -1. */
static int fail(struct at_atz_reader *r, enum at_atz_status status, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->msg, sizeof(r->msg), "%s: ", r->name);

	if (n < 0 || (size_t)n >= sizeof(r->msg))
		n = (int)sizeof(r->msg) - 1; /* a name that long: the reason is cut off */
	va_start(ap, fmt);
	vsnprintf(r->msg + n, sizeof(r->msg) - (size_t)n, fmt, ap);
	va_end(ap);
	r->status = status;
	return -1;
}

/* Makes n file bytes available at in + in_pos. 0, 1 if the input ends first, -1 on error. */
static int need_input(struct at_atz_reader *r, size_t n)
{
	if (r->in_len - r->in_pos >= n)
		return 0;
	if (r->in_pos) {
		memmove(r->in, r->in + r->in_pos, r->in_len - r->in_pos);
		r->in_len -= r->in_pos;
		r->in_off += r->in_pos;
		r->in_pos = 0;
	}
	/* read about a block at a time: fewer pages touched than filling the whole slot */
	size_t limit = r->block_max ? r->block_max + 16 : 4096;
	if (limit < n)
		limit = n;
	while (r->in_len < n && !r->in_eof) {
		ssize_t k = r->wait && !r->frame_done
				    ? at_atz_follow_read(r->fd, r->in + r->in_len, limit - r->in_len,
							 r->wait, r->wait_arg)
				    : at_read_some(r->fd, r->in + r->in_len, limit - r->in_len);
		if (k < 0)
			return fail(r, AT_ATZ_ERR_IO, "read error at byte offset %" PRIu64 ": %s",
				    r->in_off + r->in_len, strerror(errno));
		if (k == 0)
			r->in_eof = 1;
		r->in_len += (size_t)k;
	}
	return r->in_len >= n ? 0 : 1;
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Feeds n whole frame bytes to lz4frame, appending what they decode to the content buffer. */
static int lz4_feed(struct at_atz_reader *r, size_t n, const char *what)
{
	const uint8_t *src = r->in + r->in_pos;
	size_t left = n;

	while (left) {
		size_t room = r->buf_cap - r->len, used = left;
		size_t rc = LZ4F_decompress(r->dctx, r->buf + r->len, &room, src, &used, NULL);
		if (LZ4F_isError(rc))
			return fail(r, AT_ATZ_ERR_CORRUPT, "corrupt %s at byte offset %" PRIu64
				    " (%s)", what, r->block_off, LZ4F_getErrorName(rc));
		if (used == 0 && room == 0)
			return fail(r, AT_ATZ_ERR_CORRUPT, "corrupt %s at byte offset %" PRIu64,
				    what, r->block_off);
		r->len += room;
		src += used;
		left -= used;
	}
	r->in_pos += n;
	r->st.file_bytes += n;
	r->block_off += n;
	return 0;
}

/* Skips n input bytes (a skippable frame). 0, 1 if the input ends first, -1 on error. */
static int skip_input(struct at_atz_reader *r, uint64_t n)
{
	while (n) {
		size_t step = n < r->in_cap / 2 ? (size_t)n : r->in_cap / 2;
		int rc = need_input(r, step);
		if (rc)
			return rc;
		r->in_pos += step;
		r->block_off += step;
		r->st.file_bytes += step;
		n -= step;
	}
	return 0;
}

/* "truncated after N events: the input ends inside WHAT at byte offset X". Returns -1. */
static int cut_in_header(struct at_atz_reader *r, const char *what)
{
	return fail(r, AT_ATZ_ERR_TRUNCATED, "truncated after %" PRIu64 " events: the input ends "
		    "inside %s at byte offset %" PRIu64, r->st.events, what, r->block_off);
}

/* Skips lz4 skippable frames (magic 0x184D2A50 to 0x184D2A5F, a size word, that many bytes), as
 * the lz4 tool does between frames. 0, or -1 after an error. */
static int skip_skippable_frames(struct at_atz_reader *r)
{
	for (;;) {
		int rc = need_input(r, 8);
		if (rc < 0)
			return -1;
		const uint8_t *h = r->in + r->in_pos;
		if (r->in_len - r->in_pos < 4 || (get_le32(h) & 0xfffffff0u) != 0x184D2A50u)
			return 0;
		if (rc)
			return cut_in_header(r, "a skippable lz4 frame");
		if (skip_input(r, 8 + (uint64_t)get_le32(h + 4)) != 0)
			return r->status ? -1 : cut_in_header(r, "a skippable lz4 frame");
	}
}

/* Reads and checks an lz4 frame header (FORMAT.md 2), at the file's start or after a frame. */
static int read_frame_header(struct at_atz_reader *r)
{
	int first = r->block_off == 0;
	if (!first && skip_skippable_frames(r) < 0)
		return -1;
	r->frame_off = r->block_off;
	int rc = need_input(r, 7);
	if (rc < 0)
		return -1;
	const uint8_t *h = r->in + r->in_pos;
	if (r->in_len - r->in_pos >= 4 && get_le32(h) != AT_ATZ_LZ4_MAGIC) {
		if (first)
			return fail(r, AT_ATZ_ERR_NOT_ATZ, "not an lz4 frame (the first bytes are "
				    "not 04 22 4D 18)");
		return fail(r, AT_ATZ_ERR_CORRUPT, "unexpected data after the lz4 frame at byte "
			    "offset %" PRIu64 ": not another lz4 frame", r->frame_off);
	}
	if (rc) {
		if (first)
			return fail(r, AT_ATZ_ERR_TRUNCATED, "truncated after 0 events: the input "
				    "ends inside the lz4 frame header (%zu bytes)",
				    r->in_len - r->in_pos);
		return cut_in_header(r, "an lz4 frame header");
	}
	uint8_t flg = h[4], bd = h[5];
	if ((flg >> 6) != 1 || (flg & 2) || (bd & 0x8f) || ((bd >> 4) & 7) < 4)
		return fail(r, AT_ATZ_ERR_CORRUPT, "corrupt lz4 frame header at byte offset %" PRIu64,
			    r->frame_off);
	if (flg & 1)
		return fail(r, AT_ATZ_ERR_NOT_ATZ, "lz4 frame needs a dictionary: not an atz file");
	r->block_checksum = (flg >> 4) & 1;
	r->content_checksum = (flg >> 2) & 1;
	r->block_max = (size_t)1 << (8 + 2 * ((bd >> 4) & 7));
	size_t hlen = 7 + ((flg & 8) ? 8 : 0);
	rc = need_input(r, hlen);
	if (rc) {
		if (rc < 0)
			return -1;
		if (first)
			return fail(r, AT_ATZ_ERR_TRUNCATED, "truncated after 0 events: the input "
				    "ends inside the lz4 frame header");
		return cut_in_header(r, "an lz4 frame header");
	}
	return lz4_feed(r, hlen, "lz4 frame header");
}

/* Sizes the buffers for the frame's block size (within their slots of the region). */
static int size_buffers(struct at_atz_reader *r)
{
	r->buf_cap = r->block_max + ATZ_SIZED_MAX + 64;
	/* Fault in what a typical read touches in one call: page faults are costly in VMs. The
	 * result does not matter (without it pages fault in as usual). */
	at_populate(r->in, r->block_max + 16);
	at_populate(r->buf, r->block_max + 4096);
	at_populate((uint8_t *)r + ARENA_AT, 2 * r->block_max + (128u << 10));
	return 0;
}

/* Notes that the input stopped inside the frame; reported once the content is drained. */
static int truncated(struct at_atz_reader *r, const char *where)
{
	r->ending = AT_ATZ_ERR_TRUNCATED;
	r->cut_where = where;
	r->frame_done = 1;
	return 0;
}

/* Decodes the next lz4 block into the content buffer, or handles the end mark. Sets
 * frame_done at the end of the frame (clean, or truncated with `ending` set). */
static int load_block(struct at_atz_reader *r)
{
	if (r->pos) {
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
		r->len -= r->pos;
		r->buf_off += r->pos;
		r->pos = 0;
	}
	int rc = need_input(r, 4);
	if (rc < 0)
		return -1;
	if (rc)
		return truncated(r, r->in_len > r->in_pos
					    ? "inside a block size field"
					    : "after a whole block, before the frame's end mark");
	uint32_t word = get_le32(r->in + r->in_pos);
	if (word == 0) {
		size_t n = 4 + (r->content_checksum ? 4 : 0);
		rc = need_input(r, n);
		if (rc)
			return rc < 0 ? -1 : truncated(r, "inside the content checksum");
		if (lz4_feed(r, n, "end of frame (content checksum)") < 0)
			return -1;
		r->frame_done = 1;
		rc = need_input(r, 1);
		if (rc < 0)
			return -1;
		r->another_frame = rc == 0;
		return 0;
	}
	size_t size = word & 0x7fffffffu;
	if (size > r->block_max)
		return fail(r, AT_ATZ_ERR_CORRUPT, "corrupt lz4 block at byte offset %" PRIu64
			    ": size %zu exceeds the frame's %zu", r->block_off, size, r->block_max);
	size_t n = 4 + size + (r->block_checksum ? 4 : 0);
	rc = need_input(r, n);
	if (rc)
		return rc < 0 ? -1 : truncated(r, "inside the block at that offset");
	return lz4_feed(r, n, "lz4 block");
}

/* Ensures n content bytes are available at pos, loading blocks. 0, 1 if the content ends
 * first, -1 on error. */
static int need_content(struct at_atz_reader *r, size_t n)
{
	while (r->len - r->pos < n) {
		if (r->frame_done)
			return 1;
		if (load_block(r) < 0)
			return -1;
	}
	return 0;
}

static int corrupt(struct at_atz_reader *r, const char *why)
{
	return fail(r, AT_ATZ_ERR_CORRUPT, "corrupt stream at content byte %" PRIu64 " (lz4 "
		    "block ending at byte offset %" PRIu64 "): %s", r->buf_off + r->pos,
		    r->block_off, why);
}

/* Called when a record runs past the available content: reports the cut. */
static int ran_out(struct at_atz_reader *r)
{
	if (r->status)
		return -1;
	if (r->ending)
		return fail(r, r->ending, "truncated after %" PRIu64 " events: the input ends "
			    "%s; the last whole block ends at byte offset %" PRIu64 " of %"
			    PRIu64, r->st.events, r->cut_where, r->block_off,
			    r->in_off + r->in_len);
	return corrupt(r, "the frame ends inside a record");
}

/* The header extension's entries (FORMAT.md 3.1), [p, end), into h: the filter of a 2.4
 * trace; entries of other keys are skipped. 0, or -1 (corrupt) for an entry cut short, a key
 * given twice, or a value that is 0 or does not fill its entry. */
static int parse_extension(struct at_atz_reader *r, struct at_atz_header *h, const uint8_t *p,
			   const uint8_t *end)
{
	h->min_size = h->sample_bytes = 0;
	while (p < end) {
		uint64_t key, len, value;
		const uint8_t *v;

		if (atz_get_varint(&p, end, &key) || atz_get_varint(&p, end, &len) ||
		    len > (uint64_t)(end - p))
			return corrupt(r, "header extension entry cut short");
		v = p;
		p += len;
		uint64_t *slot = key == ATZ_EXT_MIN_SIZE     ? &h->min_size
				 : key == ATZ_EXT_SAMPLE_BYTES ? &h->sample_bytes
							       : NULL;
		if (!slot)
			continue;
		if (*slot)
			return corrupt(r, "header extension names the filter twice");
		if (atz_get_varint(&v, p, &value) || v != p || value == 0)
			return corrupt(r, "bad filter in the header extension");
		*slot = value;
	}
	return 0;
}

/* The stream header (FORMAT.md 3) into h. Returns 0, -1, or 1 when more content is needed. */
static int parse_header(struct at_atz_reader *r, struct at_atz_header *h)
{
	const uint8_t *p = r->buf + r->pos, *end = r->buf + r->len;
	uint64_t flags, start, hl, xl;
	int rc;

	size_t have = (size_t)(end - p);
	int complete = r->frame_done && !r->ending;
	if (memcmp(p, ATZ_STREAM_MAGIC, have < 4 ? have : 4) != 0 || (have < 6 && complete)) {
		if (r->frame_off)
			return fail(r, AT_ATZ_ERR_NOT_ATZ, "the lz4 frame at byte offset %" PRIu64
				    " is not an alloctap trace", r->frame_off);
		return fail(r, AT_ATZ_ERR_NOT_ATZ, "an lz4 file, but not an alloctap trace");
	}
	if (have < 6)
		return 1;
	h->major = p[4];
	h->minor = p[5];
	if (p[4] != 1 && p[4] != AT_ATZ_VERSION_MAJOR)
		return fail(r, AT_ATZ_ERR_VERSION, "trace format version %u.%u is %s this reader's "
			    "(%u.%u): %s", p[4], p[5], p[4] > AT_ATZ_VERSION_MAJOR ? "newer than" :
			    "older than", AT_ATZ_VERSION_MAJOR, AT_ATZ_GO_ON_MINOR,
			    p[4] > AT_ATZ_VERSION_MAJOR ? "use a newer alloctap" : "not supported");
	p += 6;
	if ((rc = atz_get_varint(&p, end, &flags)) || (rc = atz_get_varint(&p, end, &start)) ||
	    (rc = atz_get_varint(&p, end, &hl)))
		return rc > 0 ? 1 : corrupt(r, "bad varint in the stream header");
	if (hl > AT_ATZ_HOST_MAX)
		return corrupt(r, "host name longer than 255 bytes");
	if ((uint64_t)(end - p) < hl)
		return 1;
	memcpy(h->host, p, hl);
	h->host[hl] = 0;
	p += hl;
	if ((rc = atz_get_varint(&p, end, &xl)))
		return rc > 0 ? 1 : corrupt(r, "bad varint in the stream header");
	if (xl > ATZ_SIZED_MAX)
		return corrupt(r, "header extension too long");
	if ((uint64_t)(end - p) < xl)
		return 1;
	if (parse_extension(r, h, p, p + xl) < 0)
		return -1;
	p += xl;
	if (flags > UINT32_MAX)
		return corrupt(r, "header flags out of range");
	h->flags = (unsigned)flags;
	h->start_ns = start;
	r->pos = (size_t)(p - r->buf);
	return 0;
}

/* Releases every thread's state: the frame's thread table is empty again. */
static void drop_threads(struct at_atz_reader *r)
{
	for (size_t i = 0; i < r->threads.cap; i++)
		if (atz_tmap_at(&r->threads, i))
			atz_thread_free(&r->pool, atz_tmap_at(&r->threads, i), 0);
	atz_tmap_free(&r->threads);
	r->entries = 0;
	r->blocks = 0;
	r->cur = NULL;
	r->other = -1;
}

static void free_reader(struct at_atz_reader *r)
{
	drop_threads(r);
	atz_pool_free(&r->pool);
	if (r->dctx)
		LZ4F_freeDecompressionContext(r->dctx);
	atz_unmap(r, REGION_SIZE);
}

/* The frame header, then the stream header of the frame into h. 0 or -1. */
static int open_frame(struct at_atz_reader *r, struct at_atz_header *h)
{
	if (read_frame_header(r) < 0 || size_buffers(r) < 0)
		return -1;
	for (;;) {
		int rc = parse_header(r, h);
		if (rc <= 0)
			return rc;
		if (r->frame_done) /* parse_header has seen all the content there is */
			return ran_out(r);
		if (need_content(r, r->len - r->pos + 1) < 0)
			return -1;
	}
}

static int open_stream(struct at_atz_reader *r)
{
	if (open_frame(r, &r->hdr) < 0)
		return -1;
	r->have_header = 1;
	r->frame_major = r->hdr.major;
	r->kinds_minor = r->test_kinds ? 255 : r->hdr.minor;
	r->live_model = r->hdr.major == 2 && r->hdr.minor >= 2;
	r->tail = atz_tail_of(r->hdr.major, r->hdr.flags);
	return 0;
}

/* The frame after the one that ended (its content all read): a new writer's, continuing the
 * trace. Its stream header must agree on raw or munged; the first frame's host and start time
 * stay the trace's. Every thread starts over. 0 or -1. */
static int next_frame(struct at_atz_reader *r)
{
	struct at_atz_header h;

	r->another_frame = 0;
	r->frame_done = 0;
	r->buf_off += r->pos; /* the content read so far is all used: start the buffer over */
	r->len = r->pos = 0;
	if (open_frame(r, &h) < 0)
		return -1;
	if ((h.flags ^ r->hdr.flags) & AT_ATZ_FLAG_MUNGED)
		return fail(r, AT_ATZ_ERR_CORRUPT, "the lz4 frame at byte offset %" PRIu64 " holds "
			    "a %s trace, the first frame a %s one: not one trace", r->frame_off,
			    h.flags & AT_ATZ_FLAG_MUNGED ? "munged" : "raw",
			    h.flags & AT_ATZ_FLAG_MUNGED ? "raw" : "munged");
	if (h.min_size != r->hdr.min_size || h.sample_bytes != r->hdr.sample_bytes)
		return fail(r, AT_ATZ_ERR_CORRUPT, "the lz4 frame at byte offset %" PRIu64 " holds "
			    "a trace filtered otherwise than the first frame's (min-size, "
			    "sample-bytes): not one trace", r->frame_off);
	drop_threads(r);
	r->frame_major = h.major;
	r->kinds_minor = r->test_kinds ? 255 : h.minor;
	r->live_model = h.major == 2 && h.minor >= 2;
	r->tail = atz_tail_of(h.major, h.flags);
	r->last_time = 0;
	if (!(h.major == 2 && (h.flags & AT_ATZ_FLAG_STACKS_GO_ON)))
		r->nstacks = 0; /* 2.6: a frame that goes on keeps the stacks defined before it */
	return 0;
}

_Static_assert(sizeof(struct at_atz_reader) <= IN_AT, "reader struct overlaps its input slot");

/* lz4frame's allocations: bump allocation in the region's arena, freed with the region. */
static void *arena_alloc(void *opaque, size_t size)
{
	struct at_atz_reader *r = opaque;
	size_t at = (r->arena_used + 63) & ~(size_t)63;

	if (size > ARENA_SIZE - at)
		return NULL;
	r->arena_used = at + size;
	return (uint8_t *)r + ARENA_AT + at;
}

static void arena_free(void *opaque, void *p)
{
	(void)opaque;
	(void)p;
}

ssize_t at_atz_follow_read(int fd, void *buf, size_t n, at_atz_wait_fn wait, void *arg)
{
	struct stat st;
	int regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int ready = regular ? 1 : poll(&p, 1, 0);
		if (ready < 0 && errno != EINTR)
			return -1;
		if (ready == 0 && wait(arg, fd))
			return 0;
		if (ready <= 0)
			continue;
		ssize_t k = read(fd, buf, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k != 0 || !regular)
			return k; /* data, an error, or a pipe whose writer is gone */
		if (wait(arg, fd))
			return 0;
	}
}

struct at_atz_reader *at_atz_reader_open(int fd, const char *name, const void *preload,
					 size_t preload_len)
{
	return at_atz_reader_open_follow(fd, name, preload, preload_len, NULL, NULL);
}

struct at_atz_reader *at_atz_reader_open_follow(int fd, const char *name, const void *preload,
						size_t preload_len, at_atz_wait_fn wait,
						void *arg)
{
	struct at_atz_reader *r;

	if (preload_len > IN_SLOT || !(r = atz_map(REGION_SIZE)))
		return NULL;
	LZ4F_CustomMem mem = { arena_alloc, arena_alloc, arena_free, r };
	r->fd = fd;
	r->name = name ? name : "<input>";
	r->in = (uint8_t *)r + IN_AT;
	r->in_cap = IN_SLOT;
	r->buf = (uint8_t *)r + BUF_AT;
	r->buf_cap = 0;
	r->dctx = LZ4F_createDecompressionContext_advanced(mem, LZ4F_VERSION);
	if (!r->dctx) {
		free_reader(r);
		return NULL;
	}
	if (preload_len)
		memcpy(r->in, preload, preload_len);
	r->in_len = preload_len;
	r->other = -1;
	r->wait = wait;
	r->wait_arg = arg;
	open_stream(r);
	return r;
}

/* A NEW_THREAD record: the next table entry, with fresh state, becomes current. Past the
 * limit of states held at once (FORMAT.md 8) the trace is refused. 0 or -1. */
static int new_thread(struct at_atz_reader *r, uint64_t pid, uint64_t tid)
{
	char why[128];

	if (pid > UINT32_MAX || tid > UINT32_MAX)
		return corrupt(r, "thread record with a pid or tid above 2^32-1");
	if (r->threads.count >= atz_limits.threads || r->entries == UINT32_MAX) {
		snprintf(why, sizeof(why), "a new thread while %zu threads have not ended (this "
			 "reader holds at most %u at once)", r->threads.count, atz_limits.threads);
		return corrupt(r, why);
	}
	struct atz_thread *t = atz_thread_new(&r->pool, (uint32_t)pid, (uint32_t)tid, r->entries);
	if (!t || atz_tmap_put(&r->threads, t->entry, t) < 0) {
		atz_pool_put(&r->pool, t, sizeof(*t));
		return fail(r, AT_ATZ_ERR_NOMEM, "out of memory for %zu threads",
			    r->threads.count + 1);
	}
	r->cur = t;
	r->entries++;
	r->st.threads++;
	return 0;
}

/* The state of thread table entry a, or NULL after a corruption report naming what (a
 * record kind) and why it names no thread. */
static struct atz_thread *entry_state(struct at_atz_reader *r, uint64_t a, const char *what)
{
	struct atz_thread *t = a < r->entries ? atz_tmap_find(&r->threads, a) : NULL;
	char why[128];

	if (!t) {
		snprintf(why, sizeof(why), "%s names thread table entry %" PRIu64 ", %s", what, a,
			 a < r->entries ? "a thread that ended" : "not in the table");
		corrupt(r, why);
	}
	return t;
}

/* The payload of an END record (2.3), [p, end): the thread of the entry it names ended, its
 * state is released. Bytes after the entry are skipped. 0, or -1 when it is malformed. */
static int get_end(struct at_atz_reader *r, const uint8_t *p, const uint8_t *end)
{
	uint64_t a;

	if (atz_get_varint(&p, end, &a))
		return corrupt(r, "bad thread table entry in an end record");
	struct atz_thread *t = entry_state(r, a, "an end record");
	if (!t)
		return -1;
	r->blocks -= t->live.count;
	atz_tmap_remove(&r->threads, a);
	if (r->cur == t)
		r->cur = NULL;
	atz_thread_free(&r->pool, t, 0);
	r->st.ended++;
	return 0;
}

/* One field of an EVENT record. Returns 0, 1 past the end, -1 corrupt. */
static int get_field(struct atz_thread *t, unsigned mode, enum atz_role role, const uint8_t **pp,
		     const uint8_t *end, uint64_t *x, int *k)
{
	uint64_t v;
	int rc;

	*k = -1;
	switch (mode) {
	case ATZ_MODE_ZERO:
		*x = 0;
		return 0;
	case ATZ_MODE_RING: {
		if (*pp == end)
			return 1;
		unsigned i = *(*pp)++;
		if (role == ATZ_ROLE_SIZE && i < t->sizes.count)
			*x = RING_GET(t->sizes, i);
		else if (role == ATZ_ROLE_RELEASE && i < t->allocs.count)
			*x = RING_GET(t->allocs, i);
		else if (role == ATZ_ROLE_ALLOC && i < t->releases.count)
			*x = RING_GET(t->releases, i);
		else
			return -1;
		*k = (int)i;
		return 0;
	}
	case ATZ_MODE_DELTA:
		if (role == ATZ_ROLE_EXTRA)
			return -1;
		if ((rc = atz_get_varint(pp, end, &v)))
			return rc;
		*x = atz_delta_ref(t, role) +
		     (atz_role_is_address(role) ? atz_unadelta(v) : atz_unzigzag(v));
		return 0;
	default:
		if ((rc = atz_get_varint(pp, end, &v)))
			return rc;
		*x = v;
		return 0;
	}
}

/* The general event form (FORMAT.md 5.3). */
/* The field byte of an EVENT record (any version): *fields, and the event's function and
 * whether it has a result. 0, 1 past the end, -1 corrupt. */
static int get_field_byte(struct at_atz_reader *r, const uint8_t **pp, const uint8_t *end,
			  unsigned func, struct at_event *ev, uint8_t *fields)
{
	if (*pp == end)
		return 1;
	*fields = *(*pp)++;
	if (*fields & ATZ_FIELD_RESERVED)
		return corrupt(r, "reserved bit set in an event's field byte");
	ev->func = (uint8_t)func;
	ev->has_result = (*fields & ATZ_FIELD_HAS_RESULT) != 0;
	return 0;
}

static int get_event(struct at_atz_reader *r, const uint8_t **pp, const uint8_t *end,
		     unsigned func, struct at_event *ev)
{
	struct atz_thread *t = r->cur;
	uint8_t fields;
	int got = get_field_byte(r, pp, end, func, ev, &fields);

	if (got)
		return got;
	for (unsigned f = 0; f < 3; f++) {
		enum atz_role role = atz_field_role(func, f);
		uint64_t x;
		int k;
		int rc = get_field(t, (fields >> (2 * f)) & 3, role, pp, end, &x, &k);
		if (rc > 0)
			return 1;
		if (rc < 0)
			return corrupt(r, "bad field in an event (ring index past the ring, "
				       "delta on an unused argument, or varint)");
		if (f < 2)
			ev->arg[f] = x;
		else
			ev->result = x;
		atz_update(t, role, x, k);
	}
	return 0;
}

/* The payload of a process change record, [p, end): counted, and handed to the callback when
 * its change is one this version knows. 0, or -1 when it is malformed. */
static int get_process_change(struct at_atz_reader *r, const uint8_t *p, const uint8_t *end)
{
	uint64_t v[6];

	for (unsigned i = 0; i < 6; i++)
		if (atz_get_varint(&p, end, &v[i]))
			return corrupt(r, "bad number in a process change record");
	if (v[2] > UINT32_MAX || v[3] > UINT32_MAX)
		return corrupt(r, "process change record with a pid above 2^32-1");
	r->st.processes++;
	if (!r->on_process || v[0] < AT_ATZ_PROCESS_START || v[0] > AT_ATZ_PROCESS_EXIT)
		return 0;
	const uint8_t *nul = memchr(p, 0, (size_t)(end - p));
	struct at_atz_process pc = {
		.change = (unsigned)v[0], .flags = (unsigned)v[1], .pid = (uint32_t)v[2],
		.parent = (uint32_t)v[3], .time_ns = v[4], .status = v[5],
		.exe = (const char *)p, .exe_len = (size_t)((nul ? nul : end) - p),
		.args = (const char *)(nul ? nul + 1 : end),
		.args_len = nul ? (size_t)(end - nul - 1) : 0,
	};
	r->on_process(r->on_process_arg, &pc);
	return 0;
}

/* Into out (cap bytes), the frame kinds a frame of version 2.minor may hold, by value and
 * name ("kind 0, native"; "kinds 0, native; 254, test"). */
#define KIND_LIST(code, value, name, naming, since)                                            \
	if (at_frame_kind_known(value, minor) && n < sizeof(list)) {                           \
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%u, %s", n ? "; " : "",   \
				      value, #name);                                           \
		kinds++;                                                                       \
	}
static void known_kinds(unsigned minor, char *out, size_t cap)
{
	char list[96] = "";
	size_t n = 0;
	unsigned kinds = 0;

	AT_FRAME_KINDS(KIND_LIST)
	snprintf(out, cap, "%s %s", kinds == 1 ? "kind" : "kinds", list);
}

/* The kinds of s's frames, [p, end) of a stack record with AT_STACK_KINDS: one byte per frame,
 * each a kind the frame's version defines (lib/frames.h). 0, or -1 when they are cut short or
 * one is not defined. */
static int get_frame_kinds(struct at_atz_reader *r, struct at_stack *s, const uint8_t *p,
			   const uint8_t *end)
{
	char why[224], known[128];

	if (end - p < (ptrdiff_t)s->count)
		return corrupt(r, "stack record that ends before its frame kinds");
	for (unsigned i = 0; i < s->count; i++) {
		if (!at_frame_kind_known(p[i], r->kinds_minor)) {
			known_kinds(r->kinds_minor, known, sizeof(known));
			snprintf(why, sizeof(why), "stack record with a frame of kind %u at frame "
				 "%u (this reader knows %s)", p[i], i, known);
			return corrupt(r, why);
		}
		s->kinds[i] = p[i];
	}
	return 0;
}

/* The payload of a stack record (2.x), [p, end): ids must come 1, 2, ... in order; the frames'
 * kinds follow them with AT_STACK_KINDS (every frame is native without). Bytes after the last
 * frame (or kind) are skipped. 0, or -1 when it is malformed. */
static int get_stack(struct at_atz_reader *r, const uint8_t *p, const uint8_t *end)
{
	uint64_t v[5];
	char why[96];

	for (unsigned i = 0; i < 5; i++)
		if (atz_get_varint(&p, end, &v[i]))
			return corrupt(r, "bad number in a stack record");
	if (v[0] != (uint64_t)r->nstacks + 1) {
		snprintf(why, sizeof(why), "stack record with id %" PRIu64 " where id %" PRIu32
			 " comes next", v[0], r->nstacks + 1);
		return corrupt(r, why);
	}
	if (v[1] > UINT32_MAX)
		return corrupt(r, "stack record with a pid above 2^32-1");
	if (v[2] == 0 || v[2] > AT_STACK_MAX_FRAMES) {
		snprintf(why, sizeof(why), "stack record with %" PRIu64 " frames (1 to %u)", v[2],
			 AT_STACK_MAX_FRAMES);
		return corrupt(r, why);
	}
	if (v[3] > UINT16_MAX)
		return corrupt(r, "stack record with flags above 0xffff");
	struct at_stack *s = &r->stack;
	s->id = (uint32_t)v[0];
	s->pid = (uint32_t)v[1];
	s->count = (uint16_t)v[2];
	s->flags = (uint16_t)v[3];
	s->pcs[0] = v[4];
	for (unsigned i = 1; i < s->count; i++) {
		uint64_t z;
		if (atz_get_varint(&p, end, &z))
			return corrupt(r, "bad frame in a stack record");
		s->pcs[i] = s->pcs[i - 1] + atz_unzigzag(z);
	}
	if (!(s->flags & AT_STACK_KINDS))
		memset(s->kinds, AT_FRAME_NATIVE, s->count);
	else if (get_frame_kinds(r, s, p, end) < 0)
		return -1;
	r->nstacks++;
	r->st.stacks++;
	if (r->on_stack)
		r->on_stack(r->on_stack_arg, s);
	return 0;
}

/* The payload of a mapping record (2.x), [p, end). 0, or -1 when it is malformed. */
static int get_mapping(struct at_atz_reader *r, const uint8_t *p, const uint8_t *end)
{
	uint64_t v[5];

	for (unsigned i = 0; i < 5; i++)
		if (atz_get_varint(&p, end, &v[i]))
			return corrupt(r, "bad number in a mapping record");
	if (v[0] > UINT32_MAX)
		return corrupt(r, "mapping record with a pid above 2^32-1");
	if (v[2] < v[1])
		return corrupt(r, "mapping record that ends before it starts");
	if (v[4] > AT_BUILD_ID_MAX || v[4] > (uint64_t)(end - p))
		return corrupt(r, "mapping record with a build-id longer than 20 bytes or its "
			       "payload");
	struct at_mapping m = { .pid = (uint32_t)v[0], .build_id_len = (uint8_t)v[4],
				.start = v[1], .end = v[2], .offset = v[3], .path = r->path };
	memcpy(m.build_id, p, m.build_id_len);
	p += m.build_id_len;
	size_t pl = (size_t)(end - p);
	if (pl > AT_ATZ_NAME_MAX)
		return corrupt(r, "mapping record with a path longer than 4096 bytes");
	memcpy(r->path, p, pl);
	r->path[pl] = 0;
	r->st.mappings++;
	if (r->on_mapping)
		r->on_mapping(r->on_mapping_arg, &m);
	return 0;
}

/* The payload of a NAMES record (reserved in 2.3, doc/FORMAT.md 5.10), [p, end): its kind must
 * be one the frame's version defines and names by NAMES records. 0, or -1 when it is
 * malformed. */
static int get_names(struct at_atz_reader *r, const uint8_t *p, const uint8_t *end)
{
	uint64_t pid, value, line, fl;
	char why[96];

	if (atz_get_varint(&p, end, &pid) || p == end)
		return corrupt(r, "bad number in a names record");
	uint8_t kind = *p++;
	if (atz_get_varint(&p, end, &value) || atz_get_varint(&p, end, &line) ||
	    atz_get_varint(&p, end, &fl))
		return corrupt(r, "bad number in a names record");
	if (pid > UINT32_MAX || line > UINT32_MAX)
		return corrupt(r, "names record with a pid or line above 2^32-1");
	if (at_frame_naming(kind) != AT_NAMED_NAMES || !at_frame_kind_known(kind, r->kinds_minor)) {
		snprintf(why, sizeof(why), "names record for frames of kind %u, which this reader "
			 "does not name by names", kind);
		return corrupt(r, why);
	}
	if (fl > AT_ATZ_NAME_MAX || fl > (uint64_t)(end - p) ||
	    (size_t)(end - p) - fl > AT_ATZ_NAME_MAX)
		return corrupt(r, "names record with a function or file longer than 4096 bytes or "
			       "its payload");
	memcpy(r->function, p, fl);
	r->function[fl] = 0;
	p += fl;
	memcpy(r->path, p, (size_t)(end - p));
	r->path[end - p] = 0;
	struct at_frame_name n = { .pid = (uint32_t)pid, .kind = kind, .value = value,
				   .line = (uint32_t)line, .function = r->function,
				   .file = r->path };
	r->st.names++;
	if (r->on_names)
		r->on_names(r->on_names_arg, &n);
	return 0;
}

/* The payload of an RSS record (2.1), [p, end). 0, or -1 when it is malformed. */
static int get_rss(struct at_atz_reader *r, const uint8_t *p, const uint8_t *end)
{
	uint64_t v[3];

	for (unsigned i = 0; i < 3; i++)
		if (atz_get_varint(&p, end, &v[i]))
			return corrupt(r, "bad number in an RSS record");
	if (v[0] > UINT32_MAX)
		return corrupt(r, "RSS record with a pid above 2^32-1");
	struct at_rss m = { .pid = (uint32_t)v[0], .time_ns = v[1], .bytes = v[2] };
	r->st.rss++;
	if (r->on_rss)
		r->on_rss(r->on_rss_arg, &m);
	return 0;
}

/* A length-prefixed record: kinds this version knows are checked, others skipped. */
static int get_sized(struct at_atz_reader *r, uint8_t op)
{
	const uint8_t *p = r->buf + r->pos + 1, *end = r->buf + r->len;
	uint64_t n = 0;
	int rc = atz_get_varint(&p, end, &n);

	if (rc == 1) {
		rc = need_content(r, (size_t)(end - (r->buf + r->pos)) + 1);
		return rc < 0 ? -1 : rc > 0 ? ran_out(r) : 1;
	}
	if (rc < 0 || n > ATZ_SIZED_MAX)
		return corrupt(r, "bad length in a length-prefixed record");
	size_t head = (size_t)(p - (r->buf + r->pos));
	rc = need_content(r, head + n);
	if (rc)
		return rc < 0 ? -1 : ran_out(r);
	p = r->buf + r->pos + head;
	end = p + n;
	if (r->frame_major >= 2 && (op == ATZ_OP_RSS || op == ATZ_OP_END)) {
		if ((op == ATZ_OP_RSS ? get_rss(r, p, end) : get_end(r, p, end)) < 0)
			return -1;
		r->pos += head + n;
		return 0;
	}
	if (r->frame_major >= 2 && op == ATZ_OP_NAMES) {
		if (get_names(r, p, end) < 0)
			return -1;
		r->pos += head + n;
		return 0;
	}
	if (op == ATZ_OP_PROCESS_CHANGE ||
	    (r->frame_major >= 2 && (op == ATZ_OP_STACK || op == ATZ_OP_MAPPING))) {
		if ((op == ATZ_OP_PROCESS_CHANGE ? get_process_change(r, p, end)
		     : op == ATZ_OP_STACK ? get_stack(r, p, end) : get_mapping(r, p, end)) < 0)
			return -1;
		r->pos += head + n;
		return 0;
	}
	uint64_t v;
	for (unsigned i = 0; i < (op == ATZ_OP_PROCESS ? 1u : op == ATZ_OP_OBJECT ? 4u : 0u); i++)
		if (atz_get_varint(&p, end, &v) || (i == 0 && v > UINT32_MAX))
			return corrupt(r, "bad number in a process or object record");
	r->pos += head + n;
	return 0;
}

/* The compact realloc forms (FORMAT.md 5.1). 0, 1 past the end, -1 corrupt. */
static int get_compact_realloc(struct at_atz_reader *r, struct atz_thread *t, uint8_t op,
			       const uint8_t **pp, const uint8_t *end, struct at_event *ev)
{
	uint64_t p = 0, size, code = 0;
	int k = -1, rc;

	if (op != ATZ_OP_REALLOC_NULL) {
		if (*pp == end)
			return 1;
		k = *(*pp)++;
		if ((unsigned)k >= t->allocs.count)
			return corrupt(r, "compact realloc refers past the allocation ring");
		p = RING_GET(t->allocs, k);
	}
	if ((rc = atz_get_varint(pp, end, &size)))
		return rc > 0 ? 1 : corrupt(r, "bad size varint in a realloc record");
	if (op != ATZ_OP_REALLOC_SAME && (rc = atz_get_varint(pp, end, &code)))
		return rc > 0 ? 1 : corrupt(r, "bad address varint in a realloc record");
	ev->func = AT_REALLOC;
	ev->has_result = 1;
	ev->arg[0] = p;
	ev->arg[1] = size;
	atz_update(t, ATZ_ROLE_RELEASE, p, k);
	atz_update(t, ATZ_ROLE_SIZE, size, -1);
	if (op == ATZ_OP_REALLOC_SAME) {
		ev->result = p;
		atz_update(t, ATZ_ROLE_ALLOC, p, 0);
		return 0;
	}
	ev->result = t->last_alloc + atz_unadelta(code);
	if (ev->result == 0 || ev->result == p)
		return corrupt(r, "compact realloc with a null or unmoved result");
	atz_update(t, ATZ_ROLE_ALLOC, ev->result, -1);
	return 0;
}

/* The compact malloc and free forms (FORMAT.md 5.1). 0, 1 past the end, -1 corrupt. */
static int get_compact(struct at_atz_reader *r, struct atz_thread *t, uint8_t op,
		       const uint8_t **pp, const uint8_t *end, struct at_event *ev)
{
	int s = -1, a = -1, rc;
	uint64_t v;

	if (op >= ATZ_OP_QUICK_FREE && op < ATZ_OP_MALLOC_SIZE) {
		a = op & 31;
		if ((unsigned)a >= t->allocs.count)
			return corrupt(r, "quick free refers past the allocation ring");
		v = RING_GET(t->allocs, a);
	} else if (op == ATZ_OP_FREE_NULL) {
		v = 0;
	} else if (op == ATZ_OP_FREE_DELTA) {
		if ((rc = atz_get_varint(pp, end, &v)))
			return rc > 0 ? 1 : corrupt(r, "bad varint in a free record");
		v = t->last_release + atz_unadelta(v);
		if (v == 0)
			return corrupt(r, "free delta record of a null pointer");
	} else if (op >= ATZ_OP_REALLOC_SAME) {
		return get_compact_realloc(r, t, op, pp, end, ev);
	} else {
		goto malloc;
	}
	ev->func = AT_FREE;
	ev->has_result = 0;
	ev->arg[0] = v;
	ev->result = 0;
	atz_update(t, ATZ_ROLE_RELEASE, v, a);
	return 0;
malloc:
	if (op < ATZ_OP_QUICK_FREE) {
		s = (op >> 3) & 7;
		a = op & 7;
	} else if (op < ATZ_OP_MALLOC_ADDR) {
		s = op & 7;
	} else if (op < ATZ_OP_MALLOC_NEW) {
		a = op & 7;
	} else if (op == ATZ_OP_MALLOC_DEEP1) {
		if (*pp == end)
			return 1;
		s = **pp & 7;
		a = *(*pp)++ >> 3;
	} else if (op != ATZ_OP_MALLOC_NEW && op != ATZ_OP_MALLOC_DEEP2) {
		return corrupt(r, "unknown record kind");
	}
	if (s < 0 && (rc = atz_get_varint(pp, end, &ev->arg[0])))
		return rc > 0 ? 1 : corrupt(r, "bad size varint in a malloc record");
	if (op == ATZ_OP_MALLOC_DEEP2) {
		if (*pp == end)
			return 1;
		a = *(*pp)++;
	}
	if ((s >= 0 && (unsigned)s >= t->sizes.count) ||
	    (a >= 0 && (unsigned)a >= t->releases.count))
		return corrupt(r, "compact malloc refers past a ring");
	if (s >= 0)
		ev->arg[0] = RING_GET(t->sizes, s);
	if (a >= 0) {
		ev->result = RING_GET(t->releases, a);
	} else {
		if ((rc = atz_get_varint(pp, end, &v)))
			return rc > 0 ? 1 : corrupt(r, "bad address varint in a malloc record");
		ev->result = t->last_alloc + atz_unadelta(v);
		if (ev->result == 0)
			return corrupt(r, "malloc record with a null result");
	}
	ev->func = AT_MALLOC;
	ev->has_result = 1;
	atz_update(t, ATZ_ROLE_SIZE, ev->arg[0], s);
	atz_update(t, ATZ_ROLE_ALLOC, ev->result, a);
	return 0;
}

/* ---- 2.2: events coded against the live tables (FORMAT.md 5.8, 6.5) ---------------------- */

/* Whether the trace is munged: slot numbers, every size of one class (FORMAT.md 6.5). */
static int munged(const struct at_atz_reader *r)
{
	return (r->hdr.flags & AT_ATZ_FLAG_MUNGED) != 0;
}

/* The table a release of the current event takes its block from: the OTHER record's thread,
 * else the current one. NULL (reported) when the OTHER record's thread ended since. */
static struct atz_thread *release_table(struct at_atz_reader *r)
{
	return r->other >= 0 ? entry_state(r, (uint64_t)r->other, "an other-table record")
			     : r->cur;
}

/* Takes the block of rank `rank` (mod 2^64) out of the release table o onto t's freed ring,
 * its address in *x. 0, or -1 when the table has no such rank. */
static int take_rank(struct at_atz_reader *r, struct atz_thread *t, struct atz_thread *o,
		     uint64_t rank, uint64_t *x)
{
	if (rank >= o->live.count)
		return corrupt(r, "a release refers past its thread's live blocks");
	uint32_t slot = atz_live_slot(&o->live, (uint32_t)rank);
	*x = atz_release_block(t, o, slot, (uint32_t)rank, munged(r));
	r->blocks--;
	return 0;
}

/* The rank a release code P names in table o (FORMAT.md 6.5). */
static uint64_t release_rank(const struct atz_thread *o, uint64_t code)
{
	if (code & 1)
		return o->live.cursor + atz_unzigzag(code >> 1);
	return (uint64_t)o->live.count - 1 - (code >> 1);
}

/* Takes the block of release code P (FORMAT.md 6.5) out of the release table. 0 or -1. */
static int take_code(struct at_atz_reader *r, struct atz_thread *t, uint64_t code, uint64_t *x)
{
	struct atz_thread *o = release_table(r);

	return o ? take_rank(r, t, o, release_rank(o, code), x) : -1;
}


/* Reads a release code and takes its block. 0, 1 past the end, -1 corrupt. */
static int get_release(struct at_atz_reader *r, struct atz_thread *t, const uint8_t **pp,
		       const uint8_t *end, uint64_t *x)
{
	uint64_t code;
	int rc = atz_get_varint(pp, end, &code);

	if (rc)
		return rc > 0 ? 1 : corrupt(r, "bad release code varint");
	return take_code(r, t, code, x);
}

/* Decodes address code a of an allocation of n bytes by t into *x (never 0), with the freed
 * ring entry it came from in *k (-1: the top). 0 or -1. */
static int address_of(struct at_atz_reader *r, struct atz_thread *t, uint64_t n, uint64_t a,
		      uint64_t *x, int *k)
{
	if (a & 1) {
		*k = -1;
		*x = t->top + atz_unadelta(a >> 1);
	} else {
		*k = atz_freed_class(&t->freed, atz_size_class(n, munged(r)), a >> 1);
		if (*k < 0)
			return corrupt(r, "an address code names a freed block that is not there");
		*x = t->freed.e[atz_freed_at(&t->freed, (uint32_t)*k)].addr;
	}
	return *x ? 0 : corrupt(r, "an allocation at address 0");
}

/* Block x of n bytes was allocated by t, from freed ring entry k (-1: fresh memory). 0 or -1. */
static int allocated22(struct at_atz_reader *r, struct atz_thread *t, uint64_t x, uint64_t n,
		       int k)
{
	uint32_t slot, before = t->live.count;

	if (k >= 0)
		atz_freed_remove(&t->freed, (uint32_t)k);
	else
		t->top = atz_next_top(x, n, munged(r));
	if (before < ATZ_LIVE_CAP && r->blocks >= atz_limits.blocks) {
		char why[128];
		snprintf(why, sizeof(why), "an allocation while %" PRIu64 " blocks are live in the "
			 "threads' tables (this reader holds at most %u)", r->blocks, atz_limits.blocks);
		return corrupt(r, why);
	}
	if (atz_live_append(&t->live, &r->pool, x, n, &slot, NULL, NULL) < 0)
		return fail(r, AT_ATZ_ERR_NOMEM, "out of memory for the live blocks of thread %" PRIu32,
			    t->tid);
	r->blocks += t->live.count - before;
	return 0;
}

/* Reads an address code for an allocation of n bytes and applies it. 0, 1 past the end, -1. */
static int get_allocation(struct at_atz_reader *r, struct atz_thread *t, const uint8_t **pp,
			  const uint8_t *end, uint64_t n, uint64_t *x)
{
	uint64_t a;
	int k, rc = atz_get_varint(pp, end, &a);

	if (rc)
		return rc > 0 ? 1 : corrupt(r, "bad address code varint");
	if (address_of(r, t, n, a, x, &k) < 0)
		return -1;
	return allocated22(r, t, *x, n, k);
}

/* The 2.2 malloc forms. 0, 1 past the end, -1 corrupt. */
static int get_malloc22(struct at_atz_reader *r, struct atz_thread *t, uint8_t op,
			const uint8_t **pp, const uint8_t *end, struct at_event *ev)
{
	unsigned field = op & 7;
	int s = -1, k, rc;
	uint64_t n, a;

	if (op < ATZ_OP22_MALLOC) {
		s = (op >> 3) & 7;
		if ((unsigned)s >= t->sizes.count)
			return corrupt(r, "compact malloc refers past the size ring");
		n = RING_GET(t->sizes, s);
	} else if ((rc = atz_get_varint(pp, end, &n))) {
		return rc > 0 ? 1 : corrupt(r, "bad size varint in a malloc record");
	}
	atz_update(t, ATZ_ROLE_SIZE, n, s);
	ev->func = AT_MALLOC;
	ev->has_result = 1;
	ev->arg[0] = n;
	if (field == ATZ_ADDR22_CODE)
		return get_allocation(r, t, pp, end, n, &ev->result);
	a = field == ATZ_ADDR22_TOP ? 1 : (uint64_t)field << 1;
	if (address_of(r, t, n, a, &ev->result, &k) < 0)
		return -1;
	return allocated22(r, t, ev->result, n, k);
}

/* The 2.2 free forms. 0, 1 past the end, -1 corrupt. */
static int get_free22(struct at_atz_reader *r, struct atz_thread *t, uint8_t op,
		      const uint8_t **pp, const uint8_t *end, struct at_event *ev)
{
	uint64_t x = 0;
	int rc = 0;

	ev->func = AT_FREE;
	ev->has_result = 0;
	ev->result = 0;
	if (op < ATZ_OP22_FREE_NEAR) {
		rc = take_code(r, t, (uint64_t)(op - ATZ_OP22_QUICK_FREE) << 1, &x);
	} else if (op < ATZ_OP22_FREE_FAR) {
		rc = take_code(r, t, (uint64_t)(op - ATZ_OP22_FREE_NEAR) << 1 | 1, &x);
	} else if (op == ATZ_OP22_FREE_FAR) {
		rc = get_release(r, t, pp, end, &x);
	} else if (op == ATZ_OP22_FREE_ADDR) {
		if ((rc = atz_get_varint(pp, end, &x)))
			return rc > 0 ? 1 : corrupt(r, "bad varint in a free record");
		x = t->last_release + atz_unadelta(x);
		if (x == 0)
			return corrupt(r, "free address record of a null pointer");
		atz_release_addr(t, x);
	}
	ev->arg[0] = x;
	return rc;
}

/* The 2.2 realloc forms. 0, 1 past the end, -1 corrupt. */
static int get_realloc22(struct at_atz_reader *r, struct atz_thread *t, uint8_t op,
			 const uint8_t **pp, const uint8_t *end, struct at_event *ev)
{
	uint64_t p = 0, n;
	int rc;

	if (op != ATZ_OP22_REALLOC_NULL && (rc = get_release(r, t, pp, end, &p)))
		return rc;
	if ((rc = atz_get_varint(pp, end, &n)))
		return rc > 0 ? 1 : corrupt(r, "bad size varint in a realloc record");
	atz_update(t, ATZ_ROLE_SIZE, n, -1);
	ev->func = AT_REALLOC;
	ev->has_result = 1;
	ev->arg[0] = p;
	ev->arg[1] = n;
	if (op != ATZ_OP22_REALLOC_SAME)
		return get_allocation(r, t, pp, end, n, &ev->result);
	ev->result = p; /* the block just released, entry 0 of the freed ring */
	return allocated22(r, t, p, n, 0);
}

/* The 2.2 compact forms (0x00-0x7D). 0, 1 past the end, -1 corrupt. */
static int get_compact22(struct at_atz_reader *r, struct atz_thread *t, uint8_t op,
			 const uint8_t **pp, const uint8_t *end, struct at_event *ev)
{
	if (op < ATZ_OP22_QUICK_FREE)
		return get_malloc22(r, t, op, pp, end, ev);
	if (op <= ATZ_OP22_FREE_ADDR)
		return get_free22(r, t, op, pp, end, ev);
	return get_realloc22(r, t, op, pp, end, ev);
}

/* One field of a 2.2 EVENT record (FORMAT.md 5.8): its value in *x, the state updated. 0, 1
 * past the end, -1 corrupt. */
static int get_field22(struct at_atz_reader *r, struct atz_thread *t, unsigned mode,
		       enum atz_role role, const uint8_t **pp, const uint8_t *end,
		       const struct at_event *ev, uint64_t *x)
{
	int k, rc;

	if (role == ATZ_ROLE_SIZE || role == ATZ_ROLE_EXTRA || mode == ATZ_MODE_ZERO) {
		if ((rc = get_field(t, mode, role, pp, end, x, &k)))
			return rc > 0 ? 1 : -2;
		if (role == ATZ_ROLE_SIZE)
			atz_update(t, role, *x, k);
		return 0;
	}
	if (role == ATZ_ROLE_RELEASE && mode == ATZ_MODE_TABLE)
		return get_release(r, t, pp, end, x);
	if (role == ATZ_ROLE_ALLOC && mode == ATZ_MODE_TABLE)
		return get_allocation(r, t, pp, end,
				      atz_alloc_size(ev->func, ev->arg[0], ev->arg[1]), x);
	if (role == ATZ_ROLE_ALLOC && mode == ATZ_MODE_DELTA)
		return -2;
	if ((rc = get_field(t, mode, role, pp, end, x, &k)))
		return rc > 0 ? 1 : -2;
	if (*x && role == ATZ_ROLE_RELEASE)
		atz_release_addr(t, *x);
	if (*x && role == ATZ_ROLE_ALLOC)
		return allocated22(r, t, *x, atz_alloc_size(ev->func, ev->arg[0], ev->arg[1]), -1);
	return 0;
}

/* The EVENT form of a 2.2 frame. 0, 1 past the end, -1 corrupt. */
static int get_event22(struct at_atz_reader *r, const uint8_t **pp, const uint8_t *end,
		       unsigned func, struct at_event *ev)
{
	uint8_t fields;
	int got = get_field_byte(r, pp, end, func, ev, &fields);

	if (got)
		return got;
	for (unsigned f = 0; f < 3; f++) {
		uint64_t x;
		int rc = get_field22(r, r->cur, (fields >> (2 * f)) & 3, atz_field_role(func, f),
				     pp, end, ev, &x);
		if (rc == -2)
			return corrupt(r, "bad field in an event (ring index past the ring, "
				       "delta on an unused argument or a result, or varint)");
		if (rc)
			return rc;
		if (f < 2)
			ev->arg[f] = x;
		else
			ev->result = x;
	}
	return 0;
}

/* 2.x: the time and stack id after an event record, as the header's flags say. 0, 1 past the
 * end, -1 corrupt. */
static int get_event_tail(struct at_atz_reader *r, const uint8_t **pp, const uint8_t *end,
			  struct at_event *ev)
{
	uint64_t t = 0, id = 0;
	int rc, has_stack = r->tail == ATZ_TAIL_STACK;

	if ((r->tail & ATZ_TAIL_TIME) && (rc = atz_get_varint(pp, end, &t)))
		return rc > 0 ? 1 : corrupt(r, "bad time varint after an event");
	if (r->tail == (ATZ_TAIL_TIME | ATZ_TAIL_STACK)) {
		has_stack = t & 1;
		t >>= 1;
	}
	if (has_stack && (rc = atz_get_varint(pp, end, &id)))
		return rc > 0 ? 1 : corrupt(r, "bad stack id varint after an event");
	if (id > r->nstacks || (has_stack && id == 0 && r->tail != ATZ_TAIL_STACK)) {
		char why[96];
		snprintf(why, sizeof(why), "event with stack id %" PRIu64 " (%s)", id,
			 id ? "used before its stack record" : "0 written as present");
		return corrupt(r, why);
	}
	r->last_time += atz_unzigzag(t);
	ev->time_ns = r->last_time;
	ev->stack = (uint32_t)id;
	return 0;
}

/* Whether op is an event record in the current frame. */
static int is_event_kind(const struct at_atz_reader *r, uint8_t op)
{
	if ((op & 0xf0) == ATZ_OP_EVENT)
		return 1;
	return op <= (r->live_model ? ATZ_OP22_REALLOC_NULL : ATZ_OP_REALLOC_MOVE);
}

/* An event record at pos, its kind op and its tail. 1 (ev filled) or -1. */
static int get_event_record(struct at_atz_reader *r, uint8_t op, struct at_event *ev)
{
	const uint8_t *p = r->buf + r->pos + 1, *end = r->buf + r->len;
	struct atz_thread *t = r->cur;
	int rc;

	if (!t)
		return corrupt(r, "event before any thread record (or after its thread's end)");
	if (atz_thread_reserve(&r->pool, t, r->live_model, 0) < 0)
		return fail(r, AT_ATZ_ERR_NOMEM, "out of memory for the state of thread %" PRIu32,
			    t->tid);
	if (op >= ATZ_OP_EVENT && (op & 15) >= AT_FUNC_COUNT)
		return corrupt(r, "unknown function code in an event record");
	ev->pid = t->pid;
	ev->tid = t->tid;
	ev->arg[1] = 0;
	if (r->live_model)
		rc = op < ATZ_OP_EVENT ? get_compact22(r, t, op, &p, end, ev)
				       : get_event22(r, &p, end, op & 15, ev);
	else
		rc = op < ATZ_OP_EVENT ? get_compact(r, t, op, &p, end, ev)
				       : get_event(r, &p, end, op & 15, ev);
	r->other = -1;
	if (rc == 0 && r->tail) {
		r->pos = (size_t)(p - r->buf); /* a corrupt tail is reported at its offset */
		rc = get_event_tail(r, &p, end, ev);
	} else if (rc == 0) {
		ev->time_ns = 0;
		ev->stack = 0;
	}
	if (rc)
		return rc > 0 ? ran_out(r) : -1;
	r->pos = (size_t)(p - r->buf);
	r->st.events++;
	return 1;
}

/* Decodes one record at pos. 1: an event in ev; 0: another record; -1: error. */
static int get_record(struct at_atz_reader *r, struct at_event *ev)
{
	const uint8_t *start = r->buf + r->pos, *p = start + 1, *end = r->buf + r->len;
	uint8_t op = *start;
	uint64_t a, b;
	int rc;

	if (is_event_kind(r, op))
		return get_event_record(r, op, ev);
	switch (op) {
	case ATZ_OP_THREAD:
	case ATZ_OP22_THREAD:
		if ((op == ATZ_OP22_THREAD) != r->live_model)
			return corrupt(r, "unknown record kind");
		if ((rc = atz_get_varint(&p, end, &a)))
			return rc > 0 ? ran_out(r) : corrupt(r, "bad varint in a thread record");
		if (!(r->cur = entry_state(r, a, "a thread record")))
			return -1;
		break;
	case ATZ_OP_NEW_THREAD:
	case ATZ_OP22_NEW_THREAD:
		if ((op == ATZ_OP22_NEW_THREAD) != r->live_model)
			return corrupt(r, "unknown record kind");
		if ((rc = atz_get_varint(&p, end, &a)) || (rc = atz_get_varint(&p, end, &b)))
			return rc > 0 ? ran_out(r) : corrupt(r, "bad varint in a thread record");
		if (new_thread(r, a, b) < 0)
			return -1;
		break;
	case ATZ_OP22_OTHER:
		if (!r->live_model)
			return corrupt(r, "unknown record kind");
		if ((rc = atz_get_varint(&p, end, &a)))
			return rc > 0 ? ran_out(r) : corrupt(r, "bad varint in an other-table record");
		if (!entry_state(r, a, "an other-table record"))
			return -1;
		r->other = (int64_t)a;
		break;
	case ATZ_OP_TIME:
		if (!(r->tail & ATZ_TAIL_TIME))
			return corrupt(r, "unknown record kind");
		if ((rc = atz_get_varint(&p, end, &a)))
			return rc > 0 ? ran_out(r) : corrupt(r, "bad varint in a time record");
		r->last_time = a;
		break;
	case ATZ_OP_LOST:
		if ((rc = atz_get_varint(&p, end, &a)))
			return rc > 0 ? ran_out(r) : corrupt(r, "bad varint in a lost record");
		r->lost_before += a;
		r->st.lost += a;
		break;
	default:
		if (op >= ATZ_OP_SIZED_FIRST)
			return get_sized(r, op) < 0 ? -1 : 0;
		return corrupt(r, "unknown record kind");
	}
	r->pos = (size_t)(p - r->buf);
	return 0;
}

int at_atz_next(struct at_atz_reader *r, struct at_event *ev)
{
	r->lost_before = 0;
	while (!r->status) {
		if (r->len - r->pos < EVENT_RECORD_MAX && !r->frame_done) {
			if (load_block(r) < 0)
				return -1;
			continue;
		}
		if (r->pos == r->len) {
			if (r->ending)
				return ran_out(r);
			if (r->another_frame) {
				if (next_frame(r) < 0)
					return -1;
				continue;
			}
			return 0;
		}
		int rc = get_record(r, ev);
		if (rc)
			return rc;
	}
	return -1;
}

void at_atz_reader_on_process(struct at_atz_reader *r, at_atz_process_fn fn, void *arg)
{
	r->on_process = fn;
	r->on_process_arg = arg;
}

void at_atz_reader_on_stack(struct at_atz_reader *r, at_atz_stack_fn fn, void *arg)
{
	r->on_stack = fn;
	r->on_stack_arg = arg;
}

void at_atz_reader_on_rss(struct at_atz_reader *r, at_atz_rss_fn fn, void *arg)
{
	r->on_rss = fn;
	r->on_rss_arg = arg;
}

void at_atz_reader_on_names(struct at_atz_reader *r, at_atz_names_fn fn, void *arg)
{
	r->on_names = fn;
	r->on_names_arg = arg;
}

void at_atz_reader_test_kinds(struct at_atz_reader *r)
{
	r->test_kinds = 1;
	r->kinds_minor = 255;
}

void at_atz_reader_on_mapping(struct at_atz_reader *r, at_atz_mapping_fn fn, void *arg)
{
	r->on_mapping = fn;
	r->on_mapping_arg = arg;
}

uint64_t at_atz_lost_before(const struct at_atz_reader *r)
{
	return r->lost_before;
}

const struct at_atz_header *at_atz_reader_header(const struct at_atz_reader *r)
{
	return r->have_header ? &r->hdr : NULL;
}

enum at_atz_status at_atz_reader_status(const struct at_atz_reader *r)
{
	return r->status;
}

const char *at_atz_reader_message(const struct at_atz_reader *r)
{
	return r->status ? r->msg : NULL;
}

void at_atz_reader_stats(const struct at_atz_reader *r, struct at_atz_stats *st)
{
	*st = r->st;
	st->content_bytes = r->buf_off + r->pos;
}

void at_atz_reader_close(struct at_atz_reader *r)
{
	if (r)
		free_reader(r);
}
