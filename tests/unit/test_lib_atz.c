/* test_lib_atz.c: unit tests of lib/atz.c and lib/atz_read.c (the binary trace format).
 *
 * Exact content bytes for each record kind, lossless round trips of odd events, predictor hits
 * and misses, many threads, versioning, frames one after another (a trace appended to), and
 * fuzz loops (truncation at every offset, every bit flipped, random frames and random content
 * inside valid frames). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>
#include <lz4frame.h>

#include "atz.h"
#include "atz_model.h"
#include "output.h"

#define MAX_FILE (1u << 20)

/* An in-memory file: bytes written by a writer, read back through a memfd. */
struct file {
	uint8_t *p;
	size_t n;
};

/* The stack a test trace gives id: 1 to 5 frames, its own values. */
static void test_stack(uint32_t id, uint32_t pid, struct at_stack *s)
{
	memset(s, 0, sizeof(*s));
	s->id = id;
	s->pid = pid;
	s->count = (uint16_t)(1 + id % 5);
	s->flags = (uint16_t)(id % 3);
	for (unsigned i = 0; i < s->count; i++)
		s->pcs[i] = 0x7f0000000000ull + 0x1000 * id - 0x10 * i * i;
}

/* Writes the events as a trace of version major.minor; in 2.x the stacks they refer to
 * (test_stack) come before the first event that needs each. */
static struct file write_events_vm(const struct at_event *ev, size_t n, size_t flush_every,
				   unsigned flags, unsigned major, unsigned minor)
{
	uint32_t stacks = 0;
	struct at_atz_options opt = { .flags = flags, .host = "testhost", .start_ns = 42,
				      .major = major, .minor = minor };
	int fd = memfd_create("atz", 0);
	struct file f;

	assert_true(fd >= 0);
	struct at_output o;
	assert_int_equal(at_output_open_fd(&o, fd, "mem"), 0);
	struct at_atz_writer *w = at_atz_writer_open(&o, &opt);
	assert_non_null(w);
	for (size_t i = 0; i < n; i++) {
		while (major == 2 && ev[i].stack > stacks) {
			struct at_stack st;
			test_stack(++stacks, ev[i].pid, &st);
			assert_int_equal(at_atz_append_stack(w, &st), 0);
		}
		assert_int_equal(at_atz_append(w, &ev[i]), 0);
		if (flush_every && (i + 1) % flush_every == 0)
			assert_int_equal(at_atz_flush(w), 0);
	}
	assert_int_equal(at_atz_writer_close(w), 0);
	assert_int_equal(at_output_close(&o), 0);
	f.n = (size_t)lseek(fd, 0, SEEK_END);
	f.p = malloc(f.n);
	assert_int_equal(pread(fd, f.p, f.n, 0), (ssize_t)f.n);
	close(fd);
	return f;
}

/* Writes the events as a trace of version major.0 (1: 1.0, 2: 2.0). */
static struct file write_events_v(const struct at_event *ev, size_t n, size_t flush_every,
				  unsigned flags, unsigned major)
{
	return write_events_vm(ev, n, flush_every, flags, major, 0);
}

/* The tests of the 1.x records write 1.0 traces: a 1.x trace must stay readable. */
static struct file write_events(const struct at_event *ev, size_t n, size_t flush_every,
				unsigned flags)
{
	return write_events_v(ev, n, flush_every, flags, 1);
}

/* Decodes everything; returns events decoded, *rc the final at_atz_next result. */
static size_t decode_all(const uint8_t *p, size_t n, struct at_event *out, size_t max, int *rc,
			 enum at_atz_status *status)
{
	int fd = memfd_create("atz", 0);
	assert_true(fd >= 0);
	if (n)
		assert_int_equal(write(fd, p, n), (ssize_t)n);
	lseek(fd, 0, SEEK_SET);
	struct at_atz_reader *r = at_atz_reader_open(fd, "mem", NULL, 0);
	assert_non_null(r);
	struct at_event ev;
	size_t k = 0;
	while ((*rc = at_atz_next(r, &ev)) > 0) {
		if (out && k < max)
			out[k] = ev;
		k++;
	}
	*status = at_atz_reader_status(r);
	if (*rc < 0)
		assert_non_null(at_atz_reader_message(r));
	else
		assert_int_equal(*status, AT_ATZ_OK);
	/* once stopped, it stays stopped */
	assert_int_equal(at_atz_next(r, &ev), *rc);
	at_atz_reader_close(r);
	close(fd);
	return k;
}

static void assert_event_equal(const struct at_event *a, const struct at_event *b)
{
	assert_int_equal(a->pid, b->pid);
	assert_int_equal(a->tid, b->tid);
	assert_int_equal(a->func, b->func);
	assert_int_equal(a->has_result, b->has_result);
	assert_int_equal(a->arg[0], b->arg[0]);
	assert_int_equal(a->arg[1], b->arg[1]);
	assert_int_equal(a->result, b->result);
}

/* 1.0, 2.0 and 2.2 give every event back; 2.x its time and stack too, 1.0 zeros there. */
static void roundtrip(const struct at_event *ev, size_t n, size_t flush_every)
{
	for (unsigned v = 0; v < 3; v++) {
		unsigned major = v ? 2 : 1;
		struct file f = write_events_vm(ev, n, flush_every, 0, major, v == 2 ? 2 : 0);
		struct at_event *out = calloc(n + 1, sizeof(*out));
		int rc;
		enum at_atz_status st;

		assert_int_equal(decode_all(f.p, f.n, out, n + 1, &rc, &st), n);
		assert_int_equal(rc, 0);
		for (size_t i = 0; i < n; i++) {
			assert_event_equal(&out[i], &ev[i]);
			assert_int_equal(out[i].time_ns, major == 2 ? ev[i].time_ns : 0);
			assert_int_equal(out[i].stack, major == 2 ? ev[i].stack : 0);
		}
		free(out);
		free(f.p);
	}
}

/* The decompressed content of a file (the whole lz4 frame must be valid). */
static size_t content_of(const struct file *f, uint8_t *out, size_t cap)
{
	LZ4F_dctx *d;
	size_t in = f->n, outn = cap;

	assert_false(LZ4F_isError(LZ4F_createDecompressionContext(&d, LZ4F_VERSION)));
	size_t rc = LZ4F_decompress(d, out, &outn, f->p, &in, NULL);
	assert_false(LZ4F_isError(rc));
	assert_int_equal(rc, 0); /* frame complete */
	assert_int_equal(in, f->n);
	LZ4F_freeDecompressionContext(d);
	return outn;
}

/* A valid frame around arbitrary content. */
static struct file frame_of(const uint8_t *content, size_t n)
{
	LZ4F_preferences_t prefs = { 0 };
	struct file f;

	prefs.frameInfo.blockChecksumFlag = LZ4F_blockChecksumEnabled;
	f.p = malloc(LZ4F_compressFrameBound(n, &prefs));
	f.n = LZ4F_compressFrame(f.p, LZ4F_compressFrameBound(n, &prefs), content, n, &prefs);
	assert_false(LZ4F_isError(f.n));
	return f;
}

/* The header a writer emits with host "testhost", start 42, flags 0 (FORMAT.md 3). */
static const uint8_t header_v1[] = { 'A', 'T', 'Z', 0, 1, 0, 0, 42, 8,
				     't', 'e', 's', 't', 'h', 'o', 's', 't', 0 };

static void test_header_and_compact_records(void **state)
{
	(void)state;
	const struct at_event ev[] = {
		{ 7, 9, AT_MALLOC, 1, { 32, 0 }, 0x1000, 0, 0 },  /* new thread, MALLOC_NEW */
		{ 7, 9, AT_FREE, 0, { 0x1000, 0 }, 0, 0, 0 },     /* QUICK_FREE 0 */
		{ 7, 9, AT_MALLOC, 1, { 32, 0 }, 0x1000, 0, 0 },  /* QUICK_MALLOC s0 a0 */
		{ 7, 9, AT_MALLOC, 1, { 32, 0 }, 0x1040, 0, 0 },  /* MALLOC_SIZE s0, adelta +0x40 */
		{ 7, 9, AT_FREE, 0, { 0x1000, 0 }, 0, 0, 0 },     /* QUICK_FREE 1 */
		{ 7, 9, AT_MALLOC, 1, { 48, 0 }, 0x1000, 0, 0 },  /* MALLOC_ADDR a0, size 48 */
		{ 7, 9, AT_FREE, 0, { 0, 0 }, 0, 0, 0 },          /* FREE_NULL */
		{ 7, 9, AT_FREE, 0, { 0x5003, 0 }, 0, 0, 0 },     /* FREE_DELTA, unaligned */
		{ 8, 10, AT_JEMALLOC_STATS, 0, { 0, 0 }, 0, 0, 0 }, /* new thread, EVENT */
		{ 7, 9, AT_FREE, 0, { 0x1040, 0 }, 0, 0, 0 },     /* THREAD 0, QUICK_FREE 1 */
	};
	static const uint8_t want[] = {
		0x91, 7, 9, 0x70, 32, 0x80, 0x08,
		0x40,
		0x00,
		0x60, 0x10,                /* adelta(+0x40) = zigzag(4) << 1 */
		0x41,
		0x68, 48,
		0x71,
		0x72, 0x8d, 0x80, 0x04, /* adelta(0x5003-0x1000) = zz(0x4003) << 1 | 1 = 0x1000d */
		0x91, 8, 10, 0x88, 0x00,
		0x90, 0,
		0x41,
	};
	struct file f = write_events(ev, sizeof(ev) / sizeof(ev[0]), 0, 0);
	uint8_t c[4096];
	size_t n = content_of(&f, c, sizeof(c));

	assert_int_equal(n, sizeof(header_v1) + sizeof(want));
	assert_memory_equal(c, header_v1, sizeof(header_v1));
	assert_memory_equal(c + sizeof(header_v1), want, sizeof(want));
	roundtrip(ev, sizeof(ev) / sizeof(ev[0]), 0);
	free(f.p);
}

static void test_general_records(void **state)
{
	(void)state;
	const struct at_event ev[] = {
		{ 1, 1, AT_CALLOC, 1, { 1, 148 }, 0x2000, 0, 0 },
		{ 1, 1, AT_REALLOC, 1, { 0x2000, 300 }, 0x2000, 0, 0 },
		{ 1, 1, AT_POSIX_MEMALIGN, 1, { 256, 240 }, 0, 0, 0 },
		{ 1, 1, AT_MALLOC, 0, { 5, 0 }, 0, 0, 0 },            /* malloc without a result */
		{ 1, 1, AT_MALLOC, 1, { 5, 7 }, 0x30, 0, 0 },          /* an argument malloc lacks */
		{ 1, 1, AT_REALLOC, 1, { 0x30, 64 }, 0x4000, 0, 0 },   /* REALLOC_MOVE */
		{ 1, 1, AT_REALLOC, 1, { 0, 16 }, 0x4100, 0, 0 },      /* REALLOC_NULL */
		{ 1, 1, AT_REALLOC, 1, { 0x4100, 0 }, 0, 0, 0 },       /* fails: general form */
	};
	static const uint8_t want[] = {
		0x91, 1, 1,
		/* calloc: 1 and 148 literal (their deltas are no shorter), 0x2000 literal (adelta
		 * 0x800 is as long) */
		0x81, 0x40 | 3 | 3 << 2 | 3 << 4, 1, 0x94, 0x01, 0x80, 0x40,
		/* realloc in place: REALLOC_SAME, allocation-ring index 0, size 300 */
		0x75, 0, 0xac, 0x02,
		/* posix_memalign(256,240)=0: deltas zigzag(256-300)=87 and zigzag(240-256)=31 */
		0x85, 0x40 | 2 | 2 << 2, 87, 31,
		/* malloc(5), no result: 5 literal */
		0x80, 3, 5,
		/* malloc(5,7)=0x30: size-ring hit 0, the extra argument literal, 0x30 literal */
		0x80, 0x40 | 1 | 3 << 2 | 3 << 4, 0, 7, 0x30,
		/* REALLOC_MOVE allocs[0] = 0x30, size 64,
		 * adelta(0x4000 - 0x30) = zz(0x3fd) << 1 = 0xff4 */
		0x77, 0, 64, 0xf4, 0x1f,
		/* REALLOC_NULL size 16, adelta(0x100) = zz(0x10) << 1 = 0x40 */
		0x76, 16, 0x40,
		/* realloc(0x4100,0)=0: RING 0 of allocs, size ZERO, result ZERO */
		0x82, 0x40 | 1, 0,
	};
	struct file f = write_events(ev, sizeof(ev) / sizeof(ev[0]), 0, 0);
	uint8_t c[4096];
	size_t n = content_of(&f, c, sizeof(c));

	assert_int_equal(n, sizeof(header_v1) + sizeof(want));
	assert_memory_equal(c + sizeof(header_v1), want, sizeof(want));
	roundtrip(ev, sizeof(ev) / sizeof(ev[0]), 0);
	free(f.p);
}

/* Release-ring hits at depth 8 and more: MALLOC_DEEP1 and MALLOC_DEEP2. */
static void test_deep_release_hits(void **state)
{
	(void)state;
	struct at_event ev[22];
	size_t n = 0;

	for (unsigned i = 0; i < 10; i++) /* A_i = 0x1000 + 0x20 i */
		ev[n++] = (struct at_event){ 1, 1, AT_MALLOC, 1, { 16, 0 }, 0x1000 + 0x20 * i, 0, 0 };
	for (unsigned i = 10; i-- > 0;)
		ev[n++] = (struct at_event){ 1, 1, AT_FREE, 0, { 0x1000 + 0x20 * i, 0 }, 0, 0, 0 };
	/* releases is now A0 (entry 0) ... A9 (entry 9) */
	ev[n++] = (struct at_event){ 1, 1, AT_MALLOC, 1, { 16, 0 }, 0x1000 + 0x20 * 9, 0, 0 };
	ev[n++] = (struct at_event){ 1, 1, AT_MALLOC, 1, { 777, 0 }, 0x1000 + 0x20 * 8, 0, 0 };
	uint8_t want[64];
	size_t w = 0;
	memcpy(want, "\x91\x01\x01\x70\x10\x80\x08", 7); /* first malloc: MALLOC_NEW */
	w = 7;
	for (unsigned i = 1; i < 10; i++) { /* size hit, adelta(0x20) = zigzag(2) << 1 = 8 */
		want[w++] = 0x60;
		want[w++] = 0x08;
	}
	for (unsigned i = 0; i < 10; i++) /* each free takes allocs[0] */
		want[w++] = 0x40;
	memcpy(want + w, "\x73\x48" "\x74\x89\x06\x08", 6); /* s0 | 9 << 3; 777, k 8 */
	w += 6;
	struct file f = write_events(ev, n, 0, 0);
	uint8_t c[4096];
	size_t cn = content_of(&f, c, sizeof(c));

	assert_int_equal(cn, sizeof(header_v1) + w);
	assert_memory_equal(c + sizeof(header_v1), want, w);
	roundtrip(ev, n, 0);
	free(f.p);
}

/* Exact bytes of the lost-event and table records. */
static void test_table_record_bytes(void **state)
{
	(void)state;
	int fd = memfd_create("atz", 0);
	struct at_atz_options opt = { .host = "testhost", .start_ns = 42, .major = 1 };
	struct at_output o;
	assert_int_equal(at_output_open_fd(&o, fd, "mem"), 0);
	struct at_atz_writer *w = at_atz_writer_open(&o, &opt);

	assert_int_equal(at_atz_append_process(w, 3, "py"), 0);
	assert_int_equal(at_atz_append_object(w, 3, 0x7f00, 0x8f00, 0x1000, "/l"), 0);
	assert_int_equal(at_atz_append_lost(w, 17), 0);
	assert_int_equal(at_atz_append_lost(w, 0), 0); /* nothing written */
	assert_int_equal(at_atz_writer_close(w), 0);
	at_output_close(&o);
	struct file f;
	f.n = (size_t)lseek(fd, 0, SEEK_END);
	f.p = malloc(f.n);
	assert_int_equal(pread(fd, f.p, f.n, 0), (ssize_t)f.n);
	close(fd);
	static const uint8_t want[] = {
		0xc0, 3, 3, 'p', 'y',
		0xc1, 11, 3, 0x80, 0xfe, 0x01, 0x80, 0x9e, 0x02, 0x80, 0x20, '/', 'l',
		0x92, 17,
	};
	uint8_t c[256];
	size_t cn = content_of(&f, c, sizeof(c));
	assert_int_equal(cn, sizeof(header_v1) + sizeof(want));
	assert_memory_equal(c + sizeof(header_v1), want, sizeof(want));
	free(f.p);
}

/* A file name longer than the message buffer cuts the message, nothing more. */
static void test_long_name_message(void **state)
{
	(void)state;
	char name[2000];
	int fd = memfd_create("atz", 0);

	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	assert_int_equal(write(fd, "\x04\x22\x4d\x18\x40", 5), 5);
	lseek(fd, 0, SEEK_SET);
	struct at_atz_reader *r = at_atz_reader_open(fd, name, NULL, 0);
	struct at_event e;
	assert_int_equal(at_atz_next(r, &e), -1);
	assert_int_equal(at_atz_reader_status(r), AT_ATZ_ERR_TRUNCATED);
	const char *m = at_atz_reader_message(r);
	assert_true(strlen(m) > 100 && strlen(m) < 400 && strncmp(m, "nnnn", 4) == 0);
	at_atz_reader_close(r);
	close(fd);
}

static void test_extremes_roundtrip(void **state)
{
	(void)state;
	const uint64_t M = UINT64_MAX;
	const struct at_event ev[] = {
		{ UINT32_MAX, UINT32_MAX, AT_MALLOC, 1, { M, 0 }, M, 0, 0 },
		{ UINT32_MAX, UINT32_MAX, AT_FREE, 0, { M, 0 }, 0, 0, 0 },
		{ 0, 0, AT_MALLOC, 1, { 0, 0 }, 1, 0, 0 },
		{ 0, 0, AT_MALLOC, 1, { 0, 0 }, M - 14, 0, 0 },      /* unaligned huge delta */
		{ 0, 0, AT_FREE, 0, { 1, 0 }, 0, 0, 0 },
		{ 0, 0, AT_FREE, 1, { 3, M }, M, 0, 0 },             /* fields free never has */
		{ 0, 0, AT_JEMALLOC_STATS, 1, { M, M }, M, 0, 0 },
		{ 0, UINT32_MAX, AT_VALLOC, 0, { 4096, 0 }, 0, 0, 0 },
		{ 0, UINT32_MAX, AT_MEMALIGN, 1, { 1ull << 63, 9 }, 1ull << 63, 0, 0 },
		{ 0, UINT32_MAX, AT_ALIGNED_ALLOC, 1, { 64, M }, 0x8000000000000001ull, 0, 0 },
		{ 0, UINT32_MAX, AT_REALLOC, 1, { 0, 0 }, 0, 0, 0 },
		{ 0, UINT32_MAX, AT_REALLOC, 1, { 0x8000000000000001ull, 1 }, 0x10, 0, 0 },
	};
	roundtrip(ev, sizeof(ev) / sizeof(ev[0]), 0);
	roundtrip(ev, sizeof(ev) / sizeof(ev[0]), 1);
}

