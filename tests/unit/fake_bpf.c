/* fake_bpf.c: daemon/bpf.h over plain arrays (fake_bpf.h). Linked before libat_daemon.a, it
 * defines every function of bpf.h, so the archive's daemon/bpf.o (and libbpf) is never pulled
 * in. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fake_bpf.h"

struct fake_bpf fake_bpf;

/* The program: at_bpf_open hands out this one object (a driver opens one at a time). */
struct at_bpf {
	int unused;
};
static struct at_bpf the_program;

void fake_bpf_reset(void)
{
	for (unsigned i = 0; i < FAKE_BPF_RINGS; i++)
		ring_image_free(&fake_bpf.rings[i]);
	memset(&fake_bpf, 0, sizeof(fake_bpf));
	fake_bpf.ring_fd = -1;
	fake_bpf.clock = FAKE_BPF_CLOCK;
}

void fake_bpf_push(const struct at_record *record)
{
	if (fake_bpf.nrecords < FAKE_BPF_MAX)
		fake_bpf.records[fake_bpf.nrecords++] = *record;
}

/* The index of pid in the targets, or -1. */
static int target_index(pid_t pid)
{
	for (unsigned i = 0; i < fake_bpf.ntargets; i++)
		if (fake_bpf.targets[i].pid == pid)
			return (int)i;
	return -1;
}

int64_t fake_bpf_target(pid_t pid)
{
	int i = target_index(pid);

	return i < 0 ? -1 : (int64_t)fake_bpf.targets[i].allocators;
}

/* The index of pid's mappings, or -1. */
static int mappings_index(pid_t pid)
{
	for (unsigned i = 0; i < fake_bpf.nmappings; i++)
		if (fake_bpf.mappings[i].pid == pid)
			return (int)i;
	return -1;
}

int fake_bpf_has_mappings(pid_t pid)
{
	return mappings_index(pid) >= 0;
}

/* The index of the stack under hash, or -1. */
static int stack_index(uint64_t hash)
{
	for (unsigned i = 0; i < fake_bpf.nstacks; i++)
		if (fake_bpf.stacks[i].hash == hash)
			return (int)i;
	return -1;
}

void fake_bpf_store_stack(uint64_t hash, const struct at_bpf_stack *s)
{
	at_bpf_put_stack(&the_program, hash, s);
}

int fake_bpf_has_stack(uint64_t hash)
{
	return stack_index(hash) >= 0;
}

/* ---- the program ------------------------------------------------------------------------- */

struct at_bpf *at_bpf_open(const struct at_bpf_options *o)
{
	if (fake_bpf.open_errno) {
		errno = fake_bpf.open_errno;
		return NULL;
	}
	fake_bpf.opened++;
	fake_bpf.options = *o;
	return &the_program;
}

void at_bpf_size_stacks(struct at_bpf *b, uint32_t rules, uint32_t pages, uint32_t entries,
			uint32_t processes, uint32_t stacks)
{
	(void)b;
	fake_bpf.stack_sizes[0] = rules;
	fake_bpf.stack_sizes[1] = pages;
	fake_bpf.stack_sizes[2] = entries;
	fake_bpf.stack_sizes[3] = processes;
	fake_bpf.stack_sizes[4] = stacks;
}

int at_bpf_stacks_on(const struct at_bpf *b)
{
	(void)b;
	return fake_bpf.options.stacks != 0;
}

int at_bpf_load(struct at_bpf *b)
{
	(void)b;
	if (fake_bpf.load_error)
		return fake_bpf.load_error;
	fake_bpf.loaded = 1;
	return 0;
}

void at_bpf_close(struct at_bpf *b)
{
	if (!b)
		return;
	if (fake_bpf.ring_fd >= 0)
		close(fake_bpf.ring_fd);
	fake_bpf.ring_fd = -1;
	fake_bpf.closed++;
}

int at_bpf_attach_thread_exit(struct at_bpf *b)
{
	(void)b;
	fake_bpf.thread_exit = 1;
	return 0;
}

int at_bpf_attach_thread_exec(struct at_bpf *b)
{
	(void)b;
	fake_bpf.thread_exec = 1;
	return 0;
}

/* ---- the probes' programs ---------------------------------------------------------------- */

void at_bpf_set_loaded(struct at_bpf *b, enum at_bpf_prog prog, int loaded)
{
	(void)b;
	fake_bpf.not_loaded[prog] = !loaded;
}

