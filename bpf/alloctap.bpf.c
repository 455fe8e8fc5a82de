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
 * Calls the allocator makes to itself: a call whose return address is a direct call site of
 * the allocator's own object into one of its entry points (glibc's thread-exit tcache flush
 * calls free so) is not the program's, and is not recorded (the internal_calls map). */
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "alloctap.h"

/* Set by the daemon before load. */
const volatile __u32 trace_all = 0;   /* 1: every tgid but self_tgid; 0: those in targets */
const volatile __u32 self_tgid = 0;
/* 1: every program returns at once (alloctapd --floor, for the benchmark's floor: the cost of
 * the traps alone at exactly the sites alloctapd uses; the verifier prunes the rest). */
const volatile __u32 floor_only = 0;
/* The daemon is woken only when this many bytes wait (it also polls every 100 ms): a wakeup per
 * record would cost the traced program a context switch per call on a small machine. */
const volatile __u64 wakeup_bytes = 0;

/* The one global event counter; the daemon reads it after detaching (see alloctap.h). */
__u64 next_seq = 0;

/* 1 while the daemon records (written by the daemon through the skeleton's .bss). */
__u32 recording = 0;

/* Per object number (alloctap.h), the span of its internal calls' return addresses. */
struct at_call_range internal_ranges[AT_MAX_OBJECTS + 1] = {};

struct at_thread {
	__u64 seq_entry;
	__u64 arg[2];
	__u64 memptr;   /* posix_memalign's out-parameter */
	__u32 func;
	__u32 depth;
	__u32 flags;
	__u32 recorded; /* the outermost call in progress belongs to the window */
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22); /* resized by the daemon */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

/* Per-thread call state. LRU so that threads that die inside a call cannot fill it; the exit
 * tracepoint below also deletes a dying thread's entry at once. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
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

/* Return addresses of the allocators' direct calls to their own entry points (alloctap.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, AT_MAX_INTERNAL_CALLS);
	__type(key, __u64);
	__type(value, __u8);
} internal_calls SEC(".maps");

static __always_inline void count_lost(__u32 which)
{
	__u64 *n = bpf_map_lookup_elem(&lost, &which);

	if (n)
		*n += 1;
}

static __always_inline int is_traced(__u32 tgid)
{
	if (trace_all)
		return tgid != self_tgid;
	return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

static __always_inline __u64 inflight_unit(__u32 func)
{
	return func == AT_PROBE_REALLOC || func == AT_PROBE_REALLOCARRAY ? AT_INFLIGHT_REALLOC
									  : AT_INFLIGHT_CALL;
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

/* Whether the call now entering (outermost) was made by the allocator's own object straight
 * to the probed entry point: its return address, relative to the object, is in internal_calls.
 * The object's load bias is the probe's address less the site's address in the object
 * (rounded down to a page, which holds whether ctx->ip is the site or just past it). */
static __always_inline int called_by_allocator(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u64 object = cookie >> AT_COOKIE_OBJECT_SHIFT & AT_MAX_OBJECTS;
	__u64 ret, key;

	if (!object)
		return 0;
	if (bpf_probe_read_user(&ret, sizeof(ret), (void *)PT_REGS_SP(ctx)))
		return 0;
	ret -= (PT_REGS_IP(ctx) - (cookie & AT_COOKIE_ADDR_MASK)) & ~4095ull;
	if (ret < internal_ranges[object].lo || ret >= internal_ranges[object].hi)
		return 0;
	key = object << AT_COOKIE_OBJECT_SHIFT | ret;
	return bpf_map_lookup_elem(&internal_calls, &key) != NULL;
}

/* Whether an outermost call now entering belongs to the window; if so it is counted in flight
 * (with unit) until its record is written. The count goes up before recording is read again:
 * the daemon clears recording, then reads the counts, so either it sees this call in flight or
 * this read sees recording off (then the count goes back down). */
static __always_inline int window_admits(struct pt_regs *ctx, __u64 unit)
{
	if (!*(volatile __u32 *)&recording || called_by_allocator(ctx))
		return 0;
	inflight_add(unit);
	if (*(volatile __u32 *)&recording)
		return 1;
	inflight_add(-unit);
	return 0;
}

/* Reserves, fills and submits one record; counts it lost when the ring is full. */
static __always_inline void emit(__u64 pid_tgid, __u64 seq, __u64 seq_entry, __u32 func,
				 __u32 flags, __u64 a0, __u64 a1, __u64 result)
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
	bpf_ringbuf_submit(r, bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes
				      ? BPF_RB_FORCE_WAKEUP
				      : BPF_RB_NO_WAKEUP);
}

/* Entry of a call recorded at return: counts the depth; an outermost call of the window
 * remembers its arguments. */
