// SPDX-License-Identifier: GPL-2.0
/* alloctap.bpf.c: uprobes on the malloc family, one ring record per outermost call.
 *
 * Frees are recorded at entry, allocations at return, each in the ring of the CPU it runs on
 * with the time it was taken; realloc also marks its entry with a record of its own and carries
 * that time to its return (doc/DESIGN.md, decision 4). Per thread, a depth counts nested calls
 * (glibc calls its own entry points); only the outermost call is recorded (decision 3). The
 * names the daemon uses are listed in alloctap.h.
 *
 * The window: every probe is attached with `recording` off; the daemon turns it on at one
 * instant and off at one instant. A call belongs to the trace when its outermost entry saw
 * recording on; it is then recorded at its return even if recording went off meanwhile. Depths
 * are kept whether or not recording is on, so a call entered before the window does not make
 * its inner calls look outermost. The per-CPU "inflight" counters let the daemon wait, after
 * turning recording off, until every call of the window has reserved its record; it then reads
 * the rings up to their producer positions. A free is recorded at its entry: it belongs to the
 * window when recording is on before and after its record is reserved (prog/window.h).
 *
 * Calls the allocator makes to itself: a direct call from the allocator's own object into one of
 * its entry points (glibc's thread-exit tcache flush calls free so) is not the program's, and is
 * not recorded. The daemon puts a probe on each such call instruction (internal_call below); it
 * marks the thread with the stack pointer the entry will see, and the entry that sees it drops
 * the call.
 *
 * This file holds the programs; what they share lives in headers of its own: prog/maps.h (the
 * configuration, globals and maps), prog/thread_state.h (per-thread state), prog/window.h (the
 * recording window), prog/emit.h (the ring writer), prog/filter.h (which calls a filtered
 * trace records: --min-size, --sample-bytes), prog/unwind.h (the stack walk), prog/kernel.h
 * (the kernel structures read through CO-RE); the architecture's header (arch/x86_64.h: its
 * registers, the layouts its unwind rules read) comes through alloctap.h. */
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "alloctap.h"

#include "prog/kernel.h"
#include "prog/maps.h"
#include "prog/thread_state.h"
#include "prog/window.h"
#include "prog/emit.h"
#include "prog/filter.h"
#include "prog/python.h"
#include "prog/unwind.h"

/* Entry of a call recorded at return: counts the depth; an outermost call of the window
 * remembers its arguments. filtering (a constant): the program may run with a filter
 * (prog/filter.h), which alloc_entry alone serves: the daemon loads the others without one, so
 * they carry no test of it. */
static __always_inline int enter(struct pt_regs *ctx, __u32 func, __u64 a0, __u64 a1,
				 __u64 memptr, __u32 flags, int filtering)
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
	t->flags = flags;
	t->recorded = !internal && !foreign_object(ctx, t, func) &&
		      (!filtering || !filter_on || filter_admits(t, func, a0, a1)) &&
		      window_admits(inflight_unit(func));
	if (!t->recorded)
		return 0;
	t->func = func;
	t->arg[0] = a0;
	t->arg[1] = a1;
	t->memptr = memptr;
	if (at_probe_reallocates(func)) {
		/* the daemon holds the output here until the return: the old block may go to
		 * another thread before this call returns */
		t->time_entry = bpf_ktime_get_ns();
		if (emit_realloc_entry(t->id, t->time_entry) < 0)
			t->flags |= AT_REC_NO_ENTRY;
	}
	t->stack = 0;
	if (stacks_on)
		stack_for_call(ctx, t->id >> 32);
	return 0;
}

/* The entry of function func (enum at_probe_func) with its first three arguments, as the
 * format prints them: one or two as they are passed; posix_memalign's alignment and size, its
 * out-parameter kept for the return; reallocarray's pointer and product, saturated when it
 * overflows. */
static __always_inline int enter_function(struct pt_regs *ctx, __u32 func, __u64 a0, __u64 a1,
					  __u64 a2, int filtering)
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
	return enter(ctx, func, a0, a1, memptr, flags, filtering);
}

/* free: recorded at entry, unless nested inside another call of the family. */
static __always_inline int free_call(struct pt_regs *ctx, __u64 ptr)
{
	int untraced;
	/* no state yet: not inside a call, not marked */
	struct at_thread *t = traced_thread(ctx, 0, &untraced);

	if (untraced)
		return 0;
	if (t && (called_by_allocator(ctx, t) | (t->depth > 0)))
		return 0;
	if (foreign_object(ctx, t, AT_PROBE_FREE))
		return 0;
	__u64 id = t ? t->id : bpf_get_current_pid_tgid();
	/* a filtered trace records the release of a recorded block alone */
	if (filter_on && !block_forget(id >> 32, ptr))
		return 0;
	if (!*(volatile __u32 *)&recording)
		return 0;
	/* the clock before the reservation: a ring's records are in the order of their times */
	__u64 time = bpf_ktime_get_ns();
	struct ring_slot s;
	int reserved = window_reserve(&s);

	if (reserved > 0)
		record_put(&s, id, time, time, AT_PROBE_FREE, 0, ptr, 0, 0, 0);
	else if (reserved < 0)
		record_lost(AT_PROBE_FREE, 0);
	return 0;
}

