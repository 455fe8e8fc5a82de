/* test_daemon_stacks.c: unit tests of daemon/stacks/stacks.c's bookkeeping over the fake BPF
 * program (tests/unit/fake_bpf.c): the map sizes asked for, stacks taken from the stacks map
 * (and deleted there) written once per file as stack records with dense ids, a new file
 * numbering them again, an incomplete stack's rescan putting the process's mappings in the
 * map, and the program's counters. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "alloctap.h"
#include "atz.h"
#include "fake_bpf.h"
#include "source.h"
#include "stacks.h"

#define PID 10

static struct at_stacks stacks;

/* A program opened with stacks on or off, the stacks set up over it. */
static void open_stacks(int on)
{
	struct at_bpf_options o = { .stacks = on, .ring_bytes = 4096, .thread_slots = 1 };
	struct at_bpf *b;

	fake_bpf_reset();
	b = at_bpf_open(&o);
	at_stacks_configure(b, on);
	assert_int_equal(at_stacks_open(&stacks, b, NULL, 0), 0);
}

/* Stores in the fake's stacks map a stack of pid with count pcs from first, 0x10 apart. */
static void store(uint64_t hash, uint32_t pid, uint16_t count, uint16_t flags, uint64_t first)
{
	static struct at_bpf_stack s;

	memset(&s, 0, sizeof(s));
	s.pid = pid;
	s.count = count;
	s.flags = flags;
	for (uint16_t i = 0; i < count; i++) {
		s.pcs[i] = first + 0x10 * i;
		s.serials[i] = 1;
	}
	fake_bpf_store_stack(hash, &s);
}

/* A binary sink into a memory file. */
static int open_sink(struct at_sink *sink)
{
	struct at_sink_options opt = { .format = AT_SINK_ATZ };
	int fd = memfd_create("stacks", 0);

	assert_true(fd >= 0);
	assert_int_equal(at_sink_open_fd(sink, fd, "mem"), 0);
	assert_int_equal(at_sink_start(sink, &opt), 0);
	return fd;
}

/* Resolves hash for the next event and writes that event, carrying the id. The id. */
static uint32_t resolve_put(struct at_sink *sink, uint64_t hash)
{
	struct at_event ev = { PID, PID, AT_MALLOC, 1, { 8, 0 }, 0x10, 0, 0 };

	ev.stack = at_stacks_resolve(&stacks, sink, PID, hash);
	assert_int_equal(at_sink_put(sink, &ev), 0);
	return ev.stack;
}

struct seen {
	struct at_stack stacks[8];
	unsigned n;
};

static void see_stack(void *arg, const struct at_stack *s)
{
	struct seen *seen = arg;

	if (seen->n < 8)
		seen->stacks[seen->n++] = *s;
}

/* Reads the trace in fd back: its events' stack ids into ids (n of them), its stacks into
 * seen. */
static void read_back(int fd, uint32_t *ids, unsigned n, struct seen *seen)
{
	struct at_source src;
	struct at_event ev;

	memset(seen, 0, sizeof(*seen));
	lseek(fd, 0, SEEK_SET);
	assert_int_equal(at_source_open_fd(&src, fd, "mem"), 0);
	at_source_on_stack(&src, see_stack, seen);
	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(at_source_next(&src, &ev), 1);
		ids[i] = ev.stack;
	}
	assert_int_equal(at_source_next(&src, &ev), 0);
	at_source_close(&src);
	close(fd);
}

/* Map sizes are asked for only with stacks on, and exactly stacks.h's. */
static void test_configure(void **state)
{
	(void)state;
	const uint32_t on[5] = { AT_STACKS_RULES, AT_STACKS_PAGES, AT_STACKS_ENTRIES, 16384,
				 AT_STACKS_STORED };

	open_stacks(0);
	for (int i = 0; i < 5; i++)
		assert_int_equal(fake_bpf.stack_sizes[i], 0);
	at_stacks_close(&stacks);
	open_stacks(1);
	for (int i = 0; i < 5; i++)
		assert_int_equal(fake_bpf.stack_sizes[i], on[i]);
	assert_int_equal(stacks.on, 1);
	assert_true(stacks.mem[0] && stacks.mem[1] && stacks.mem[2] && stacks.mem[3]);
	assert_true(at_stacks_fd(&stacks) >= 0); /* the builder's */
	at_stacks_close(&stacks);
}

