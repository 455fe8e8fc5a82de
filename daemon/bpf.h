/* bpf.h: the daemon's one door to the kernel's side of the trace: the BPF program (its skeleton,
 * build/alloctap.skel.h), its maps and its ring buffers, named for what the daemon means by each
 * use. daemon/bpf.c is the only module that includes the skeleton or calls libbpf; unit drivers
 * link tests/unit/fake_bpf.c in its place (plain arrays a driver presets and inspects).
 *
 * Life of the program: at_bpf_open (configuration set), then the changes allowed before load
 * (at_bpf_size_stacks, at_bpf_set_loaded), at_bpf_load, then the tracepoints, the ring buffer
 * and the maps; at_bpf_close frees it all. Every function takes the struct at_bpf that
 * at_bpf_open returned. */
#ifndef ALLOCTAP_DAEMON_BPF_H
#define ALLOCTAP_DAEMON_BPF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "alloctap.h"
#include "py_layout.h"
#include "ring.h"

struct at_bpf;

/* What the program is told before load (its read-only configuration and map sizes). */
struct at_bpf_options {
	int all;               /* trace every process (no target map) */
	int floor;             /* the probes record nothing (benchmark floor) */
	int bound;             /* every probe is attached for one process */
	int stacks;            /* events carry stacks */
	uint32_t self_tgid;    /* the daemon itself: never traced */
	uint32_t ring_bytes;   /* the event rings' total size (one ring per possible CPU, each a
				* power of two: bpf.c); the daemon is woken past 1/8 of a ring */
	uint32_t max_targets;  /* processes traced at once */
	uint32_t thread_slots; /* per-thread state slots: a power of two */
	uint64_t min_size;     /* record only allocations of at least this many bytes (0: all) */
	uint64_t sample_bytes; /* record a sample, one per this many bytes on average (0: all) */
	uint32_t block_map;    /* with either: the recorded blocks alive the program can follow */
};

/* Opens the program and sets o. The program, or NULL with errno set. */
struct at_bpf *at_bpf_open(const struct at_bpf_options *o);
/* Before load, with stacks: the sizes of the unwind arrays (rules, pages, entries: pairs of
 * entries are one element of the map, so entries / 2 elements), of the per-process mappings
 * (and as many processes whose Python frames are read, with AT_BPF_PY_THREADS threads' Python
 * states kept and AT_BPF_PY_CODES module code objects named) and of the stacks waiting for the
 * daemon. */
#define AT_BPF_PY_THREADS 16384
#define AT_BPF_PY_CODES 65536
void at_bpf_size_stacks(struct at_bpf *b, uint32_t rules, uint32_t pages, uint32_t entries,
			uint32_t processes, uint32_t stacks);
/* Whether stacks are on (at_bpf_options.stacks). */
int at_bpf_stacks_on(const struct at_bpf *b);
/* Loads the program into the kernel. 0, or a negative errno. */
int at_bpf_load(struct at_bpf *b);
/* Frees the ring buffer, the program and its maps (NULL: nothing). */
void at_bpf_close(struct at_bpf *b);

/* The tracepoints a thread's end and a process's exec go through. 0, or -1 with errno set. */
int at_bpf_attach_thread_exit(struct at_bpf *b);
int at_bpf_attach_thread_exec(struct at_bpf *b);

/* ---- the probes' programs ---------------------------------------------------------------- */
enum at_bpf_prog {
	AT_BPF_ALLOC_ENTRY = 0, /* any allocation function: the cookie says which */
	AT_BPF_MALLOC_ENTRY,    /* malloc, calloc, realloc: entries of their own */
	AT_BPF_CALLOC_ENTRY,
	AT_BPF_REALLOC_ENTRY,
	AT_BPF_FREE_ENTRY,
	AT_BPF_ALLOC_RETURN,
	AT_BPF_INTERNAL_CALL,   /* an allocator's call to its own entry point */
	AT_BPF_LOADER_STATE,    /* the dynamic loader's _dl_debug_state */
	AT_BPF_PROG_COUNT
};
/* Before load: whether prog is loaded (every one is unless told). */
void at_bpf_set_loaded(struct at_bpf *b, enum at_bpf_prog prog, int loaded);
/* Whether prog is loaded. */
int at_bpf_loaded(const struct at_bpf *b, enum at_bpf_prog prog);
/* One uprobe_multi link (Linux 6.6) of prog at the n file offsets of path, with their cookies
 * (NULL: 0 each), as return probes when retprobe is set, for pid (<= 0: every process). The
 * link's descriptor (the caller closes it to detach), or -1 with errno set. */
