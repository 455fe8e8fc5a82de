/* bpf.c: the BPF program, its maps and its ring buffers through libbpf (bpf.h).
 *
 * The events go to one ring per possible CPU (bpf/prog/maps.h: event_data, event_pos; laid out
 * in alloctap.h). The rings together take at most the bytes asked for
 * (at_bpf_options.ring_bytes): each CPU gets a share, a power of two of at least
 * AT_BPF_RING_MIN and at most AT_BPF_RING_MAX, so that a burst on one CPU has room, and its
 * ring the slots that fill it (at_ring_slots_for: 64 bytes a record). Only a machine with more
 * possible CPUs than the total has shares of AT_BPF_RING_MIN (the total is then exceeded: a
 * smaller ring would wake the daemon every few hundred records), and a total below
 * AT_BPF_RING_MIN (asked for to see loss) gives each CPU that total.
 *
 * Reading: the rings are mapped (event_data whole, to read; event_pos, to write the consumer
 * positions) and read in place (daemon/trace/ring.h) by the merge (daemon/trace/reorder.h),
 * which keeps a record in its ring until it goes out. The programs ask for a wakeup through
 * the small ring buffer ring_wake, which a libbpf manager empties at each wakeup. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "alloctap.h"
#include "alloctap.skel.h"
#include "bpf.h"
#include "display.h"
#include "prim.h"

/* The smallest ring of a CPU, unless the total asked for is smaller. */
#define AT_BPF_RING_MIN (64u << 10)
/* The largest share: the verifier follows an offset into a map value up to 2^29 bytes. */
#define AT_BPF_RING_MAX (256u << 20)

struct at_bpf {
	struct alloctap *skel;
	struct at_ring *rings;  /* nrings, as mapped (a NULL data: not mapped) */
	struct at_ring_pos *positions; /* event_pos, mapped (NULL: not yet) */
	size_t positions_len;
	uint8_t *slots;         /* event_data, mapped (NULL: not yet) */
	size_t slots_len;
	struct ring_buffer *wake; /* the ring_wake ring (NULL: not open) */
	int epoll_fd;           /* readable when a ring woke the daemon (-1: none yet) */
	uint32_t total_bytes;   /* the rings' total asked for (at_bpf_options.ring_bytes) */
	uint32_t ring_bytes;    /* each CPU's share of total_bytes */
	uint64_t ring_slots;    /* each ring's slots: at_ring_slots_for(ring_bytes) */
	int nrings;             /* the possible CPUs: one ring each */
	uint64_t fill[2];       /* 0, and the bytes waiting at the last consume (for -v) */
	struct ring_buffer *news; /* the py_news ring (NULL: not open) */
	at_bpf_news_fn news_fn;
	void *news_arg;
};

/* The attach type of uprobe_multi links (Linux 6.6), and what link_create needs of union
 * bpf_attr for one, which Debian 12's headers and libbpf 1.1 do not know. */
#define AT_BPF_TRACE_UPROBE_MULTI 48
#define AT_BPF_LINK_CREATE 28
#define AT_BPF_UPROBE_MULTI_RETURN 1u
struct uprobe_multi_attr {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, multi_flags, pid;
};

/* libbpf's own messages: only with -vv (our errors say what failed). The verifier's log comes
 * as one message of up to megabytes, its reason at the end: written whole, in pieces of a
 * display line. */
static int libbpf_message(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	const int piece = AT_DISPLAY_MAX / 2;
	char *s = NULL;
	int n;

	(void)level;
	if (at_display_level < 4 || (n = vasprintf(&s, fmt, ap)) < 0)
		return 0;
	for (int off = 0; off < n; off += piece)
		at_display(4, "%.*s", n - off < piece ? n - off : piece, s + off);
	free(s);
	return 0;
}

