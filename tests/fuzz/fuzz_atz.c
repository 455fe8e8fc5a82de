/* fuzz_atz.c: the .atz reader (lib/atz_read.c), through lib/source as the tools use it.
 *
 * The first input byte chooses what the rest is:
 *   bit 0 clear  a whole file, fed as it is (exercises the lz4 frame walk: headers, block
 *                sizes, checksums, truncation);
 *   bit 0 set    the decompressed content (stream header and records), which the harness
 *                wraps in a valid lz4 frame of many small blocks, so mutations reach the record
 *                decoder instead of failing a checksum. Bit 1 adds block checksums, bit 2 a
 *                content checksum; bits 7-3 give the content bytes per block (0: 64 KiB, else
 *                7 times the value), so records span blocks.
 * Every event decoded is written again with the atz writer, as 2.0 and as 2.2 (whatever the
 * input's version), and read back: the same events with their times and stack ids (numbered on across frames),
 * the same stack and mapping records before the same events, lost counts and munged flag
 * (FORMAT.md: lossless, whatever the values). */
#include <lz4frame.h>

#include "atz.h"
#include "output.h"
#include "display.h"
#include "fuzz_input.h"
#include "source.h"

/* Events kept for the round trip (a small input can decompress to many events). */
#define ROUND_TRIP_MAX 100000

/* A stack or mapping record and the number of events decoded before it. */
struct record {
	size_t before;
	int is_stack;
	struct at_stack stack;
	struct at_mapping map;
	char path[AT_ATZ_NAME_MAX + 1];
};

struct decoded {
	struct record *rec;
	size_t nrec, rec_cap;
	uint32_t stacks, offset;   /* stack records kept; output id - input id in this frame */
	struct at_event *ev;
	uint64_t *lost;            /* lost before each event */
	size_t n, cap;
	uint64_t lost_after;       /* after the last event */
	unsigned flags;
	int have_header;
	int binary;
};

static void push(struct decoded *d, const struct at_event *ev, uint64_t lost)
{
	if (d->n == ROUND_TRIP_MAX)
		return;
	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 64;
		d->ev = realloc(d->ev, d->cap * sizeof(*d->ev));
		d->lost = realloc(d->lost, d->cap * sizeof(*d->lost));
		FUZZ_CHECK(d->ev && d->lost);
	}
	d->ev[d->n] = *ev;
	d->lost[d->n++] = lost;
}

static struct record *new_record(struct decoded *d)
{
	if (d->nrec == d->rec_cap) {
		d->rec_cap = d->rec_cap ? d->rec_cap * 2 : 16;
		d->rec = realloc(d->rec, d->rec_cap * sizeof(*d->rec));
		FUZZ_CHECK(d->rec != NULL);
	}
	struct record *r = &d->rec[d->nrec++];
	memset(r, 0, sizeof(*r));
	r->before = d->n;
	return r;
}

static void keep_stack(void *arg, const struct at_stack *st)
{
	struct decoded *d = arg;
	FUZZ_CHECK(st->count >= 1 && st->count <= AT_STACK_MAX_FRAMES && st->id >= 1);
	if (d->n == ROUND_TRIP_MAX)
		return;
	if (st->id == 1)
		d->offset = d->stacks; /* a new frame: ids start over */
	FUZZ_CHECK(st->id + d->offset == d->stacks + 1);
	struct record *r = new_record(d);
	r->is_stack = 1;
	r->stack = *st;
	r->stack.id = ++d->stacks;
}

static void keep_mapping(void *arg, const struct at_mapping *m)
{
	struct decoded *d = arg;
	FUZZ_CHECK(m->end >= m->start && m->build_id_len <= AT_BUILD_ID_MAX);
	FUZZ_CHECK(strlen(m->path) <= AT_ATZ_NAME_MAX);
	if (d->n == ROUND_TRIP_MAX)
		return;
	struct record *r = new_record(d);
	r->map = *m;
	strcpy(r->path, m->path);
	r->map.path = NULL; /* r->path, once the array stops moving */
}