int at_bpf_attach_uprobes(struct at_bpf *b, enum at_bpf_prog prog, int retprobe, pid_t pid,
			  const char *path, const uint64_t *offsets, const uint64_t *cookies,
			  unsigned n);

/* ---- the ring buffers -------------------------------------------------------------------- */
/* The events come in one ring per CPU, read in place (daemon/trace/ring.h) and merged by time
 * (daemon/trace/reorder.h), not by the ring they came from. */
/* Maps the rings. 0, or -1 with errno set. */
int at_bpf_ring_open(struct at_bpf *b);
/* The rings as mapped, *n of them; valid until at_bpf_close. */
const struct at_ring *at_bpf_rings(struct at_bpf *b, unsigned *n);
/* The descriptor readable when a ring has woken the daemon (a wakeup, not what waits: the
 * programs ask through a ring of wakeups); at_bpf_ring_woken takes its wakeups. */
int at_bpf_ring_fd(const struct at_bpf *b);
/* Takes the wakeups the descriptor reported, and measures the rings' fill (for -v). */
void at_bpf_ring_woken(struct at_bpf *b);
/* For the fill level: pos[1] - pos[0] is then the bytes that waited in all the rings at the
 * last at_bpf_ring_woken, in bytes of at_bpf_options.ring_bytes. The pointers stay valid until
 * at_bpf_close. */
void at_bpf_ring_positions(struct at_bpf *b, volatile uint64_t *pos[2]);

/* How many bytes waiting in a CPU's ring wake the daemon (prog/emit.h). */
uint32_t at_bpf_wakeup_bytes(const struct at_bpf *b);

/* The time now on the records' clock (CLOCK_MONOTONIC ns, the program's bpf_ktime_get_ns). */
uint64_t at_bpf_clock(const struct at_bpf *b);

/* The program's count of traced processes whose thread group leader has exited while they live
 * on (no link may be closed while it is above 0: bpf/prog/maps.h), read in place. */
const volatile uint64_t *at_bpf_leaders_gone(struct at_bpf *b);

/* ---- the recording window ---------------------------------------------------------------- */
/* Recording on or off, at one instant (sequentially consistent with the reads that follow). */
void at_bpf_set_recording(struct at_bpf *b, int on);
/* The calls in flight, summed over CPUs (AT_INFLIGHT_CALL, AT_INFLIGHT_REALLOC). 0, or -1 when
 * the count cannot be read. */
int at_bpf_in_flight(struct at_bpf *b, uint64_t *sum);

/* ---- counters ---------------------------------------------------------------------------- */
/* The n counters of the per-CPU array map map_fd, each summed over CPUs into sums; a counter
 * that cannot be read counts 0. */
void at_bpf_sum_counters(int map_fd, uint32_t n, uint64_t *sums);
/* The program's lost counters (enum at_lost_counter), summed over CPUs. */
void at_bpf_lost(struct at_bpf *b, uint64_t sums[AT_LOST_COUNT]);
/* Lost counter which of each CPU, and so of each ring, into per (n of them; those past the
 * possible CPUs 0). 0, or -1 when the counter cannot be read. */
int at_bpf_lost_by_ring(struct at_bpf *b, enum at_lost_counter which, uint64_t *per, unsigned n);
/* The program's counters of what is no loss (enum at_count), summed over CPUs. */
void at_bpf_counts(struct at_bpf *b, uint64_t sums[AT_COUNTS_COUNT]);
/* The program's stack counters (enum at_stack_counter), summed over CPUs. */
void at_bpf_stack_counts(struct at_bpf *b, uint64_t sums[AT_STACKS_COUNT]);
/* The per-thread states held now, as the program counts them: slots (its slot_claims) and task
 * storage (threads_in_storage), both 0 once every thread that got one has exited. A count
 * that cannot be read counts 0. */
void at_bpf_states_held(struct at_bpf *b, uint64_t *slots, uint64_t *storage);

/* ---- targets ----------------------------------------------------------------------------- */
/* Marks pid a target whose allocators are allocators (AT_TARGET_IN of each family's
 * AT_TARGET; 0: any object). 0, or -1 with errno set. */