/* The skeleton's program of prog. */
static struct bpf_program *program(const struct at_bpf *b, enum at_bpf_prog prog)
{
	switch (prog) {
	case AT_BPF_ALLOC_ENTRY: return b->skel->progs.alloc_entry;
	case AT_BPF_MALLOC_ENTRY: return b->skel->progs.malloc_entry;
	case AT_BPF_CALLOC_ENTRY: return b->skel->progs.calloc_entry;
	case AT_BPF_REALLOC_ENTRY: return b->skel->progs.realloc_entry;
	case AT_BPF_FREE_ENTRY: return b->skel->progs.free_entry;
	case AT_BPF_ALLOC_RETURN: return b->skel->progs.alloc_return;
	case AT_BPF_INTERNAL_CALL: return b->skel->progs.internal_call;
	case AT_BPF_LOADER_STATE: return b->skel->progs.loader_state;
	default: return NULL;
	}
}

/* Each ring's size for total bytes shared by ncpu rings (see the top of this file). */
static uint32_t ring_size(uint32_t total, int ncpu)
{
	uint32_t each = total;

	while (each > AT_BPF_RING_MIN && ((uint64_t)each * (uint64_t)ncpu > total ||
					  each > AT_BPF_RING_MAX))
		each >>= 1;
	return each;
}

/* Sets the read-only configuration and the sizes of o: the event rings for ncpu CPUs. */
static void configure(struct at_bpf *b, const struct at_bpf_options *o, int ncpu)
{
	struct alloctap *skel = b->skel;

	b->total_bytes = o->ring_bytes;
	b->ring_bytes = ring_size(o->ring_bytes, ncpu);
	b->nrings = ncpu;
	skel->rodata->trace_all = o->all ? 1 : 0;
	skel->rodata->self_tgid = o->self_tgid;
	skel->rodata->floor_only = o->floor ? 1 : 0;
	skel->rodata->probes_bound = o->bound ? 1 : 0;
	skel->rodata->stacks_on = o->stacks ? 1 : 0;
	b->ring_slots = at_ring_slots_for(b->ring_bytes);
	skel->rodata->ring_slots = b->ring_slots;
	skel->rodata->wakeup_records = at_ring_wakeup_records(b->ring_slots, (uint64_t)ncpu);
	bpf_map__set_max_entries(skel->maps.event_data, (uint32_t)ncpu);
	bpf_map__set_value_size(skel->maps.event_data, (uint32_t)(b->ring_slots * AT_RING_STEP));
	bpf_map__set_max_entries(skel->maps.event_pos, (uint32_t)ncpu);
	bpf_map__set_max_entries(skel->maps.targets, o->max_targets);
	bpf_map__set_max_entries(skel->maps.thread_slots, o->thread_slots);
	bpf_map__set_max_entries(skel->maps.slot_claims, (o->thread_slots + 3) / 4);
	skel->rodata->thread_slot_mask = o->thread_slots - 1;
	skel->rodata->filter_on = o->min_size || o->sample_bytes;
	skel->rodata->min_size = o->min_size;
	skel->rodata->sample_bytes = o->sample_bytes;
	skel->rodata->page_size = (uint64_t)sysconf(_SC_PAGESIZE);
	if (skel->rodata->filter_on)
		bpf_map__set_max_entries(skel->maps.blocks, o->block_map);
}

/* The rings' views, none mapped yet. 0, or -1 with errno set. */
static int alloc_rings(struct at_bpf *b)
{
	b->rings = calloc((size_t)b->nrings, sizeof(*b->rings));
	b->epoll_fd = -1;
	return b->rings ? 0 : -1;
}

/* Frees what at_bpf_open allocated (the skeleton apart). */
static void free_bpf(struct at_bpf *b)
{
	free(b->rings);
	free(b);
}

struct at_bpf *at_bpf_open(const struct at_bpf_options *o)
{
	struct at_bpf *b = calloc(1, sizeof(*b));
	int ncpu = libbpf_num_possible_cpus();

