/* fake_bpf.h: a fake of daemon/bpf.h for unit drivers: the BPF program's maps and counters as
 * plain arrays in one struct (fake_bpf), which a driver presets before it calls the code under
 * test and inspects after. No kernel is touched: a driver that links tests/unit/fake_bpf.o
 * (the Makefile's FAKE_BPF_DRIVERS) runs without root or BPF.
 *
 * The fake keeps what each operation of bpf.h did: the options it was opened with, the
 * targets and their allocators, the recording switch, the loading set, the processes' mappings,
 * the stacks map, every uprobe link asked for. A driver calls fake_bpf_reset() first. */
#ifndef ALLOCTAP_TESTS_FAKE_BPF_H
#define ALLOCTAP_TESTS_FAKE_BPF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../daemon/bpf.h"
#include "ring_image.h"

#define FAKE_BPF_MAX 64         /* entries of each map, links, queued records */
#define FAKE_BPF_IN_FLIGHT 16   /* in-flight sums read in turn */
#define FAKE_BPF_RINGS 2
#define FAKE_BPF_RING_BYTES (1u << 16)
#define FAKE_BPF_CLOCK (1ull << 40) /* the clock after fake_bpf_reset */

struct fake_bpf_link {
	enum at_bpf_prog prog;
	int retprobe;
	pid_t pid;
	char path[256];
	unsigned n;
	uint64_t offsets[16], cookies[16]; /* the first 16 of them */
};

struct fake_bpf {
	/* the program */
	int opened, loaded, closed;
	struct at_bpf_options options;    /* as opened */
	uint64_t leaders_gone;            /* at_bpf_leaders_gone's counter */
	int open_errno;                   /* preset: at_bpf_open fails with it */
	int load_error;                   /* preset: at_bpf_load returns it (a negative errno) */
	int not_loaded[AT_BPF_PROG_COUNT]; /* at_bpf_set_loaded(.., 0) */
	uint32_t stack_sizes[5];          /* at_bpf_size_stacks: rules, pages, entries,
					   * processes, stacks (0: not called) */
	int thread_exit, thread_exec;     /* the tracepoints attached */

	/* the rings: FAKE_BPF_RINGS images; records queued by fake_bpf_push go into ring 0 at the
	 * next at_bpf_ring_woken */
	int ring_open, ring_fd;
	struct ring_image rings[FAKE_BPF_RINGS];
	struct at_ring views[FAKE_BPF_RINGS];
	struct at_record records[FAKE_BPF_MAX];
	unsigned nrecords;
	unsigned consumes;                /* calls of at_bpf_ring_woken */
	unsigned commit_at;               /* preset: at this consume (1, 2, ...; 0: none) the
					   * record reserved at commit_pos in ring commit_ring is
					   * written (its header committed) */
	unsigned commit_ring;
	uint64_t commit_pos;

	/* the records' clock (at_bpf_clock; fake_bpf_reset sets it far past 0) and the window */
	uint64_t clock;
	int recording;
	unsigned recording_switches;      /* calls of at_bpf_set_recording */
	unsigned consumes_at_off;         /* consumes when recording went off last */
	uint64_t in_flight[FAKE_BPF_IN_FLIGHT]; /* the sums read in turn; the last stays */
	unsigned nin_flight, in_flight_reads;
	int in_flight_error;              /* preset: the count cannot be read */

	/* counters */
	uint64_t lost[AT_LOST_COUNT];
	uint64_t counts[AT_COUNTS_COUNT];
	uint64_t stack_counts[AT_STACKS_COUNT];

	/* targets and loading */
	struct { pid_t pid; uint64_t allocators; } targets[FAKE_BPF_MAX]; /* AT_TARGET_IN */
	unsigned ntargets;
	int target_errno;                 /* preset: at_bpf_set_target fails with it */
	uint64_t allocators_gen;
	int allocator_check;
	pid_t loading[FAKE_BPF_MAX];
	unsigned nloading;

	/* uprobe links */
	struct fake_bpf_link links[FAKE_BPF_MAX];
	unsigned nlinks;
	int attach_errno;                 /* preset: at_bpf_attach_uprobes fails with it */

	/* stacks */
	struct { pid_t pid; uint32_t count, hold_on_miss; } mappings[FAKE_BPF_MAX];
	unsigned nmappings;
	pid_t python_pid;               /* at_bpf_put_python's last process (0: deleted) */
	struct at_bpf_py_proc python;
	unsigned py_named;              /* at_bpf_py_named's calls */
	uint64_t mappings_gen;
	struct { uint64_t hash; struct at_bpf_stack s; } stacks[FAKE_BPF_MAX];
	unsigned nstacks;
	unsigned stacks_taken;            /* at_bpf_take_stack that found one */
	struct { pid_t tid; struct at_bpf_held h; } held[FAKE_BPF_MAX];
	unsigned nheld;
	struct at_thread slots[FAKE_BPF_MAX]; /* thread_slots (task storage: none) */
};

extern struct fake_bpf fake_bpf;

/* Everything back to nothing (a ring fd or arrays of a program not closed are leaked). */
void fake_bpf_reset(void);
/* Queues a record for the next consume. */
void fake_bpf_push(const struct at_record *record);
/* pid's allocators in the fake's targets (the map's value: AT_TARGET_IN of each family's), or
 * -1 when pid is no target. */
int64_t fake_bpf_target(pid_t pid);
/* Whether pid's mappings are in the fake's map. */
int fake_bpf_has_mappings(pid_t pid);
/* Puts stack s under hash in the fake's stacks map, as the BPF program does. */
void fake_bpf_store_stack(uint64_t hash, const struct at_bpf_stack *s);
/* Whether a stack is stored under hash. */
int fake_bpf_has_stack(uint64_t hash);

#endif