/* An allocator's call to one of its own entry points, about to be made (internal_call). */
static __always_inline int mark_internal_call(struct pt_regs *ctx)
{
	int untraced;
	struct at_thread *t = traced_thread(ctx, 1, &untraced);

	if (!t)
		return 0;
	t->internal_sp = AT_ARCH_SP(ctx) - AT_ARCH_CALL_PUSH;
	return 0;
}

/* The entry of any function recorded at return, whose cookie is the function's code (enum
 * at_probe_func); at a site past moves that copied the arguments elsewhere, the cookie says
 * where they are. With --stacks it serves every such function: the stack walk it calls is then
 * verified once, not once per function; with a filter too. When a followed tree's processes
 * have links of their own, it serves free's entry and the internal call sites as well (the
 * cookie's code AT_PROBE_FREE or AT_COOKIE_INTERNAL_CALL): one link for all of an object's
 * entries. */
SEC("uprobe")
int BPF_KPROBE(alloc_entry, __u64 a0, __u64 a1, __u64 a2)
{
	if (floor_only)
		return 0;
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 code = (__u32)(cookie & AT_COOKIE_FUNC_MASK);

	if (code == AT_COOKIE_INTERNAL_CALL)
		return mark_internal_call(ctx);

	if (cookie & AT_COOKIE_ARGS_MOVED) {
		__u64 regs[AT_ARCH_GENERAL_REGS];

		at_arch_general_registers(ctx, regs);
		a0 = at_arch_register(regs, cookie >> AT_COOKIE_ARG_SHIFT);
		a1 = at_arch_register(regs, cookie >> (AT_COOKIE_ARG_SHIFT + 4));
		a2 = at_arch_register(regs, cookie >> (AT_COOKIE_ARG_SHIFT + 8));
	}
	if (code == AT_PROBE_FREE)
		return free_call(ctx, a0);
	return enter_function(ctx, code, a0, a1, a2, 1);
}

/* The entries of the most called functions, at sites where the arguments are in their own
 * registers, without --stacks and without a filter: no cookie to read (a call, some 20 ns). */
SEC("uprobe")
int BPF_KPROBE(malloc_entry, __u64 size)
{
	if (floor_only)
		return 0;
	return enter_function(ctx, AT_PROBE_MALLOC, size, 0, 0, 0);
}

SEC("uprobe")
int BPF_KPROBE(calloc_entry, __u64 n, __u64 size)
{
	if (floor_only)
		return 0;
	return enter_function(ctx, AT_PROBE_CALLOC, n, size, 0, 0);
}

SEC("uprobe")
int BPF_KPROBE(realloc_entry, __u64 ptr, __u64 size)
{
	if (floor_only)
		return 0;
	return enter_function(ctx, AT_PROBE_REALLOC, ptr, size, 0, 0);
}

/* Return of any call recorded at return: records the outermost one of the window. */
SEC("uretprobe")
int BPF_KRETPROBE(alloc_return, __u64 ret)
{
	if (floor_only)
		return 0;
	struct at_thread *t = thread_state(ctx);
	__u64 time, time_entry, result = ret;

	if (!t || t->depth == 0) /* entered before the entry probe was attached */
		return 0;
	if (--t->depth > 0 || !t->recorded)
		return 0;
	t->recorded = 0;
	time = bpf_ktime_get_ns();
	time_entry = time;
	if (at_probe_reallocates(t->func))
		time_entry = t->time_entry;
	if (at_probe_kind(t->func) == AT_KIND_OUT_PARAM) {
		result = 0;
		if ((int)ret == 0)
			bpf_probe_read_user(&result, sizeof(result), (void *)t->memptr);
	}
	__u32 flags = t->flags;

	if (filter_on) {
		if (!filter_return(t, result)) {
			inflight_add(-inflight_unit(t->func));
			return 0;
		}
		flags &= ~AT_REC_OLD_KNOWN;
	}
	struct ring_slot s;

	if (return_reserve(&s, inflight_unit(t->func), t->func, flags) == 0)
		record_put(&s, t->id, time, time_entry, t->func, flags, t->arg[0], t->arg[1], result,
			   t->stack);
	else if (filter_on)
		filter_unrecorded(t, result);
	return 0;
}

/* free's entry (alloc_entry serves it too, told by the cookie, when every entry of an object
 * goes in one link). */
SEC("uprobe")
int BPF_KPROBE(free_entry, __u64 ptr)
{
	if (floor_only)
		return 0;
	return free_call(ctx, ptr);
}