	if (!b)
		return NULL;
	if (ncpu <= 0) {
		free(b);
		errno = ncpu < 0 ? -ncpu : EINVAL;
		return NULL;
	}
	libbpf_set_print(libbpf_message);
	b->skel = alloctap__open();
	b->nrings = ncpu;
	if (!b->skel || alloc_rings(b) < 0) {
		int err = errno;
		alloctap__destroy(b->skel);
		free_bpf(b);
		errno = err;
		return NULL;
	}
	configure(b, o, ncpu);
	/* the probes' programs are loaded with the attach type of uprobe_multi links */
	for (int p = 0; p < AT_BPF_PROG_COUNT; p++)
		bpf_program__set_expected_attach_type(program(b, (enum at_bpf_prog)p),
						      AT_BPF_TRACE_UPROBE_MULTI);
	return b;
}

void at_bpf_size_stacks(struct at_bpf *b, uint32_t rules, uint32_t pages, uint32_t entries,
			uint32_t processes, uint32_t stacks)
{
	bpf_map__set_max_entries(b->skel->maps.unwind_rules, rules);
	bpf_map__set_max_entries(b->skel->maps.unwind_pages, pages);
	bpf_map__set_max_entries(b->skel->maps.unwind_entries, entries / 2);
	bpf_map__set_max_entries(b->skel->maps.proc_mappings, processes);
	bpf_map__set_max_entries(b->skel->maps.stacks, stacks);
	bpf_map__set_max_entries(b->skel->maps.py_procs, processes);
	bpf_map__set_max_entries(b->skel->maps.py_tstates, AT_BPF_PY_THREADS);
	bpf_map__set_max_entries(b->skel->maps.py_named, AT_BPF_PY_CODES);
}

int at_bpf_stacks_on(const struct at_bpf *b)
{
	return b->skel->rodata->stacks_on != 0;
}

int at_bpf_load(struct at_bpf *b)
{
	return alloctap__load(b->skel);
}

/* Unmaps the rings. */
static void unmap_rings(struct at_bpf *b)
{
	for (int c = 0; c < b->nrings; c++)
		b->rings[c].data = NULL;
	if (b->slots)
		at_unmap(b->slots, b->slots_len);
	b->slots = NULL;
	if (b->positions)
		at_unmap(b->positions, b->positions_len);
	b->positions = NULL;
}

void at_bpf_close(struct at_bpf *b)
{
	if (!b)
		return;
	ring_buffer__free(b->wake); /* closes epoll_fd, its own */
	ring_buffer__free(b->news);
	unmap_rings(b);
	alloctap__destroy(b->skel);
	free_bpf(b);
}

int at_bpf_attach_thread_exit(struct at_bpf *b)
{
	b->skel->links.thread_exit = bpf_program__attach(b->skel->progs.thread_exit);
	return b->skel->links.thread_exit ? 0 : -1;
}

int at_bpf_attach_thread_exec(struct at_bpf *b)
{
	b->skel->links.thread_exec = bpf_program__attach(b->skel->progs.thread_exec);
	return b->skel->links.thread_exec ? 0 : -1;
}

void at_bpf_set_loaded(struct at_bpf *b, enum at_bpf_prog prog, int loaded)
{
	bpf_program__set_autoload(program(b, prog), loaded != 0);
}

int at_bpf_loaded(const struct at_bpf *b, enum at_bpf_prog prog)
{
	return bpf_program__autoload(program(b, prog));
}