static void test_bad_events_refused(void **state)
{
	(void)state;
	int fd = memfd_create("atz", 0);
	struct at_output o;
	assert_int_equal(at_output_open_fd(&o, fd, "mem"), 0);
	struct at_atz_writer *w = at_atz_writer_open(&o, NULL);
	struct at_event bad = { 1, 1, AT_FUNC_COUNT, 1, { 0, 0 }, 0, 0, 0 };

	assert_non_null(w);
	assert_int_equal(at_atz_append(w, &bad), -1);
	assert_int_equal(errno, EINVAL);
	bad.func = AT_MALLOC;
	bad.has_result = 2;
	assert_int_equal(at_atz_append(w, &bad), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(at_atz_writer_close(w), 0);
	at_output_close(&o);
	close(fd);
}

static void test_write_error_reported(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	close(p[0]);
	signal(SIGPIPE, SIG_IGN);
	struct at_output o;
	assert_int_equal(at_output_open_fd(&o, p[1], "pipe"), 0);
	assert_null(at_atz_writer_open(&o, NULL));
	assert_int_equal(errno, EPIPE);
	at_output_close(&o);
	close(p[1]);
}

/* Ring predictors: frees hit the allocation ring at depth k (quick form below 32, general
 * ring form up to 63, delta when absent); mallocs hit the release ring. */
static void test_predictor_depths(void **state)
{
	(void)state;
	enum { N = 100 };
	struct at_event ev[2 * N + 20];
	size_t n = 0;

	for (unsigned i = 0; i < N; i++)
		ev[n++] = (struct at_event){ 5, 5, AT_MALLOC, 1, { 16 + i % 3, 0 },
					     0x10000 + 32 * i, 0, 0 };
	/* free the allocations at depth 0, 31, 32, 63 and 64 of the ring, then reuse them */
	const unsigned freed[] = { 99, 67, 65, 36, 35 }; /* A_i = 0x10000 + 32 i */
	for (unsigned j = 0; j < 5; j++)
		ev[n++] = (struct at_event){ 5, 5, AT_FREE, 0, { 0x10000 + 32 * freed[j], 0 }, 0, 0, 0 };
	for (unsigned j = 0; j < 5; j++)
		ev[n++] = (struct at_event){ 5, 5, AT_MALLOC, 1, { 16, 0 },
					     0x10000 + 32 * freed[j], 0, 0 };
	struct file f = write_events(ev, n, 0, 0);
	uint8_t c[8192];
	size_t cn = content_of(&f, c, sizeof(c));
	/* The last 15 content bytes are the 5 frees and 5 mallocs. Allocation ring: A99..A36.
	 * free A99: quick k0; A67: quick k31; A65: k32, general form with a ring byte; A36:
	 * the oldest entry, k60 of 61; A35: not in the ring, FREE_DELTA adelta(-32) = 6.
	 * Release ring then A35,A36,A65,A67,A99; size 16 is size-ring entry 0; each malloc takes
	 * the oldest release: quick mallocs with release index 4,3,2,1,0. */
	static const uint8_t tail[15] = { 0x40, 0x5f, 0x83, 0x01, 32, 0x83, 0x01, 60, 0x72, 6,
					  0x04, 0x03, 0x02, 0x01, 0x00 };
	assert_memory_equal(c + cn - 15, tail, 15);
	roundtrip(ev, n, 0);
	roundtrip(ev, n, 7);
	free(f.p);
}

static void test_many_threads(void **state)
{
	(void)state;
	enum { THREADS = 3000, ROUNDS = 6 };
	struct at_event *ev = calloc(THREADS * ROUNDS * 2, sizeof(*ev));
	size_t n = 0;

	for (unsigned r = 0; r < ROUNDS; r++)
		for (unsigned t = 0; t < THREADS; t++) {
			uint64_t base = (uint64_t)t << 24;
			ev[n++] = (struct at_event){ 100 + t / 7, 100000 + t, AT_MALLOC, 1,
						     { 24 + r, 0 }, base + 48 * r, 0, 0 };
			if (r & 1)
				ev[n++] = (struct at_event){ 100 + t / 7, 100000 + t, AT_FREE, 0,
							     { base + 48 * (r - 1), 0 }, 0, 0, 0 };
		}
	roundtrip(ev, n, 0);
	struct file f = write_events(ev, n, 1000, 0);
	int fd = memfd_create("atz", 0);
	assert_int_equal(write(fd, f.p, f.n), (ssize_t)f.n);
	lseek(fd, 0, SEEK_SET);
	struct at_atz_reader *r = at_atz_reader_open(fd, "mem", NULL, 0);
	struct at_event e;
	while (at_atz_next(r, &e) > 0)
		;
	struct at_atz_stats st;
	at_atz_reader_stats(r, &st);
	assert_int_equal(st.threads, THREADS);
	assert_int_equal(st.events, n);
	at_atz_reader_close(r);
	close(fd);
	free(f.p);
	free(ev);
}

static void test_lost_and_tables(void **state)
{
	(void)state;
	int fd = memfd_create("atz", 0);
	struct at_atz_options opt = { .flags = AT_ATZ_FLAG_MUNGED, .host = "h", .start_ns = 5,
				      .major = 1 };
	struct at_output o;
	assert_int_equal(at_output_open_fd(&o, fd, "mem"), 0);
	struct at_atz_writer *w = at_atz_writer_open(&o, &opt);
	struct at_event e1 = { 3, 4, AT_MALLOC, 1, { 8, 0 }, 1, 0, 0 };
	struct at_event e2 = { 3, 4, AT_FREE, 0, { 1, 0 }, 0, 0, 0 };

	assert_int_equal(at_atz_append_process(w, 3, "python3"), 0);
	assert_int_equal(at_atz_append_object(w, 3, 0x7f00, 0x8f00, 0x1000, "/lib/libc.so.6"),
			 0);
	assert_int_equal(at_atz_append(w, &e1), 0);
	assert_int_equal(at_atz_append_lost(w, 17), 0);
	assert_int_equal(at_atz_append_lost(w, 3), 0);
	assert_int_equal(at_atz_append(w, &e2), 0);
	assert_int_equal(at_atz_writer_close(w), 0);
	at_output_close(&o);

	lseek(fd, 0, SEEK_SET);
	struct at_atz_reader *r = at_atz_reader_open(fd, "mem", NULL, 0);
	const struct at_atz_header *h = at_atz_reader_header(r);
	assert_non_null(h);
	assert_int_equal(h->major, 1);
	assert_int_equal(h->minor, 0);
	assert_int_equal(h->flags, AT_ATZ_FLAG_MUNGED);
	assert_int_equal(h->start_ns, 5);
	assert_string_equal(h->host, "h");
	struct at_event e;
	assert_int_equal(at_atz_next(r, &e), 1);
	assert_event_equal(&e, &e1);
	assert_int_equal(at_atz_lost_before(r), 0);
	assert_int_equal(at_atz_next(r, &e), 1);
	assert_event_equal(&e, &e2);
	assert_int_equal(at_atz_lost_before(r), 20);
	assert_int_equal(at_atz_next(r, &e), 0);
	struct at_atz_stats st;
	at_atz_reader_stats(r, &st);
	assert_int_equal(st.lost, 20);
	assert_int_equal(st.events, 2);
	at_atz_reader_close(r);
	close(fd);
}

/* Content built by hand: header + records, wrapped in a valid frame, then decoded. */
static size_t decode_content(const uint8_t *rec, size_t n, int *rc, enum at_atz_status *st,
			     struct at_event *out, size_t max, const uint8_t *hdr, size_t hn)
{
	uint8_t c[1024];
	memcpy(c, hdr, hn);
	memcpy(c + hn, rec, n);
	struct file f = frame_of(c, hn + n);
	size_t k = decode_all(f.p, f.n, out, max, rc, st);
	free(f.p);
	return k;
}

static void test_versions_and_unknown_kinds(void **state)
{
	(void)state;
	uint8_t hdr[sizeof(header_v1)];
	struct at_event out[4];
	int rc;
	enum at_atz_status st;
	/* a skippable table kind from a newer minor version, then one event */
	static const uint8_t skippable[] = { 0xE7, 3, 0xAA, 0xBB, 0xCC, 0x91, 1, 2, 0x70, 8, 0x20 };
	static const uint8_t unknown[] = { 0x91, 1, 2, 0x95, 0 };

	memcpy(hdr, header_v1, sizeof(hdr));
	hdr[5] = 9; /* minor 9: fine */
	assert_int_equal(decode_content(skippable, sizeof(skippable), &rc, &st, out, 4, hdr,
					sizeof(hdr)), 1);
	assert_int_equal(rc, 0);
	assert_int_equal(out[0].pid, 1);
	assert_int_equal(out[0].tid, 2);
	assert_int_equal(out[0].arg[0], 8);
	assert_int_equal(out[0].result, 0x80); /* adelta 0x20: zigzag(16) << 1, 8 << 4 */
	assert_int_equal(decode_content(unknown, sizeof(unknown), &rc, &st, out, 4, hdr,
					sizeof(hdr)), 0);
	assert_int_equal(st, AT_ATZ_ERR_CORRUPT);
	hdr[4] = 3; /* major 3: refused before any record */
	assert_int_equal(decode_content(skippable, sizeof(skippable), &rc, &st, out, 4, hdr,
					sizeof(hdr)), 0);
	assert_int_equal(st, AT_ATZ_ERR_VERSION);

	struct file f = frame_of(hdr, sizeof(hdr));
	int fd = memfd_create("atz", 0);
	assert_int_equal(write(fd, f.p, f.n), (ssize_t)f.n);
	lseek(fd, 0, SEEK_SET);
	struct at_atz_reader *r = at_atz_reader_open(fd, "new.atz", NULL, 0);
	assert_string_equal(at_atz_reader_message(r), "new.atz: trace format version 3.9 is "
			    "newer than this reader's (2.6): use a newer alloctap");
	at_atz_reader_close(r);
	close(fd);
	free(f.p);

	static const uint8_t text[] = "1 1 malloc(3)=0x10\n";
	assert_int_equal(decode_content(text, sizeof(text) - 1, &rc, &st, out, 4, hdr, 0), 0);
	assert_int_equal(st, AT_ATZ_ERR_NOT_ATZ);
}

/* What the reader's process callback collected. */
struct changes {
	unsigned n;
	struct at_atz_process p[8];
	char text[8][256];
};

static void collect_change(void *arg, const struct at_atz_process *p)
{
	struct changes *c = arg;

	assert_true(c->n < 8);
	c->p[c->n] = *p;
	size_t al = p->args_len < 128 ? p->args_len : 128; /* the start of a long one */
	assert_true(p->exe_len < 100);
	memcpy(c->text[c->n], p->exe, p->exe_len);
	c->text[c->n][p->exe_len] = '|';
	memcpy(c->text[c->n] + p->exe_len + 1, p->args, al);
	c->text[c->n][p->exe_len + 1 + al] = 0;
	c->n++;
}

/* Process change records (1.1): every field back through the callback, among events that
 * decode as before; a command line past AT_ATZ_ARGS_MAX cut and flagged; a reader without a
 * callback only counts them. */
static void test_process_changes(void **state)
{
	(void)state;
	int fd = memfd_create("atz", 0);
	struct at_output o;
	assert_int_equal(at_output_open_fd(&o, fd, "mem"), 0);
	struct at_atz_options v11 = { .major = 1, .minor = 1 }, v12 = { .major = 1, .minor = 2 };
	struct at_atz_options v24 = { .minor = 4 }, v30 = { .major = 3 };
	assert_null(at_atz_writer_open(&o, &v12));
	assert_int_equal(errno, EINVAL);
	assert_null(at_atz_writer_open(&o, &v24));
	assert_int_equal(errno, EINVAL);
	assert_null(at_atz_writer_open(&o, &v30));
	assert_int_equal(errno, EINVAL);
	struct at_atz_writer *w = at_atz_writer_open(&o, &v11);
	struct at_event e1 = { 30, 30, AT_MALLOC, 1, { 8, 0 }, 0x1000, 0, 0 };
	static char long_args[AT_ATZ_ARGS_MAX + 100];
	memset(long_args, 'a', sizeof(long_args));
	struct at_atz_process start = { AT_ATZ_PROCESS_START, AT_ATZ_PROCESS_BEFORE, 30, 1,
					1700000000123456789ull, 0, "/bin/sh", 7, "sh\0-c\0x\0", 8 };
	struct at_atz_process exec = { AT_ATZ_PROCESS_EXEC, 0, 30, 1, 1700000000223456789ull, 0,
				       "/usr/bin/python3", 16, long_args, sizeof(long_args) };
	struct at_atz_process exit_ = { AT_ATZ_PROCESS_EXIT, AT_ATZ_PROCESS_LATE, 0xffffffffu, 30,
					1700000000323456789ull, 9 << 8, NULL, 0, NULL, 0 };
	struct at_atz_process bad = exit_;
	bad.change = 4;

	int fd10 = memfd_create("atz10", 0);
	struct at_output o10;
	assert_int_equal(at_output_open_fd(&o10, fd10, "mem10"), 0);
	struct at_atz_options v10 = { .major = 1 };
	struct at_atz_writer *w10 = at_atz_writer_open(&o10, &v10);
	assert_int_equal(at_atz_append_process_change(w10, &start), -1); /* a 1.0 trace */
	assert_int_equal(errno, EINVAL);
	assert_int_equal(at_atz_writer_close(w10), 0);
	at_output_close(&o10);
	close(fd10);

	assert_int_equal(at_atz_append_process_change(w, &start), 0);
	assert_int_equal(at_atz_append(w, &e1), 0);
	assert_int_equal(at_atz_append_process_change(w, &exec), 0);
	assert_int_equal(at_atz_append_process_change(w, &exit_), 0);
	assert_int_equal(at_atz_append_process_change(w, &bad), -1);
	assert_int_equal(errno, EINVAL);
	struct at_atz_stats wst;
	at_atz_writer_stats(w, &wst);
	assert_int_equal(wst.processes, 3);
	assert_int_equal(at_atz_writer_close(w), 0);
	at_output_close(&o);

	for (int with_callback = 0; with_callback < 2; with_callback++) {
		static struct changes c;
		struct at_event e;
		struct at_atz_stats st;

		memset(&c, 0, sizeof(c));
		lseek(fd, 0, SEEK_SET);
		struct at_atz_reader *r = at_atz_reader_open(fd, "mem", NULL, 0);
		assert_int_equal(at_atz_reader_header(r)->minor, 1);
		if (with_callback)
			at_atz_reader_on_process(r, collect_change, &c);
		assert_int_equal(at_atz_next(r, &e), 1);
		assert_event_equal(&e, &e1);
		assert_int_equal(c.n, with_callback ? 1u : 0u);
		assert_int_equal(at_atz_next(r, &e), 0);
		at_atz_reader_stats(r, &st);
		assert_int_equal(st.processes, 3);
		assert_int_equal(st.events, 1);
		at_atz_reader_close(r);
		if (!with_callback)
			continue;
		assert_int_equal(c.n, 3);
		assert_int_equal(c.p[0].change, AT_ATZ_PROCESS_START);
		assert_int_equal(c.p[0].flags, AT_ATZ_PROCESS_BEFORE);
		assert_int_equal(c.p[0].pid, 30);
		assert_int_equal(c.p[0].parent, 1);
		assert_int_equal(c.p[0].time_ns, 1700000000123456789ull);
		assert_memory_equal(c.text[0], "/bin/sh|sh\0-c\0x\0", 17);
		assert_int_equal(c.p[1].change, AT_ATZ_PROCESS_EXEC);
		assert_int_equal(c.p[1].flags, AT_ATZ_PROCESS_ARGS_CUT);
		assert_int_equal(c.p[1].exe_len, 16);
		assert_int_equal(c.p[1].args_len, AT_ATZ_ARGS_MAX);
		assert_int_equal(c.p[2].change, AT_ATZ_PROCESS_EXIT);
		assert_int_equal(c.p[2].flags, AT_ATZ_PROCESS_LATE);
		assert_int_equal(c.p[2].pid, 0xffffffffu);
		assert_int_equal(c.p[2].status, 9 << 8);
		assert_int_equal(c.p[2].exe_len, 0);
		assert_int_equal(c.p[2].args_len, 0);
	}
	close(fd);
}

/* The bytes of a process change record as doc/FORMAT.md gives them; a pid past 32 bits is
 * corruption; a change code from a later version is counted and skipped. */
static void test_process_change_bytes(void **state)
{
	(void)state;
	static const uint8_t rec[] = { 0xC2, 13, 2, 0, 7, 1, 5, 0, '/', 'b', 0, 'b', 0, 'x', 0,
				       0x91, 7, 7, 0x70, 8, 0x20 };
	static const uint8_t bigpid[] = { 0xC2, 11, 1, 0, 0x80, 0x80, 0x80, 0x80, 0x10, 1, 5, 0, 0 };
	static const uint8_t later[] = { 0xC2, 7, 9, 0, 7, 1, 5, 0, 0, 0x91, 7, 7, 0x70, 8, 0x20 };
	struct at_event out[2];
	int rc;
	enum at_atz_status st;

	assert_int_equal(decode_content(rec, sizeof(rec), &rc, &st, out, 2, header_v1,
					sizeof(header_v1)), 1);
	assert_int_equal(rc, 0);
	assert_int_equal(out[0].pid, 7);
	/* the example of doc/FORMAT.md 5.4, field by field */
	uint8_t c[64];
	static struct changes ch;
	memcpy(c, header_v1, sizeof(header_v1));
	memcpy(c + sizeof(header_v1), rec, 15);
	struct file f = frame_of(c, sizeof(header_v1) + 15);
	int fd = memfd_create("atz", 0);
	assert_int_equal(write(fd, f.p, f.n), (ssize_t)f.n);
	lseek(fd, 0, SEEK_SET);
	struct at_atz_reader *r = at_atz_reader_open(fd, "mem", NULL, 0);
	at_atz_reader_on_process(r, collect_change, &ch);
	assert_int_equal(at_atz_next(r, &out[0]), 0);
	at_atz_reader_close(r);
	close(fd);
	free(f.p);
	assert_int_equal(ch.n, 1);
	assert_int_equal(ch.p[0].change, AT_ATZ_PROCESS_EXEC);
	assert_int_equal(ch.p[0].pid, 7);
	assert_int_equal(ch.p[0].parent, 1);
	assert_int_equal(ch.p[0].time_ns, 5);
	assert_memory_equal(ch.text[0], "/b|b\0x\0", 7);
	assert_int_equal(decode_content(bigpid, sizeof(bigpid), &rc, &st, out, 2, header_v1,
					sizeof(header_v1)), 0);
	assert_int_equal(st, AT_ATZ_ERR_CORRUPT);
	assert_int_equal(decode_content(later, sizeof(later), &rc, &st, out, 2, header_v1,
					sizeof(header_v1)), 1);
	assert_int_equal(rc, 0);
}

/* A trace of 40 events flushed every 8 (1.0, and 2.0 and 2.2 with times and stacks):
 * truncating it anywhere yields exactly the events of its whole blocks, then a truncation
 * error naming the event count. */
static void truncate_every_offset(unsigned major, unsigned minor)
{
	enum { N = 40, EVERY = 8 };
	struct at_event ev[N];
	for (unsigned i = 0; i < N; i++)
		ev[i] = (struct at_event){ 9, 9 + i % 2, i % 4 == 3 ? AT_FREE : AT_MALLOC,
					   i % 4 != 3, { 8 * i, 0 }, i % 4 == 3 ? 0 : 0x100 * i,
					   1000000 + 300 * i - 500 * (i % 3 == 1), (i % 4 != 3) * (1 + i / 8) };
	struct file f = write_events_vm(ev, N, EVERY, 0, major, minor);
	struct at_event out[N];
	size_t prev = 0;

	for (size_t cut = 0; cut < f.n; cut++) {
		int rc;
		enum at_atz_status st;
		size_t k = decode_all(f.p, cut, out, N, &rc, &st);
		assert_int_equal(rc, -1);
		assert_true(st == AT_ATZ_ERR_TRUNCATED || (cut < 4 && st == AT_ATZ_ERR_NOT_ATZ));
		assert_true(k % EVERY == 0 && k >= prev && k <= N);
		for (size_t i = 0; i < k; i++) {
			assert_event_equal(&out[i], &ev[i]);
			assert_int_equal(out[i].stack, major == 2 ? ev[i].stack : 0);
			assert_int_equal(out[i].time_ns, major == 2 ? ev[i].time_ns : 0);
		}
		prev = k;
	}
	assert_int_equal(prev, N); /* cut just before the end mark: all blocks whole */

	/* cut at a block's end (the end mark and checksum gone), then 2 bytes into the end mark */
	static const struct {
		size_t less;
		const char *where;
	} cuts[] = { { 8, "after a whole block, before the frame's end mark" },
		     { 6, "inside a block size field" } };
	for (size_t c = 0; c < sizeof(cuts) / sizeof(cuts[0]); c++) {
		size_t n = f.n - cuts[c].less;
		int fd = memfd_create("atz", 0);
		assert_int_equal(write(fd, f.p, n), (ssize_t)n);
		lseek(fd, 0, SEEK_SET);
		struct at_atz_reader *r = at_atz_reader_open(fd, "cut.atz", NULL, 0);
		struct at_event e;
		while (at_atz_next(r, &e) > 0)
			;
		char want[200];
		snprintf(want, sizeof(want), "cut.atz: truncated after 40 events: the input ends %s; "
			 "the last whole block ends at byte offset %zu of %zu", cuts[c].where, f.n - 8, n);
		assert_string_equal(at_atz_reader_message(r), want);
		at_atz_reader_close(r);
		close(fd);
	}
	free(f.p);
}

static void test_truncate_every_offset(void **state)
{
	(void)state;
	truncate_every_offset(1, 0);
	truncate_every_offset(2, 0);
	truncate_every_offset(2, 2);
}

static void flip_every_bit(unsigned major, unsigned minor)
{
	enum { N = 24 };
	struct at_event ev[N];
	for (unsigned i = 0; i < N; i++)
		ev[i] = (struct at_event){ 2, 2, i & 1 ? AT_FREE : AT_MALLOC, !(i & 1),
					   { i & 1 ? 0x40 * (i - 1) : 24, 0 },
					   i & 1 ? 0 : 0x40 * i, 5000 + 77 * i, (i & 1) ? 0 : 1 + i % 3 };
	struct file f = write_events_vm(ev, N, 6, 0, major, minor);

	for (size_t bit = 0; bit < f.n * 8; bit++) {
		int rc;
		enum at_atz_status st;
		f.p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		decode_all(f.p, f.n, NULL, 0, &rc, &st);
		f.p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		/* checksums cover every byte: each flip is caught */
		assert_int_equal(rc, -1);
		assert_true(st == AT_ATZ_ERR_CORRUPT || st == AT_ATZ_ERR_NOT_ATZ ||
			    st == AT_ATZ_ERR_TRUNCATED);
	}
	free(f.p);
}

static void test_flip_every_bit(void **state)
{
	(void)state;
	flip_every_bit(1, 0);
	flip_every_bit(2, 0);
	flip_every_bit(2, 2);
}

/* Two files, one after the other. */
static struct file concat(const struct file *a, const uint8_t *b, size_t bn)
{
	struct file f = { malloc(a->n + bn + 1), a->n + bn };

	memcpy(f.p, a->p, a->n);
	memcpy(f.p + a->n, b, bn);
	return f;
}

/* Decodes p: the events decoded in *k, the reader's final status, its message in msg ("" if
 * none), its stream header's host in host. */
static enum at_atz_status decode_message(const uint8_t *p, size_t n, size_t *k, char *msg,
					 size_t cap, char *host)
{
	int fd = memfd_create("atz", 0);
	assert_int_equal(write(fd, p, n), (ssize_t)n);
	lseek(fd, 0, SEEK_SET);
	struct at_atz_reader *r = at_atz_reader_open(fd, "two.atz", NULL, 0);
	struct at_event ev;
	*k = 0;
	while (at_atz_next(r, &ev) > 0)
		++*k;
	enum at_atz_status st = at_atz_reader_status(r);
	snprintf(msg, cap, "%s", st ? at_atz_reader_message(r) : "");
	if (host)
		strcpy(host, at_atz_reader_header(r) ? at_atz_reader_header(r)->host : "?");
	at_atz_reader_close(r);
	close(fd);
	return st;
}

/* Two traces back to back (what a SIGHUP without rotation used to append) read as one, as
 * the lz4 tool reads concatenated frames: every event in order, each frame with its own
 * threads and predictor state, the first frame's header kept; a skippable frame between is
 * skipped. */
static void test_concatenated_frames(void **state)
{
	(void)state;
	enum { N = 60, HALF = 25 };
	struct at_event ev[N], out[N + 1];
	for (unsigned i = 0; i < N; i++)
		ev[i] = (struct at_event){ 5, 5 + i % 3, i % 3 == 2 ? AT_FREE : AT_MALLOC,
					   i % 3 != 2, { i % 3 == 2 ? 0x40 * (i - 2) : 16 + i % 5, 0 },
					   i % 3 == 2 ? 0 : 0x40 * i, 0, 0 };
	struct file a = write_events(ev, HALF, 7, 0);
	struct file b = write_events(ev + HALF, N - HALF, 9, 0);
	struct file two = concat(&a, b.p, b.n);
	int rc;
	enum at_atz_status st;

	assert_int_equal(decode_all(two.p, two.n, out, N + 1, &rc, &st), N);
	assert_int_equal(rc, 0);
	for (size_t i = 0; i < N; i++)
		assert_event_equal(&out[i], &ev[i]);

	/* three frames, a skippable one between the first two */
	static const uint8_t skip[] = { 0x53, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 'x', 'y', 'z' };
	struct file ab = concat(&a, skip, sizeof(skip));
	struct file abb = concat(&ab, b.p, b.n);
	struct file three = concat(&abb, a.p, a.n);
	assert_int_equal(decode_all(three.p, three.n, out, N + 1, &rc, &st), N + HALF);
	assert_int_equal(rc, 0);

	/* the second frame's header may name another host and start: the first one's stay */
	uint8_t c[sizeof(header_v1) + 16];
	static const uint8_t other_host[] = { 'A', 'T', 'Z', 0, 1, 0, 0, 99, 5, 'o', 't', 'h', 'e',
					      'r', 0, 0x91, 1, 2, 0x70, 8, 0x20 };
	memcpy(c, other_host, sizeof(other_host));
	struct file other = frame_of(c, sizeof(other_host));
	struct file ao = concat(&a, other.p, other.n);
	char msg[300], host[300];
	size_t k;
	assert_int_equal(decode_message(ao.p, ao.n, &k, msg, sizeof(msg), host), AT_ATZ_OK);
	assert_int_equal(k, HALF + 1);
	assert_string_equal(host, "testhost");

	/* every thread starts over: a THREAD record naming the first frame's entry 0 is corrupt */
	static const uint8_t old_thread[] = { 'A', 'T', 'Z', 0, 1, 0, 0, 42, 0, 0, 0x90, 0 };
	struct file stale = frame_of(old_thread, sizeof(old_thread));
	struct file as = concat(&a, stale.p, stale.n);
	assert_int_equal(decode_message(as.p, as.n, &k, msg, sizeof(msg), NULL),
			 AT_ATZ_ERR_CORRUPT);
	assert_int_equal(k, HALF);
	assert_non_null(strstr(msg, "a thread record names thread table entry 0, not in the table"));

	/* the first trace ends cleanly where the second starts: cut anywhere in the second, the
	 * first trace's events and the second's whole blocks come out, then a truncation */
	size_t prev = HALF;
	for (size_t cut = a.n + 1; cut < two.n; cut++) {
		size_t got = decode_all(two.p, cut, out, N + 1, &rc, &st);
		assert_int_equal(rc, -1);
		assert_int_equal(st, AT_ATZ_ERR_TRUNCATED);
		assert_true(got >= prev && got <= N);
		for (size_t i = 0; i < got; i++)
			assert_event_equal(&out[i], &ev[i]);
		prev = got;
	}
	assert_int_equal(prev, N);
	assert_int_equal(decode_message(two.p, a.n + 5, &k, msg, sizeof(msg), NULL),
			 AT_ATZ_ERR_TRUNCATED);
	char want[300];
	snprintf(want, sizeof(want), "two.atz: truncated after %d events: the input ends inside "
		 "an lz4 frame header at byte offset %zu", HALF, a.n);
	assert_string_equal(msg, want);
	free(ab.p);
	free(abb.p);
	free(three.p);
	free(other.p);
	free(ao.p);
	free(stale.p);
	free(as.p);
	free(two.p);
	free(a.p);
	free(b.p);
}

/* What follows a frame must be another frame of the same trace: damage in the second frame
 * is reported at its byte offset; a second frame munged where the first is raw, bytes that
 * are not a frame, or a frame that is not a trace are errors, after the first frame's
 * events. */
static void test_concatenated_frames_damaged(void **state)
{
	(void)state;
	enum { N = 30 };
	struct at_event ev[N];
	for (unsigned i = 0; i < N; i++)
		ev[i] = (struct at_event){ 3, 3, AT_MALLOC, 1, { 24 + i, 0 }, 0x100 * (i + 1), 0, 0 };
	struct file a = write_events(ev, N, 10, 0);
	struct file m = write_events(ev, N, 10, AT_ATZ_FLAG_MUNGED);
	char msg[300], want[300];
	size_t k;

	/* a byte changed in the second frame's second block (after the header block and its
	 * 4-byte size word): its offset is the block's, counted from the file's start */
	struct file two = concat(&a, a.p, a.n);
	size_t first_block = 7 + 4 + ((size_t)a.p[7] | (size_t)a.p[8] << 8) + 4;
	two.p[a.n + first_block + 6] ^= 0x10;
	assert_int_equal(decode_message(two.p, two.n, &k, msg, sizeof(msg), NULL),
			 AT_ATZ_ERR_CORRUPT);
	assert_int_equal(k, N);
	snprintf(want, sizeof(want), "two.atz: corrupt lz4 block at byte offset %zu",
		 a.n + first_block);
	assert_memory_equal(msg, want, strlen(want));
	two.p[a.n + first_block + 6] ^= 0x10;
	two.p[a.n + 5] ^= 0x01; /* the second frame header's checksum byte no longer matches */
	assert_int_equal(decode_message(two.p, two.n, &k, msg, sizeof(msg), NULL),
			 AT_ATZ_ERR_CORRUPT);
	snprintf(want, sizeof(want), "at byte offset %zu", a.n);
	assert_non_null(strstr(msg, want));

	/* raw, then munged: not one trace */
	struct file am = concat(&a, m.p, m.n);
	assert_int_equal(decode_message(am.p, am.n, &k, msg, sizeof(msg), NULL),
			 AT_ATZ_ERR_CORRUPT);
	assert_int_equal(k, N);
	snprintf(want, sizeof(want), "two.atz: the lz4 frame at byte offset %zu holds a munged "
		 "trace, the first frame a raw one: not one trace", a.n);
	assert_string_equal(msg, want);
	struct file ma = concat(&m, a.p, a.n);
	assert_int_equal(decode_message(ma.p, ma.n, &k, msg, sizeof(msg), NULL),
			 AT_ATZ_ERR_CORRUPT);
	assert_non_null(strstr(msg, "holds a raw trace, the first frame a munged one"));

	/* text after the frame */
	static const uint8_t junk[] = "1 1 malloc(8)=0x10\n";
	struct file aj = concat(&a, junk, sizeof(junk) - 1);
	assert_int_equal(decode_message(aj.p, aj.n, &k, msg, sizeof(msg), NULL),
			 AT_ATZ_ERR_CORRUPT);
	assert_int_equal(k, N);
	snprintf(want, sizeof(want), "two.atz: unexpected data after the lz4 frame at byte offset "
		 "%zu: not another lz4 frame", a.n);
	assert_string_equal(msg, want);

	/* an lz4 frame that is not a trace (an empty one, as `lz4 < /dev/null` makes) */
	struct file empty = frame_of((const uint8_t *)"", 0);
	struct file ae = concat(&a, empty.p, empty.n);
	assert_int_equal(decode_message(ae.p, ae.n, &k, msg, sizeof(msg), NULL),
			 AT_ATZ_ERR_NOT_ATZ);
	snprintf(want, sizeof(want), "two.atz: the lz4 frame at byte offset %zu is not an "
		 "alloctap trace", a.n);
	assert_string_equal(msg, want);
	free(two.p);
	free(am.p);
	free(ma.p);
	free(aj.p);
	free(empty.p);
	free(ae.p);
	free(a.p);
	free(m.p);
}

static uint64_t rng_state = 12345;
static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* 10,000 random inputs: raw random bytes, random bytes after the lz4 magic, and (most
 * telling, since checksums stop the others early) random and mutated content inside valid
 * frames. Each must end with 0 or a clear error, never a crash (run under ASan too). */
static void test_random_inputs(void **state)
{
	(void)state;
	enum { N = 64 };
	struct at_event ev[N];
	for (unsigned i = 0; i < N; i++)
		ev[i] = (struct at_event){ 1 + i % 3, 7, (uint8_t)(rnd() % AT_FUNC_COUNT),
					   (uint8_t)(rnd() & 1), { rnd() % 300, rnd() % 3 },
					   (rnd() % 64) * 16, 0, 0 };
	struct file good = write_events(ev, N, 0, 0);
	static uint8_t content[8192], buf[8192];
	size_t cn = content_of(&good, content, sizeof(content));
	unsigned ends[8] = { 0 };

	for (unsigned i = 0; i < 10000; i++) {
		size_t n = 1 + rnd() % 600;
		int rc;
		enum at_atz_status st;
		struct file f = { buf, n };
		switch (i % 4) {
		case 0: /* random bytes */
			for (size_t j = 0; j < n; j++)
				buf[j] = (uint8_t)rnd();
			decode_all(buf, n, NULL, 0, &rc, &st);
			break;
		case 1: /* lz4 magic, then random */
			for (size_t j = 0; j < n; j++)
				buf[j] = (uint8_t)rnd();
			memcpy(buf, "\x04\x22\x4d\x18", n < 4 ? n : 4);
			decode_all(buf, n, NULL, 0, &rc, &st);
			break;
		case 2: { /* the header, then random records */
			memcpy(buf, header_v1, sizeof(header_v1));
			for (size_t j = sizeof(header_v1); j < n + sizeof(header_v1); j++)
				buf[j] = (uint8_t)rnd();
			f = frame_of(buf, n + sizeof(header_v1));
			decode_all(f.p, f.n, NULL, 0, &rc, &st);
			free(f.p);
			break;
		}
		default: { /* real content with a few bytes changed, or cut */
			memcpy(buf, content, cn);
			size_t m = cn;
			for (unsigned k = 1 + rnd() % 4; k > 0; k--)
				buf[rnd() % cn] = (uint8_t)rnd();
			if (rnd() % 4 == 0)
				m = rnd() % cn;
			f = frame_of(buf, m);
			decode_all(f.p, f.n, NULL, 0, &rc, &st);
			free(f.p);
			break;
		}
		}
		assert_true(rc == 0 || rc == -1);
		ends[st]++;
	}
	/* every kind of ending was reached */
	assert_true(ends[AT_ATZ_OK] > 0);
	assert_true(ends[AT_ATZ_ERR_NOT_ATZ] > 0);
	assert_true(ends[AT_ATZ_ERR_CORRUPT] > 0);
	free(good.p);
}

/* ---- 2.0: event tails, stacks, mappings ------------------------------------------------- */

/* The 2.0 header with host "testhost", start 42 and flags f. */
#define HEADER_V2(f) { 'A', 'T', 'Z', 0, 2, 0, f, 42, 8, 't', 'e', 's', 't', 'h', 'o', 's', 't', 0 }
static const uint8_t header_v2[] = HEADER_V2(0);

/* What the stack and mapping callbacks saw. */
struct records {
	unsigned stacks, mappings;
	struct at_stack stack[4];
	struct at_mapping map[2];
	char path[2][AT_ATZ_NAME_MAX + 1];
	char order[64];
};

static void record_stack(void *arg, const struct at_stack *st)
{
	struct records *c = arg;
	assert_true(c->stacks < 4);
	c->stack[c->stacks++] = *st;
	strcat(c->order, "S");
}

static void record_mapping(void *arg, const struct at_mapping *m)
{
	struct records *c = arg;
	assert_true(c->mappings < 2);
	c->map[c->mappings] = *m;
	strcpy(c->path[c->mappings], m->path);
	c->map[c->mappings].path = c->path[c->mappings];
	c->mappings++;
	strcat(c->order, "M");
}

/* A file's events into out (at most max), records into c; returns the count, *rc the final
 * at_atz_next result, *msg (when not NULL) the error message copied. */
static size_t decode_records(const struct file *f, struct at_event *out, size_t max,
			     struct records *c, int *rc, char *msg, size_t msg_size)
{
	int fd = memfd_create("atz", 0);
	assert_int_equal(write(fd, f->p, f->n), (ssize_t)f->n);
	lseek(fd, 0, SEEK_SET);
	struct at_atz_reader *r = at_atz_reader_open(fd, "mem", NULL, 0);
	struct at_event ev;
	size_t k = 0;

	memset(c, 0, sizeof(*c));
	at_atz_reader_on_stack(r, record_stack, c);
	at_atz_reader_on_mapping(r, record_mapping, c);
	while ((*rc = at_atz_next(r, &ev)) > 0) {
		if (k < max)
			out[k] = ev;
		k++;
		strcat(c->order, "E");
	}
	if (msg)
		snprintf(msg, msg_size, "%s", *rc < 0 ? at_atz_reader_message(r) : "");
	at_atz_reader_close(r);
	close(fd);
	return k;
}

/* A writer on a memfd, 2.0 unless opt says otherwise. */
struct mem_writer {
	int fd;
	struct at_output o;
	struct at_atz_writer *w;
};

static void mem_writer_open_v(struct mem_writer *m, unsigned flags, unsigned major,
			      unsigned minor)
{
	struct at_atz_options opt = { .flags = flags, .host = "testhost", .start_ns = 42,
				      .major = major, .minor = minor };
	m->fd = memfd_create("atz", 0);
	assert_int_equal(at_output_open_fd(&m->o, m->fd, "mem"), 0);
	m->w = at_atz_writer_open(&m->o, &opt);
	assert_non_null(m->w);
}

static void mem_writer_open(struct mem_writer *m, unsigned flags, unsigned major)
{
	mem_writer_open_v(m, flags, major, 0);
}

static struct file mem_writer_close(struct mem_writer *m)
{
	struct file f;
	assert_int_equal(at_atz_writer_close(m->w), 0);
	assert_int_equal(at_output_close(&m->o), 0);
	f.n = (size_t)lseek(m->fd, 0, SEEK_END);
	f.p = malloc(f.n);
	assert_int_equal(pread(m->fd, f.p, f.n, 0), (ssize_t)f.n);
	close(m->fd);
	return f;
}

/* The example of doc/FORMAT.md 5.5 to 5.7, byte for byte, and back through the callbacks in
 * stream order. */
static void test_v2_record_bytes(void **state)
{
	(void)state;
	struct mem_writer m;
	struct at_stack st = { .id = 1, .pid = 7, .count = 2, .flags = 0,
			       .pcs = { 0x1010, 0x900a } };
	struct at_mapping map = { .pid = 7, .build_id_len = 2, .build_id = { 0xab, 0xcd },
				  .start = 0x400000, .end = 0x401000, .offset = 0, .path = "/a" };
	const struct at_event ev[] = {
		{ 7, 9, AT_MALLOC, 1, { 32, 0 }, 0x1000, 1000, 1 },
		{ 7, 9, AT_FREE, 0, { 0x1000, 0 }, 0, 990, 0 },
	};
	static const uint8_t want[] = {
		0xc3, 0x09, 0x01, 0x07, 0x02, 0x00, 0x90, 0x20, 0xf4, 0xff, 0x03,
		0x91, 0x07, 0x09,
		0x70, 0x20, 0x80, 0x08, 0xa1, 0x1f, 0x01,
		0x40, 0x26,
		0xc4, 0x0f, 0x07, 0x80, 0x80, 0x80, 0x02, 0x80, 0xa0, 0x80, 0x02, 0x00, 0x02, 0xab,
		0xcd, 0x2f, 0x61,
	};

	mem_writer_open(&m, 0, 0);
	assert_int_equal(at_atz_append_stack(m.w, &st), 0);
	assert_int_equal(at_atz_append(m.w, &ev[0]), 0);
	assert_int_equal(at_atz_append(m.w, &ev[1]), 0);
	assert_int_equal(at_atz_append_mapping(m.w, &map), 0);
	struct at_atz_stats ws;
	at_atz_writer_stats(m.w, &ws);
	assert_int_equal(ws.stacks, 1);
	assert_int_equal(ws.mappings, 1);
	struct file f = mem_writer_close(&m);
	uint8_t c[256];
	size_t n = content_of(&f, c, sizeof(c));
	assert_int_equal(n, sizeof(header_v2) + sizeof(want));
	assert_memory_equal(c, header_v2, sizeof(header_v2));
	assert_memory_equal(c + sizeof(header_v2), want, sizeof(want));

	static struct records rec;
	struct at_event out[2];
	int rc;
	assert_int_equal(decode_records(&f, out, 2, &rec, &rc, NULL, 0), 2);
	assert_int_equal(rc, 0);
	assert_string_equal(rec.order, "SEEM");
	for (int i = 0; i < 2; i++) {
		assert_event_equal(&out[i], &ev[i]);
		assert_int_equal(out[i].time_ns, ev[i].time_ns);
		assert_int_equal(out[i].stack, ev[i].stack);
	}
	assert_memory_equal(&rec.stack[0], &st, offsetof(struct at_stack, pcs) + 2 * 8);
	assert_int_equal(rec.map[0].pid, 7);
	assert_int_equal(rec.map[0].start, 0x400000);
	assert_int_equal(rec.map[0].end, 0x401000);
	assert_int_equal(rec.map[0].build_id_len, 2);
	assert_memory_equal(rec.map[0].build_id, map.build_id, 2);
	assert_string_equal(rec.path[0], "/a");
	free(f.p);
}

static void record_rss(void *arg, const struct at_rss *m)
{
	struct at_rss *got = arg;
	*got = *m;
}

/* An RSS record (2.1) byte for byte and back; a 2.0 writer refuses it, a 2.0 reader's rule
 * (skip sized kinds it does not know) is what lets older readers read 2.1. */
static void test_v21_rss(void **state)
{
	(void)state;
	struct mem_writer m;
	struct at_atz_options opt = { .host = "testhost", .start_ns = 42, .minor = 1 };
	const struct at_rss rss = { .pid = 7, .time_ns = 5, .bytes = 4096 };
	static const uint8_t want[] = { 0xc5, 0x04, 0x07, 0x05, 0x80, 0x20 };
	uint8_t c[256];

	m.fd = memfd_create("atz", 0);
	assert_int_equal(at_output_open_fd(&m.o, m.fd, "mem"), 0);
	m.w = at_atz_writer_open(&m.o, &opt);
	assert_non_null(m.w);
	assert_int_equal(at_atz_append_rss(m.w, &rss), 0);
	struct file f = mem_writer_close(&m);
	size_t n = content_of(&f, c, sizeof(c));
	assert_int_equal(n, sizeof(header_v2) + sizeof(want));
	assert_int_equal(c[4], 2); /* version 2.1 */
	assert_int_equal(c[5], 1);
	assert_memory_equal(c + sizeof(header_v2), want, sizeof(want));

	int fd = memfd_create("atz", 0);
	assert_int_equal(write(fd, f.p, f.n), (ssize_t)f.n);
	lseek(fd, 0, SEEK_SET);
	struct at_atz_reader *r = at_atz_reader_open(fd, "mem", NULL, 0);
	struct at_rss got = { 0 };
	struct at_event ev;
	at_atz_reader_on_rss(r, record_rss, &got);
	assert_int_equal(at_atz_next(r, &ev), 0);
	assert_int_equal(got.pid, 7);
	assert_int_equal(got.time_ns, 5);
	assert_int_equal(got.bytes, 4096);
	at_atz_reader_close(r);
	close(fd);
	free(f.p);

	mem_writer_open(&m, 0, 0); /* 2.0 */
	errno = 0;
	assert_int_equal(at_atz_append_rss(m.w, &rss), -1);
	assert_int_equal(errno, EINVAL);
	f = mem_writer_close(&m);
	free(f.p);
}

/* The tail under each pair of the NO_TIMES and NO_STACKS flags, byte for byte; the writer
 * refuses what the flags say the trace has none of. */
static void test_v2_tail_forms(void **state)
{
	(void)state;
	static const struct {
		unsigned flags;
		uint8_t tail[2][4]; /* length, bytes, of the two events' tails */
	} cases[] = {
		{ 0, { { 3, 0xa1, 0x1f, 0x01 }, { 1, 0x26 } } },
		{ AT_ATZ_FLAG_NO_STACKS, { { 2, 0xd0, 0x0f }, { 1, 0x13 } } },
		{ AT_ATZ_FLAG_NO_TIMES, { { 1, 0x01 }, { 1, 0x00 } } },
		{ AT_ATZ_FLAG_NO_TIMES | AT_ATZ_FLAG_NO_STACKS, { { 0 }, { 0 } } },
	};
	struct at_stack st = { .id = 1, .pid = 7, .count = 1, .pcs = { 0x1010 } };

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		unsigned fl = cases[k].flags;
		struct at_event ev[] = {
			{ 7, 9, AT_MALLOC, 1, { 32, 0 }, 0x1000, 1000, 1 },
			{ 7, 9, AT_FREE, 0, { 0x1000, 0 }, 0, 990, 0 },
		};
		struct mem_writer m;
		mem_writer_open(&m, fl, 0);
		assert_int_equal(at_atz_append_stack(m.w, &st), 0);
		if (fl & AT_ATZ_FLAG_NO_TIMES) {
			assert_int_equal(at_atz_append(m.w, &ev[0]), -1);
			assert_int_equal(errno, EINVAL);
			ev[0].time_ns = ev[1].time_ns = 0;
		}
		if (fl & AT_ATZ_FLAG_NO_STACKS) {
			assert_int_equal(at_atz_append(m.w, &ev[0]), -1);
			assert_int_equal(errno, EINVAL);
			ev[0].stack = 0;
		}
		assert_int_equal(at_atz_append(m.w, &ev[0]), 0);
		assert_int_equal(at_atz_append(m.w, &ev[1]), 0);
		struct file f = mem_writer_close(&m);
		uint8_t c[256], want[64];
		size_t wn = 0;
		uint8_t hdr[] = HEADER_V2((uint8_t)fl);
		static const uint8_t stack_rec[] = { 0xc3, 0x06, 0x01, 0x07, 0x01, 0x00, 0x90, 0x20 };
		memcpy(want, stack_rec, sizeof(stack_rec));
		wn = sizeof(stack_rec);
		static const uint8_t head[] = { 0x91, 0x07, 0x09, 0x70, 0x20, 0x80, 0x08 };
		memcpy(want + wn, head, sizeof(head));
		wn += sizeof(head);
		memcpy(want + wn, cases[k].tail[0] + 1, cases[k].tail[0][0]);
		wn += cases[k].tail[0][0];
		want[wn++] = 0x40;
		memcpy(want + wn, cases[k].tail[1] + 1, cases[k].tail[1][0]);
		wn += cases[k].tail[1][0];
		size_t n = content_of(&f, c, sizeof(c));
		assert_int_equal(n, sizeof(hdr) + wn);
		assert_memory_equal(c, hdr, sizeof(hdr));
		assert_memory_equal(c + sizeof(hdr), want, wn);

		static struct records rec;
		struct at_event out[2];
		int rc;
		assert_int_equal(decode_records(&f, out, 2, &rec, &rc, NULL, 0), 2);
		assert_int_equal(rc, 0);
		for (int i = 0; i < 2; i++) {
			assert_event_equal(&out[i], &ev[i]);
			assert_int_equal(out[i].time_ns, ev[i].time_ns);
			assert_int_equal(out[i].stack, ev[i].stack);
		}
		free(f.p);
	}
}

