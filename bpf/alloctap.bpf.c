// SPDX-License-Identifier: GPL-2.0
/* alloctap.bpf.c: uprobes on the malloc family, one ring-buffer record per outermost call.
 *
 * Frees are recorded at entry, allocations at return. Every record takes its number from one
 * global counter; realloc takes one at entry and carries it to its return (doc/DESIGN.md,
 * decision 4). Per thread, a depth counts nested calls (glibc calls its own entry points); only
 * the outermost call is recorded (decision 3). The names the daemon uses are listed in
 * alloctap.h.
 *
 * The window: every probe is attached with `recording` off; the daemon turns it on at one
 * instant and off at one instant. A call belongs to the trace when its outermost entry saw
 * recording on; it is then recorded at its return even if recording went off meanwhile. Depths
 * are kept whether or not recording is on, so a call entered before the window does not make
 * its inner calls look outermost. The per-CPU "inflight" counters let the daemon wait, after
 * turning recording off, until every call of the window has written its record.
 *
 * Calls the allocator makes to itself: a direct call from the allocator's own object into one of
 * its entry points (glibc's thread-exit tcache flush calls free so) is not the program's, and is
 * not recorded. The daemon puts a probe on each such call instruction (internal_call below); it
 * marks the thread with the stack pointer the entry will see, and the entry that sees it drops
 * the call. */
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "alloctap.h"

/* The parts of the kernel's structures the program reads (CO-RE: offsets from the running
 * kernel's BTF): a task's signal masks, its process's live threads, its address space's
 * sequence; a VMA's file and place. */
struct at_sigset___at {
	unsigned long sig[1];
};
struct sigpending___at {
	struct at_sigset___at signal;
} __attribute__((preserve_access_index));
struct signal_struct___at {
	struct sigpending___at shared_pending;
} __attribute__((preserve_access_index));
struct task_struct___at {
	struct at_sigset___at blocked;
	struct sigpending___at pending;
	struct signal_struct___at *signal;
} __attribute__((preserve_access_index));
struct at_atomic___at {
	int counter;
};
struct signal_struct___live {
	struct at_atomic___at live;
} __attribute__((preserve_access_index));
struct task_struct___live {
	struct signal_struct___live *signal;
} __attribute__((preserve_access_index));

struct seqcount___at {
	unsigned sequence;
};
struct mm_struct___at {
	struct seqcount___at mm_lock_seq;
} __attribute__((preserve_access_index));
struct task_struct___mm {
	struct mm_struct___at *mm;
} __attribute__((preserve_access_index));
struct inode___at {
	unsigned long i_ino;
} __attribute__((preserve_access_index));
struct file___at {
	struct inode___at *f_inode;
} __attribute__((preserve_access_index));
struct vm_area_struct___at {
	unsigned long vm_start;
	unsigned long vm_pgoff;
	struct file___at *vm_file;
} __attribute__((preserve_access_index));

/* Set by the daemon before load. */
const volatile __u32 trace_all = 0;   /* 1: every tgid but self_tgid; 0: those in targets */
const volatile __u32 self_tgid = 0;
/* 1: every program returns at once (alloctapd --floor, for the benchmark's floor: the cost of
 * the traps alone at exactly the sites alloctapd uses; the verifier prunes the rest). */
const volatile __u32 floor_only = 0;
/* The daemon is woken only when this many bytes wait (it also polls every 100 ms): a wakeup per
 * record would cost the traced program a context switch per call on a small machine. */
const volatile __u64 wakeup_bytes = 0;
#define AT_WAKEUP_CHECK 32
/* 1: every allocation call carries the user stack taken at its entry (alloctapd --stacks).
 * 0: the walk is pruned by the verifier and costs nothing. */
const volatile __u32 stacks_on = 0;
/* 1: records carry a time (traces with stacks); reading the clock costs some 50 ns a call. */
const volatile __u32 times_on = 0;
/* 1: every probe is attached for one pid, which the kernel checks before the program runs: the
 * targets map need not be read. */
const volatile __u32 probes_bound = 0;
/* The slots of thread_slots less 1 (a power of two less 1; the daemon sizes the map). */
const volatile __u32 thread_slot_mask = AT_THREAD_SLOTS - 1;

/* The one global event counter; the daemon reads it after detaching (see alloctap.h). */
__u64 next_seq = 0;

/* The generation of proc_mappings: the daemon adds 1 after each change (struct
 * at_bpf_rule_cache). */
__u64 mappings_gen = 0;

/* 1 while the daemon records (written by the daemon through the skeleton's .bss). */
__u32 recording = 0;

/* Set by the daemon once a process may map two probed objects (a preloaded allocator over the C
 * library): a call is then recorded only at the probes of its process's allocator, the object
 * whose id the targets map gives (the probe's id is in its cookie). allocators_gen goes up at
 * every change of an id in the map, so that a thread looks its process's id up again. */
__u32 allocator_check = 0;
__u32 allocators_gen = 0;


struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22); /* resized by the daemon */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u32); /* the process's allocator (AT_TARGET_OBJECT), 0: any object */
} targets SEC(".maps");

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
	__type(value, struct at_bpf_rule);
} unwind_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct at_bpf_page);
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

static __always_inline void count_lost(__u32 which)
{
	__u64 *n = bpf_map_lookup_elem(&lost, &which);

	if (n)
		__sync_fetch_and_add(n, 1); /* rare: no count lost to a preemption */
}

static __always_inline int is_traced(__u32 tgid)
{
	if (probes_bound)
		return 1;
	if (trace_all)
		return tgid != self_tgid;
	return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

static __always_inline __u64 inflight_unit(__u32 func)
{
	return at_probe_reallocates(func) ? AT_INFLIGHT_REALLOC : AT_INFLIGHT_CALL;
}

/* Adds delta to this CPU's in-flight count. A locked add: it is also the full barrier that
 * orders it before the second read of recording in window_admits(). */
static __always_inline void inflight_add(__u64 delta)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&inflight, &zero);

	if (n)
		__sync_fetch_and_add(n, delta);
}