int at_bpf_set_target(struct at_bpf *b, pid_t pid, uint64_t allocators);
/* Unmarks pid (nothing if it was not marked). */
void at_bpf_remove_target(struct at_bpf *b, pid_t pid);
/* pid's allocators in *allocators. 0, or -1 when pid is no target. */
int at_bpf_target(const struct at_bpf *b, pid_t pid, uint64_t *allocators);
/* A target's allocator changed: threads look theirs up again. */
void at_bpf_allocators_changed(struct at_bpf *b);
/* Two objects are probed: a process's calls are recorded only at its allocator's probes. */
void at_bpf_check_allocators(struct at_bpf *b);
/* pid is held at its dynamic loader's _dl_debug_state once its libraries are mapped (the
 * loading map). 0, or -1 with errno set. */
int at_bpf_set_loading(struct at_bpf *b, pid_t pid);
/* pid is held there no longer. */
void at_bpf_clear_loading(struct at_bpf *b, pid_t pid);

/* ---- stacks ------------------------------------------------------------------------------ */
enum at_bpf_array { AT_BPF_RULES = 0, AT_BPF_PAGES, AT_BPF_ENTRIES, AT_BPF_TABLES };
/* Maps the unwind array a shared and writable: its memory (the caller munmaps *bytes of it), its
 * element count in *elements; NULL with errno set. */
void *at_bpf_unwind_array(struct at_bpf *b, enum at_bpf_array a, uint32_t *elements,
			  size_t *bytes);
/* pid's mappings, for the walk. 0, or -1 with errno set. */
int at_bpf_put_mappings(struct at_bpf *b, pid_t pid, const struct at_bpf_mappings *m);
/* pid's mappings leave (nothing if it had none). */
void at_bpf_delete_mappings(struct at_bpf *b, pid_t pid);
/* The stack stored under hash, left in the map. 0, or -1 (none). */
int at_bpf_peek_stack(struct at_bpf *b, uint64_t hash, struct at_bpf_stack *s);
/* The py_news ring (bpf/prog/python.h): each stack with Python frames new to the stacks map,
 * given to fn by at_bpf_news_take, which returns how many it gave. at_bpf_news_open: 0, or -1
 * with errno. at_bpf_news_fd: the descriptor readable when news wait (-1: not open); the ring
 * wakes it at most once in AT_PY_NEWS_WAKE_NS, so news may wait unsignalled as long after a
 * take that gave some. */
typedef void (*at_bpf_news_fn)(void *arg, pid_t pid, uint64_t hash);
int at_bpf_news_open(struct at_bpf *b, at_bpf_news_fn fn, void *arg);
int at_bpf_news_fd(const struct at_bpf *b);
int at_bpf_news_take(struct at_bpf *b);
/* pid runs a CPython whose frames the walk reads (bpf/prog/python.h). 0, or -1 with errno. */
int at_bpf_put_python(struct at_bpf *b, pid_t pid, const struct at_bpf_py_proc *p);
/* A module's code object c is named: a stack with its frame holds its thread no more. 0, or -1
 * with errno. */
int at_bpf_py_named(struct at_bpf *b, const struct at_bpf_py_code *c);
/* pid's Python frames are not read any more (nothing if they were not). */
void at_bpf_delete_python(struct at_bpf *b, pid_t pid);
/* Some process's mappings changed: the walk's cached rules are stale. */
void at_bpf_mappings_changed(struct at_bpf *b);
/* Takes the stack stored under hash into *s and deletes it (a kernel without lookup-and-delete
 * for hash maps leaves it there). 0, or -1 when there is none. */
int at_bpf_take_stack(struct at_bpf *b, uint64_t hash, struct at_bpf_stack *s);
/* Stores s under hash unless a stack is there already. 0 (stored, or there), or -1 with errno
 * set. */
int at_bpf_put_stack(struct at_bpf *b, uint64_t hash, const struct at_bpf_stack *s);
/* Takes thread tid's hold (struct at_bpf_held) into *h and deletes it. 0, or -1 when it has
 * none. */
int at_bpf_take_held(struct at_bpf *b, pid_t tid, struct at_bpf_held *h);
/* Where a thread's state is: its slot of thread_slots (key: the index), or task storage (key:
 * a pidfd of the thread). */
enum at_bpf_thread_store { AT_BPF_THREAD_SLOT = 0, AT_BPF_THREAD_TASK };
/* The state of the thread at key of where, in *t. 0, or -1 with errno set. */
int at_bpf_thread_read(struct at_bpf *b, enum at_bpf_thread_store where, uint32_t key,
		       struct at_thread *t);
/* Writes back the state of the thread at key of where, which must exist. 0, or -1 with errno
 * set. */
int at_bpf_thread_write(struct at_bpf *b, enum at_bpf_thread_store where, uint32_t key,
			const struct at_thread *t);

#endif