int at_bpf_attach_uprobes(struct at_bpf *b, enum at_bpf_prog prog, int retprobe, pid_t pid,
			  const char *path, const uint64_t *offsets, const uint64_t *cookies,
			  unsigned n)
{
	union {
		struct uprobe_multi_attr a;
		uint8_t size[128]; /* the kernel's union bpf_attr is larger: the rest must be 0 */
	} attr;

	memset(&attr, 0, sizeof(attr));
	attr.a.prog_fd = (uint32_t)bpf_program__fd(program(b, prog));
	attr.a.attach_type = AT_BPF_TRACE_UPROBE_MULTI;
	attr.a.path = (uint64_t)(uintptr_t)path;
	attr.a.offsets = (uint64_t)(uintptr_t)offsets;
	attr.a.cookies = (uint64_t)(uintptr_t)cookies;
	attr.a.cnt = n;
	attr.a.multi_flags = retprobe ? AT_BPF_UPROBE_MULTI_RETURN : 0;
	attr.a.pid = pid > 0 ? (uint32_t)pid : 0;
	return (int)syscall(SYS_bpf, AT_BPF_LINK_CREATE, &attr, sizeof(attr));
}

/* ---- the rings --------------------------------------------------------------------------- */

/* A wakeup's record says nothing more: the daemon reads every ring. */
static int wake_record(void *ctx, void *data, size_t size)
{
	(void)ctx;
	(void)data;
	(void)size;
	return 0;
}

/* The mapping of map, len bytes rounded up to pages (NULL with errno set). */
static void *map_array(struct bpf_map *map, size_t *len, int prot)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *p;

	*len = (*len + page - 1) & ~(page - 1);
	p = mmap(NULL, *len, prot, MAP_SHARED, bpf_map__fd(map), 0);
	return p == MAP_FAILED ? NULL : p;
}

int at_bpf_ring_open(struct at_bpf *b)
{
	size_t ring = (size_t)b->ring_slots * AT_RING_STEP;

	b->positions_len = (size_t)b->nrings * sizeof(struct at_ring_pos);
	b->positions = map_array(b->skel->maps.event_pos, &b->positions_len,
				 PROT_READ | PROT_WRITE);
	b->slots_len = (size_t)b->nrings * ring;
	b->slots = map_array(b->skel->maps.event_data, &b->slots_len, PROT_READ);
	if (!b->positions || !b->slots)
		return -1;
	for (int c = 0; c < b->nrings; c++)
		b->rings[c] = (struct at_ring){
			.consumer = (volatile uint64_t *)&b->positions[c].consumer,
			.producer = (const volatile uint64_t *)&b->positions[c].producer,
			.data = b->slots + (size_t)c * ring,
			.mask = b->ring_slots - 1 };
	b->wake = ring_buffer__new(bpf_map__fd(b->skel->maps.ring_wake), wake_record, NULL, NULL);
	if (!b->wake)
		return -1;
	b->epoll_fd = ring_buffer__epoll_fd(b->wake);
	return 0;
}

const struct at_ring *at_bpf_rings(struct at_bpf *b, unsigned *n)
{
	*n = (unsigned)b->nrings;
	return b->rings;
}

int at_bpf_ring_fd(const struct at_bpf *b)
{
	return b->epoll_fd;
}

/* The bytes waiting in all the rings, in bytes of the total asked for (the rings' total may
 * differ from it): into b->fill[1]. */
static void measure_fill(struct at_bpf *b)
{
	uint64_t waiting = 0;

	for (int c = 0; c < b->nrings; c++)
		if (b->rings[c].data)
			waiting += (at_ring_producer(&b->rings[c]) - at_ring_consumer(&b->rings[c])) *
				   AT_RING_STEP;
	b->fill[1] = waiting * b->total_bytes /
		     (b->ring_slots * AT_RING_STEP * (uint64_t)b->nrings);
}

void at_bpf_ring_woken(struct at_bpf *b)
{
	if (b->wake)
		ring_buffer__consume(b->wake);
	measure_fill(b);
}

void at_bpf_ring_positions(struct at_bpf *b, volatile uint64_t *pos[2])
{
	pos[0] = &b->fill[0];
	pos[1] = &b->fill[1];
}

const volatile uint64_t *at_bpf_leaders_gone(struct at_bpf *b)
{
	return (const volatile uint64_t *)&b->skel->bss->leaders_gone;
}