/* Reads fd through at_source into *d. */
static void decode(int fd, struct decoded *d)
{
	struct at_source s;
	struct at_event ev;

	memset(d, 0, sizeof(*d));
	if (at_source_open_fd(&s, fd, "<fuzz>") < 0) {
		at_source_close(&s);
		return;
	}
	d->binary = s.kind == AT_SOURCE_BINARY;
	if (!d->binary) {
		at_source_close(&s);
		return;
	}
	const struct at_atz_header *h = at_atz_reader_header(s.atz);
	if (h) {
		d->have_header = 1;
		d->flags = h->flags;
		FUZZ_CHECK((h->major == 1 || h->major == AT_ATZ_VERSION_MAJOR) &&
			   strlen(h->host) <= AT_ATZ_HOST_MAX);
	}
	at_source_on_stack(&s, keep_stack, d);
	at_source_on_mapping(&s, keep_mapping, d);
	int rc;
	while ((rc = at_source_next(&s, &ev)) > 0) {
		FUZZ_CHECK(h != NULL);
		FUZZ_CHECK(ev.func < AT_FUNC_COUNT);
		if (ev.stack)
			ev.stack += d->offset; /* the id in the one-frame round trip */
		FUZZ_CHECK(ev.stack <= d->stacks || d->n == ROUND_TRIP_MAX);
		push(d, &ev, at_atz_lost_before(s.atz));
	}
	d->lost_after = at_atz_lost_before(s.atz);
	enum at_atz_status st = at_atz_reader_status(s.atz);
	const char *msg = at_atz_reader_message(s.atz);
	FUZZ_CHECK(rc == 0 ? st == AT_ATZ_OK && !msg : st != AT_ATZ_OK && msg && strlen(msg) > 0);
	FUZZ_CHECK(at_source_next(&s, &ev) == rc); /* the end, or the error, stays */
	struct at_atz_stats stats;
	at_atz_reader_stats(s.atz, &stats);
	FUZZ_CHECK(stats.events >= d->n);
	at_source_close(&s);
}

static int same_event(const struct at_event *a, const struct at_event *b)
{
	return a->pid == b->pid && a->tid == b->tid && a->func == b->func &&
	       a->has_result == b->has_result && a->arg[0] == b->arg[0] &&
	       a->arg[1] == b->arg[1] && a->result == b->result && a->time_ns == b->time_ns &&
	       a->stack == b->stack;
}

/* Writes d's events with the atz writer as 2.minor and decodes them again. */
static void round_trip(const struct decoded *d, unsigned minor)
{
	/* times and stacks whatever the input's frames said */
	struct at_atz_options opt = { .flags = d->flags & AT_ATZ_FLAG_MUNGED, .host = "fuzz",
				      .start_ns = 1, .minor = minor };
	size_t k = 0;
	int fd = fuzz_memfd(NULL, 0);
	struct at_output out;
	FUZZ_CHECK(at_output_open_fd(&out, fd, "<fuzz>") == 0);
	struct at_atz_writer *w = at_atz_writer_open(&out, &opt);

	FUZZ_CHECK(w != NULL);
	for (size_t i = 0; i <= d->n; i++) {
		for (; k < d->nrec && d->rec[k].before == i; k++) {
			struct at_mapping m = d->rec[k].map;
			m.path = d->rec[k].path; /* the array may have moved since */
			FUZZ_CHECK((d->rec[k].is_stack ? at_atz_append_stack(w, &d->rec[k].stack)
						       : at_atz_append_mapping(w, &m)) == 0);
		}
		if (i == d->n)
			break;
		if (d->lost[i])
			FUZZ_CHECK(at_atz_append_lost(w, d->lost[i]) == 0);
		FUZZ_CHECK(at_atz_append(w, &d->ev[i]) == 0);
	}
	if (d->lost_after && d->n < ROUND_TRIP_MAX)
		FUZZ_CHECK(at_atz_append_lost(w, d->lost_after) == 0);
	FUZZ_CHECK(at_atz_writer_close(w) == 0);
	FUZZ_CHECK(at_output_close(&out) == 0);
	FUZZ_CHECK(lseek(fd, 0, SEEK_SET) == 0);
	struct decoded back;
	decode(fd, &back);
	close(fd);
	FUZZ_CHECK(back.binary && back.have_header &&
		   back.flags == (d->flags & AT_ATZ_FLAG_MUNGED));
	FUZZ_CHECK(back.n == d->n);
	FUZZ_CHECK(back.nrec == d->nrec);
	for (size_t i = 0; i < d->nrec; i++) {
		const struct record *a = &back.rec[i], *b = &d->rec[i];
		FUZZ_CHECK(a->before == b->before && a->is_stack == b->is_stack);
		if (a->is_stack)
			FUZZ_CHECK(memcmp(&a->stack, &b->stack, offsetof(struct at_stack, pcs) +
					  a->stack.count * sizeof(a->stack.pcs[0])) == 0);
		else
			FUZZ_CHECK(a->map.pid == b->map.pid && a->map.start == b->map.start &&
				   a->map.end == b->map.end && a->map.offset == b->map.offset &&
				   a->map.build_id_len == b->map.build_id_len &&
				   memcmp(a->map.build_id, b->map.build_id, a->map.build_id_len) == 0 &&
				   strcmp(a->path, b->path) == 0);
	}
	for (size_t i = 0; i < d->n; i++) {
		FUZZ_CHECK(same_event(&back.ev[i], &d->ev[i]));
		FUZZ_CHECK(back.lost[i] == d->lost[i]);
	}
	if (d->n < ROUND_TRIP_MAX)
		FUZZ_CHECK(back.lost_after == d->lost_after);
	free(back.ev);
	free(back.lost);
	free(back.rec);
}