/* The key of a thread's slot: the address of its saved user registers (the probes' context; a
 * fixed place atop the thread's kernel stack for its whole life, and no other live thread's),
 * as a distance from a variable of ours: a privileged program may subtract two pointers, and
 * nothing else turns one into a number. Never 0. */
static __always_inline __u64 regs_key(const void *regs)
{
	return (__u64)regs - (__u64)&next_seq;
}

/* The slot for key (whoever holds it), its index in *index; NULL when there is none. */
static __always_inline struct at_thread *key_slot(__u64 key, __u32 *index)
{
	*index = (__u32)((key * 0x9e3779b97f4a7c15ull) >> 32) & thread_slot_mask;
	return bpf_map_lookup_elem(&thread_slots, index);
}

/* The state of the thread whose saved registers are at regs (the calling thread's); NULL when
 * it has none. */
static __always_inline struct at_thread *thread_state(const void *regs)
{
	__u64 key = regs_key(regs);
	__u32 i;
	struct at_thread *s = key_slot(key, &i);

	if (s && s->owner == key)
		return s;
	return bpf_task_storage_get(&threads, bpf_get_current_task_btf(), 0, 0);
}

/* A state for the calling thread (id: tgid << 32 | tid, registers at regs), which has none: its
 * slot if free (a released slot is all zeros), else task storage. NULL when neither can be
 * had. */
static __always_inline struct at_thread *thread_state_new(const void *regs, __u64 id)
{
	__u64 key = regs_key(regs);
	__u32 i;
	struct at_thread *s = key_slot(key, &i);

	if (s && s->owner == 0 && __sync_val_compare_and_swap(&s->owner, 0, key) == 0) {
		s->id = id;
		count_lost(AT_LOST_STATE_SLOT);
		return s;
	}
	struct at_thread *t = bpf_task_storage_get(&threads, bpf_get_current_task_btf(), 0,
						   BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (t) {
		t->id = id;
		count_lost(AT_LOST_STATE_STORAGE);
	}
	return t;
}

/* Gives back the slot of the thread whose registers are at regs, if it holds one: zeroed,
 * then free. */
static __always_inline void thread_slot_release(const void *regs)
{
	__u64 key = regs_key(regs);
	__u32 i;
	struct at_thread *s = key_slot(key, &i);

	if (!s || s->owner != key)
		return;
	__builtin_memset((char *)s + sizeof(s->owner), 0, sizeof(*s) - sizeof(s->owner));
	asm volatile("" ::: "memory"); /* zeroed before it is free */
	*(volatile __u64 *)&s->owner = 0;
}

/* The calling thread's state if its process is traced, else NULL (*untraced set). Only a
 * traced thread gets a state, so the targets map is read only by a thread without one. With
 * create, a traced thread without a state gets one; else it may come back NULL with *untraced
 * clear. */
static __always_inline struct at_thread *traced_thread(struct pt_regs *ctx, int create,
						       int *untraced)
{
	struct at_thread *t = thread_state(ctx);

	*untraced = 0;
	if (t)
		return t;
	__u64 id = bpf_get_current_pid_tgid();
	if (!is_traced(id >> 32)) {
		*untraced = 1;
		return NULL;
	}
	return create ? thread_state_new(ctx, id) : NULL;
}

/* Whether the call now entering was made by the allocator's own object straight to the probed
 * entry point: internal_call marked the thread with the stack pointer this entry sees (the call
 * pushed the return address; nothing between the entry and the probe site moves the stack
 * pointer). The mark is used once. A signal handler that calls malloc in between runs lower on
 * the stack and does not match. */
static __always_inline int called_by_allocator(struct pt_regs *ctx, struct at_thread *t)
{
	if (!t->internal_sp || t->internal_sp != PT_REGS_SP(ctx))
		return 0;
	t->internal_sp = 0;
	return 1;
}

/* Just what allocator_lookup reads of a task, relocated against the kernel's BTF (CO-RE). */
struct task_struct___parent {
	struct task_struct___parent *real_parent;
	int tgid;
} __attribute__((preserve_access_index));

/* The allocator of process tgid in the targets map (0: any). With --all, a process the daemon
 * has not heard of yet is a fork child with its parent's mappings: its parent's (an exec puts
 * an entry of its own in, thread_exec). */
static __always_inline __u32 allocator_lookup(__u32 tgid)
{
	__u32 *id = bpf_map_lookup_elem(&targets, &tgid);

	if (!id && trace_all) {
		struct task_struct___parent *task = (void *)bpf_get_current_task_btf();
		__u32 parent = (__u32)BPF_CORE_READ(task, real_parent, tgid);
		id = bpf_map_lookup_elem(&targets, &parent);
	}
	return id ? *id : 0;
}

/* The allocator of thread t's process (0: any), looked up again after a change. */
static __always_inline __u32 allocator_of(struct at_thread *t)
{
	__u32 gen = *(volatile __u32 *)&allocators_gen;

	if (t->allocator_gen != gen) {
		t->allocator = allocator_lookup(t->id >> 32);
		t->allocator_gen = gen;
	}
	return t->allocator;
}

/* Whether the probe of function func now hit belongs to an object other than the allocator of
 * the calling thread's process (state t, or NULL: looked up for this call), when that allocator
 * defines func: such a call is the allocator's own (a preloaded free that forwards to the C
 * library's), not the program's. A function the allocator lacks (reallocarray in a debugging
 * preload) is the program's wherever it is. */
static __always_inline int foreign_object(struct pt_regs *ctx, struct at_thread *t, __u32 func)
{
	if (!*(volatile __u32 *)&allocator_check)
		return 0;
	__u32 object = bpf_get_attach_cookie(ctx) >> AT_COOKIE_OBJECT_SHIFT, allocator = 0;

	if (t) {
		allocator = allocator_of(t);
	} else {
		allocator = allocator_lookup(bpf_get_current_pid_tgid() >> 32);
	}
	return allocator && object && object != AT_TARGET_OBJECT(allocator) &&
	       (AT_TARGET_FUNCS(allocator) >> (func & 15)) & 1;
}

/* Whether an outermost call now entering belongs to the window; if so it is counted in flight
 * (with unit) until its record is written. The count goes up before recording is read again:
 * the daemon clears recording, then reads the counts, so either it sees this call in flight or
 * this read sees recording off (then the count goes back down). */
static __always_inline int window_admits(__u64 unit)
{
	if (!*(volatile __u32 *)&recording)
		return 0;
	inflight_add(unit);
	if (*(volatile __u32 *)&recording)
		return 1;
	inflight_add(-unit);
	return 0;
}

/* Whether the record numbered seq wakes the daemon: when wakeup_bytes wait. The ring is asked
 * only at every AT_WAKEUP_CHECK-th number (a call each time), which moves the wakeup by at most
 * that many records. */
static __always_inline __u64 wakeup_flag(__u64 seq)
{
	if (seq & (AT_WAKEUP_CHECK - 1))
		return BPF_RB_NO_WAKEUP;
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ? BPF_RB_FORCE_WAKEUP
									    : BPF_RB_NO_WAKEUP;
}

/* Reserves, fills and submits one record; counts it lost when the ring is full. (Copying a
 * record from the program's stack with bpf_ringbuf_output, one call instead of two, measured
 * 20 to 40 ns slower a record.) */
static __always_inline void emit(__u64 pid_tgid, __u64 seq, __u64 seq_entry, __u32 func,
				 __u32 flags, __u64 a0, __u64 a1, __u64 result, __u64 stack)
{
	struct at_record *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);

	if (!r) {
		count_lost(AT_LOST_RECORDS);
		if (seq != seq_entry)
			count_lost(AT_LOST_REALLOCS);
		return;
	}
	r->seq = seq;
	r->seq_entry = seq_entry;
	r->pid = pid_tgid >> 32;
	r->tid = (__u32)pid_tgid;
	r->arg[0] = a0;
	r->arg[1] = a1;
	r->result = result;
	r->func = func;
	r->flags = flags;
	r->time_ns = times_on ? bpf_ktime_get_ns() : 0;
	r->stack = stack;
	bpf_ringbuf_submit(r, wakeup_flag(seq));
}