/* The allocator is about to call one of its own entry points directly (a probe on the call
 * instruction, which the kernel emulates): the entry it reaches will see the stack pointer less
 * the return address the call pushes. */
SEC("uprobe")
int BPF_KPROBE(internal_call)
{
	if (floor_only)
		return 0;
	return mark_internal_call(ctx);
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
	    bpf_probe_read_user(&state, sizeof(state), (void *)(AT_ARCH_PC(ctx) + to_state)) == 0 &&
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

/* Just what the exit tracepoint reads of a task: whether its whole process is exiting, how many
 * threads of it live on (the kernel counts the exiting thread out before the tracepoint). Read
 * with plain loads through the task's typed pointer (loads that cannot fault), not calls:
 * every thread on the host runs the tracepoint. */
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
 * ended: a record of func AT_PROBE_THREAD_END taken after every event of the thread, so the
 * daemon's merge by time puts it after them (a thread that made no call has no state in the writer, which
 * ignores it). Nothing for a thread of a process that exits as a whole (exit_group, a fatal
 * signal) or whose live count is down to 0 (its last thread: the kernel counts the thread out
 * before this tracepoint): the process's exit ends those. Nothing outside the window either.
 * A record the ring has no room for is counted in AT_LOST_THREAD_ENDS, not as a lost event. */
static __always_inline void thread_end(__u64 id, const struct signal_struct___at_exit *signal)
{
	if (!*(volatile __u32 *)&recording || signal->live.counter <= 0 ||
	    (signal->flags & AT_SIGNAL_GROUP_EXIT) || !is_target(id >> 32))
		return;
	__u64 time = bpf_ktime_get_ns();
	struct ring_slot s;
	int reserved = window_reserve(&s);

	if (reserved > 0)
		record_put(&s, id, time, time, AT_PROBE_THREAD_END, 0, 0, 0, 0, 0);
	else if (reserved < 0)
		count_lost(AT_LOST_THREAD_ENDS);
}

/* A thread that dies inside a call of the window: that call is no longer in flight (a
 * realloc's entry record then waits for a return that never comes: the daemon gives up on it
 * and counts it lost). Its slot is released; task
 * storage goes with the thread. A thread of a traced process that is not its last says that it
 * ended (thread_end). */
/* Counts a traced process whose leader exits while other threads live on, and uncounts it at
 * its last thread's exit, or at an exec (whose thread becomes the new leader): leaders_gone. */
static __always_inline void note_leader(__u64 id, int live)
{
	__u32 tgid = id >> 32;
	__u8 one = 1;

	if ((__u32)id == tgid && live > 0 && is_target(tgid)) {
		if (bpf_map_update_elem(&orphaned, &tgid, &one, BPF_NOEXIST) == 0)
			__sync_fetch_and_add(&leaders_gone, 1);
	} else if (live <= 0 && bpf_map_delete_elem(&orphaned, &tgid) == 0) {
		__sync_fetch_and_add(&leaders_gone, -1);
	}
}

SEC("raw_tracepoint/sched_process_exit")
int thread_exit(void *ctx)
{
	struct task_struct___at_exit *task = (void *)bpf_get_current_task_btf();
	const void *regs = (const void *)bpf_task_pt_regs((void *)task);
	const struct signal_struct___at_exit *signal = task->signal;
	__u64 id = bpf_get_current_pid_tgid();
	struct at_thread *s = held_slot(regs);
	struct at_thread *t = s ? s : in_storage((void *)task);

	if (t && t->depth > 0 && t->recorded) {
		inflight_add(-inflight_unit(t->func));
		t->recorded = 0;
	}
	if (s)
		thread_slot_release(s);
	else if (t)
		__sync_fetch_and_add(&threads_in_storage, -1);
	int live = signal->live.counter;

	if ((stacks_on || filter_on) && live == 0) {
		if (stacks_on)
			forget_process(id >> 32);
		if (filter_on && is_target(id >> 32))
			filter_forget_process(id >> 32);
	}
	thread_end(id, signal);
	note_leader(id, live);
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
	/* the exec's thread is the leader now (the daemon probes the new program for it) */
	__u32 self = bpf_get_current_pid_tgid() >> 32;
	if (bpf_map_delete_elem(&orphaned, &self) == 0)
		__sync_fetch_and_add(&leaders_gone, -1);
	/* --all: the new program's allocator is any object until the daemon names it, not the
	 * parent's that allocator_lookup would take */
	if (trace_all && *(volatile __u32 *)&allocator_check) {
		__u32 tgid = bpf_get_current_pid_tgid() >> 32;
		__u64 any = 0;

		bpf_map_update_elem(&targets, &tgid, &any, BPF_NOEXIST);
	}
	if (stacks_on)
		forget_process(bpf_get_current_pid_tgid() >> 32);
	if (filter_on && is_target(self))
		filter_forget_process(self);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