/* Every field of stacks, mappings and tails at its extremes, times going backwards and far
 * (TIME records), ids in order: all come back. */
static void test_v2_roundtrip_extremes(void **state)
{
	(void)state;
	struct mem_writer m;
	static struct at_stack st[3];
	static char long_path[AT_ATZ_NAME_MAX + 50];
	struct at_mapping map[2] = {
		{ .pid = 0xffffffffu, .build_id_len = AT_BUILD_ID_MAX, .start = 0,
		  .end = UINT64_MAX, .offset = UINT64_MAX, .path = long_path },
		{ .pid = 0, .build_id_len = 0, .start = 5, .end = 5, .offset = 0, .path = "" },
	};
	const struct at_event ev[] = {
		{ 1, 1, AT_MALLOC, 1, { 8, 0 }, 0x10, UINT64_MAX, 1 },
		{ 1, 1, AT_MALLOC, 1, { 8, 0 }, 0x20, 0, 2 },             /* 2^64 - 1 back */
		{ 1, 2, AT_CALLOC, 1, { 1, 8 }, 0x30, 1ull << 63, 3 },
		{ 1, 2, AT_FREE, 0, { 0x30, 0 }, 0, (1ull << 63) - 1, 0 }, /* one back */
		{ 1, 1, AT_REALLOC, 1, { 0x20, 9 }, 0x20, (1ull << 62) + 7, 2 },
		{ 2, 3, AT_JEMALLOC_STATS, 0, { 0, 0 }, 0, 12, 0 },
		{ 2, 3, AT_MALLOC, 1, { 0, 0 }, 0, 11, 3 },
	};
	enum { N = sizeof(ev) / sizeof(ev[0]) };

	memset(long_path, 'p', sizeof(long_path) - 1);
	for (unsigned i = 0; i < AT_BUILD_ID_MAX; i++)
		map[0].build_id[i] = (uint8_t)(0xf0 + i);
	for (unsigned k = 0; k < 3; k++) {
		st[k].id = k + 1;
		st[k].pid = k == 0 ? 0xffffffffu : k;
		st[k].count = k == 0 ? AT_STACK_MAX_FRAMES : (uint16_t)k;
		st[k].flags = k == 0 ? 0xffff : (uint16_t)(k == 1 ? AT_STACK_TRUNCATED
							     : AT_STACK_INCOMPLETE);
		for (unsigned i = 0; i < st[k].count; i++)
			st[k].pcs[i] = i % 3 == 0 ? UINT64_MAX - i : i % 3 == 1 ? i : 1ull << 63;
	}
	mem_writer_open(&m, 0, 0);
	assert_int_equal(at_atz_append_mapping(m.w, &map[0]), 0);
	assert_int_equal(at_atz_append_mapping(m.w, &map[1]), 0);
	for (unsigned k = 0; k < 3; k++)
		assert_int_equal(at_atz_append_stack(m.w, &st[k]), 0);
	for (unsigned i = 0; i < N; i++)
		assert_int_equal(at_atz_append(m.w, &ev[i]), 0);
	struct file f = mem_writer_close(&m);

	static struct records rec;
	struct at_event out[N];
	int rc;
	assert_int_equal(decode_records(&f, out, N, &rec, &rc, NULL, 0), N);
	assert_int_equal(rc, 0);
	for (unsigned i = 0; i < N; i++) {
		assert_event_equal(&out[i], &ev[i]);
		assert_int_equal(out[i].time_ns, ev[i].time_ns);
		assert_int_equal(out[i].stack, ev[i].stack);
	}
	for (unsigned k = 0; k < 3; k++)
		assert_memory_equal(&rec.stack[k], &st[k],
				    offsetof(struct at_stack, pcs) + st[k].count * 8);
	assert_int_equal(rec.map[0].pid, 0xffffffffu);
	assert_int_equal(rec.map[0].end, UINT64_MAX);
	assert_int_equal(rec.map[0].offset, UINT64_MAX);
	assert_memory_equal(rec.map[0].build_id, map[0].build_id, AT_BUILD_ID_MAX);
	assert_int_equal(strlen(rec.path[0]), AT_ATZ_NAME_MAX); /* cut to 4096 bytes */
	assert_int_equal(rec.map[1].build_id_len, 0);
	assert_string_equal(rec.path[1], "");
	assert_string_equal(rec.order, "MMSSSEEEEEEE");
	free(f.p);
}