/* ---- the stack walk (daemon/stacks/unwind_walk.c is its reference, step for step) ---- */

/* What the walk carries from one frame to the next. */
struct walk_state {
	__u64 pc, sp, bp;
	__u64 hash;
	struct at_bpf_mappings *maps;
	struct at_bpf_stack *out;
	struct at_bpf_window *win;
	__u64 win_page; /* the user page win holds, 0: none */
	struct at_bpf_rule_cache *cache;
	__u64 gen;      /* mappings_gen when the walk began, read before the mappings */
	__u32 mm_seq;   /* the address space's mm_lock_seq when the walk began */
	__u32 pad;
	__u32 flags;   /* how the walk ended (set when it stops) */
	__u32 tgid;
};

/* Reads the 8 bytes of the stack at user address addr: from the page in the window, which is
 * read whole when the walk first needs it (one read costs about as much as eight bytes' read
 * alone, and holds all the frames on the page). A value that straddles pages, or a page that
 * cannot be read whole, is read alone. 0, or non-zero when it cannot be read. */
static __always_inline long read_stack(struct walk_state *w, __u64 addr, __u64 *value)
{
	__u64 page = addr & ~(__u64)(AT_BPF_WINDOW - 1);
	__u32 off = (__u32)(addr & (AT_BPF_WINDOW - 1));
	struct at_bpf_window *win = w->win;

	if (!win || off > AT_BPF_WINDOW - sizeof(*value))
		return bpf_probe_read_user(value, sizeof(*value), (void *)addr);
	if (page != w->win_page) {
		if (bpf_probe_read_user(win->bytes, sizeof(win->bytes), (void *)page)) {
			w->win_page = 0;
			return bpf_probe_read_user(value, sizeof(*value), (void *)addr);
		}
		w->win_page = page;
	}
	__builtin_memcpy(value, &win->bytes[off & (AT_BPF_WINDOW - 1)], sizeof(*value));
	return 0;
}

static __always_inline void count_stacks(__u32 which)
{
	__u64 *n = bpf_map_lookup_elem(&stack_counts, &which);

	if (n)
		*n += 1;
}

/* The index of the mapping that holds pc, or -1: a bounded binary search over the sorted
 * mappings. Its steps have no branches (see rule_index). */
static __always_inline int mapping_index(struct at_bpf_mappings *maps, __u64 pc)
{
	__u32 lo = 0, hi;

	hi = maps->count;
	if (hi > AT_BPF_MAX_MAPPINGS)
		hi = AT_BPF_MAX_MAPPINGS;
	for (int step = 0; step < AT_BPF_MAPPING_STEPS; step++) {
		if (lo >= hi) /* an exit, not a fork: the verifier's paths stay linear */
			break;
		__u64 open = ((__u64)lo - hi) >> 63;  /* lo < hi */
		__u32 mid = (lo + (hi - lo) / 2) & (AT_BPF_MAX_MAPPINGS - 1);
		__u64 above = (pc - maps->m[mid].start) >> 63; /* pc < start: go low */

		/* without branches (the BPF backend turns a select into one): one path for the
		 * verifier instead of two per step */
		lo += (__u32)(open * (1 - above) * (mid + 1 - lo));
		hi -= (__u32)(open * above * (hi - mid));
	}
	if (lo == 0 || lo != hi)
		return -1;
	struct at_bpf_mapping *m = &maps->m[(lo - 1) & (AT_BPF_MAX_MAPPINGS - 1)];
	return pc < m->end ? (int)((lo - 1) & (AT_BPF_MAX_MAPPINGS - 1)) : -1;
}

/* The index in unwind_rules of the rule for object address addr in table ti, or -1 when no
 * rule covers it: the page's run of entries, then a bounded binary search for the last entry
 * at or below the address. Each step moves lo or hi by arithmetic, not by a branch: the BPF
 * backend turns a select into a branch, and with two ways at each of 17 steps the verifier
 * would walk 2^17 paths. */
