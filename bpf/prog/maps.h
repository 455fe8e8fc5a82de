/* prog/maps.h: the BPF program's configuration (rodata the daemon sets before load), its globals
 * (bss the daemon reads and writes through the skeleton) and its maps, with the counter of
 * losses. The names are the skeleton's fields the daemon uses (listed in alloctap.h): renaming
 * one is a change of the daemon too. Included by alloctap.bpf.c only. */
#ifndef ALLOCTAP_BPF_MAPS_H
#define ALLOCTAP_BPF_MAPS_H

/* Set by the daemon before load. */
const volatile __u32 trace_all = 0;   /* 1: every tgid but self_tgid; 0: those in targets */
const volatile __u32 self_tgid = 0;
/* 1: every program returns at once (alloctapd --floor, for the benchmark's floor: the cost of
 * the traps alone at exactly the sites alloctapd uses; the verifier prunes the rest). */
const volatile __u32 floor_only = 0;
/* 1: every allocation call carries the user stack taken at its entry (alloctapd --stacks).
 * 0: the walk is pruned by the verifier and costs nothing. */
const volatile __u32 stacks_on = 0;
/* 1: every probe is attached for one pid, which the kernel checks before the program runs: the
 * targets map need not be read. */
const volatile __u32 probes_bound = 0;
/* The slots of thread_slots less 1 (a power of two less 1; the daemon sizes the map). */
const volatile __u32 thread_slot_mask = AT_THREAD_SLOTS - 1;

/* The generation of proc_mappings: the daemon adds 1 after each store of a process's mappings,
 * the program after each deletion (struct at_bpf_rule_cache). */
__u64 mappings_gen = 0;

/* 1 while the daemon records (written by the daemon through the skeleton's .bss). */
__u32 recording = 0;

/* Set by the daemon once a process may map two probed objects (a preloaded allocator over the C
 * library): a call is then recorded only at the probes of its process's allocator of the
 * probe's family, the object whose id the targets map gives (the probe's id and family are in
 * its cookie). allocators_gen goes up at every change of an id in the map, so that a thread
 * looks its process's ids up again. */
__u32 allocator_check = 0;
__u32 allocators_gen = 0;

/* Traced processes whose thread group leader has exited while other threads live on (the
 * orphaned map holds them): the kernel's filter of a link bound to such a process compares the
 * leader's memory, which is gone, so the removal of any other link of the same place would take
 * the process's breakpoints out. The daemon closes no link while this is above 0. */
__u64 leaders_gone = 0;

/* The live threads whose state is in task storage (their slot was held): while it is 0, a
 * thread without a slot has no state, and its storage is not looked up (a call). A thread that
 * gets storage counts itself first, so its own look-ups see it; its exit uncounts it. */
__u32 threads_in_storage = 0;


/* The event rings (alloctap.h: AT_RING_STEP, struct at_ring_pos): the slots of CPU c are
 * element c of event_data, ring_slots of them; its positions are element c of event_pos. The
 * daemon sizes both to the possible CPUs and event_data's value to ring_slots slots before
 * load, and maps them. Array maps, not the kernel's ring buffers: a record is reserved with one
 * compare-and-swap on the CPU's own producer line, where a ring buffer takes a spinlock with
 * interrupts off and swaps the header once more to commit. An array cannot be polled, so the
 * wakeups go through the small ring buffer ring_wake. */
const volatile __u64 ring_slots = 64; /* a power of two */
/* The daemon is woken only when this many records wait in a CPU's ring (an eighth of the ring at
 * most: at_ring_wakeup_records; it also polls every 100 ms): a wakeup per record would cost the
 * traced program a context switch per call on a small machine. */
const volatile __u64 wakeup_records = 8;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* resized by the daemon: the possible CPUs */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 64 * AT_RING_STEP); /* resized by the daemon: ring_slots slots */
} event_data SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* resized by the daemon: the possible CPUs */
	__type(key, __u32);
	__type(value, struct at_ring_pos);
} event_pos SEC(".maps");