int at_bpf_loaded(const struct at_bpf *b, enum at_bpf_prog prog)
{
	(void)b;
	return !fake_bpf.not_loaded[prog];
}

int at_bpf_attach_uprobes(struct at_bpf *b, enum at_bpf_prog prog, int retprobe, pid_t pid,
			  const char *path, const uint64_t *offsets, const uint64_t *cookies,
			  unsigned n)
{
	(void)b;
	if (fake_bpf.attach_errno || fake_bpf.nlinks == FAKE_BPF_MAX) {
		errno = fake_bpf.attach_errno ? fake_bpf.attach_errno : E2BIG;
		return -1;
	}
	struct fake_bpf_link *l = &fake_bpf.links[fake_bpf.nlinks];
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC); /* the caller closes it to detach */

	if (fd < 0)
		return -1;
	memset(l, 0, sizeof(*l));
	l->prog = prog;
	l->retprobe = retprobe;
	l->pid = pid;
	strncpy(l->path, path, sizeof(l->path) - 1);
	l->n = n;
	for (unsigned i = 0; i < n && i < 16; i++) {
		l->offsets[i] = offsets[i];
		l->cookies[i] = cookies ? cookies[i] : 0;
	}
	fake_bpf.nlinks++;
	return fd;
}

/* ---- the ring buffer --------------------------------------------------------------------- */

int at_bpf_ring_open(struct at_bpf *b)
{
	(void)b;
	fake_bpf.ring_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fake_bpf.ring_fd < 0)
		return -1;
	for (unsigned i = 0; i < FAKE_BPF_RINGS; i++) {
		if (ring_image_init(&fake_bpf.rings[i], FAKE_BPF_RING_BYTES) < 0)
			return -1;
		fake_bpf.views[i] = fake_bpf.rings[i].view;
	}
	fake_bpf.ring_open = 1;
	return 0;
}

const struct at_ring *at_bpf_rings(struct at_bpf *b, unsigned *n)
{
	(void)b;
	*n = FAKE_BPF_RINGS;
	return fake_bpf.views;
}

int at_bpf_ring_fd(const struct at_bpf *b)
{
	(void)b;
	return fake_bpf.ring_fd;
}

void at_bpf_ring_woken(struct at_bpf *b)
{
	(void)b;
	fake_bpf.consumes++;
	if (fake_bpf.commit_at && fake_bpf.consumes == fake_bpf.commit_at && fake_bpf.ring_open)
		ring_image_commit(&fake_bpf.rings[fake_bpf.commit_ring], fake_bpf.commit_pos);
	for (unsigned i = 0; i < fake_bpf.nrecords && fake_bpf.ring_open; i++)
		ring_image_put(&fake_bpf.rings[0], &fake_bpf.records[i], 0);
	fake_bpf.nrecords = 0;
}

void at_bpf_ring_positions(struct at_bpf *b, volatile uint64_t *pos[2])
{
	(void)b;
	pos[0] = pos[1] = NULL; /* no fill level */
}

int at_bpf_lost_by_ring(struct at_bpf *b, enum at_lost_counter which, uint64_t *per, unsigned n)
{
	(void)b;
	for (unsigned c = 0; c < n; c++)
		per[c] = c == 0 ? fake_bpf.lost[which] : 0; /* all of it in ring 0 */
	return 0;
}

const volatile uint64_t *at_bpf_leaders_gone(struct at_bpf *b)
{
	(void)b;
	return &fake_bpf.leaders_gone;
}

uint32_t at_bpf_wakeup_bytes(const struct at_bpf *b)
{
	(void)b;
	return 128u << 10;
}

uint64_t at_bpf_clock(const struct at_bpf *b)
{
	(void)b;
	return fake_bpf.clock;
}

/* ---- the recording window ---------------------------------------------------------------- */

void at_bpf_set_recording(struct at_bpf *b, int on)
{
	(void)b;
	fake_bpf.recording = on != 0;
	fake_bpf.recording_switches++;
	if (!on)
		fake_bpf.consumes_at_off = fake_bpf.consumes;
}

int at_bpf_in_flight(struct at_bpf *b, uint64_t *sum)
{
	(void)b;
	if (fake_bpf.in_flight_error)
		return -1;
	unsigned i = fake_bpf.in_flight_reads++;

	if (fake_bpf.nin_flight == 0)
		*sum = 0;
	else
		*sum = fake_bpf.in_flight[i < fake_bpf.nin_flight ? i : fake_bpf.nin_flight - 1];
	return 0;
}