static __always_inline int rule_index(__u32 ti, __u64 addr)
{
	struct at_bpf_table *t = bpf_map_lookup_elem(&unwind_tables, &ti);
	__u64 page = addr >> AT_BPF_PAGE_SHIFT;

	if (!t || page < t->first_page || page - t->first_page >= t->page_count)
		return -1;
	__u32 pi = t->page_base + (__u32)(page - t->first_page);
	struct at_bpf_page *pg = bpf_map_lookup_elem(&unwind_pages, &pi);
	if (!pg || pg->count == 0)
		return -1;
	__u32 base = t->entry_base + pg->first;
	__u16 low = (__u16)(addr & ((1u << AT_BPF_PAGE_SHIFT) - 1));
	__u32 lo = 0, hi = pg->count;

	for (int step = 0; step < AT_BPF_SEARCH_STEPS; step++) {
		if (hi - lo <= 1)
			break;
		__u32 mid = lo + (hi - lo) / 2;
		__u32 ei = base + mid, pair = ei >> 1;
		struct at_bpf_entry_pair *e = bpf_map_lookup_elem(&unwind_entries, &pair);

		if (!e)
			return -1;
		__u64 above = ((__u64)low - e->e[ei & 1].offset) >> 63; /* low < offset: go low */

		lo += (__u32)((1 - above) * (mid - lo));
		hi -= (__u32)(above * (hi - mid));
	}
	__u32 ei = base + lo, pair = ei >> 1;
	struct at_bpf_entry_pair *e = bpf_map_lookup_elem(&unwind_entries, &pair);
	if (!e)
		return -1;
	return (int)(t->rule_base + e->e[ei & 1].rule);
}

/* The caller of a signal frame (rule kind AT_BPF_RULE_SIGNAL): the interrupted rsp (*sp) and rip
 * (*pc, just above it) where the kernel saved them, and rbp when the rule says where. Read
 * directly, not through the window: signal frames are rare, and the verifier walks each read
 * of the window as paths of its own. 0, or non-zero when one cannot be read. */
static __always_inline long read_signal_frame(struct walk_state *w, struct at_bpf_rule *rule,
					      __u64 *sp, __u64 *pc, __u64 *bp)
{
	__u64 saved[2];

	if (bpf_probe_read_user(saved, sizeof(saved),
				(void *)(w->sp + (__u64)(__s64)rule->cfa_offset)))
		return 1;
	*sp = saved[0];
	*pc = saved[1];
	if (rule->rbp != AT_BPF_RBP_AT_SP)
		return 0;
	return bpf_probe_read_user(bp, sizeof(*bp), (void *)(w->sp + (__u64)(__s64)rule->rbp_offset));
}

#define AT_VMA_TRIES 8

/* What check_vma compares. */
struct vma_check {
	__u64 inode, file_delta;
	__u32 same;
};

/* A bpf_find_vma callback: whether the VMA found maps what the mapping in c says. */
static long check_vma(void *task, void *area, void *arg)
{
	struct vm_area_struct___at *vma = area;
	struct vma_check *c = arg;
	struct file___at *file = BPF_CORE_READ(vma, vm_file);

	(void)task;
	if (!file) {
		c->same = c->inode == 0;
		return 0;
	}
	__u64 delta = (BPF_CORE_READ(vma, vm_pgoff) << 12) - BPF_CORE_READ(vma, vm_start);
	c->same = BPF_CORE_READ(file, f_inode, i_ino) == c->inode && delta == c->file_delta;
	return 0;
}

/* Whether mapping m, which holds pc, is still what the daemon read (struct at_bpf_mapping):
 * 0 yes; -1 no (m is forgotten); -2 the address space is being changed and cannot be looked at
 * now. A global function: verified once, not once per path of the walk that calls it. */
__noinline int mapping_still_there(struct at_bpf_mapping *m, __u64 pc, __u32 seq)
{
	struct vma_check c = { 0, 0, 0 };

	if (!m)
		return -2;
	c.inode = m->inode;
	c.file_delta = m->file_delta;
	long err = -16;

	/* EBUSY: another thread holds the address space's lock for a moment (an mmap, a brk) */
	for (int try = 0; try < AT_VMA_TRIES && err == -16 /* EBUSY */; try++)
		err = bpf_find_vma(bpf_get_current_task_btf(), pc, check_vma, &c, 0);
	if (err == -16)
		return -2;
	if (err || !c.same) {
		m->table = AT_BPF_NO_TABLE;
		m->serial = 0;
		return -1;
	}
	if (!(seq & 1)) /* an odd value: a change under way, checked again next time */
		m->valid_seq = seq;
	return 0;
}

/* The rule index for the frame at lookup (the pc, less 1 for a return address), from the cache
 * or the searches, and in *serial the serial of its mapping (0: none). -1: no known mapping or
 * none with a table yet (a rescan may bring one); -2: opaque code, or a mapping that cannot be
 * checked now. */
static __always_inline int frame_rule(struct walk_state *w, __u64 lookup, __u32 *serial)
{
	__u32 slot = (__u32)((lookup * 0x9e3779b97f4a7c15ull) >> 54) & (AT_BPF_RULE_CACHE - 1);
	struct at_bpf_rule_cache *cache = w->cache;
	int mi, cached = 0;
	__u32 rule = 0;

	*serial = 0;
	if (cache && cache->e[slot].pc == lookup && cache->e[slot].tgid == w->tgid &&
	    cache->e[slot].gen == (__u32)w->gen) {
		mi = (int)cache->e[slot].mapping;
		rule = cache->e[slot].rule;
		cached = 1;
	} else {
		mi = mapping_index(w->maps, lookup);
		if (mi < 0)
			return -1;
	}
	struct at_bpf_mapping *m = &w->maps->m[mi & (AT_BPF_MAX_MAPPINGS - 1)];
	if (m->valid_seq != w->mm_seq) {
		int still = mapping_still_there(m, lookup, w->mm_seq);
		if (still < 0)
			return still;
	}
	*serial = m->serial;
	if (m->table == AT_BPF_OPAQUE)
		return -2;
	if (m->table == AT_BPF_NO_TABLE)
		return -1;
	if (cached)
		return (int)rule;
	int ri = rule_index(m->table, lookup - (__u64)m->bias);
	if (ri < 0)
		return -1;
	if (cache) {
		cache->e[slot].pc = lookup;
		cache->e[slot].tgid = w->tgid;
		cache->e[slot].rule = (__u32)ri;
		cache->e[slot].gen = (__u32)w->gen;
		cache->e[slot].mapping = (__u32)mi & (AT_BPF_MAX_MAPPINGS - 1);
	}
	return ri;
}