/* What the writer refuses (EINVAL, the trace unharmed): stacks out of order or of 0 or 129
 * frames, an event whose stack is not written yet, a mapping that ends before it starts or
 * with a build-id too long, and stacks or mappings in a 1.x trace. */
static void test_v2_refused(void **state)
{
	(void)state;
	struct mem_writer m;
	struct at_stack st = { .id = 2, .pid = 1, .count = 1, .pcs = { 1 } };
	struct at_mapping map = { .pid = 1, .start = 9, .end = 8, .path = "/x" };
	struct at_event ev = { 1, 1, AT_MALLOC, 1, { 8, 0 }, 0x10, 5, 1 };

	mem_writer_open(&m, 0, 0);
	assert_int_equal(at_atz_append_stack(m.w, &st), -1); /* id 1 comes first */
	assert_int_equal(errno, EINVAL);
	assert_int_equal(at_atz_append(m.w, &ev), -1);
	assert_int_equal(errno, EINVAL);
	st.id = 1;
	st.count = 0;
	assert_int_equal(at_atz_append_stack(m.w, &st), -1);
	st.count = AT_STACK_MAX_FRAMES + 1;
	assert_int_equal(at_atz_append_stack(m.w, &st), -1);
	assert_int_equal(at_atz_append_mapping(m.w, &map), -1);
	map.end = 10;
	map.build_id_len = AT_BUILD_ID_MAX + 1;
	assert_int_equal(at_atz_append_mapping(m.w, &map), -1);
	assert_int_equal(errno, EINVAL);
	st.count = 1;
	assert_int_equal(at_atz_append_stack(m.w, &st), 0);
	assert_int_equal(at_atz_append_stack(m.w, &st), -1); /* id 1 again */
	assert_int_equal(at_atz_append(m.w, &ev), 0);
	struct file f = mem_writer_close(&m);
	static struct records rec;
	struct at_event out[1];
	int rc;
	assert_int_equal(decode_records(&f, out, 1, &rec, &rc, NULL, 0), 1);
	assert_int_equal(rc, 0);
	assert_int_equal(out[0].stack, 1);
	free(f.p);

	mem_writer_open(&m, 0, 1);
	map.build_id_len = 0;
	assert_int_equal(at_atz_append_stack(m.w, &st), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(at_atz_append_mapping(m.w, &map), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(at_atz_append(m.w, &ev), 0); /* 1.x: time and stack are not kept */
	f = mem_writer_close(&m);
	assert_int_equal(decode_records(&f, out, 1, &rec, &rc, NULL, 0), 1);
	assert_int_equal(out[0].time_ns, 0);
	assert_int_equal(out[0].stack, 0);
	free(f.p);
}

/* Damaged 2.0 content: each case is corruption reported at the content offset of the bad
 * record (or tail), after the events before it; a cut tail is truncation. */
static void test_v2_corrupt(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		uint8_t flags, n;
		uint8_t rec[24];
		size_t events;
		unsigned offset; /* content offset of the damage */
		const char *why;
	} cases[] = {
		{ "stack used before its record", 0, 8, { 0x91, 1, 1, 0x70, 8, 0x20, 0x03, 0x05 }, 0,
		  24, "event with stack id 5 "
		  "(used before its stack record)" },
		{ "id 0 written as present", 0, 8, { 0x91, 1, 1, 0x70, 8, 0x20, 0x01, 0x00 }, 0,
		  24, "event with stack id 0 "
		  "(0 written as present)" },
		{ "stack id 2 first", 0, 8, { 0xc3, 6, 2, 1, 1, 0, 0x10, 0x91 }, 0,
		  18, "stack record with id 2 "
		  "where id 1 comes next" },
		{ "stack of 0 frames", 0, 7, { 0xc3, 5, 1, 1, 0, 0, 0x10 }, 0,
		  18, "stack record with 0 frames "
		  "(1 to 128)" },
		{ "stack of 129 frames", 0, 8, { 0xc3, 6, 1, 1, 0x81, 1, 0, 0x10 }, 0,
		  18, "stack record with 129 "
		  "frames (1 to 128)" },
		{ "stack cut in its frames", 0, 8, { 0xc3, 6, 1, 1, 3, 0, 0x10, 0x02 }, 0,
		  18, "bad frame in a stack "
		  "record" },
		{ "stack id used in a stacks-less trace", AT_ATZ_FLAG_NO_TIMES, 7,
		  { 0x91, 1, 1, 0x70, 8, 0x20, 0x01 }, 0,
		  24, "event with stack id 1 "
		  "(used before its stack record)" },
		{ "mapping ending before it starts", 0, 8, { 0xc4, 6, 1, 9, 8, 0, 0, '/' }, 0,
		  18, "mapping record that ends "
		  "before it starts" },
		{ "build-id of 21 bytes", 0, 8, { 0xc4, 6, 1, 1, 2, 0, 21, 0 }, 0,
		  18, "mapping record with a "
		  "build-id longer than 20 bytes or its payload" },
		{ "time record without times", AT_ATZ_FLAG_NO_TIMES, 2, { 0x93, 5 }, 0,
		  18, "unknown record kind" },
		{ "tail cut by the frame's end", 0, 9,
		  { 0x91, 1, 1, 0x70, 8, 0x20, 0x02, 0x71, 0x83 }, 1,
		  26, "the frame ends inside a "
		  "record" },
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		uint8_t hdr[] = HEADER_V2(cases[k].flags), c[128];
		memcpy(c, hdr, sizeof(hdr));
		memcpy(c + sizeof(hdr), cases[k].rec, cases[k].n);
		struct file f = frame_of(c, sizeof(hdr) + cases[k].n);
		static struct records rec;
		struct at_event out[2];
		char msg[320], want[320];
		int rc;
		print_message("%s\n", cases[k].name);
		assert_int_equal(decode_records(&f, out, 2, &rec, &rc, msg, sizeof(msg)),
				 cases[k].events);
		assert_int_equal(rc, -1);
		snprintf(want, sizeof(want), "mem: corrupt stream at content byte %u (",
			 cases[k].offset);
		assert_memory_equal(msg, want, strlen(want));
		snprintf(want, sizeof(want), "): %s", cases[k].why);
		assert_true(strlen(msg) > strlen(want));
		assert_string_equal(msg + strlen(msg) - strlen(want), want);
		free(f.p);
	}

	/* In a 1.x frame, 0xC3 and 0xC4 are sized kinds to skip: no callback, events as ever. */
	static const uint8_t v1[] = { 0xc3, 2, 0xff, 0xff, 0xc4, 1, 0xff, 0x91, 1, 1, 0x70, 8,
				      0x20 };
	uint8_t c[64];
	memcpy(c, header_v1, sizeof(header_v1));
	memcpy(c + sizeof(header_v1), v1, sizeof(v1));
	struct file f = frame_of(c, sizeof(header_v1) + sizeof(v1));
	static struct records rec;
	struct at_event out[2];
	int rc;
	assert_int_equal(decode_records(&f, out, 2, &rec, &rc, NULL, 0), 1);
	assert_int_equal(rc, 0);
	assert_int_equal(rec.stacks + rec.mappings, 0);
	free(f.p);
}

/* Two 2.0 traces one after the other (a trace appended to): stack ids start over in the
 * second frame, and the time reference with them. */
static void test_v2_frames_restart_ids(void **state)
{
	(void)state;
	struct file part[2];
	for (int i = 0; i < 2; i++) {
		struct mem_writer m;
		struct at_stack st = { .id = 1, .pid = 1, .count = 1, .pcs = { 0x100u + i } };
		struct at_event ev = { 1, 1, AT_MALLOC, 1, { 8, 0 }, 0x10, 100u + i, 1 };
		mem_writer_open(&m, 0, 0);
		assert_int_equal(at_atz_append_stack(m.w, &st), 0);
		assert_int_equal(at_atz_append(m.w, &ev), 0);
		part[i] = mem_writer_close(&m);
	}
	struct file both = concat(&part[0], part[1].p, part[1].n);
	static struct records rec;
	struct at_event out[2];
	int rc;
	assert_int_equal(decode_records(&both, out, 2, &rec, &rc, NULL, 0), 2);
	assert_int_equal(rc, 0);
	assert_string_equal(rec.order, "SESE");
	assert_int_equal(rec.stack[1].id, 1);
	assert_int_equal(rec.stack[1].pcs[0], 0x101);
	assert_int_equal(out[1].stack, 1);
	assert_int_equal(out[1].time_ns, 101);
	free(part[0].p);
	free(part[1].p);
	free(both.p);
}

/* A 2.5 frame with stacks 1 and 2 and an event of stack 2, then (in *second) a frame by one
 * writer's at_atz_writer_next_frame with flags and stacks_before: an event of stack 1, the
 * stack stacks_before + 1 and an event of it. The whole file; *first the first frame's
 * bytes. */
static struct file frames_going_on(unsigned flags, uint32_t stacks_before, size_t *first)
{
	struct mem_writer m;
	struct at_atz_options next = { .flags = flags, .host = "testhost", .start_ns = 42,
				       .minor = AT_ATZ_PYTHON_MINOR,
				       .stacks_before = stacks_before };
	struct at_stack st = { .pid = 1, .count = 1 };
	struct at_event ev = { 1, 1, AT_MALLOC, 1, { 8, 0 }, 0x10, 100, 2 };
	struct at_atz_stats s;

	mem_writer_open_v(&m, 0, 2, AT_ATZ_PYTHON_MINOR);
	for (uint32_t id = 1; id <= 2; id++) {
		st.id = id;
		st.pcs[0] = 0x100 * id;
		assert_int_equal(at_atz_append_stack(m.w, &st), 0);
	}
	assert_int_equal(at_atz_append(m.w, &ev), 0);
	assert_int_equal(at_atz_writer_end_frame(m.w), 0);
	*first = (size_t)m.o.written + m.o.len;
	assert_int_equal(at_atz_writer_next_frame(m.w, &next), 0);
	ev.stack = 1;
	ev.time_ns = 200;
	assert_int_equal(at_atz_append(m.w, &ev), 0);
	st.id = stacks_before + 1;
	st.pcs[0] = 0x300;
	assert_int_equal(at_atz_append_stack(m.w, &st), 0);
	ev.stack = st.id;
	ev.time_ns = 300;
	assert_int_equal(at_atz_append(m.w, &ev), 0);
	at_atz_writer_stats(m.w, &s);
	assert_int_equal(s.events, 3); /* the counters go on from frame to frame */
	assert_int_equal(s.stacks, 3);
	return mem_writer_close(&m);
}

/* 2.6: a frame that says STACKS_GO_ON keeps the stacks of the frames before it, and its own ids
 * continue theirs: an event of the second frame names the first frame's stack 1, and the
 * second frame's stack is 3. A frame going on from more stacks than were defined is refused at
 * its stack, as a frame without the flag whose first stack is not 1; the writer writes 2.6
 * alone for the flag, and takes stacks_before only with it. */
/* A frame begun with end_apart has no content checksum (FLG 0x50) and is ended by another:
 * the 4-byte end mark written where it goes; at_atz_writer_ended_apart then writes nothing,
 * and the next frame follows the mark. The file reads as one trace of both frames' events. */
static void test_frame_ended_apart(void **state)
{
	(void)state;
	struct mem_writer m;
	struct at_atz_options o = { .flags = AT_ATZ_FLAG_NO_STACKS, .host = "testhost",
				    .start_ns = 42, .end_apart = 1 };
	struct at_event ev = { 1, 2, AT_MALLOC, 1, { 8, 0 }, 0x10, 100, 0 }, out[4];
	static struct records rec;
	int rc;

	m.fd = memfd_create("atz", 0);
	assert_int_equal(at_output_open_fd(&m.o, m.fd, "mem"), 0);
	m.w = at_atz_writer_open(&m.o, &o);
	assert_non_null(m.w);
	assert_int_equal(at_atz_append(m.w, &ev), 0);
	assert_int_equal(at_atz_flush(m.w), 0);
	memset(at_output_reserve(&m.o, 4), 0, 4); /* the end mark, written apart */
	at_output_commit(&m.o, 4);
	uint64_t at = m.o.written + m.o.len;

	assert_int_equal(at_atz_writer_ended_apart(m.w), 0);
	assert_int_equal(m.o.written + m.o.len, at);
	assert_int_equal(at_atz_writer_ended_apart(m.w), 0); /* once ended, nothing */
	o.end_apart = 0;
	assert_int_equal(at_atz_writer_next_frame(m.w, &o), 0);
	ev.result = 0x20;
	assert_int_equal(at_atz_append(m.w, &ev), 0);
	struct file f = mem_writer_close(&m);
	const uint8_t *b = f.p;

	assert_int_equal(b[4], 0x50);
	assert_int_equal(memcmp(b + at, "\x04\x22\x4d\x18", 4), 0);
	assert_int_equal(b[at + 4], 0x54);
	assert_int_equal(decode_records(&f, out, 4, &rec, &rc, NULL, 0), 2);
	assert_int_equal(rc, 0);
	assert_int_equal(out[0].result, 0x10);
	assert_int_equal(out[1].result, 0x20);
	free(f.p);
}

static void test_v26_frames_go_on(void **state)
{
	(void)state;
	static struct records rec;
	struct at_event out[4];
	char msg[320];
	size_t first;
	int rc;
	struct file f = frames_going_on(AT_ATZ_FLAG_STACKS_GO_ON, 2, &first);

	assert_int_equal(((uint8_t *)f.p)[first + 7 + 4 + 5], AT_ATZ_GO_ON_MINOR);
	assert_int_equal(decode_records(&f, out, 4, &rec, &rc, NULL, 0), 3);
	assert_int_equal(rc, 0);
	assert_string_equal(rec.order, "SSEESE");
	assert_int_equal(out[1].stack, 1);
	assert_int_equal(out[1].time_ns, 200);
	assert_int_equal(rec.stack[2].id, 3);
	assert_int_equal(rec.stack[2].pcs[0], 0x300);
	assert_int_equal(out[2].stack, 3);
	free(f.p);

	memset(&rec, 0, sizeof(rec));
	f = frames_going_on(AT_ATZ_FLAG_STACKS_GO_ON, 5, &first);
	assert_int_equal(decode_records(&f, out, 4, &rec, &rc, msg, sizeof(msg)), 2);
	assert_int_equal(rc, -1);
	assert_non_null(strstr(msg, "stack record with id 6 where id 3 comes next"));
	free(f.p);

	/* the same second frame without the flag: its ids start over, and stack 1 is not yet
	 * defined there */
	struct mem_writer m;
	struct at_atz_options o = { .minor = AT_ATZ_PYTHON_MINOR };

	mem_writer_open_v(&m, 0, 2, AT_ATZ_PYTHON_MINOR);
	o.stacks_before = 2; /* without the flag */
	assert_int_equal(at_atz_writer_next_frame(m.w, &o), -1);
	assert_int_equal(errno, EINVAL);
	o.stacks_before = 0;
	o.flags = AT_ATZ_FLAG_STACKS_GO_ON | AT_ATZ_FLAG_NO_STACKS;
	assert_int_equal(at_atz_writer_next_frame(m.w, &o), -1);
	assert_int_equal(errno, EINVAL);
	o.flags = AT_ATZ_FLAG_STACKS_GO_ON;
	o.minor = AT_ATZ_V2_MINOR;
	assert_int_equal(at_atz_writer_next_frame(m.w, &o), -1);
	assert_int_equal(errno, EINVAL);
	assert_null(at_atz_writer_open(&m.o, &o));
	assert_int_equal(errno, EINVAL);
	o.minor = AT_ATZ_PYTHON_MINOR;
	o.flags = 0;
	struct at_event ev = { 1, 1, AT_MALLOC, 1, { 8, 0 }, 0x10, 100, 0 };

	assert_int_equal(at_atz_append(m.w, &ev), 0); /* the refusals left the frame going on */
	assert_int_equal(at_atz_writer_next_frame(m.w, &o), 0);
	ev.stack = 1;
	assert_int_equal(at_atz_append(m.w, &ev), -1);
	assert_int_equal(errno, EINVAL);
	f = mem_writer_close(&m);
	memset(&rec, 0, sizeof(rec));
	assert_int_equal(decode_records(&f, out, 4, &rec, &rc, NULL, 0), 1);
	assert_int_equal(rc, 0);
	free(f.p);
}

/* ---- 2.2: events coded against live tables ------------------------------------------------ */
/* The 2.2 header with host "testhost", start 42 and flags f. */
#define HEADER_V22(f) { 'A', 'T', 'Z', 0, 2, 2, f, 42, 8, 't', 'e', 's', 't', 'h', 'o', 's', 't', 0 }
#define NO_TAIL (AT_ATZ_FLAG_NO_TIMES | AT_ATZ_FLAG_NO_STACKS)

/* The example of doc/FORMAT.md 6.6, then an example of every other 2.2 kind, byte for byte:
 * each byte below was worked out by hand from the document. */
static void test_v22_record_bytes(void **state)
{
	(void)state;
	struct at_event ev[80];
	size_t n = 0;
#define EV(tid, f, hr, a0, a1, r) ev[n++] = (struct at_event){ 7, tid, f, hr, { a0, a1 }, r, 0, 0 }
	EV(9, AT_MALLOC, 1, 32, 0, 0x1000);
	EV(9, AT_MALLOC, 1, 32, 0, 0x1030);
	EV(9, AT_FREE, 0, 0x1000, 0, 0);
	EV(9, AT_MALLOC, 1, 40, 0, 0x1000);
	EV(10, AT_FREE, 0, 0x1030, 0, 0);
	EV(9, AT_FREE, 0, 0x1000, 0, 0);
	EV(9, AT_FREE, 0, 0x5003, 0, 0);           /* no table holds it */
	EV(9, AT_FREE, 0, 0, 0, 0);
	EV(9, AT_REALLOC, 1, 0, 100, 0x1060);      /* the top */
	EV(9, AT_REALLOC, 1, 0x1060, 200, 0x1060); /* in place */
	EV(9, AT_REALLOC, 1, 0x1060, 300, 0x2000); /* moved: from the top */
	EV(9, AT_CALLOC, 1, 1, 200, 0x1060);       /* the freed block of class 13 */
	EV(9, AT_REALLOC, 1, 0x7000, 64, 0x7000);  /* a pointer no table holds */
	for (unsigned i = 0; i < 60; i++)          /* B_i, each from the top */
		EV(9, AT_MALLOC, 1, 16, 0, 0x7050 + 32 * i);
	EV(9, AT_FREE, 0, 0x7050 + 32 * 20, 0, 0);
	EV(9, AT_FREE, 0, 0x7050 + 32 * 21, 0, 0);
	EV(9, AT_FREE, 0, 0x7050 + 32 * 59, 0, 0);
	EV(9, AT_FREE, 0, 0x2000, 0, 0);
#undef EV
	static const uint8_t head[] = {
		0x95, 7, 9, 0x47, 0x20, 0x81, 0x10, 0x06, 0x49, 0x40, 0x28, /* FORMAT.md 6.6 */
		0x95, 7, 10, 0x7e, 0, 0x49, 0x94, 0, 0x48,
		/* FREE_ADDR: adelta(0x5003 - 0x1000) = zz(0x4003) << 1 | 1 = 0x1000d */
		0x7a, 0x8d, 0x80, 0x04,
		0x79,
		/* REALLOC_NULL size 100 (class 7), A = 1: the top 0x1060; the top becomes 0x10d0 */
		0x7d, 100, 0x01,
		/* REALLOC_SAME P = 0 (recency 0), size 200 */
		0x7b, 0, 0xc8, 0x01,
		/* REALLOC_MOVE P = 0, size 300 (class 20): A = adelta(0x2000 - 0x10d0) << 1 | 1 */
		0x7c, 0, 0xac, 0x02, 0x99, 0x0f,
		/* calloc(1,200): 1 LITERAL, 200 RING 2 (after 1 was pushed), TABLE A = 0 */
		0x81, 0x40 | 3 | 1 << 2 | 1 << 4, 1, 2, 0,
		/* realloc(0x7000,64)=0x7000: pointer DELTA adelta(0x7000 - 0x1060) = 0x17e8, 64
		 * LITERAL, result TABLE A = adelta(0x7000 - 0x2140) << 1 | 1 = 0x2761 */
		0x82, 0x40 | 2 | 3 << 2 | 1 << 4, 0xe8, 0x2f, 0x40, 0xe1, 0x4e,
		0x46, 16, /* B_0: MALLOC size 16, the top */
	};
	/* live: 0x2000 0x1060 0x7000 B_0..B_59, cursor 0. B_20: rank 23, recency 39, distance
	 * zz(23) = 46: FREE_FAR P = 78; B_21: rank 23 again, FREE_NEAR 0; B_59: recency 0;
	 * 0x2000: rank 0, recency 59, distance zz(-60) = 119: FREE_FAR P = 118 */
	static const uint8_t tail[] = { 0x78, 78, 0x68, 0x48, 0x78, 118 };
	static const uint8_t hdr[] = HEADER_V22(NO_TAIL);
	struct file f = write_events_vm(ev, n, 0, NO_TAIL, 2, 2);
	uint8_t c[4096];
	size_t cn = content_of(&f, c, sizeof(c));

	assert_int_equal(cn, sizeof(hdr) + sizeof(head) + 59 + sizeof(tail));
	assert_memory_equal(c, hdr, sizeof(hdr));
	assert_memory_equal(c + sizeof(hdr), head, sizeof(head));
	for (unsigned i = 0; i < 59; i++) /* B_1..B_59: QUICK_MALLOC size 0, the top */
		assert_int_equal(c[sizeof(hdr) + sizeof(head) + i], 0x06);
	assert_memory_equal(c + cn - sizeof(tail), tail, sizeof(tail));
	roundtrip(ev, n, 0);
	roundtrip(ev, n, 5);
	free(f.p);
}

/* A random program for the 2.2 round trips: its processes, threads and live blocks, an
 * allocator that gives a block of a class back last in first out, else from its top, so the
 * model's predictions hit and miss as on a real program. */
struct sim_block {
	uint64_t addr, size;
	uint32_t thread;
};

struct sim {
	unsigned pids, threads; /* threads per process */
	struct sim_block *live;
	size_t nlive, cap;
	uint64_t top[8];
	uint64_t *freed[8][64]; /* per process and class (small ones): stack of addresses */
	size_t nfreed[8][64];
};

static uint64_t sim_class(uint64_t n)
{
	uint64_t c = (n + 23) / 16;
	return c < 2 ? 2 : c;
}

/* An address for n bytes in process p: a freed one of its class, or the top's. */
static uint64_t sim_alloc(struct sim *s, unsigned p, uint64_t n)
{
	uint64_t c = sim_class(n);

	if (c < 64 && s->nfreed[p][c] && rnd() % 8)
		return s->freed[p][c][--s->nfreed[p][c]];
	uint64_t x = s->top[p];
	s->top[p] += 16 * c + (rnd() % 16 == 0 ? 64 : 0);
	return x;
}

static void sim_keep(struct sim *s, uint64_t addr, uint64_t size, uint32_t thread)
{
	if (s->nlive == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 1024;
		s->live = realloc(s->live, s->cap * sizeof(*s->live));
	}
	s->live[s->nlive++] = (struct sim_block){ addr, size, thread };
}

/* Takes live block i out (its address goes on its class's freed stack). */
static uint64_t sim_release(struct sim *s, size_t i)
{
	struct sim_block b = s->live[i];
	unsigned p = b.thread / s->threads;
	uint64_t c = sim_class(b.size);

	s->live[i] = s->live[--s->nlive];
	if (c < 64 && s->nfreed[p][c] < 4096) {
		if (!s->freed[p][c])
			s->freed[p][c] = malloc(4096 * sizeof(uint64_t));
		s->freed[p][c][s->nfreed[p][c]++] = b.addr;
	}
	return b.addr;
}

/* A live block of thread t's process: mostly t's own and recent, sometimes another thread's
 * (cross percent). -1 when there is none. */
static long sim_pick(struct sim *s, uint32_t t, unsigned cross)
{
	unsigned p = t / s->threads;

	for (unsigned tries = 0; tries < 32 && s->nlive; tries++) {
		size_t back = rnd() % 4 ? rnd() % 16 : rnd() % s->nlive;
		size_t i = s->nlive - 1 - (back < s->nlive ? back : 0);
		if (s->live[i].thread / s->threads == p &&
		    (s->live[i].thread == t || rnd() % 100 < cross))
			return (long)i;
	}
	return -1;
}

struct sim_case {
	const char *name;
	unsigned pids, threads, events;
	unsigned cross, unknown, lost, missed; /* percent of frees, of frees, of events, of mallocs */
	unsigned flags, flush;                 /* header flags; flush every (0: never) */
};

/* The next event of thread t: malloc, free, realloc or the rest, with NULL pointers, failures,
 * frees of pointers no one allocated, and allocations at a live address (a lost free). */
static struct at_event sim_event(struct sim *s, const struct sim_case *k, uint32_t t)
{
	unsigned p = t / s->threads, r = (unsigned)(rnd() % 100);
	struct at_event e = { 100 + p, 1000 + t, AT_MALLOC, 1, { 0, 0 }, 0, 0, 0 };
	uint64_t n = rnd() % 8 ? 8 * (1 + rnd() % 40) : rnd() % 100000;
	long i;

	if (r < 40) {
		e.arg[0] = n;
		if (rnd() % 100 < k->missed && (i = sim_pick(s, t, 100)) >= 0) {
			e.result = s->live[i].addr;       /* its free was lost */
			s->live[i] = s->live[--s->nlive];
		} else {
			e.result = rnd() % 50 ? sim_alloc(s, p, n) : 0;
		}
	} else if (r < 80) {
		e.func = AT_FREE;
		e.has_result = 0;
		if (rnd() % 100 < k->unknown)
			e.arg[0] = rnd() % 20 ? 0x7f0000000000ull + 16 * (rnd() % 1000) : rnd();
		else if ((i = sim_pick(s, t, k->cross)) >= 0)
			e.arg[0] = sim_release(s, (size_t)i);
	} else if (r < 92) {
		e.func = AT_REALLOC;
		e.arg[1] = n;
		i = rnd() % 5 ? sim_pick(s, t, k->cross) : -1;
		if (i >= 0 && rnd() % 3 == 0) { /* in place */
			e.arg[0] = e.result = s->live[i].addr;
			s->live[i].size = n;
			s->live[i].thread = t;
			return e;
		}
		if (i >= 0)
			e.arg[0] = sim_release(s, (size_t)i);
		else if (rnd() % 4 == 0)
			e.arg[0] = 0x6f0000000000ull + 16 * (rnd() % 1000); /* no one's */
		e.result = rnd() % 30 ? sim_alloc(s, p, n) : 0;
	} else {
		static const uint8_t funcs[] = { AT_CALLOC, AT_MEMALIGN, AT_POSIX_MEMALIGN,
						 AT_ALIGNED_ALLOC, AT_VALLOC, AT_JEMALLOC_STATS };
		e.func = funcs[rnd() % sizeof(funcs)];
		e.arg[0] = e.func == AT_VALLOC ? n : e.func == AT_CALLOC ? 1 + rnd() % 4 : 64;
		e.arg[1] = at_func_nargs[e.func] == 2 ? n : 0;
		e.has_result = e.func != AT_JEMALLOC_STATS;
		if (e.has_result && rnd() % 20)
			e.result = sim_alloc(s, p, e.arg[at_func_nargs[e.func] == 2]);
	}
	if (e.has_result && e.result)
		sim_keep(s, e.result, e.func == AT_REALLOC || e.func >= AT_MEMALIGN ? e.arg[1]
				    : e.func == AT_CALLOC ? e.arg[0] * e.arg[1] : e.arg[0], t);
	return e;
}

/* Random programs through a 2.2 writer and back: every event and every lost count where it
 * was, with cross-thread frees, frees of unknown pointers, free(NULL), failed calls, lost
 * frees, many threads and processes, munged or raw, with or without times. */
static void test_v22_random_streams(void **state)
{
	(void)state;
	static const struct sim_case cases[] = {
		{ "one thread", 1, 1, 60000, 0, 1, 0, 0, NO_TAIL, 0 },
		{ "threads freeing each other's", 1, 6, 60000, 30, 2, 0, 0, NO_TAIL, 4096 },
		{ "processes, lost events, lost frees", 5, 3, 60000, 10, 5, 2, 3, NO_TAIL, 1000 },
		{ "munged", 2, 2, 30000, 10, 2, 1, 1, NO_TAIL | AT_ATZ_FLAG_MUNGED, 0 },
		{ "with times", 2, 4, 30000, 20, 2, 1, 1, AT_ATZ_FLAG_NO_STACKS, 333 },
		{ "many threads", 3, 700, 60000, 20, 2, 0, 0, NO_TAIL, 0 },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const struct sim_case *k = &cases[c];
		static struct sim s;
		struct at_event *ev = calloc(k->events, sizeof(*ev)), e;
		uint64_t *lost = calloc(k->events, sizeof(*lost));
		struct mem_writer m;

		memset(&s, 0, sizeof(s));
		s.pids = k->pids;
		s.threads = k->threads;
		for (unsigned p = 0; p < k->pids; p++)
			s.top[p] = k->flags & AT_ATZ_FLAG_MUNGED ? 1 : 0x55550000ull + (p << 20);
		mem_writer_open_v(&m, k->flags, 2, 2);
		for (unsigned i = 0; i < k->events; i++) {
			if (rnd() % 100 < k->lost) {
				lost[i] = 1 + rnd() % 300;
				assert_int_equal(at_atz_append_lost(m.w, lost[i]), 0);
			}
			ev[i] = sim_event(&s, k, (uint32_t)(rnd() % (k->pids * k->threads)));
			if (!(k->flags & AT_ATZ_FLAG_NO_TIMES))
				ev[i].time_ns = 1000000 + 100 * i - rnd() % 50;
			assert_int_equal(at_atz_append(m.w, &ev[i]), 0);
			if (k->flush && i % k->flush == 0)
				assert_int_equal(at_atz_flush(m.w), 0);
		}
		struct file f = mem_writer_close(&m);
		int fd = memfd_create("atz", 0);
		assert_int_equal(write(fd, f.p, f.n), (ssize_t)f.n);
		lseek(fd, 0, SEEK_SET);
		struct at_atz_reader *r = at_atz_reader_open(fd, k->name, NULL, 0);
		for (unsigned i = 0; i < k->events; i++) {
			assert_int_equal(at_atz_next(r, &e), 1);
			assert_event_equal(&e, &ev[i]);
			assert_int_equal(e.time_ns, ev[i].time_ns);
			assert_int_equal(at_atz_lost_before(r), lost[i]);
		}
		assert_int_equal(at_atz_next(r, &e), 0);
		assert_int_equal(at_atz_reader_header(r)->minor, 2);
		at_atz_reader_close(r);
		close(fd);
		free(f.p);
		for (unsigned p = 0; p < 8; p++)
			for (unsigned j = 0; j < 64; j++)
				free(s.freed[p][j]);
		free(s.live);
		free(lost);
		free(ev);
	}
}

/* A thread with more live blocks than a table holds: the oldest drop out of it, and their
 * frees go by address; frees in every order, and a second thread freeing the first's. */
static void test_v22_live_cap(void **state)
{
	(void)state;
	enum { N = 70000 };
	struct at_event *ev = calloc(3 * N, sizeof(*ev));
	size_t n = 0;
	uint32_t *order = calloc(N, sizeof(*order));

	for (unsigned i = 0; i < N; i++) {
		ev[n++] = (struct at_event){ 3, 3, AT_MALLOC, 1, { 24 + i % 50, 0 },
					     0x10000000ull + 0x100ull * i, 0, 0 };
		order[i] = i;
	}
	for (unsigned i = N; i-- > 1;) { /* a random order */
		unsigned j = (unsigned)(rnd() % (i + 1));
		uint32_t x = order[i];
		order[i] = order[j];
		order[j] = x;
	}
	for (unsigned i = 0; i < N; i++)
		ev[n++] = (struct at_event){ 3, 3 + (i % 7 == 0), AT_FREE, 0,
					     { 0x10000000ull + 0x100ull * order[i], 0 }, 0, 0, 0 };
	for (unsigned i = 0; i < N / 2; i++) /* again, freed in allocation order */
		ev[n++] = (struct at_event){ 3, 3, AT_MALLOC, 1, { 24, 0 },
					     0x20000000ull + 0x20ull * i, 0, 0 };
	for (unsigned i = 0; i < N / 2; i++)
		ev[n++] = (struct at_event){ 3, 3, AT_FREE, 0, { 0x20000000ull + 0x20ull * i, 0 },
					     0, 0, 0 };
	struct file f = write_events_vm(ev, n, 0, NO_TAIL, 2, 2);
	struct at_event *out = calloc(n, sizeof(*out));
	int rc;
	enum at_atz_status st;

	assert_int_equal(decode_all(f.p, f.n, out, n, &rc, &st), n);
	assert_int_equal(rc, 0);
	for (size_t i = 0; i < n; i++)
		assert_event_equal(&out[i], &ev[i]);
	free(f.p);
	free(out);
	free(order);
	free(ev);
}

/* Content that no 2.2 writer makes: each stops the reader with its reason, at its offset,
 * after the events before it. */
static void test_v22_corrupt(void **state)
{
	(void)state;
	static const struct {
		const char *why;
		unsigned events;
		size_t n;
		uint8_t rec[24];
	} cases[] = {
		{ "a release refers past its thread's live blocks", 0, 4, { 0x95, 7, 9, 0x48 } },
		{ "a release refers past its thread's live blocks", 0, 4, { 0x95, 7, 9, 0x68 } },
		{ "a release refers past its thread's live blocks", 0, 5, { 0x95, 7, 9, 0x78, 3 } },
		{ "a release refers past its thread's live blocks", 1, 9,
		  { 0x95, 7, 9, 0x47, 0x20, 0x81, 0x10, 0x78, 2 } },
		{ "a release refers past its thread's live blocks", 0, 6, { 0x95, 7, 9, 0x7b, 0, 16 } },
		{ "compact malloc refers past the size ring", 0, 4, { 0x95, 7, 9, 0x00 } },
		{ "an address code names a freed block that is not there", 0, 5,
		  { 0x95, 7, 9, 0x40, 0x20 } },
		{ "an address code names a freed block that is not there", 0, 6,
		  { 0x95, 7, 9, 0x7d, 16, 0 } },
		{ "an allocation at address 0", 0, 5, { 0x95, 7, 9, 0x46, 0x20 } },
		{ "other-table record names thread table entry 0, not in the table", 0, 2,
		  { 0x7e, 0 } },
		{ "other-table record names thread table entry 2, not in the table", 1, 15,
		  { 0x95, 7, 9, 0x47, 0x20, 0x81, 0x10, 0x95, 7, 10, 0x7e, 2, 0x48 } },
		/* END records (2.3), honoured in any 2.x frame */
		{ "event before any thread record (or after its thread's end)", 0, 7,
		  { 0x95, 7, 9, 0xc6, 1, 0, 0x79 } },
		{ "a thread record names thread table entry 0, a thread that ended", 0, 8,
		  { 0x95, 7, 9, 0xc6, 1, 0, 0x94, 0 } },
		{ "an end record names thread table entry 0, a thread that ended", 0, 9,
		  { 0x95, 7, 9, 0xc6, 1, 0, 0xc6, 1, 0 } },
		{ "an end record names thread table entry 5, not in the table", 0, 3,
		  { 0xc6, 1, 5 } },
		{ "bad thread table entry in an end record", 0, 5, { 0x95, 7, 9, 0xc6, 0 } },
		{ "an other-table record names thread table entry 0, a thread that ended", 1, 16,
		  { 0x95, 7, 9, 0x47, 0x20, 0x81, 0x10, 0x95, 7, 10, 0x7e, 0, 0xc6, 1, 0, 0x48 } },
		{ "unknown record kind", 0, 6, { 0x95, 7, 9, 0x91, 7, 9 } },
		{ "unknown record kind", 0, 5, { 0x95, 7, 9, 0x90, 0 } },
		{ "unknown record kind", 0, 4, { 0x95, 7, 9, 0x7f } },
		{ "bad field in an event", 0, 7, { 0x95, 7, 9, 0x80, 0x40 | 3 | 2 << 4, 8, 0x10 } },
		{ "bad field in an event", 0, 7, { 0x95, 7, 9, 0x80, 3 | 1 << 2, 8, 0 } },
		{ "free address record of a null pointer", 0, 5, { 0x95, 7, 9, 0x7a, 0 } },
		{ "event before any thread record", 0, 1, { 0x79 } },
		{ "the frame ends inside a record", 0, 5, { 0x95, 7, 9, 0x47, 0x20 } },
	};
	static const uint8_t hdr[] = HEADER_V22(NO_TAIL);
	struct at_event out[4];
	int rc;
	enum at_atz_status st;

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		uint8_t c[128];
		char msg[400];
		size_t got;
		memcpy(c, hdr, sizeof(hdr));
		memcpy(c + sizeof(hdr), cases[k].rec, cases[k].n);
		struct file f = frame_of(c, sizeof(hdr) + cases[k].n);
		assert_int_equal(decode_message(f.p, f.n, &got, msg, sizeof(msg), NULL),
				 AT_ATZ_ERR_CORRUPT);
		if (!strstr(msg, cases[k].why))
			fail_msg("case %zu: \"%s\" lacks \"%s\"", k, msg, cases[k].why);
		assert_int_equal(got, cases[k].events);
		free(f.p);
	}
	/* 2.2's thread kinds are reserved before 2.2 */
	static const uint8_t v21[] = { 0x95, 7, 9, 0x79 };
	uint8_t h21[] = HEADER_V22(NO_TAIL);
	h21[5] = 1;
	assert_int_equal(decode_content(v21, sizeof(v21), &rc, &st, out, 4, h21, sizeof(h21)), 0);
	assert_int_equal(st, AT_ATZ_ERR_CORRUPT);

	/* random records after a 2.2 header, and a real 2.2 content with bytes changed: a clean
	 * end or an error, never a crash or a hang (ASan build too) */
	struct at_event ev[64];
	for (unsigned i = 0; i < 64; i++)
		ev[i] = (struct at_event){ 1 + i % 2, 7 + i % 3, (uint8_t)(rnd() % AT_FUNC_COUNT),
					   (uint8_t)(rnd() & 1), { rnd() % 300, rnd() % 3 },
					   (rnd() % 64) * 16, 0, 0 };
	struct file good = write_events_vm(ev, 64, 0, NO_TAIL, 2, 2);
	static uint8_t content[8192], buf[8192];
	size_t cn = content_of(&good, content, sizeof(content));
	for (unsigned i = 0; i < 6000; i++) {
		size_t n = 1 + rnd() % 300;
		if (i % 2) {
			memcpy(buf, hdr, sizeof(hdr));
			for (size_t j = 0; j < n; j++)
				buf[sizeof(hdr) + j] = j < 3 ? (uint8_t)"\x95\x07\x09"[j]
							     : (uint8_t)rnd();
			n += sizeof(hdr);
		} else {
			memcpy(buf, content, cn);
			for (unsigned j = 1 + rnd() % 4; j > 0; j--)
				buf[sizeof(hdr) + rnd() % (cn - sizeof(hdr))] = (uint8_t)rnd();
			n = rnd() % 4 ? cn : sizeof(hdr) + rnd() % (cn - sizeof(hdr));
		}
		struct file f = frame_of(buf, n);
		decode_all(f.p, f.n, NULL, 0, &rc, &st);
		assert_true(rc == 0 || (rc == -1 && (st == AT_ATZ_ERR_CORRUPT ||
						     st == AT_ATZ_ERR_NOMEM)));
		free(f.p);
	}
	free(good.p);
}