uint32_t at_bpf_wakeup_bytes(const struct at_bpf *b)
{
	return (uint32_t)(b->skel->rodata->wakeup_records * AT_RING_STEP);
}

uint64_t at_bpf_clock(const struct at_bpf *b)
{
	(void)b;
	return at_now_ns();
}

/* ---- the recording window ---------------------------------------------------------------- */

void at_bpf_set_recording(struct at_bpf *b, int on)
{
	/* seq_cst: the store is ordered before the counters are read (the BPF side increments
	 * its count, then reads recording again) */
	__atomic_store_n(&b->skel->bss->recording, on ? 1 : 0, __ATOMIC_SEQ_CST);
}

int at_bpf_in_flight(struct at_bpf *b, uint64_t *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	uint32_t zero = 0;

	if (ncpu <= 0)
		return -1;
	uint64_t values[ncpu];
	if (bpf_map_lookup_elem(bpf_map__fd(b->skel->maps.inflight), &zero, values) < 0)
		return -1;
	*sum = 0;
	for (int c = 0; c < ncpu; c++)
		*sum += values[c]; /* one slot alone may wrap; the sum does not */
	return 0;
}

/* ---- counters ---------------------------------------------------------------------------- */

void at_bpf_sum_counters(int map_fd, uint32_t n, uint64_t *sums)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t values[ncpu > 0 ? ncpu : 1];

	for (uint32_t k = 0; k < n; k++) {
		sums[k] = 0;
		if (ncpu > 0 && bpf_map_lookup_elem(map_fd, &k, values) == 0)
			for (int c = 0; c < ncpu; c++)
				sums[k] += values[c];
	}
}

void at_bpf_lost(struct at_bpf *b, uint64_t sums[AT_LOST_COUNT])
{
	at_bpf_sum_counters(bpf_map__fd(b->skel->maps.lost), AT_LOST_COUNT, sums);
}

int at_bpf_lost_by_ring(struct at_bpf *b, enum at_lost_counter which, uint64_t *per, unsigned n)
{
	int ncpu = libbpf_num_possible_cpus();
	uint32_t key = which;

	if (ncpu <= 0)
		return -1;
	uint64_t values[ncpu];
	if (bpf_map_lookup_elem(bpf_map__fd(b->skel->maps.lost), &key, values) < 0)
		return -1;
	for (unsigned c = 0; c < n; c++)
		per[c] = c < (unsigned)ncpu ? values[c] : 0;
	return 0;
}

void at_bpf_states_held(struct at_bpf *b, uint64_t *slots, uint64_t *storage)
{
	int fd = bpf_map__fd(b->skel->maps.slot_claims);
	uint32_t words = bpf_map__max_entries(b->skel->maps.slot_claims);

	*slots = 0;
	for (uint32_t k = 0; k < words; k++) {
		uint32_t v;

		if (bpf_map_lookup_elem(fd, &k, &v) == 0)
			for (unsigned shift = 0; shift < 32; shift += 8)
				*slots += (v >> shift) & 0xff;
	}
	*storage = __atomic_load_n(&b->skel->bss->threads_in_storage, __ATOMIC_RELAXED);
}

void at_bpf_counts(struct at_bpf *b, uint64_t sums[AT_COUNTS_COUNT])
{
	at_bpf_sum_counters(bpf_map__fd(b->skel->maps.counts), AT_COUNTS_COUNT, sums);
}

void at_bpf_stack_counts(struct at_bpf *b, uint64_t sums[AT_STACKS_COUNT])
{
	at_bpf_sum_counters(bpf_map__fd(b->skel->maps.stack_counts), AT_STACKS_COUNT, sums);
}

/* ---- targets ----------------------------------------------------------------------------- */

/* The targets map's value is what a thread caches of it (bpf/prog/maps.h: __u64). */
_Static_assert(sizeof(((struct at_thread *)0)->allocators) == sizeof(uint64_t),
	       "a target's allocators are one __u64 on both sides");