/* One frame of the walk (a bpf_loop callback): records the frame's pc and its mapping's serial,
 * then unwinds to the caller. 0 to go on, 1 when the walk has ended (w->flags says how). */
static long walk_frame(__u32 i, void *arg)
{
	struct walk_state *w = arg;
	struct at_bpf_stack *out = w->out;
	struct at_bpf_mappings *maps = w->maps;
	__u32 serial;

	if (!out || !maps)
		return 1;
	/* While the walk runs, out->flags says whether pc is exact: not a return address (the
	 * first frame, or the one a signal interrupted), its rule then at pc, not pc - 1. Kept in
	 * the map value rather than in w: the verifier tracks no value there, and a flag on its
	 * stack that picks the address a cache slot comes from split its states in two at every
	 * frame (the program was refused as too complex). */
	int ri = frame_rule(w, w->pc - 1 + (out->flags & 1), &serial);
	out->pcs[i & (AT_BPF_MAX_FRAMES - 1)] = w->pc;
	out->serials[i & (AT_BPF_MAX_FRAMES - 1)] = serial;
	out->count = (__u16)(i + 1);
	w->hash = (w->hash ^ w->pc) * 0x100000001b3ull;
	w->hash = (w->hash ^ serial) * 0x100000001b3ull;
	w->hash ^= w->hash >> 29;
	if (ri == -2)
		goto incomplete;
	if (ri < 0)
		goto no_table;

	__u32 rk = (__u32)ri;
	struct at_bpf_rule *rule = bpf_map_lookup_elem(&unwind_rules, &rk);
	if (!rule)
		goto no_table;
	__u64 cfa, ra, bp = w->bp;

	switch (rule->kind) {
	case AT_BPF_RULE_CFA_RSP:
		cfa = w->sp + (__u64)(__s64)rule->cfa_offset;
		break;
	case AT_BPF_RULE_SIGNAL:
		if (read_signal_frame(w, rule, &cfa, &ra, &bp) || cfa <= w->sp)
			goto incomplete;
		out->flags = 1;
		goto advance;
	case AT_BPF_RULE_CFA_RBP:
	case AT_BPF_RULE_FRAME_POINTER:
		cfa = w->bp + (__u64)(__s64)rule->cfa_offset;
		break;
	case AT_BPF_RULE_PLT:
		cfa = w->sp + 8 + ((__s32)(w->pc & 15) >= rule->cfa_offset ? 8 : 0);
		break;
	case AT_BPF_RULE_END:
		w->flags = 0;
			return 1;
	case AT_BPF_RULE_NONE:
		goto no_table;
	default:
		goto incomplete;
	}
	if (cfa <= w->sp)
		goto incomplete;
	if (read_stack(w, cfa - 8, &ra))
		goto incomplete;
	if (rule->rbp == AT_BPF_RBP_AT_CFA &&
	    read_stack(w, cfa + (__u64)(__s64)rule->rbp_offset, &bp))
		goto incomplete;
	out->flags = 0;
advance:
	w->pc = ra;
	w->sp = cfa;
	w->bp = bp;
	return 0;
no_table:
	w->flags = 2 /* AT_STACK_INCOMPLETE */ | AT_BPF_STACK_NO_TABLE;
	return 1;
incomplete:
	w->flags = 2 /* AT_STACK_INCOMPLETE */;
	return 1;
}

/* Whether the hold signal can stop the calling thread now and be told from the program's
 * own: the thread does not block it, and it is pending neither for the thread nor for its
 * process. */
static __always_inline int hold_signal_free(void)
{
	struct task_struct___at *task = (void *)bpf_get_current_task_btf();
	__u64 bit = 1ull << (AT_BPF_HOLD_SIGNAL - 1);
	__u64 blocked = BPF_CORE_READ(task, blocked.sig[0]);
	__u64 pending = BPF_CORE_READ(task, pending.signal.sig[0]);
	__u64 shared = BPF_CORE_READ(task, signal, shared_pending.signal.sig[0]);

	return !((blocked | pending | shared) & bit);
}

/* The call now entering (process tgid) took the incomplete stack hash at a pc in no known
 * mapping: holds the thread for the daemon (struct at_bpf_held), unless the process's holds are
 * over their rate (hold_after) or the signal cannot serve now. */
static __noinline void hold_thread(struct pt_regs *ctx, __u32 tgid, __u64 hash)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 *due = bpf_map_lookup_elem(&hold_after, &tgid);
	__u64 next = now + AT_BPF_HOLD_GAP_NS;

	if (!ctx)
		return;
	if (due) {
		if (*due > now + (AT_BPF_HOLD_BURST - 1) * AT_BPF_HOLD_GAP_NS)
			return;
		if (*due > now)
			next = *due + AT_BPF_HOLD_GAP_NS;
		*due = next;
	} else {
		bpf_map_update_elem(&hold_after, &tgid, &next, BPF_ANY);
	}
	if (!hold_signal_free())
		return;

	struct at_bpf_held h = { PT_REGS_IP(ctx), PT_REGS_SP(ctx), PT_REGS_FP(ctx), 0, hash, 0, 0 };
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 key = regs_key(ctx);
	__u32 slot;
	struct at_thread *s = key_slot(key, &slot);

	if (s && s->owner == key)
		h.slot = slot + 1;
	if (bpf_probe_read_user(&h.ra, sizeof(h.ra), (void *)h.sp) == 0 &&
	    bpf_map_update_elem(&held, &tid, &h, BPF_ANY) == 0 &&
	    bpf_send_signal_thread(AT_BPF_HOLD_SIGNAL) == 0)
		count_stacks(AT_STACKS_HELD);
}