/* What a 2.0 or 2.1 reader does with a 2.2 trace (the same code reads a 2.1 frame): the
 * records before the first thread record, then it stops there, before any event, instead of
 * misreading them. */
static void test_v22_old_readers_stop(void **state)
{
	(void)state;
	const struct at_event ev[] = {
		{ 7, 9, AT_MALLOC, 1, { 32, 0 }, 0x1000, 0, 0 },
		{ 7, 9, AT_FREE, 0, { 0x1000, 0 }, 0, 0, 0 },
	};
	struct mem_writer m;
	struct at_rss rss = { 7, 5, 4096 };

	mem_writer_open_v(&m, NO_TAIL, 2, 2);
	assert_int_equal(at_atz_append_rss(m.w, &rss), 0);
	for (size_t i = 0; i < 2; i++)
		assert_int_equal(at_atz_append(m.w, &ev[i]), 0);
	struct file f = mem_writer_close(&m);
	uint8_t c[256];
	size_t cn = content_of(&f, c, sizeof(c)), got;
	static const uint8_t hdr[] = HEADER_V22(NO_TAIL);
	char msg[400], want[200];

	c[5] = 1; /* the same content as a 2.1 reader sees it */
	struct file old = frame_of(c, cn);
	assert_int_equal(decode_message(old.p, old.n, &got, msg, sizeof(msg), NULL),
			 AT_ATZ_ERR_CORRUPT);
	assert_int_equal(got, 0);
	snprintf(want, sizeof(want), "corrupt stream at content byte %zu ", sizeof(hdr) + 6);
	assert_non_null(strstr(msg, want)); /* after the RSS record: c5 04 07 05 80 20 */
	assert_non_null(strstr(msg, "unknown record kind"));
	c[5] = 2;
	struct file now = frame_of(c, cn);
	assert_int_equal(decode_message(now.p, now.n, &got, msg, sizeof(msg), NULL), AT_ATZ_OK);
	assert_int_equal(got, 2);
	free(now.p);
	free(old.p);
	free(f.p);
}