/* With stacks off nothing touches the maps. */
static void test_off(void **state)
{
	(void)state;
	struct at_sink sink;

	open_stacks(0);
	int fd = open_sink(&sink);
	store(0x77, PID, 2, 0, 0x1000);
	fake_bpf.stack_counts[AT_STACKS_WALKED] = 9;
	assert_int_equal(stacks.on, 0);
	assert_int_equal(at_stacks_resolve(&stacks, &sink, PID, 0x77), 0);
	assert_int_equal(fake_bpf.nstacks, 1);
	assert_int_equal(at_stacks_scan(&stacks, getpid()), 0);
	assert_int_equal(fake_bpf.nmappings, 0);
	at_stacks_summary(&stacks);
	assert_int_equal(stacks.counts[AT_STACKS_WALKED], 0);
	assert_int_equal(at_stacks_fd(&stacks), -1);
	assert_int_equal(at_sink_close(&sink), 0);
	close(fd);
	at_stacks_close(&stacks);
}

/* Hashes become ids 1, 2, ... in order of first appearance; each stack is taken from the map
 * (and deleted there) once and written once, before the first event that carries it; a hash
 * whose stack is gone gives no id. */
static void test_resolve(void **state)
{
	(void)state;
	static const struct {
		uint64_t hash;
		uint32_t id;
	} steps[] = {
		{ 0xb2, 1 }, { 0xa1, 2 }, { 0xb2, 1 }, { 0xc3, 3 }, { 0, 0 }, { 0xd4, 0 }, { 0xa1, 2 },
	};
	struct at_sink sink;
	struct seen seen;
	uint32_t ids[7];

	open_stacks(1);
	store(0xa1, PID, 3, 0, 0x1000);
	store(0xb2, PID, 1, AT_STACK_TRUNCATED, 0x2000);
	store(0xc3, PID, 2, AT_STACK_INCOMPLETE, 0x3000);
	int fd = open_sink(&sink);
	for (size_t i = 0; i < 7; i++)
		assert_int_equal(resolve_put(&sink, steps[i].hash), steps[i].id);
	assert_int_equal(at_sink_close(&sink), 0);
	assert_int_equal(fake_bpf.nstacks, 0);       /* each deleted from the map */
	assert_int_equal(fake_bpf.stacks_taken, 3);  /* each read once */
	assert_int_equal(stacks.written, 3);
	assert_int_equal(stacks.truncated, 1);
	assert_int_equal(stacks.incomplete, 1);
	assert_int_equal(stacks.unreadable, 1);

	read_back(fd, ids, 7, &seen);
	for (size_t i = 0; i < 7; i++)
		assert_int_equal(ids[i], steps[i].id);
	assert_int_equal(seen.n, 3);
	static const struct {
		uint16_t count, flags;
		uint64_t first;
	} want[] = { { 1, AT_STACK_TRUNCATED, 0x2000 }, { 3, 0, 0x1000 },
		     { 2, AT_STACK_INCOMPLETE, 0x3000 } };
	for (unsigned k = 0; k < 3; k++) {
		assert_int_equal(seen.stacks[k].id, k + 1);
		assert_int_equal(seen.stacks[k].pid, PID);
		assert_int_equal(seen.stacks[k].count, want[k].count);
		assert_int_equal(seen.stacks[k].flags, want[k].flags);
		for (unsigned i = 0; i < want[k].count; i++)
			assert_int_equal(seen.stacks[k].pcs[i], want[k].first + 0x10 * i);
	}
	at_stacks_close(&stacks);
}

/* A new file numbers stacks again from 1, in its own order, and writes each again, without
 * reading the map again. */