/* The calling thread's address space's mm_lock_seq (changed by every mmap, munmap, mprotect,
 * brk...); on a kernel without it, a value that changes at every call, so that every mapping is
 * checked at every walk. */
static __always_inline __u32 address_space_seq(void)
{
	struct task_struct___mm *task = (void *)bpf_get_current_task_btf();

	if (!bpf_core_field_exists(task->mm->mm_lock_seq))
		return (__u32)bpf_ktime_get_ns() | 2;
	return BPF_CORE_READ(task, mm, mm_lock_seq.sequence);
}

/* Takes the user stack of the call now entering and stores it in the stacks map under its
 * hash. Returns the hash, or 0 when it could not be stored (counted). */
static __noinline __u64 take_stack(struct pt_regs *ctx, __u32 tgid)
{
	__u32 zero = 0;
	struct walk_state w = {};

	w.out = bpf_map_lookup_elem(&stack_scratch, &zero);
	if (!w.out)
		return 0;
	w.win = bpf_map_lookup_elem(&stack_window, &zero);
	w.cache = bpf_map_lookup_elem(&rule_cache, &zero);
	w.gen = *(volatile __u64 *)&mappings_gen;
	w.mm_seq = address_space_seq();
	asm volatile("" ::: "memory"); /* the generations are read before the mappings */
	w.maps = bpf_map_lookup_elem(&proc_mappings, &tgid);
	if (!w.maps) {
		count_stacks(AT_STACKS_NO_PROCESS);
		w.out->pcs[0] = PT_REGS_IP(ctx);
		w.out->serials[0] = 0;
		w.out->count = 1;
		w.out->flags = 2 /* AT_STACK_INCOMPLETE */ | AT_BPF_STACK_NO_TABLE;
		w.hash = (tgid ^ PT_REGS_IP(ctx)) * 0x100000001b3ull;
	} else {
		w.pc = PT_REGS_IP(ctx);
		w.sp = PT_REGS_SP(ctx);
		w.bp = PT_REGS_FP(ctx);
		w.hash = tgid * 0x9e3779b97f4a7c15ull;
		w.tgid = tgid;
		w.flags = 1 /* AT_STACK_TRUNCATED */;
		w.out->flags = 1; /* the first pc is exact (see walk_frame) */
		bpf_loop(AT_BPF_MAX_FRAMES, walk_frame, &w, 0);
		w.out->flags = (__u16)w.flags;
		w.hash ^= (__u64)w.flags << 48;
	}
	w.out->pid = tgid;
	count_stacks(AT_STACKS_WALKED);
	if (w.hash == 0)
		w.hash = 1;
	long err = bpf_map_update_elem(&stacks, &w.hash, w.out, BPF_NOEXIST);
	if (err && err != -17 /* EEXIST: known already */) {
		count_stacks(AT_STACKS_NOT_STORED);
		return 0;
	}
	if (w.maps && (w.flags & AT_BPF_STACK_NO_TABLE) && w.maps->hold_on_miss)
		hold_thread(ctx, tgid, w.hash);
	return w.hash;
}

/* Takes the stack of the call now entering (of process tgid) and gives it to the thread's
 * state. The state is looked up again after the walk rather than kept across it: a pointer to a
 * slot and one to task storage are different kinds to the verifier, and with either live at the
 * call it would check the walk once for each (1 s of CPU at every start instead of 0.5). */
static __noinline void stack_for_call(struct pt_regs *ctx, __u32 tgid)
{
	__u64 hash = take_stack(ctx, tgid);
	struct at_thread *t = thread_state(ctx);

	if (t)
		t->stack = hash;
}

/* Entry of a call recorded at return: counts the depth; an outermost call of the window
 * remembers its arguments. */
static __always_inline int enter(struct pt_regs *ctx, __u32 func, __u64 a0, __u64 a1,
				 __u64 memptr, __u32 flags)
{
	if (floor_only)
		return 0;
	int untraced;
	struct at_thread *t = traced_thread(ctx, 1, &untraced);

	if (untraced)
		return 0;
	if (!t) {
		if (*(volatile __u32 *)&recording)
			count_lost(AT_LOST_NO_STATE);
		return 0;
	}
	int internal = called_by_allocator(ctx, t);
	if (t->depth++ > 0)
		return 0;
	t->recorded = !internal && !foreign_object(ctx, t, func) && window_admits(inflight_unit(func));
	if (!t->recorded)
		return 0;
	t->func = func;
	t->flags = flags;
	t->arg[0] = a0;
	t->arg[1] = a1;
	t->memptr = memptr;
	if (at_probe_reallocates(func))
		t->seq_entry = __sync_fetch_and_add(&next_seq, 1);
	t->stack = 0;
	if (stacks_on)
		stack_for_call(ctx, t->id >> 32);
	return 0;
}

/* The general registers at the probe, by ModRM number (rax 0, rcx 1, ... rdi 7, r8 8, ...):
 * each read at a constant offset of the context, the only kind of access the verifier allows
 * to it, into an array that can then be indexed (a read of the context through
 * bpf_probe_read_kernel at a variable offset costs a call per register). */
static __always_inline void general_registers(struct pt_regs *ctx, __u64 regs[16])
{
	regs[0] = ctx->rax;
	regs[1] = ctx->rcx;
	regs[2] = ctx->rdx;
	regs[3] = ctx->rbx;
	regs[4] = ctx->rsp;
	regs[5] = ctx->rbp;
	regs[6] = ctx->rsi;
	regs[7] = ctx->rdi;
	regs[8] = ctx->r8;
	regs[9] = ctx->r9;
	regs[10] = ctx->r10;
	regs[11] = ctx->r11;
	regs[12] = ctx->r12;
	regs[13] = ctx->r13;
	regs[14] = ctx->r14;
	regs[15] = ctx->r15;
}