#define HEADER_V23(f) { 'A', 'T', 'Z', 0, 2, 3, f, 42, 8, 't', 'e', 's', 't', 'h', 'o', 's', 't', 0 }

/* Thread ends (doc/FORMAT.md 5.9), byte for byte: an END record releases the thread's state
 * (a later free of its block by another thread goes by address, its next event starts a new
 * entry), a process's EXIT ends each of its threads; a reader releases them too, and one that
 * skips END records (as a 2.2 reader skips a sized kind it does not know) decodes the same
 * events. */
static void test_v23_thread_ends(void **state)
{
	(void)state;
	const struct at_event ev[] = {
		{ 7, 9, AT_MALLOC, 1, { 32, 0 }, 0x1000, 0, 0 },
		{ 7, 10, AT_MALLOC, 1, { 32, 0 }, 0x2000, 0, 0 },
		/* thread 9 ends here */
		{ 7, 10, AT_FREE, 0, { 0x1000, 0 }, 0, 0, 0 },
		{ 7, 9, AT_MALLOC, 1, { 32, 0 }, 0x1000, 0, 0 },
		{ 8, 1, AT_MALLOC, 1, { 32, 0 }, 0x1000, 0, 0 },
		/* process 7 exits here */
		{ 8, 1, AT_FREE, 0, { 0x1000, 0 }, 0, 0, 0 },
	};
	struct at_atz_process exit7 = { AT_ATZ_PROCESS_EXIT, 0, 7, 1, 5, 0, NULL, 0, NULL, 0 };
	struct mem_writer m;

	mem_writer_open_v(&m, NO_TAIL, 2, 3);
	assert_int_equal(at_atz_end_thread(m.w, 7, 11), 0); /* no state: nothing */
	for (size_t i = 0; i < 5; i++) {
		if (i == 2)
			assert_int_equal(at_atz_end_thread(m.w, 7, 9), 0);
		assert_int_equal(at_atz_append(m.w, &ev[i]), 0);
	}
	assert_int_equal(at_atz_append_process_change(m.w, &exit7), 0);
	assert_int_equal(at_atz_append(m.w, &ev[5]), 0);
	struct at_atz_stats ws;
	at_atz_writer_stats(m.w, &ws);
	assert_int_equal(ws.threads, 4);
	assert_int_equal(ws.ended, 3);
	struct file f = mem_writer_close(&m);
	static const uint8_t hdr[] = HEADER_V23(NO_TAIL);
	static const uint8_t want[] = {
		0x95, 7, 9, 0x47, 0x20, 0x81, 0x10,   /* entry 0, MALLOC 32 from the top: 0x1000 */
		0x95, 7, 10, 0x47, 0x20, 0x81, 0x20,  /* entry 1, 0x2000 */
		0xc6, 1, 0,                           /* END entry 0 */
		0x7a, 0x80, 0x08,                     /* FREE_ADDR 0x1000: its table is gone */
		0x95, 7, 9, 0x47, 0x20, 0x81, 0x10,   /* entry 2: thread 9 again, fresh state */
		0x95, 8, 1, 0x47, 0x20, 0x81, 0x10,   /* entry 3 */
		0xc2, 0x07, 3, 0, 7, 1, 5, 0, 0,      /* EXIT of 7 (no executable, no arguments) */
	};
	uint8_t c[256];
	size_t cn = content_of(&f, c, sizeof(c));
	assert_int_equal(cn, sizeof(hdr) + sizeof(want) + 6 + 1);
	assert_memory_equal(c, hdr, sizeof(hdr));
	assert_memory_equal(c + sizeof(hdr), want, sizeof(want));
	/* then END of entries 1 and 2, in the writer's order, and QUICK_FREE of entry 3 */
	const uint8_t *ends = c + sizeof(hdr) + sizeof(want);
	assert_true((memcmp(ends, "\xc6\x01\x01\xc6\x01\x02", 6) == 0) ||
		    (memcmp(ends, "\xc6\x01\x02\xc6\x01\x01", 6) == 0));
	assert_int_equal(c[cn - 1], 0x48);

	struct at_event out[8];
	enum at_atz_status st;
	int rc;
	assert_int_equal(decode_all(f.p, f.n, out, 8, &rc, &st), 6);
	assert_int_equal(rc, 0);
	for (size_t i = 0; i < 6; i++)
		assert_event_equal(&out[i], &ev[i]);
	/* the same content with every END record made a kind the reader skips */
	c[sizeof(hdr) + 14] = 0xdf;
	c[sizeof(hdr) + sizeof(want)] = 0xdf;
	c[sizeof(hdr) + sizeof(want) + 3] = 0xdf;
	struct file skip = frame_of(c, cn);
	assert_int_equal(decode_all(skip.p, skip.n, out, 8, &rc, &st), 6);
	assert_int_equal(rc, 0);
	for (size_t i = 0; i < 6; i++)
		assert_event_equal(&out[i], &ev[i]);
	free(skip.p);
	free(f.p);
}

