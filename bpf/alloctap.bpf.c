// SPDX-License-Identifier: GPL-2.0
/* alloctap.bpf.c: uprobes on the malloc family, one ring-buffer record per outermost call.
 *
 * Frees are recorded at entry, allocations at return (DESIGN.md decision 4). Every record takes
 * its number from one global counter; realloc takes one at entry and carries it to its return.
 * Per thread, a depth counts nested calls (glibc calls its own entry points); only the outermost
 * call is recorded (decision 3). */
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

/* The one global event counter. */
__u64 next_seq = 0;

struct at_thread {
	__u64 seq_entry;
	__u64 arg[2];
	__u64 memptr;   /* posix_memalign's out-parameter */
	__u32 func;
	__u32 depth;
	__u32 flags;
	__u32 pad;
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

/* Entry of a call recorded at return: remembers its arguments, unless it is nested. */
static __always_inline int enter(__u32 func, __u64 a0, __u64 a1, __u64 memptr, __u32 flags)
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
			count_lost(AT_LOST_NO_STATE);
			return 0;
		}
	}
	if (t->depth++ > 0)
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

SEC("uprobe")
int BPF_KPROBE(malloc_entry, __u64 size)
{
	return enter(AT_PROBE_MALLOC, size, 0, 0, 0);
}

SEC("uprobe")
int BPF_KPROBE(calloc_entry, __u64 nmemb, __u64 size)
{
	return enter(AT_PROBE_CALLOC, nmemb, size, 0, 0);
}

SEC("uprobe")
int BPF_KPROBE(realloc_entry, __u64 ptr, __u64 size)
{
	return enter(AT_PROBE_REALLOC, ptr, size, 0, 0);
}

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
	return enter(AT_PROBE_REALLOCARRAY, ptr, total, 0, flags);
}

SEC("uprobe")
int BPF_KPROBE(memalign_entry, __u64 align, __u64 size)
{
	return enter(AT_PROBE_MEMALIGN, align, size, 0, 0);
}

SEC("uprobe")
int BPF_KPROBE(aligned_alloc_entry, __u64 align, __u64 size)
{
	return enter(AT_PROBE_ALIGNED_ALLOC, align, size, 0, 0);
}

SEC("uprobe")
int BPF_KPROBE(posix_memalign_entry, __u64 memptr, __u64 align, __u64 size)
{
	return enter(AT_PROBE_POSIX_MEMALIGN, align, size, memptr, 0);
}

SEC("uprobe")
int BPF_KPROBE(valloc_entry, __u64 size)
{
	return enter(AT_PROBE_VALLOC, size, 0, 0, 0);
}

SEC("uprobe")
int BPF_KPROBE(pvalloc_entry, __u64 size)
{
	return enter(AT_PROBE_PVALLOC, size, 0, 0, 0);
}

/* Return of any call recorded at return: records the outermost one. */
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
	if (--t->depth > 0)
		return 0;
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
	__u64 seq = __sync_fetch_and_add(&next_seq, 1);

	emit(id, seq, seq, AT_PROBE_FREE, 0, ptr, 0, 0);
	return 0;
}

/* A thread that dies inside a call leaves no state behind. */
SEC("raw_tracepoint/sched_process_exit")
int thread_exit(void *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	bpf_map_delete_elem(&threads, &tid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