/* ---- counters ---------------------------------------------------------------------------- */

void at_bpf_sum_counters(int map_fd, uint32_t n, uint64_t *sums)
{
	(void)map_fd;
	memset(sums, 0, n * sizeof(*sums)); /* no maps here */
}

void at_bpf_lost(struct at_bpf *b, uint64_t sums[AT_LOST_COUNT])
{
	(void)b;
	memcpy(sums, fake_bpf.lost, sizeof(fake_bpf.lost));
}

void at_bpf_counts(struct at_bpf *b, uint64_t sums[AT_COUNTS_COUNT])
{
	(void)b;
	memcpy(sums, fake_bpf.counts, sizeof(fake_bpf.counts));
}

void at_bpf_states_held(struct at_bpf *b, uint64_t *slots, uint64_t *storage)
{
	(void)b;
	*slots = *storage = 0;
}

void at_bpf_stack_counts(struct at_bpf *b, uint64_t sums[AT_STACKS_COUNT])
{
	(void)b;
	memcpy(sums, fake_bpf.stack_counts, sizeof(fake_bpf.stack_counts));
}

/* ---- targets ----------------------------------------------------------------------------- */

int at_bpf_set_target(struct at_bpf *b, pid_t pid, uint64_t allocators)
{
	int i = target_index(pid);

	(void)b;
	if (fake_bpf.target_errno) {
		errno = fake_bpf.target_errno;
		return -1;
	}
	if (i < 0) {
		if (fake_bpf.ntargets == FAKE_BPF_MAX) {
			errno = E2BIG;
			return -1;
		}
		i = (int)fake_bpf.ntargets++;
	}
	fake_bpf.targets[i].pid = pid;
	fake_bpf.targets[i].allocators = allocators;
	return 0;
}

void at_bpf_remove_target(struct at_bpf *b, pid_t pid)
{
	int i = target_index(pid);

	(void)b;
	if (i >= 0)
		fake_bpf.targets[i] = fake_bpf.targets[--fake_bpf.ntargets];
}

int at_bpf_target(const struct at_bpf *b, pid_t pid, uint64_t *allocators)
{
	int i = target_index(pid);

	(void)b;
	if (i < 0)
		return -1;
	*allocators = fake_bpf.targets[i].allocators;
	return 0;
}

void at_bpf_allocators_changed(struct at_bpf *b)
{
	(void)b;
	fake_bpf.allocators_gen++;
}

void at_bpf_check_allocators(struct at_bpf *b)
{
	(void)b;
	fake_bpf.allocator_check = 1;
}

int at_bpf_set_loading(struct at_bpf *b, pid_t pid)
{
	(void)b;
	for (unsigned i = 0; i < fake_bpf.nloading; i++)
		if (fake_bpf.loading[i] == pid)
			return 0;
	if (fake_bpf.nloading == FAKE_BPF_MAX) {
		errno = E2BIG;
		return -1;
	}
	fake_bpf.loading[fake_bpf.nloading++] = pid;
	return 0;
}

void at_bpf_clear_loading(struct at_bpf *b, pid_t pid)
{
	(void)b;
	for (unsigned i = 0; i < fake_bpf.nloading; i++)
		if (fake_bpf.loading[i] == pid) {
			fake_bpf.loading[i] = fake_bpf.loading[--fake_bpf.nloading];
			return;
		}
}

/* ---- stacks ------------------------------------------------------------------------------ */