/* A writer of 2.2 or before writes no END record: at_atz_end_thread does nothing there. */
static void test_v23_no_ends_before(void **state)
{
	(void)state;
	const struct at_event ev = { 7, 9, AT_MALLOC, 1, { 32, 0 }, 0x1000, 0, 0 };
	struct mem_writer m;

	for (unsigned minor = 0; minor <= 2; minor++) {
		mem_writer_open_v(&m, NO_TAIL, 2, minor);
		assert_int_equal(at_atz_append(m.w, &ev), 0);
		assert_int_equal(at_atz_end_thread(m.w, 7, 9), 0);
		assert_int_equal(at_atz_end_process(m.w, 7), 0);
		assert_int_equal(at_atz_append(m.w, &ev), 0);
		struct at_atz_stats ws;
		at_atz_writer_stats(m.w, &ws);
		assert_int_equal(ws.ended, 0);
		assert_int_equal(ws.threads, 1);
		struct file f = mem_writer_close(&m);
		uint8_t c[256];
		size_t cn = content_of(&f, c, sizeof(c));
		assert_null(memchr(c + 18, 0xc6, cn - 18));
		free(f.p);
	}
}

/* Many threads, each ended after its one malloc, then a free of each block by another thread
 * (by address: its table went with its thread): the events come back exact. */
static void test_v23_many_ended_threads(void **state)
{
	(void)state;
	enum { N = 20000 };
	struct at_event *ev = calloc(2 * N, sizeof(*ev));
	struct mem_writer m;

	mem_writer_open_v(&m, NO_TAIL, 2, 3);
	for (uint32_t i = 0; i < N; i++) {
		ev[i] = (struct at_event){ 7, 100 + i, AT_MALLOC, 1, { 16 + i % 64, 0 },
					   0x100000 + 64 * i, 0, 0 };
		assert_int_equal(at_atz_append(m.w, &ev[i]), 0);
		assert_int_equal(at_atz_end_thread(m.w, 7, 100 + i), 0);
	}
	for (uint32_t i = 0; i < N; i++) {
		ev[N + i] = (struct at_event){ 7, 1, AT_FREE, 0, { 0x100000 + 64 * i, 0 }, 0, 0, 0 };
		assert_int_equal(at_atz_append(m.w, &ev[N + i]), 0);
	}
	struct file f = mem_writer_close(&m);
	struct at_event *out = calloc(2 * N, sizeof(*out));
	enum at_atz_status st;
	int rc;
	assert_int_equal(decode_all(f.p, f.n, out, 2 * N, &rc, &st), 2 * N);
	assert_int_equal(rc, 0);
	for (size_t i = 0; i < 2 * N; i++)
		assert_event_equal(&out[i], &ev[i]);
	free(out);
	free(ev);
	free(f.p);
}

/* A random program of `threads` threads, two mallocs for one free, written as 2.3 and as 2.2
 * under lowered limits: the 2.3 writer ends states itself to stay within them (a block of an
 * ended thread freed later goes by address) and a reader under the same limits reads every
 * event back; one under lower limits (`lower`), or reading the 2.2 trace (no END records),
 * refuses it with the limit it met (`why`, `why22`). */
static void keeps_limits(uint32_t threads, struct atz_limits limits, struct atz_limits lower,
			 const char *why22, const char *why)
{
	enum { EVENTS = 30000 };
	struct atz_limits saved = atz_limits;
	struct at_event *ev = calloc(EVENTS, sizeof(*ev));
	uint64_t *live = calloc(EVENTS, sizeof(*live)), next = 0x10000;
	size_t nlive = 0;

	for (size_t i = 0; i < EVENTS; i++) {
		uint32_t tid = 1 + (uint32_t)(rnd() % threads);
		if (nlive && rnd() % 3 == 0) {
			size_t k = rnd() % nlive;
			ev[i] = (struct at_event){ 7, tid, AT_FREE, 0, { live[k], 0 }, 0, 0, 0 };
			live[k] = live[--nlive];
		} else {
			ev[i] = (struct at_event){ 7, tid, AT_MALLOC, 1, { 16 + rnd() % 100, 0 }, next,
						   0, 0 };
			live[nlive++] = next;
			next += 16 * (1 + rnd() % 8);
		}
	}
	struct file f[2];
	struct at_atz_stats ws;
	atz_limits = limits;
	for (unsigned v = 0; v < 2; v++) {
		struct mem_writer m;
		mem_writer_open_v(&m, NO_TAIL, 2, 3 - v);
		for (size_t i = 0; i < EVENTS; i++)
			assert_int_equal(at_atz_append(m.w, &ev[i]), 0);
		at_atz_writer_stats(m.w, &ws);
		assert_true(v ? ws.ended == 0 : ws.ended > 100);
		f[v] = mem_writer_close(&m);
	}
	struct at_event *out = calloc(EVENTS, sizeof(*out));
	enum at_atz_status st;
	char msg[400];
	size_t got;
	int rc;
	assert_int_equal(decode_all(f[0].p, f[0].n, out, EVENTS, &rc, &st), EVENTS);
	assert_int_equal(rc, 0);
	for (size_t i = 0; i < EVENTS; i++)
		assert_event_equal(&out[i], &ev[i]);
	assert_int_equal(decode_message(f[1].p, f[1].n, &got, msg, sizeof(msg), NULL),
			 AT_ATZ_ERR_CORRUPT);
	if (!strstr(msg, why22))
		fail_msg("\"%s\" lacks \"%s\"", msg, why22);
	atz_limits = lower;
	assert_int_equal(decode_message(f[0].p, f[0].n, &got, msg, sizeof(msg), NULL),
			 AT_ATZ_ERR_CORRUPT);
	if (!strstr(msg, why))
		fail_msg("\"%s\" lacks \"%s\"", msg, why);
	atz_limits = saved;
	free(out);
	free(live);
	free(ev);
	free(f[0].p);
	free(f[1].p);
}

static void test_v23_writer_keeps_limits(void **state)
{
	(void)state;
	struct atz_limits all = atz_limits;

	keeps_limits(200, (struct atz_limits){ 50, all.blocks }, (struct atz_limits){ 20, all.blocks },
		     "a new thread while 50 threads have not ended (this reader holds at most 50 "
		     "at once)", "a new thread while 20 threads have not ended (this reader "
		     "holds at most 20 at once)");
	keeps_limits(20, (struct atz_limits){ all.threads, 1000 },
		     (struct atz_limits){ all.threads, 100 },
		     "an allocation while 1000 blocks are live in the threads' tables (this reader "
		     "holds at most 1000)", "an allocation while 100 blocks are live in the threads' "
		     "tables (this reader holds at most 100)");
}

/* One stack record written by a 2.3 writer: the record's bytes (after the header) into rec,
 * their count returned; the file into *f. */
static size_t write_stack(const struct at_stack *st, struct file *f, uint8_t *rec, size_t cap)
{
	struct mem_writer m;
	uint8_t c[1024];

	mem_writer_open_v(&m, 0, 2, 3);
	assert_int_equal(at_atz_append_stack(m.w, st), 0);
	*f = mem_writer_close(&m);
	size_t n = content_of(f, c, sizeof(c));
	assert_true(n > sizeof(header_v2) && n - sizeof(header_v2) <= cap);
	memcpy(rec, c + sizeof(header_v2), n - sizeof(header_v2));
	return n - sizeof(header_v2);
}

/* The one stack of a file, read back. */
static struct at_stack read_stack(const struct file *f)
{
	static struct records rec;
	struct at_event out[1];
	int rc;

	assert_int_equal(decode_records(f, out, 1, &rec, &rc, NULL, 0), 0);
	assert_int_equal(rc, 0);
	assert_int_equal(rec.stacks, 1);
	return rec.stack[0];
}

/* Frame kinds (doc/FORMAT.md 5.6): a native stack is written without KINDS, as before, and
 * read back with every frame native; with KINDS and every kind 0 the kind bytes follow the
 * frames and are carried; both round-trip byte for byte. A reserved kind is refused by the
 * writer (EINVAL, nothing written) and by the reader (corruption at the record), as are kind
 * bytes cut short. */
static void test_v23_frame_kinds(void **state)
{
	(void)state;
	static const uint8_t native[] = { 0xc3, 0x09, 0x01, 0x07, 0x02, 0x00,
					  0x90, 0x20, 0xf4, 0xff, 0x03 };
	static const uint8_t kinds[] = { 0xc3, 0x0b, 0x01, 0x07, 0x02, 0x04, 0x90,
					 0x20, 0xf4, 0xff, 0x03, 0x00, 0x00 };
	struct at_stack st = { .id = 1, .pid = 7, .count = 2, .pcs = { 0x1010, 0x900a } };
	uint8_t rec[256], again[256];
	struct file f, g;

	st.kinds[1] = 9; /* without KINDS a writer never reads the kinds */
	assert_int_equal(write_stack(&st, &f, rec, sizeof(rec)), sizeof(native));
	assert_memory_equal(rec, native, sizeof(native));
	struct at_stack back = read_stack(&f);
	assert_int_equal(back.flags, 0);
	assert_int_equal(back.count, 2);
	assert_int_equal(back.kinds[0], AT_FRAME_NATIVE);
	assert_int_equal(back.kinds[1], AT_FRAME_NATIVE);
	assert_int_equal(write_stack(&back, &g, again, sizeof(again)), sizeof(native));
	assert_memory_equal(again, native, sizeof(native));
	free(f.p);
	free(g.p);

	st.flags = AT_STACK_KINDS;
	st.kinds[1] = AT_FRAME_NATIVE;
	assert_int_equal(write_stack(&st, &f, rec, sizeof(rec)), sizeof(kinds));
	assert_memory_equal(rec, kinds, sizeof(kinds));
	back = read_stack(&f);
	assert_int_equal(back.flags, AT_STACK_KINDS);
	assert_int_equal(back.pcs[1], 0x900a);
	assert_int_equal(back.kinds[0], AT_FRAME_NATIVE);
	assert_int_equal(back.kinds[1], AT_FRAME_NATIVE);
	assert_int_equal(write_stack(&back, &g, again, sizeof(again)), sizeof(kinds));
	assert_memory_equal(again, kinds, sizeof(kinds));
	free(f.p);
	free(g.p);

	/* the writer: a reserved kind is refused and the stack's id stays free */
	struct mem_writer m;
	struct at_atz_stats ws;
	mem_writer_open_v(&m, 0, 2, 3);
	st.kinds[1] = 1;
	errno = 0;
	assert_int_equal(at_atz_append_stack(m.w, &st), -1);
	assert_int_equal(errno, EINVAL);
	at_atz_writer_stats(m.w, &ws);
	assert_int_equal(ws.stacks, 0);
	st.kinds[1] = AT_FRAME_NATIVE;
	assert_int_equal(at_atz_append_stack(m.w, &st), 0);
	f = mem_writer_close(&m);
	free(f.p);

	/* the reader: a reserved kind, and kinds cut short, at the record's content offset 18 */
	static const struct {
		uint8_t n, rec[16];
		const char *why;
	} bad[] = {
		{ 13, { 0xc3, 0x0b, 0x01, 0x07, 0x02, 0x04, 0x90, 0x20, 0xf4, 0xff, 0x03, 0x00, 0x01 },
		  "stack record with a frame of kind 1 at frame 1 (this reader knows kind 0, "
		  "native)" },
		{ 13, { 0xc3, 0x0b, 0x01, 0x07, 0x02, 0x04, 0x90, 0x20, 0xf4, 0xff, 0x03, 0xff, 0x00 },
		  "stack record with a frame of kind 255 at frame 0 (this reader knows kind 0, "
		  "native)" },
		{ 12, { 0xc3, 0x0a, 0x01, 0x07, 0x02, 0x04, 0x90, 0x20, 0xf4, 0xff, 0x03, 0x00 },
		  "stack record that ends before its frame kinds" },
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		uint8_t c[64] = HEADER_V2(0);
		static struct records got;
		struct at_event out[1];
		char msg[320], want[320];
		int rc;

		c[5] = 3; /* 2.3 */
		memcpy(c + sizeof(header_v2), bad[k].rec, bad[k].n);
		f = frame_of(c, sizeof(header_v2) + bad[k].n);
		assert_int_equal(decode_records(&f, out, 1, &got, &rc, msg, sizeof(msg)), 0);
		assert_int_equal(rc, -1);
		assert_int_equal(got.stacks, 0);
		snprintf(want, sizeof(want), "mem: corrupt stream at content byte 18 (");
		assert_memory_equal(msg, want, strlen(want));
		snprintf(want, sizeof(want), "): %s", bad[k].why);
		assert_true(strlen(msg) > strlen(want));
		assert_string_equal(msg + strlen(msg) - strlen(want), want);
		free(f.p);
	}
}