int at_bpf_set_target(struct at_bpf *b, pid_t pid, uint64_t allocators)
{
	uint32_t key = (uint32_t)pid;

	int fd = bpf_map__fd(b->skel->maps.targets);

	return bpf_map_update_elem(fd, &key, &allocators, BPF_ANY) < 0 ? -1 : 0;
}

void at_bpf_remove_target(struct at_bpf *b, pid_t pid)
{
	uint32_t key = (uint32_t)pid;

	bpf_map_delete_elem(bpf_map__fd(b->skel->maps.targets), &key);
}

int at_bpf_target(const struct at_bpf *b, pid_t pid, uint64_t *allocators)
{
	uint32_t key = (uint32_t)pid;

	int fd = bpf_map__fd(b->skel->maps.targets);

	return bpf_map_lookup_elem(fd, &key, allocators) < 0 ? -1 : 0;
}

void at_bpf_allocators_changed(struct at_bpf *b)
{
	__atomic_add_fetch(&b->skel->bss->allocators_gen, 1, __ATOMIC_RELEASE);
}

void at_bpf_check_allocators(struct at_bpf *b)
{
	b->skel->bss->allocator_check = 1;
}

int at_bpf_set_loading(struct at_bpf *b, pid_t pid)
{
	uint32_t key = (uint32_t)pid;
	uint8_t one = 1;

	int fd = bpf_map__fd(b->skel->maps.loading);

	return bpf_map_update_elem(fd, &key, &one, BPF_ANY) < 0 ? -1 : 0;
}

void at_bpf_clear_loading(struct at_bpf *b, pid_t pid)
{
	uint32_t key = (uint32_t)pid;

	bpf_map_delete_elem(bpf_map__fd(b->skel->maps.loading), &key);
}

/* ---- stacks ------------------------------------------------------------------------------ */

void *at_bpf_unwind_array(struct at_bpf *b, enum at_bpf_array a, uint32_t *elements,
			  size_t *bytes)
{
	struct bpf_map *arrays[4] = { b->skel->maps.unwind_rules, b->skel->maps.unwind_pages,
				      b->skel->maps.unwind_entries, b->skel->maps.unwind_tables };
	struct bpf_map *m = arrays[a];

	*elements = bpf_map__max_entries(m);
	*bytes = (size_t)*elements * bpf_map__value_size(m);
	void *mem = mmap(NULL, *bytes, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(m), 0);
	return mem == MAP_FAILED ? NULL : mem;
}

int at_bpf_put_mappings(struct at_bpf *b, pid_t pid, const struct at_bpf_mappings *m)
{
	uint32_t key = (uint32_t)pid;

	int fd = bpf_map__fd(b->skel->maps.proc_mappings);

	return bpf_map_update_elem(fd, &key, m, BPF_ANY) < 0 ? -1 : 0;
}

void at_bpf_delete_mappings(struct at_bpf *b, pid_t pid)
{
	uint32_t key = (uint32_t)pid;

	bpf_map_delete_elem(bpf_map__fd(b->skel->maps.proc_mappings), &key);
}

int at_bpf_put_python(struct at_bpf *b, pid_t pid, const struct at_bpf_py_proc *p)
{
	uint32_t key = (uint32_t)pid;

	return bpf_map_update_elem(bpf_map__fd(b->skel->maps.py_procs), &key, p, BPF_ANY) < 0
		       ? -1
		       : 0;
}

int at_bpf_py_named(struct at_bpf *b, const struct at_bpf_py_code *c)
{
	uint8_t one = 1;

	return bpf_map_update_elem(bpf_map__fd(b->skel->maps.py_named), c, &one, BPF_ANY) < 0
		       ? -1
		       : 0;
}

void at_bpf_delete_python(struct at_bpf *b, pid_t pid)
{
	uint32_t key = (uint32_t)pid;

	bpf_map_delete_elem(bpf_map__fd(b->skel->maps.py_procs), &key);
}