static __always_inline int enter(struct pt_regs *ctx, __u32 func, __u64 a0, __u64 a1,
				 __u64 memptr, __u32 flags)
{
	if (floor_only)
		return 0;
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct at_thread *t;

	if (!is_traced(id >> 32))
		return 0;
	t = bpf_map_lookup_elem(&threads, &tid);
	if (!t) {
		struct at_thread fresh = {};

		bpf_map_update_elem(&threads, &tid, &fresh, BPF_NOEXIST);
		t = bpf_map_lookup_elem(&threads, &tid);
		if (!t) {
			if (*(volatile __u32 *)&recording)
				count_lost(AT_LOST_NO_STATE);
			return 0;
		}
	}
	if (t->depth++ > 0)
		return 0;
	t->recorded = window_admits(ctx, inflight_unit(func));
	if (!t->recorded)
		return 0;
	t->func = func;
	t->flags = flags;
	t->arg[0] = a0;
	t->arg[1] = a1;
	t->memptr = memptr;
	if (func == AT_PROBE_REALLOC || func == AT_PROBE_REALLOCARRAY)
		t->seq_entry = __sync_fetch_and_add(&next_seq, 1);
	return 0;
}

/* The entry programs of the functions whose arguments the format prints as they are: one or
 * two of them, in the order they are passed. */
#define ENTRY_1(fn, code)                                                                      \
	SEC("uprobe") int BPF_KPROBE(fn##_entry, __u64 a0)                                     \
	{                                                                                      \
		return enter(ctx, code, a0, 0, 0, 0);                                          \
	}
#define ENTRY_2(fn, code)                                                                      \
	SEC("uprobe") int BPF_KPROBE(fn##_entry, __u64 a0, __u64 a1)                           \
	{                                                                                      \
		return enter(ctx, code, a0, a1, 0, 0);                                         \
	}

ENTRY_1(malloc, AT_PROBE_MALLOC)
ENTRY_2(calloc, AT_PROBE_CALLOC)
ENTRY_2(realloc, AT_PROBE_REALLOC)

SEC("uprobe")
int BPF_KPROBE(reallocarray_entry, __u64 ptr, __u64 nmemb, __u64 size)
{
	/* n*m, saturated when it overflows */
	__u64 limit = nmemb ? ~0ULL / nmemb : ~0ULL;
	__u64 total = ~0ULL;
	__u32 flags = AT_REC_OVERFLOW;

	asm volatile("" : "+r"(limit)); /* keeps clang from fusing this into a 128-bit multiply */
	if (size <= limit) {
		total = nmemb * size;
		flags = 0;
	}
	return enter(ctx, AT_PROBE_REALLOCARRAY, ptr, total, 0, flags);
}

ENTRY_2(memalign, AT_PROBE_MEMALIGN)
ENTRY_2(aligned_alloc, AT_PROBE_ALIGNED_ALLOC)

SEC("uprobe")
int BPF_KPROBE(posix_memalign_entry, __u64 memptr, __u64 align, __u64 size)
{
	return enter(ctx, AT_PROBE_POSIX_MEMALIGN, align, size, memptr, 0);
}

ENTRY_1(valloc, AT_PROBE_VALLOC)
ENTRY_1(pvalloc, AT_PROBE_PVALLOC)
/* Return of any call recorded at return: records the outermost one of the window. */
SEC("uretprobe")
int BPF_KRETPROBE(alloc_return, __u64 ret)
{
	if (floor_only)
		return 0;
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct at_thread *t = bpf_map_lookup_elem(&threads, &tid);
	__u64 seq, seq_entry, result = ret;

	if (!t || t->depth == 0) /* entered before the entry probe was attached */
		return 0;
	if (--t->depth > 0 || !t->recorded)
		return 0;
	t->recorded = 0;
	seq = __sync_fetch_and_add(&next_seq, 1);
	seq_entry = seq;
	if (t->func == AT_PROBE_REALLOC || t->func == AT_PROBE_REALLOCARRAY)
		seq_entry = t->seq_entry;
	if (t->func == AT_PROBE_POSIX_MEMALIGN) {
		result = 0;
		if ((int)ret == 0)
			bpf_probe_read_user(&result, sizeof(result), (void *)t->memptr);
	}
	emit(id, seq, seq_entry, t->func, t->flags, t->arg[0], t->arg[1], result);
	inflight_add(-inflight_unit(t->func));
	return 0;
}

/* free: recorded at entry, unless nested inside another call of the family. */
SEC("uprobe")
int BPF_KPROBE(free_entry, __u64 ptr)
{
	if (floor_only)
		return 0;
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct at_thread *t;

	if (!is_traced(id >> 32))
		return 0;
	t = bpf_map_lookup_elem(&threads, &tid);
	if (t && t->depth > 0)
		return 0;
	if (!window_admits(ctx, AT_INFLIGHT_CALL))
		return 0;
	__u64 seq = __sync_fetch_and_add(&next_seq, 1);

	emit(id, seq, seq, AT_PROBE_FREE, 0, ptr, 0, 0);
	inflight_add(-AT_INFLIGHT_CALL);
	return 0;
}

/* A thread that dies inside a call leaves no state behind, and its call of the window is no
 * longer in flight (a realloc's entry number stays missing: the reorder counts it lost). */
SEC("raw_tracepoint/sched_process_exit")
int thread_exit(void *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct at_thread *t = bpf_map_lookup_elem(&threads, &tid);

	if (!t)
		return 0;
	if (t->depth > 0 && t->recorded)
		inflight_add(-inflight_unit(t->func));
	bpf_map_delete_elem(&threads, &tid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