/* What a reader handed over of a trace with frames of other kinds: its NAMES records (the
 * last one's strings kept) and its stacks. */
struct named {
	unsigned names, stacks;
	struct at_frame_name last;
	char function[64], file[64];
	struct at_stack stack;
};

static void record_names(void *arg, const struct at_frame_name *n)
{
	struct named *c = arg;

	c->names++;
	c->last = *n;
	snprintf(c->function, sizeof(c->function), "%s", n->function);
	snprintf(c->file, sizeof(c->file), "%s", n->file);
	c->last.function = c->function;
	c->last.file = c->file;
}

static void record_named_stack(void *arg, const struct at_stack *st)
{
	struct named *c = arg;

	c->stacks++;
	c->stack = *st;
}

/* Reads f whole with a reader that takes the test kind (test_kinds 1) or not: *c what it handed
 * over; the last at_atz_next result, and its message in msg. */
static int decode_named(const struct file *f, int test_kinds, struct named *c, char *msg,
			size_t msg_size)
{
	int fd = memfd_create("atz", 0);
	assert_int_equal(write(fd, f->p, f->n), (ssize_t)f->n);
	lseek(fd, 0, SEEK_SET);
	struct at_atz_reader *r = at_atz_reader_open(fd, "mem", NULL, 0);
	struct at_event ev;
	int rc;

	memset(c, 0, sizeof(*c));
	if (test_kinds)
		at_atz_reader_test_kinds(r);
	at_atz_reader_on_names(r, record_names, c);
	at_atz_reader_on_stack(r, record_named_stack, c);
	while ((rc = at_atz_next(r, &ev)) > 0)
		;
	snprintf(msg, msg_size, "%s", rc < 0 ? at_atz_reader_message(r) : "");
	at_atz_reader_close(r);
	close(fd);
	return rc;
}

/* A frame of a kind named by NAMES records (lib/frames.h's AT_FRAME_TEST, which the tests alone
 * may write): its NAMES record is written as doc/FORMAT.md 5.10's example, before the stack,
 * and both round-trip byte for byte with a reader that takes the test kind. Without test_kinds
 * the writer refuses both (EINVAL, nothing written), and a reader refuses the NAMES record and
 * the frame as corruption at the record's content offset 18; so does a reader that takes the test
 * kind for a NAMES record cut short, or one whose function runs past it. */
static void test_frame_names(void **state)
{
	(void)state;
	static const uint8_t names_rec[] = { 0xc7, 0x0a, 0x07, 0xfe, 0x05, 0x0c,
					     0x01, 0x66, 0x61, 0x2e, 0x70, 0x79 };
	struct at_frame_name n = { .pid = 7, .kind = AT_FRAME_TEST, .value = 5, .line = 12,
				   .function = "f", .file = "a.py" };
	struct at_stack st = { .id = 1, .pid = 7, .count = 2, .flags = AT_STACK_KINDS,
			       .pcs = { 0x1010, 5 }, .kinds = { AT_FRAME_NATIVE, AT_FRAME_TEST } };
	struct at_atz_options opt = { .host = "testhost", .start_ns = 42, .major = 2, .minor = 3,
				      .test_kinds = 1 };
	struct mem_writer m;
	struct named got;
	char msg[320];
	uint8_t c[1024], again[1024];

	m.fd = memfd_create("atz", 0);
	assert_int_equal(at_output_open_fd(&m.o, m.fd, "mem"), 0);
	m.w = at_atz_writer_open(&m.o, &opt);
	assert_non_null(m.w);
	assert_int_equal(at_atz_append_names(m.w, &n), 0);
	assert_int_equal(at_atz_append_stack(m.w, &st), 0);
	struct file f = mem_writer_close(&m);
	size_t len = content_of(&f, c, sizeof(c));
	assert_memory_equal(c + sizeof(header_v2), names_rec, sizeof(names_rec));
	assert_int_equal(decode_named(&f, 1, &got, msg, sizeof(msg)), 0);
	assert_int_equal(got.names, 1);
	assert_int_equal(got.last.pid, 7);
	assert_int_equal(got.last.kind, AT_FRAME_TEST);
	assert_int_equal(got.last.value, 5);
	assert_int_equal(got.last.line, 12);
	assert_string_equal(got.last.function, "f");
	assert_string_equal(got.last.file, "a.py");
	assert_int_equal(got.stacks, 1);
	assert_int_equal(got.stack.flags, AT_STACK_KINDS);
	assert_int_equal(got.stack.kinds[0], AT_FRAME_NATIVE);
	assert_int_equal(got.stack.kinds[1], AT_FRAME_TEST);
	assert_int_equal(got.stack.pcs[1], 5);
	/* written again from what was read: the same bytes */
	m.fd = memfd_create("atz", 0);
	assert_int_equal(at_output_open_fd(&m.o, m.fd, "mem"), 0);
	m.w = at_atz_writer_open(&m.o, &opt);
	assert_int_equal(at_atz_append_names(m.w, &got.last), 0);
	assert_int_equal(at_atz_append_stack(m.w, &got.stack), 0);
	struct file g = mem_writer_close(&m);
	assert_int_equal(content_of(&g, again, sizeof(again)), len);
	assert_memory_equal(again, c, len);
	free(g.p);

	/* a reader of the product: the NAMES record is refused at its offset */
	assert_int_equal(decode_named(&f, 0, &got, msg, sizeof(msg)), -1);
	assert_int_equal(got.names, 0);
	assert_non_null(strstr(msg, "corrupt stream at content byte 18 ("));
	assert_non_null(strstr(msg, "names record for frames of kind 254, which this reader does "
				    "not name by names"));
	free(f.p);

	/* a writer of the product refuses both */
	mem_writer_open_v(&m, 0, 2, 3);
	errno = 0;
	assert_int_equal(at_atz_append_names(m.w, &n), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(at_atz_append_stack(m.w, &st), -1);
	assert_int_equal(errno, EINVAL);
	struct at_atz_stats ws;
	at_atz_writer_stats(m.w, &ws);
	assert_int_equal(ws.stacks + ws.names, 0);
	f = mem_writer_close(&m);
	free(f.p);

	/* readers that take the test kind: records cut short, a kind they do not know */
	static const struct {
		uint8_t n, rec[16];
		const char *why;
	} bad[] = {
		{ 5, { 0xc7, 0x03, 0x07, 0xfe, 0x05 }, "bad number in a names record" },
		{ 6, { 0xc7, 0x04, 0x07, 0xfe, 0x05, 0x0c }, "bad number in a names record" },
		{ 9, { 0xc7, 0x07, 0x07, 0xfe, 0x05, 0x0c, 0x04, 0x66, 0x67 },
		  "names record with a function or file longer than 4096 bytes or its payload" },
		{ 8, { 0xc7, 0x06, 0x07, 0x00, 0x05, 0x0c, 0x00, 0x00 },
		  "names record for frames of kind 0, which this reader does not name by names" },
		{ 13, { 0xc3, 0x0b, 0x01, 0x07, 0x02, 0x04, 0x90, 0x20, 0xf4, 0xff, 0x03, 0x00, 0x02 },
		  "stack record with a frame of kind 2 at frame 1 (this reader knows kinds 0, "
		  "native; 1, python; 254, test)" },
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		uint8_t h[64] = HEADER_V2(0);
		char want[320];

		h[5] = 3; /* 2.3 */
		memcpy(h + sizeof(header_v2), bad[k].rec, bad[k].n);
		f = frame_of(h, sizeof(header_v2) + bad[k].n);
		assert_int_equal(decode_named(&f, 1, &got, msg, sizeof(msg)), -1);
		assert_int_equal(got.names + got.stacks, 0);
		snprintf(want, sizeof(want), "mem: corrupt stream at content byte 18 (");
		assert_memory_equal(msg, want, strlen(want));
		snprintf(want, sizeof(want), "): %s", bad[k].why);
		assert_true(strlen(msg) > strlen(want));
		assert_string_equal(msg + strlen(msg) - strlen(want), want);
		free(f.p);
	}
}

/* A 2.2 trace cut in two and each half written on its own, one after the other: every table
 * starts over in the second frame (a free there of a block of the first goes by address), and
 * the events read as one stream; 2.1 and 2.2 frames mix. */
static void test_v22_frames_restart(void **state)
{
	(void)state;
	enum { N = 3000 };
	static struct sim s;
	static const struct sim_case k = { "halves", 2, 3, N, 20, 2, 0, 2, NO_TAIL, 0 };
	struct at_event ev[N], out[N];
	int rc;
	enum at_atz_status st;

	memset(&s, 0, sizeof(s));
	s.pids = k.pids;
	s.threads = k.threads;
	s.top[0] = 0x10000;
	s.top[1] = 0x90000;
	for (unsigned i = 0; i < N; i++)
		ev[i] = sim_event(&s, &k, (uint32_t)(rnd() % 6));
	for (unsigned v = 1; v <= 2; v++) {
		struct file a = write_events_vm(ev, N / 3, 0, NO_TAIL, 2, 2);
		struct file b = write_events_vm(ev + N / 3, N - N / 3, 0, NO_TAIL, 2, v);
		struct file two = concat(&a, b.p, b.n);
		assert_int_equal(decode_all(two.p, two.n, out, N, &rc, &st), N);
		assert_int_equal(rc, 0);
		for (size_t i = 0; i < N; i++)
			assert_event_equal(&out[i], &ev[i]);
		free(two.p);
		free(a.p);
		free(b.p);
	}
	for (unsigned p = 0; p < 8; p++)
		for (unsigned j = 0; j < 64; j++)
			free(s.freed[p][j]);
	free(s.live);
}


/* Decodes a content (wrapped in a frame): the reader's status, its message in msg ("" if none),
 * the header it read in *h (zeroed when none). */
static enum at_atz_status decode_header(const uint8_t *content, size_t n, struct at_atz_header *h,
					char *msg, size_t cap)
{
	struct file f = frame_of(content, n);
	int fd = memfd_create("atz", 0);
	assert_int_equal(write(fd, f.p, f.n), (ssize_t)f.n);
	lseek(fd, 0, SEEK_SET);
	struct at_atz_reader *r = at_atz_reader_open(fd, "f.atz", NULL, 0);
	struct at_event ev;
	while (at_atz_next(r, &ev) > 0)
		;
	enum at_atz_status st = at_atz_reader_status(r);
	snprintf(msg, cap, "%s", st ? at_atz_reader_message(r) : "");
	memset(h, 0, sizeof(*h));
	if (at_atz_reader_header(r))
		*h = *at_atz_reader_header(r);
	at_atz_reader_close(r);
	close(fd);
	free(f.p);
	return st;
}

/* 2.4: the header extension says the trace's filter (FORMAT.md 3.1): the writer's bytes, read
 * back; a writer without a filter still writes what it is asked; entries of unknown keys are
 * skipped; a filter given twice, 0, or not filling its entry is corruption; the text that says
 * it. */
static void test_v24_filter_header(void **state)
{
	(void)state;
	const struct at_event ev[] = { { 7, 9, AT_MALLOC, 1, { 32, 0 }, 0x1000, 0, 0 } };
	struct at_atz_options opt = { .flags = AT_ATZ_FLAG_NO_STACKS, .host = "testhost",
				      .start_ns = 42, .major = 2, .minor = 3, .min_size = 100,
				      .sample_bytes = 524288 };
	static const uint8_t want[] = { 'A', 'T', 'Z', 0, 2, 4, 4, 42, 8, 't', 'e', 's', 't', 'h',
					'o', 's', 't', 8, 1, 1, 100, 2, 3, 0x80, 0x80, 0x20 };
	int fd = memfd_create("atz", 0);
	struct at_output o;
	assert_int_equal(at_output_open_fd(&o, fd, "mem"), 0);
	struct at_atz_writer *w = at_atz_writer_open(&o, &opt);
	assert_non_null(w);
	assert_int_equal(at_atz_append(w, &ev[0]), 0);
	assert_int_equal(at_atz_writer_close(w), 0);
	assert_int_equal(at_output_close(&o), 0);
	struct file f = { .n = (size_t)lseek(fd, 0, SEEK_END) };
	f.p = malloc(f.n);
	assert_int_equal(pread(fd, f.p, f.n, 0), (ssize_t)f.n);
	close(fd);
	uint8_t c[4096];
	size_t n = content_of(&f, c, sizeof(c));
	assert_true(n > sizeof(want));
	assert_memory_equal(c, want, sizeof(want));
	struct at_atz_header h;
	char msg[300];
	assert_int_equal(decode_header(c, n, &h, msg, sizeof(msg)), AT_ATZ_OK);
	assert_int_equal(h.minor, 4);
	assert_int_equal(h.min_size, 100);
	assert_int_equal(h.sample_bytes, 524288);
	assert_true(at_atz_filtered(&h));
	free(f.p);

	/* a filter needs 2.3 to build on */
	struct at_atz_options v22 = opt, v1 = opt;
	v22.minor = 2;
	v1.major = 1;
	v1.minor = 1;
	fd = memfd_create("atz", 0);
	assert_int_equal(at_output_open_fd(&o, fd, "mem"), 0);
	errno = 0;
	assert_null(at_atz_writer_open(&o, &v22));
	assert_int_equal(errno, EINVAL);
	assert_null(at_atz_writer_open(&o, &v1));
	assert_int_equal(errno, EINVAL);
	at_output_close(&o);
	close(fd);

	/* crafted extensions after a 2.4 header's host: { length, entries } */
	static const struct {
		uint8_t ext[12];
		size_t n;
		enum at_atz_status status;
		uint64_t min_size, sample_bytes;
		const char *message; /* the end of the reader's message */
	} cases[] = {
		{ { 0 }, 1, AT_ATZ_OK, 0, 0, "" },
		{ { 4, 9, 2, 0xff, 0xff }, 5, AT_ATZ_OK, 0, 0, "" }, /* unknown key 9 skipped */
		{ { 6, 9, 1, 0, 2, 1, 7 }, 7, AT_ATZ_OK, 0, 7, "" },
		{ { 6, 1, 1, 5, 1, 1, 6 }, 7, AT_ATZ_ERR_CORRUPT, 0, 0,
		  "header extension names the filter twice" },
		{ { 3, 1, 1, 0 }, 4, AT_ATZ_ERR_CORRUPT, 0, 0,
		  "bad filter in the header extension" },
		{ { 4, 1, 2, 5, 0 }, 5, AT_ATZ_ERR_CORRUPT, 0, 0,
		  "bad filter in the header extension" },
		{ { 3, 1, 3, 5 }, 4, AT_ATZ_ERR_CORRUPT, 0, 0,
		  "header extension entry cut short" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t content[64];
		size_t head = 17;
		memcpy(content, want, head);
		memcpy(content + head, cases[i].ext, cases[i].n);
		assert_int_equal(decode_header(content, head + cases[i].n, &h, msg, sizeof(msg)),
				 cases[i].status);
		/* "f.atz: corrupt stream at content byte 0 (lz4 block ...): REASON" */
		size_t ml = strlen(msg), wl = strlen(cases[i].message);
		assert_true(ml >= wl);
		assert_string_equal(msg + ml - wl, cases[i].message);
		if (wl)
			assert_int_equal(strncmp(msg, "f.atz: corrupt stream at content byte 0 (", 41),
					 0);
		if (cases[i].status == AT_ATZ_OK) {
			assert_int_equal(h.min_size, cases[i].min_size);
			assert_int_equal(h.sample_bytes, cases[i].sample_bytes);
		}
	}

	char text[200];
	struct at_atz_header both = { .min_size = 64, .sample_bytes = 4096 };
	assert_string_equal(at_atz_filter_text(&both, text, sizeof(text)),
			    "a sample of the allocations of at least 64 bytes, one per 4096 bytes "
			    "on average (alloctapd --min-size, --sample-bytes)");
	both.sample_bytes = 0;
	assert_string_equal(at_atz_filter_text(&both, text, sizeof(text)),
			    "only the allocations of at least 64 bytes (alloctapd --min-size)");
	both.min_size = 0;
	both.sample_bytes = 1;
	assert_string_equal(at_atz_filter_text(&both, text, sizeof(text)),
			    "a sample of the allocations, one per 1 bytes on average (alloctapd "
			    "--sample-bytes)");
	assert_false(at_atz_filtered(&(struct at_atz_header){ 0 }));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_and_compact_records),
		cmocka_unit_test(test_general_records),
		cmocka_unit_test(test_deep_release_hits),
		cmocka_unit_test(test_table_record_bytes),
		cmocka_unit_test(test_long_name_message),
		cmocka_unit_test(test_extremes_roundtrip),
		cmocka_unit_test(test_bad_events_refused),
		cmocka_unit_test(test_write_error_reported),
		cmocka_unit_test(test_predictor_depths),
		cmocka_unit_test(test_many_threads),
		cmocka_unit_test(test_lost_and_tables),
		cmocka_unit_test(test_versions_and_unknown_kinds),
		cmocka_unit_test(test_process_changes),
		cmocka_unit_test(test_process_change_bytes),
		cmocka_unit_test(test_truncate_every_offset),
		cmocka_unit_test(test_concatenated_frames),
		cmocka_unit_test(test_concatenated_frames_damaged),
		cmocka_unit_test(test_v26_frames_go_on),
		cmocka_unit_test(test_frame_ended_apart),
		cmocka_unit_test(test_flip_every_bit),
		cmocka_unit_test(test_random_inputs),
		cmocka_unit_test(test_v2_record_bytes),
		cmocka_unit_test(test_v21_rss),
		cmocka_unit_test(test_v2_tail_forms),
		cmocka_unit_test(test_v2_roundtrip_extremes),
		cmocka_unit_test(test_v2_refused),
		cmocka_unit_test(test_v2_corrupt),
		cmocka_unit_test(test_v2_frames_restart_ids),
		cmocka_unit_test(test_v22_record_bytes),
		cmocka_unit_test(test_v22_random_streams),
		cmocka_unit_test(test_v22_live_cap),
		cmocka_unit_test(test_v22_corrupt),
		cmocka_unit_test(test_v22_old_readers_stop),
		cmocka_unit_test(test_v22_frames_restart),
		cmocka_unit_test(test_v23_thread_ends),
		cmocka_unit_test(test_v23_no_ends_before),
		cmocka_unit_test(test_v23_many_ended_threads),
		cmocka_unit_test(test_v23_writer_keeps_limits),
		cmocka_unit_test(test_v23_frame_kinds),
		cmocka_unit_test(test_frame_names),
		cmocka_unit_test(test_v24_filter_header),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