static void test_new_file(void **state)
{
	(void)state;
	struct at_sink sink;
	struct seen seen;
	uint32_t ids[3];

	open_stacks(1);
	store(0xa1, PID, 3, 0, 0x1000);
	store(0xb2, PID, 1, 0, 0x2000);
	int fd = open_sink(&sink);
	assert_int_equal(resolve_put(&sink, 0xa1), 1);
	assert_int_equal(resolve_put(&sink, 0xb2), 2);
	assert_int_equal(at_sink_close(&sink), 0);
	close(fd);

	at_stacks_new_file(&stacks);
	fd = open_sink(&sink);
	assert_int_equal(resolve_put(&sink, 0xb2), 1);
	assert_int_equal(resolve_put(&sink, 0xa1), 2);
	assert_int_equal(resolve_put(&sink, 0xb2), 1);
	assert_int_equal(at_sink_close(&sink), 0);
	assert_int_equal(fake_bpf.stacks_taken, 2);
	assert_int_equal(stacks.written, 4);
	read_back(fd, ids, 3, &seen);
	assert_int_equal(seen.n, 2);
	assert_int_equal(seen.stacks[0].id, 1);
	assert_int_equal(seen.stacks[0].pcs[0], 0x2000);
	assert_int_equal(seen.stacks[1].id, 2);
	assert_int_equal(seen.stacks[1].pcs[0], 0x1000);
	at_stacks_close(&stacks);
}

/* A stack that stopped at a pc without a table makes the daemon read its process's mappings
 * again (into the map, the walk's rule cache made stale), at most every AT_STACKS_RESCAN_MS;
 * the file's stack keeps only the flags of lib/stack.h. The process's end takes its mappings
 * out of the map. */
static void test_rescan(void **state)
{
	(void)state;
	struct at_sink sink;
	pid_t self = getpid();

	open_stacks(1);
	stacks.hold = 1;
	store(0xe5, (uint32_t)self, 2, AT_STACK_INCOMPLETE | AT_BPF_STACK_NO_TABLE, 0x5000);
	int fd = open_sink(&sink);
	struct at_event ev = { (uint32_t)self, (uint32_t)self, AT_MALLOC, 1, { 8, 0 }, 0x10, 0, 0 };
	ev.stack = at_stacks_resolve(&stacks, &sink, self, 0xe5);
	assert_int_equal(ev.stack, 1);
	assert_int_equal(stacks.rescans, 1);
	assert_true(fake_bpf_has_mappings(self));
	assert_int_equal(fake_bpf.mappings[0].hold_on_miss, 1);
	assert_true(fake_bpf.mappings[0].count > 0);
	assert_int_equal(fake_bpf.mappings_gen, 1);
	assert_int_equal(stacks.incomplete, 1);
	/* the same stack again, at once: no second read of the maps */
	assert_int_equal(at_stacks_resolve(&stacks, &sink, self, 0xe5), 1);
	assert_int_equal(stacks.rescans, 1);

	at_stacks_forget(&stacks, self);
	assert_false(fake_bpf_has_mappings(self));
	assert_int_equal(at_sink_close(&sink), 0);
	close(fd);
	at_stacks_close(&stacks);
}

/* The summary reads the program's counters, summed over CPUs. */
static void test_counts(void **state)
{
	(void)state;
	const uint64_t counts[AT_STACKS_COUNT] = { 12, 3, 2, 1 };

	open_stacks(1);
	memcpy(fake_bpf.stack_counts, counts, sizeof(counts));
	at_stacks_summary(&stacks);
	assert_memory_equal(stacks.counts, counts, sizeof(counts));
	at_stacks_close(&stacks);
}

/* A stop with no hold in the map is left alone. */
static void test_no_hold(void **state)
{
	(void)state;

	open_stacks(1);
	assert_int_equal(at_stacks_hold(&stacks, 4242, 4242), 0);
	assert_int_equal(stacks.holds, 0);
	assert_int_equal(at_stacks_park(&stacks, 4242, 4242), 0);
	assert_int_equal(stacks.held_count, 0);
	at_stacks_close(&stacks);
}

