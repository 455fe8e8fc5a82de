/* prog/thread_state.h: the per-thread call state of the BPF program (struct at_thread of
 * alloctap.h): a slot of thread_slots found from the address of the thread's saved registers,
 * or task storage for a thread whose slot another holds; whether a process is traced; calls the
 * allocator makes to itself; the allocator of a process when two are probed. Included by
 * alloctap.bpf.c only, after maps.h and kernel.h. */
#ifndef ALLOCTAP_BPF_THREAD_STATE_H
#define ALLOCTAP_BPF_THREAD_STATE_H

/* Whether process tgid is a target, from the targets map (every process but the daemon with
 * --all). For programs that every process runs (tracepoints). */
static __always_inline int is_target(__u32 tgid)
{
	if (trace_all)
		return tgid != self_tgid;
	return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

/* Whether the process of a probe's call is traced: bound probes (probes_bound) run only for
 * the process they are attached for, which the kernel has checked. */
static __always_inline int is_traced(__u32 tgid)
{
	return probes_bound || is_target(tgid);
}

/* The key of a thread's slot: the address of its saved user registers (the probes' context; a
 * fixed place atop the thread's kernel stack for its whole life, and no other live thread's),
 * as a distance from a variable of ours: a privileged program may subtract two pointers, and
 * nothing else turns one into a number. Never 0. */
static __always_inline __u64 regs_key(const void *regs)
{
	return (__u64)regs - (__u64)&mappings_gen;
}

/* The index of key's slot in thread_slots. */
static __always_inline __u32 slot_index(__u64 key)
{
	return (__u32)((key * 0x9e3779b97f4a7c15ull) >> 32) & thread_slot_mask;
}

/* The slot for key (whoever holds it), its index in *index; NULL when there is none. */
static __always_inline struct at_thread *key_slot(__u64 key, __u32 *index)
{
	*index = slot_index(key);
	return bpf_map_lookup_elem(&thread_slots, index);
}

/* The word of slot index's count in slot_claims (NULL if the map lacks it), the count's shift
 * in it in *shift. */
static __always_inline __u32 *claim_word(__u32 index, __u32 *shift)
{
	__u32 word = index / 4;

	*shift = (index % 4) * 8;
	return bpf_map_lookup_elem(&slot_claims, &word);
}

/* The state in task storage of task (the calling thread), NULL when it has none there. */
static __always_inline struct at_thread *in_storage(struct task_struct *task)
{
	if (!*(volatile __u32 *)&threads_in_storage)
		return NULL;
	return bpf_task_storage_get(&threads, task, 0, 0);
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
	return in_storage(bpf_get_current_task_btf());
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
		__u32 shift, *claims = claim_word(i, &shift);

		if (claims)
			__sync_fetch_and_add(claims, 1u << shift);
		s->id = id;
		count_up(AT_COUNT_STATE_SLOT);
		return s;
	}
	struct at_thread *t = bpf_task_storage_get(&threads, bpf_get_current_task_btf(), 0,
						   BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (t) {
		t->id = id;
		__sync_fetch_and_add(&threads_in_storage, 1);
		count_up(AT_COUNT_STATE_STORAGE);
	}
	return t;
}

/* The slot that the thread whose registers are at regs holds, or NULL: the slot is read only
 * when slot_claims counts a holder of it (a thread's own claim precedes its own read). */
static __always_inline struct at_thread *held_slot(const void *regs)
{
	__u64 key = regs_key(regs);
	__u32 i, shift;
	__u32 *claims = claim_word(slot_index(key), &shift);

	if (claims && !((*(volatile __u32 *)claims >> shift) & 0xff))
		return NULL;
	struct at_thread *s = key_slot(key, &i);

	return s && s->owner == key ? s : NULL;
}

/* Gives back slot s (held_slot's, not NULL) of the exiting thread: zeroed, then free, then
 * uncounted. */
static __always_inline void thread_slot_release(struct at_thread *s)
{
	__u32 shift, *claims = claim_word(slot_index(s->owner), &shift);

	__builtin_memset((char *)s + sizeof(s->owner), 0, sizeof(*s) - sizeof(s->owner));
	asm volatile("" ::: "memory"); /* zeroed before it is free */
	*(volatile __u64 *)&s->owner = 0;
	if (claims)
		__sync_fetch_and_add(claims, -(1u << shift));
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
	if (!t->internal_sp || t->internal_sp != AT_ARCH_SP(ctx))
		return 0;
	t->internal_sp = 0;
	return 1;
}

/* The allocators of process tgid in the targets map (AT_TARGET_IN each family's; 0: any). With
 * --all, a process the daemon has not heard of yet is a fork child with its parent's mappings:
 * its parent's (an exec puts an entry of its own in, thread_exec). */
static __always_inline __u64 allocator_lookup(__u32 tgid)
{
	__u64 *id = bpf_map_lookup_elem(&targets, &tgid);

	if (!id && trace_all) {
		struct task_struct___parent *task = (void *)bpf_get_current_task_btf();
		__u32 parent = (__u32)BPF_CORE_READ(task, real_parent, tgid);
		id = bpf_map_lookup_elem(&targets, &parent);
	}
	return id ? *id : 0;
}

/* The allocators of thread t's process (0: any), looked up again after a change. */
static __always_inline __u64 allocator_of(struct at_thread *t)
{
	__u32 gen = *(volatile __u32 *)&allocators_gen;

	if (t->allocator_gen != gen) {
		t->allocators = allocator_lookup(t->id >> 32);
		t->allocator_gen = gen;
	}
	return t->allocators;
}

/* Whether the probe of function func now hit belongs to an object other than the allocator of
 * the calling thread's process (state t, or NULL: looked up for this call) in the family of the
 * probe's object (its cookie), when that allocator defines func: such a call is the allocator's
 * own (a preloaded free that forwards to the C library's), not the program's. A function the
 * allocator lacks (reallocarray in a debugging preload) is the program's wherever it is. */
static __always_inline int foreign_object(struct pt_regs *ctx, struct at_thread *t, __u32 func)
{
	if (!*(volatile __u32 *)&allocator_check)
		return 0;
	__u64 cookie = bpf_get_attach_cookie(ctx), allocators = 0;
	__u32 object = cookie >> AT_COOKIE_OBJECT_SHIFT;
	__u32 family = (cookie >> AT_COOKIE_FAMILY_SHIFT) & AT_COOKIE_FAMILY_MASK;

	if (t) {
		allocators = allocator_of(t);
	} else {
		allocators = allocator_lookup(bpf_get_current_pid_tgid() >> 32);
	}
	__u32 allocator = AT_TARGET_OF(family, allocators);
	return allocator && object && object != AT_TARGET_OBJECT(allocator) &&
	       (AT_TARGET_FUNCS(allocator) >> (func & 15)) & 1;
}

#endif