void *at_bpf_unwind_array(struct at_bpf *b, enum at_bpf_array a, uint32_t *elements,
			  size_t *bytes)
{
	/* the sizes asked for (entries: pairs), anonymous memory the caller munmaps */
	static const size_t value[4] = { sizeof(struct at_unwind_rule), sizeof(struct at_unwind_page),
					 sizeof(struct at_bpf_entry_pair),
					 sizeof(struct at_bpf_table) };
	uint32_t asked[4] = { fake_bpf.stack_sizes[0], fake_bpf.stack_sizes[1],
			      fake_bpf.stack_sizes[2] / 2, AT_BPF_MAX_TABLES };

	(void)b;
	*elements = asked[a] ? asked[a] : 1;
	*bytes = *elements * value[a];
	void *mem = mmap(NULL, *bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	return mem == MAP_FAILED ? NULL : mem;
}

int at_bpf_put_mappings(struct at_bpf *b, pid_t pid, const struct at_bpf_mappings *m)
{
	int i = mappings_index(pid);

	(void)b;
	if (i < 0) {
		if (fake_bpf.nmappings == FAKE_BPF_MAX) {
			errno = E2BIG;
			return -1;
		}
		i = (int)fake_bpf.nmappings++;
	}
	fake_bpf.mappings[i].pid = pid;
	fake_bpf.mappings[i].count = m->count;
	fake_bpf.mappings[i].hold_on_miss = m->hold_on_miss;
	return 0;
}

void at_bpf_delete_mappings(struct at_bpf *b, pid_t pid)
{
	int i = mappings_index(pid);

	(void)b;
	if (i >= 0)
		fake_bpf.mappings[i] = fake_bpf.mappings[--fake_bpf.nmappings];
}


int at_bpf_news_open(struct at_bpf *b, at_bpf_news_fn fn, void *arg)
{
	(void)b;
	(void)fn;
	(void)arg;
	errno = ENOSYS;
	return -1;
}

int at_bpf_news_fd(const struct at_bpf *b)
{
	(void)b;
	return -1;
}

int at_bpf_news_take(struct at_bpf *b)
{
	(void)b;
	return 0;
}

int at_bpf_put_python(struct at_bpf *b, pid_t pid, const struct at_bpf_py_proc *p)
{
	(void)b;
	fake_bpf.python_pid = pid;
	fake_bpf.python = *p;
	return 0;
}

int at_bpf_py_named(struct at_bpf *b, const struct at_bpf_py_code *c)
{
	(void)b;
	(void)c;
	fake_bpf.py_named++;
	return 0;
}

void at_bpf_delete_python(struct at_bpf *b, pid_t pid)
{
	(void)b;
	if (fake_bpf.python_pid == pid)
		fake_bpf.python_pid = 0;
}

void at_bpf_mappings_changed(struct at_bpf *b)
{
	(void)b;
	fake_bpf.mappings_gen++;
}

int at_bpf_take_stack(struct at_bpf *b, uint64_t hash, struct at_bpf_stack *s)
{
	int i = stack_index(hash);

	(void)b;
	if (i < 0) {
		errno = ENOENT;
		return -1;
	}
	*s = fake_bpf.stacks[i].s;
	fake_bpf.stacks[i] = fake_bpf.stacks[--fake_bpf.nstacks];
	fake_bpf.stacks_taken++;
	return 0;
}

int at_bpf_peek_stack(struct at_bpf *b, uint64_t hash, struct at_bpf_stack *s)
{
	int i = stack_index(hash);

	(void)b;
	if (i < 0) {
		errno = ENOENT;
		return -1;
	}
	*s = fake_bpf.stacks[i].s;
	return 0;
}

int at_bpf_put_stack(struct at_bpf *b, uint64_t hash, const struct at_bpf_stack *s)
{
	(void)b;
	if (stack_index(hash) >= 0)
		return 0;
	if (fake_bpf.nstacks == FAKE_BPF_MAX) {
		errno = E2BIG;
		return -1;
	}
	fake_bpf.stacks[fake_bpf.nstacks].hash = hash;
	fake_bpf.stacks[fake_bpf.nstacks++].s = *s;
	return 0;
}

int at_bpf_take_held(struct at_bpf *b, pid_t tid, struct at_bpf_held *h)
{
	(void)b;
	for (unsigned i = 0; i < fake_bpf.nheld; i++)
		if (fake_bpf.held[i].tid == tid) {
			*h = fake_bpf.held[i].h;
			fake_bpf.held[i] = fake_bpf.held[--fake_bpf.nheld];
			return 0;
		}
	errno = ENOENT;
	return -1;
}

int at_bpf_thread_read(struct at_bpf *b, enum at_bpf_thread_store where, uint32_t key,
		       struct at_thread *t)
{
	(void)b;
	if (where != AT_BPF_THREAD_SLOT || key >= FAKE_BPF_MAX) {
		errno = ENOENT;
		return -1;
	}
	*t = fake_bpf.slots[key];
	return 0;
}

int at_bpf_thread_write(struct at_bpf *b, enum at_bpf_thread_store where, uint32_t key,
			const struct at_thread *t)
{
	(void)b;
	if (where != AT_BPF_THREAD_SLOT || key >= FAKE_BPF_MAX) {
		errno = ENOENT;
		return -1;
	}
	fake_bpf.slots[key] = *t;
	return 0;
}