/* The entry of function func (enum at_probe_func) with its first three arguments, as the
 * format prints them: one or two as they are passed; posix_memalign's alignment and size, its
 * out-parameter kept for the return; reallocarray's pointer and product, saturated when it
 * overflows. */
static __always_inline int enter_function(struct pt_regs *ctx, __u32 func, __u64 a0, __u64 a1,
					  __u64 a2)
{
	__u64 memptr = 0;
	__u32 flags = 0;

	switch (func) {
	case AT_PROBE_MALLOC:
	case AT_PROBE_VALLOC:
	case AT_PROBE_PVALLOC:
		a1 = 0;
		break;
	case AT_PROBE_POSIX_MEMALIGN:
		memptr = a0;
		a0 = a1;
		a1 = a2;
		break;
	case AT_PROBE_REALLOCARRAY: {
		__u64 limit = a1 ? ~0ULL / a1 : ~0ULL;

		asm volatile("" : "+r"(limit)); /* keeps clang from fusing this into a 128-bit multiply */
		if (a2 <= limit) {
			a1 = a1 * a2;
		} else {
			a1 = ~0ULL;
			flags = AT_REC_OVERFLOW;
		}
		break;
	}
	}
	return enter(ctx, func, a0, a1, memptr, flags);
}

/* The entry of any function recorded at return, whose cookie is the function's code (enum
 * at_probe_func); at a site past moves that copied the arguments elsewhere, the cookie says
 * where they are. With --stacks it serves every such function: the stack walk it calls is then
 * verified once, not once per function. */
SEC("uprobe")
int BPF_KPROBE(alloc_entry, __u64 a0, __u64 a1, __u64 a2)
{
	if (floor_only)
		return 0;
	__u64 cookie = bpf_get_attach_cookie(ctx);

	if (cookie & AT_COOKIE_ARGS_MOVED) {
		__u64 regs[16];

		general_registers(ctx, regs);
		a0 = regs[(cookie >> AT_COOKIE_ARG_SHIFT) & 15];
		a1 = regs[(cookie >> (AT_COOKIE_ARG_SHIFT + 4)) & 15];
		a2 = regs[(cookie >> (AT_COOKIE_ARG_SHIFT + 8)) & 15];
	}
	return enter_function(ctx, (__u32)(cookie & AT_COOKIE_FUNC_MASK), a0, a1, a2);
}

/* The entries of the most called functions, at sites where the arguments are in their own
 * registers, without --stacks: no cookie to read (a call, some 20 ns). */
SEC("uprobe")
int BPF_KPROBE(malloc_entry, __u64 size)
{
	if (floor_only)
		return 0;
	return enter_function(ctx, AT_PROBE_MALLOC, size, 0, 0);
}

SEC("uprobe")
int BPF_KPROBE(calloc_entry, __u64 n, __u64 size)
{
	if (floor_only)
		return 0;
	return enter_function(ctx, AT_PROBE_CALLOC, n, size, 0);
}

SEC("uprobe")
int BPF_KPROBE(realloc_entry, __u64 ptr, __u64 size)
{
	if (floor_only)
		return 0;
	return enter_function(ctx, AT_PROBE_REALLOC, ptr, size, 0);
}

/* Return of any call recorded at return: records the outermost one of the window. */
SEC("uretprobe")
int BPF_KRETPROBE(alloc_return, __u64 ret)
{
	if (floor_only)
		return 0;
	struct at_thread *t = thread_state(ctx);
	__u64 seq, seq_entry, result = ret;

	if (!t || t->depth == 0) /* entered before the entry probe was attached */
		return 0;
	if (--t->depth > 0 || !t->recorded)
		return 0;
	t->recorded = 0;
	seq = __sync_fetch_and_add(&next_seq, 1);
	seq_entry = seq;
	if (at_probe_reallocates(t->func))
		seq_entry = t->seq_entry;
	if (at_probe_kind(t->func) == AT_KIND_OUT_PARAM) {
		result = 0;
		if ((int)ret == 0)
			bpf_probe_read_user(&result, sizeof(result), (void *)t->memptr);
	}
	emit(t->id, seq, seq_entry, t->func, t->flags, t->arg[0], t->arg[1], result, t->stack);
	inflight_add(-inflight_unit(t->func));
	return 0;
}

/* free: recorded at entry, unless nested inside another call of the family. */
SEC("uprobe")
int BPF_KPROBE(free_entry, __u64 ptr)
{
	if (floor_only)
		return 0;
	int untraced;
	/* no state yet: not inside a call, not marked */
	struct at_thread *t = traced_thread(ctx, 0, &untraced);

	if (untraced)
		return 0;
	if (t && (called_by_allocator(ctx, t) | (t->depth > 0)))
		return 0;
	if (foreign_object(ctx, t, AT_PROBE_FREE) || !window_admits(AT_INFLIGHT_CALL))
		return 0;
	__u64 seq = __sync_fetch_and_add(&next_seq, 1);
	__u64 id = t ? t->id : bpf_get_current_pid_tgid();

	emit(id, seq, seq, AT_PROBE_FREE, 0, ptr, 0, 0, 0);
	inflight_add(-AT_INFLIGHT_CALL);
	return 0;
}

/* The allocator is about to call one of its own entry points directly (a probe on the call
 * instruction, which the kernel emulates): the entry it reaches will see the stack pointer less
 * the return address the call pushes. */
SEC("uprobe")
int BPF_KPROBE(internal_call)
{
	if (floor_only)
		return 0;
	int untraced;
	struct at_thread *t = traced_thread(ctx, 1, &untraced);

	if (!t)
		return 0;
	t->internal_sp = PT_REGS_SP(ctx) - 8;
	return 0;
}