/* A CPU whose ring holds wakeup_records puts its number here, and the daemon wakes. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 << 10);
} ring_wake SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64); /* the process's allocators (AT_TARGET_IN), 0: any object */
} targets SEC(".maps");

/* The processes counted in leaders_gone. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} orphaned SEC(".maps");

/* Per-thread call state (struct at_thread): a thread's slot in thread_slots, found from the
 * address of its saved registers without a call (regs_key); or, for a thread whose slot another
 * thread holds, its task storage in threads, which goes with the thread. thread_exit releases a
 * slot. (Task storage costs two calls per program, some 20 ns each here:
 * bpf_get_current_task_btf and bpf_task_storage_get; bpf_get_current_pid_tgid a third.) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, AT_THREAD_SLOTS);
	__type(key, __u32);
	__type(value, struct at_thread);
} thread_slots SEC(".maps");

/* Who holds each slot of thread_slots, counted compactly: an 8-bit count a slot, four to a word
 * (slot i: word i / 4, bits (i % 4) * 8), 1 from its claim to its release (and, for a moment
 * on another CPU, 2: a release's decrement may follow the next claim's increment). Every thread
 * on the host runs the exit tracepoint, and a slot read there, a random line of thread_slots,
 * costs a miss; a count of 0 says the exiting thread holds no slot without that read. The
 * daemon sizes it with thread_slots. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, AT_THREAD_SLOTS / 4);
	__type(key, __u32);
	__type(value, __u32);
} slot_claims SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct at_thread);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, AT_LOST_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, AT_COUNTS_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

/* One slot: see AT_INFLIGHT_CALL in alloctap.h. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} inflight SEC(".maps");

/* ---- stacks: the unwind tables (alloctap.h), sized by the daemon before load ---- */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct at_unwind_rule);
} unwind_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct at_unwind_page);
} unwind_pages SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct at_bpf_entry_pair);
} unwind_entries SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, AT_BPF_MAX_TABLES);
	__type(key, __u32);
	__type(value, struct at_bpf_table);
} unwind_tables SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct at_bpf_mappings);
} proc_mappings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, __u64);
	__type(value, struct at_bpf_stack);
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct at_bpf_stack);
} stack_scratch SEC(".maps");

/* Rules found for recent return addresses (struct at_bpf_rule_cache). Per CPU, as the window. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct at_bpf_rule_cache);
} rule_cache SEC(".maps");

/* The page of the stack the walk is in (struct at_bpf_window). Per CPU: a program that would
 * run on this CPU while another is running is not run at all (the kernel's bpf_prog_active). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct at_bpf_window);
} stack_window SEC(".maps");

/* Threads held for the daemon (struct at_bpf_held), by tid. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct at_bpf_held);
} held SEC(".maps");

/* Per process (by tgid), the holds' token bucket as one time: the hold after the last would be
 * due then if holds came one per AT_BPF_HOLD_GAP_NS; a hold may come up to AT_BPF_HOLD_BURST - 1
 * gaps early. Kept apart from proc_mappings, which the daemon rewrites whole at every scan. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} hold_after SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, AT_STACKS_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} stack_counts SEC(".maps");

static __always_inline void count_stacks(__u32 which)
{
	__u64 *n = bpf_map_lookup_elem(&stack_counts, &which);

	if (n)
		*n += 1;
}

static __always_inline void count_lost(__u32 which)
{
	__u64 *n = bpf_map_lookup_elem(&lost, &which);

	if (n)
		__sync_fetch_and_add(n, 1); /* rare: no count lost to a preemption */
}

/* Adds one to counter which of counts (enum at_count). */
static __always_inline void count_up(__u32 which)
{
	__u64 *n = bpf_map_lookup_elem(&counts, &which);

	if (n)
		__sync_fetch_and_add(n, 1); /* once per thread: no count lost to a preemption */
}

#endif