/* Wraps content in an lz4 frame as the mode byte says; returns it malloc'ed, *n its length. */
static uint8_t *frame(uint8_t mode, const uint8_t *content, size_t size, size_t *n)
{
	LZ4F_preferences_t prefs;
	LZ4F_cctx *cctx;
	size_t chunk = (mode >> 3) ? (size_t)(mode >> 3) * 7 : 64u << 10;

	memset(&prefs, 0, sizeof(prefs));
	prefs.frameInfo.blockSizeID = LZ4F_max64KB;
	prefs.frameInfo.blockMode = LZ4F_blockLinked;
	prefs.frameInfo.blockChecksumFlag = (mode & 2) ? LZ4F_blockChecksumEnabled
						       : LZ4F_noBlockChecksum;
	prefs.frameInfo.contentChecksumFlag = (mode & 4) ? LZ4F_contentChecksumEnabled
							 : LZ4F_noContentChecksum;
	prefs.autoFlush = 1;
	size_t chunks = size / chunk + 1;
	size_t cap = LZ4F_HEADER_SIZE_MAX + chunks * LZ4F_compressBound(chunk, &prefs) +
		     LZ4F_compressBound(0, &prefs);
	uint8_t *out = malloc(cap);
	FUZZ_CHECK(out != NULL);
	FUZZ_CHECK(!LZ4F_isError(LZ4F_createCompressionContext(&cctx, LZ4F_VERSION)));
	size_t len = LZ4F_compressBegin(cctx, out, cap, &prefs);
	FUZZ_CHECK(!LZ4F_isError(len));
	for (size_t off = 0; off < size; off += chunk) {
		size_t k = size - off < chunk ? size - off : chunk;
		size_t rc = LZ4F_compressUpdate(cctx, out + len, cap - len, content + off, k, NULL);
		FUZZ_CHECK(!LZ4F_isError(rc));
		len += rc;
	}
	size_t rc = LZ4F_compressEnd(cctx, out + len, cap - len, NULL);
	FUZZ_CHECK(!LZ4F_isError(rc));
	len += rc;
	LZ4F_freeCompressionContext(cctx);
	*n = len;
	return out;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	at_display_level = 0;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	uint8_t mode = data[0];
	uint8_t *framed = NULL;
	size_t n = size - 1;
	const uint8_t *file = data + 1;

	if (mode & 1) {
		framed = frame(mode, data + 1, size - 1, &n);
		file = framed;
	}
	int fd = fuzz_memfd(file, n);
	struct decoded d;
	decode(fd, &d);
	close(fd);
	if (mode & 1)
		FUZZ_CHECK(d.binary);
	if (d.have_header) {
		round_trip(&d, 0);
		round_trip(&d, AT_ATZ_V2_MINOR);
	}
	free(d.ev);
	free(d.lost);
	free(d.rec);
	free(framed);
	return 0;
}