/* Processes (tgid) whose new program's libraries the dynamic loader is mapping: the daemon,
 * their tracer, finds their allocator once they are mapped. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} loading SEC(".maps");

/* The dynamic loader's _dl_debug_state, called when its list of objects changes (before the
 * libraries are mapped, and once they are, before any of their code runs): a process the daemon
 * waits for is held at the second (r_state RT_CONSISTENT, read where the cookie says) with the
 * hold signal (AT_BPF_HOLD_SIGNAL: ignored by default, generated without effect on job control)
 * that its tracer, the daemon, suppresses. */
SEC("uprobe")
int BPF_KPROBE(loader_state)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u64 to_state = bpf_get_attach_cookie(ctx);
	__u32 state = AT_RT_CONSISTENT;

	if (!bpf_map_lookup_elem(&loading, &tgid))
		return 0;
	/* the call before the libraries are mapped (RT_ADD) is let go: one stop, not two */
	if (to_state &&
	    bpf_probe_read_user(&state, sizeof(state), (void *)(PT_REGS_IP(ctx) + to_state)) == 0 &&
	    state != AT_RT_CONSISTENT)
		return 0;
	/* a thread that blocks the hold signal (a mask inherited across exec) is held by SIGSTOP,
	 * which it cannot block; its tracer suppresses that too */
	bpf_send_signal_thread(hold_signal_free() ? AT_BPF_HOLD_SIGNAL : 19 /* SIGSTOP */);
	return 0;
}

/* ---- stacks: processes that go away ----
 * A process that executes a new program or exits takes its mappings with it: the program
 * forgets them at that instant (a new process with the same pid, or the new program, is then
 * scanned anew), and the rule cache with them. */

/* Process tgid's address space is gone (exec or exit): its mappings are forgotten. */
static __always_inline void forget_process(__u32 tgid)
{
	if (bpf_map_delete_elem(&proc_mappings, &tgid) == 0)
		__sync_fetch_and_add(&mappings_gen, 1);
}

/* Whether the exiting thread is its process's last (the kernel counts live threads down before
 * the exit tracepoint). */
static __always_inline int last_thread(void)
{
	struct task_struct___live *task = (void *)bpf_get_current_task_btf();

	return BPF_CORE_READ(task, signal, live.counter) == 0;
}

/* Just what thread_end reads of a task: whether its whole process is exiting, whether other
 * threads of it live on. */
#define AT_SIGNAL_GROUP_EXIT 0x4 /* include/linux/sched/signal.h */
struct signal_struct___at_exit {
	struct {
		int counter;
	} live;
	unsigned int flags;
} __attribute__((preserve_access_index));
struct task_struct___at_exit {
	struct signal_struct___at_exit *signal;
} __attribute__((preserve_access_index));

/* Records, in the window, that the exiting thread id (tgid << 32 | tid) of a traced process
 * ended: a record of func AT_PROBE_THREAD_END numbered from the one counter, so it comes after
 * every event of the thread (a thread that made no call has no state in the writer, which
 * ignores it). Nothing for a thread of a process that exits as a whole (exit_group, a fatal
 * signal) or whose live count is down to 0 (its last thread: the kernel counts the thread out
 * before this tracepoint): the process's exit ends those. Nothing outside the window either.
 * A record the ring has no room for is counted in AT_LOST_THREAD_ENDS, not as a lost event. */
static __always_inline void thread_end(__u64 id)
{
	struct task_struct___at_exit *task = (void *)bpf_get_current_task_btf();

	if (!is_traced(id >> 32) || BPF_CORE_READ(task, signal, live.counter) <= 0 ||
	    (BPF_CORE_READ(task, signal, flags) & AT_SIGNAL_GROUP_EXIT) ||
	    !window_admits(AT_INFLIGHT_CALL))
		return;
	__u64 seq = __sync_fetch_and_add(&next_seq, 1);
	struct at_record *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);

	if (r) {
		__builtin_memset(r, 0, sizeof(*r));
		r->seq = r->seq_entry = seq;
		r->pid = id >> 32;
		r->tid = (__u32)id;
		r->func = AT_PROBE_THREAD_END;
		r->time_ns = times_on ? bpf_ktime_get_ns() : 0;
		bpf_ringbuf_submit(r, wakeup_flag(seq));
	} else {
		count_lost(AT_LOST_THREAD_ENDS);
	}
	inflight_add(-AT_INFLIGHT_CALL);
}

/* A thread that dies inside a call of the window: that call is no longer in flight (a
 * realloc's entry number stays missing: the reorder counts it lost). Its slot is released; task
 * storage goes with the thread. A thread of a traced process that is not its last says that it
 * ended (thread_end). */
SEC("raw_tracepoint/sched_process_exit")
int thread_exit(void *ctx)
{
	const void *regs = (const void *)bpf_task_pt_regs(bpf_get_current_task_btf());
	struct at_thread *t = thread_state(regs);

	if (t && t->depth > 0 && t->recorded) {
		inflight_add(-inflight_unit(t->func));
		t->recorded = 0;
	}
	thread_slot_release(regs);
	if (stacks_on && last_thread())
		forget_process(bpf_get_current_pid_tgid() >> 32);
	thread_end(bpf_get_current_pid_tgid());
	return 0;
}

/* A thread other than the leader that execs takes the leader's tid (the leader has exited):
 * its state, which goes on (same task, same registers), gets its new id. (It is not inside a
 * call: exec is not called from one.) */
SEC("raw_tracepoint/sched_process_exec")
int thread_exec(void *ctx)
{
	const void *regs = (const void *)bpf_task_pt_regs(bpf_get_current_task_btf());
	struct at_thread *t = thread_state(regs);

	if (t)
		t->id = bpf_get_current_pid_tgid();
	/* --all: the new program's allocator is any object until the daemon names it, not the
	 * parent's that allocator_lookup would take */
	if (trace_all && *(volatile __u32 *)&allocator_check) {
		__u32 tgid = bpf_get_current_pid_tgid() >> 32, any = 0;

		bpf_map_update_elem(&targets, &tgid, &any, BPF_NOEXIST);
	}
	if (stacks_on)
		forget_process(bpf_get_current_pid_tgid() >> 32);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