void at_bpf_mappings_changed(struct at_bpf *b)
{
	__atomic_fetch_add(&b->skel->bss->mappings_gen, 1, __ATOMIC_SEQ_CST);
}

int at_bpf_take_stack(struct at_bpf *b, uint64_t hash, struct at_bpf_stack *s)
{
	int fd = bpf_map__fd(b->skel->maps.stacks);

	/* a kernel without lookup-and-delete for hash maps: read, and leave it */
	if (bpf_map_lookup_and_delete_elem(fd, &hash, s) < 0 &&
	    bpf_map_lookup_elem(fd, &hash, s) < 0)
		return -1;
	return 0;
}

int at_bpf_peek_stack(struct at_bpf *b, uint64_t hash, struct at_bpf_stack *s)
{
	return bpf_map_lookup_elem(bpf_map__fd(b->skel->maps.stacks), &hash, s) < 0 ? -1 : 0;
}

/* ring_buffer's callback: one struct at_bpf_py_news. */
static int news_one(void *ctx, void *data, size_t size)
{
	struct at_bpf *b = ctx;
	struct at_bpf_py_news n;

	if (size < sizeof(n))
		return 0;
	memcpy(&n, data, sizeof(n));
	b->news_fn(b->news_arg, (pid_t)n.pid, n.hash);
	return 0;
}

int at_bpf_news_open(struct at_bpf *b, at_bpf_news_fn fn, void *arg)
{
	b->news_fn = fn;
	b->news_arg = arg;
	b->news = ring_buffer__new(bpf_map__fd(b->skel->maps.py_news), news_one, b, NULL);
	return b->news ? 0 : -1;
}

int at_bpf_news_fd(const struct at_bpf *b)
{
	return b->news ? ring_buffer__epoll_fd(b->news) : -1;
}

int at_bpf_news_take(struct at_bpf *b)
{
	int n = b->news ? ring_buffer__consume(b->news) : 0;

	return n > 0 ? n : 0;
}

int at_bpf_put_stack(struct at_bpf *b, uint64_t hash, const struct at_bpf_stack *s)
{
	if (bpf_map_update_elem(bpf_map__fd(b->skel->maps.stacks), &hash, s, BPF_NOEXIST) < 0 &&
	    errno != EEXIST)
		return -1;
	return 0;
}

int at_bpf_take_held(struct at_bpf *b, pid_t tid, struct at_bpf_held *h)
{
	uint32_t key = (uint32_t)tid;

	int fd = bpf_map__fd(b->skel->maps.held);

	return bpf_map_lookup_and_delete_elem(fd, &key, h) < 0 ? -1 : 0;
}

/* The map of where's thread states: thread_slots (key: a __u32 index), or the task storage
 * threads (key: an int, a pidfd of the thread). */
static int thread_map(const struct at_bpf *b, enum at_bpf_thread_store where)
{
	return bpf_map__fd(where == AT_BPF_THREAD_SLOT ? b->skel->maps.thread_slots
						       : b->skel->maps.threads);
}

int at_bpf_thread_read(struct at_bpf *b, enum at_bpf_thread_store where, uint32_t key,
		       struct at_thread *t)
{
	int pidfd = (int)key;
	const void *k = where == AT_BPF_THREAD_SLOT ? (const void *)&key : (const void *)&pidfd;

	return bpf_map_lookup_elem(thread_map(b, where), k, t) < 0 ? -1 : 0;
}

int at_bpf_thread_write(struct at_bpf *b, enum at_bpf_thread_store where, uint32_t key,
			const struct at_thread *t)
{
	int pidfd = (int)key;
	const void *k = where == AT_BPF_THREAD_SLOT ? (const void *)&key : (const void *)&pidfd;

	return bpf_map_update_elem(thread_map(b, where), k, t, BPF_EXIST) < 0 ? -1 : 0;
}