/* A BPF stack with a frame that is not native (the test kind) is written with its kinds and the
 * KINDS flag; a native one as ever, without. Read back by a reader that takes the test kind. */
static void test_resolve_kinds(void **state)
{
	(void)state;
	struct at_sink sink;
	struct at_sink_options opt = { .format = AT_SINK_ATZ, .atz = { .test_kinds = 1 } };
	static struct at_bpf_stack s;
	struct seen seen = { .n = 0 };
	struct at_event ev;

	open_stacks(1);
	store(0xa1, PID, 2, 0, 0x1000);
	memset(&s, 0, sizeof(s));
	s.pid = PID;
	s.count = 3;
	s.pcs[0] = 0x1000;
	s.pcs[1] = 5;
	s.pcs[2] = 0x3000;
	s.kinds[1] = AT_FRAME_TEST;
	fake_bpf_store_stack(0xb2, &s);
	int fd = memfd_create("stacks", 0);
	assert_int_equal(at_sink_open_fd(&sink, fd, "mem"), 0);
	assert_int_equal(at_sink_start(&sink, &opt), 0);
	assert_int_equal(resolve_put(&sink, 0xa1), 1);
	assert_int_equal(resolve_put(&sink, 0xb2), 2);
	assert_int_equal(at_sink_close(&sink), 0);

	lseek(fd, 0, SEEK_SET);
	struct at_atz_reader *r = at_atz_reader_open(fd, "mem", NULL, 0);
	at_atz_reader_test_kinds(r);
	at_atz_reader_on_stack(r, see_stack, &seen);
	while (at_atz_next(r, &ev) > 0)
		;
	assert_int_equal(at_atz_reader_status(r), AT_ATZ_OK);
	at_atz_reader_close(r);
	close(fd);
	assert_int_equal(seen.n, 2);
	assert_int_equal(seen.stacks[0].flags, 0);
	assert_int_equal(seen.stacks[1].flags, AT_STACK_KINDS);
	assert_int_equal(seen.stacks[1].kinds[0], AT_FRAME_NATIVE);
	assert_int_equal(seen.stacks[1].kinds[1], AT_FRAME_TEST);
	assert_int_equal(seen.stacks[1].pcs[1], 5);
	at_stacks_close(&stacks);
}

/* A frame's kind joins the hash only when it is not native: native kinds, or none, give the
 * hash of the frames alone (the BPF walk's); a frame of another kind gives another hash. */
static void test_hash_kinds(void **state)
{
	(void)state;
	const uint64_t pcs[3] = { 0x1000, 0x2004, 0x3008 };
	const uint32_t serials[3] = { 1, 1, 2 };
	const uint8_t native[3] = { AT_FRAME_NATIVE, AT_FRAME_NATIVE, AT_FRAME_NATIVE };
	const uint8_t mixed[3] = { AT_FRAME_NATIVE, AT_FRAME_TEST, AT_FRAME_NATIVE };
	uint64_t h = at_stack_hash_begin(PID);

	for (int i = 0; i < 3; i++)
		h = at_stack_hash_frame(h, pcs[i], serials[i]);
	h = at_stack_hash_key(at_stack_hash_flags(h, 0));
	assert_int_equal(at_stacks_hash(PID, pcs, serials, NULL, 3, 0, 1), h);
	assert_int_equal(at_stacks_hash(PID, pcs, serials, native, 3, 0, 1), h);
	assert_int_not_equal(at_stacks_hash(PID, pcs, serials, mixed, 3, 0, 1), h);
	assert_int_equal(at_stacks_hash(PID, pcs, serials, mixed, 3, 0, 0),
			 at_stacks_hash(PID, pcs, serials, NULL, 3, 0, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_configure), cmocka_unit_test(test_off),
		cmocka_unit_test(test_resolve),   cmocka_unit_test(test_new_file),
		cmocka_unit_test(test_rescan),    cmocka_unit_test(test_counts),
		cmocka_unit_test(test_no_hold),   cmocka_unit_test(test_hash_kinds),
		cmocka_unit_test(test_resolve_kinds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
