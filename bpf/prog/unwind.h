/* prog/unwind.h: the BPF program's stack walk (--stacks): from the registers at an allocation's
 * entry, frame by frame over the unwind tables the daemon loaded (alloctap.h), through the rule
 * cache and a per-CPU window on the stack; the check that a mapping is still what the daemon
 * read; the hold of a thread whose walk met code the daemon has not scanned yet; the stack
 * stored under its hash. Included by alloctap.bpf.c only, after maps.h, kernel.h and
 * thread_state.h. */
#ifndef ALLOCTAP_BPF_UNWIND_H
#define ALLOCTAP_BPF_UNWIND_H

/* ---- the stack walk: bpf/stack_walk.h over the maps ---- */

/* How long a walk tries the address space's lock while another thread holds it (an mmap, an
 * mprotect growing a malloc arena: microseconds), and at most how many times. */
#define AT_VMA_WAIT_NS 20000
#define AT_VMA_TRIES 1024

/* What check_vma compares, and the VMA it found. */
struct vma_check {
	__u64 inode, file_delta;
	__u64 vma;
	__u32 same;
};

/* The tries of mapping_still_there: the check, pc, the last try's error and the time to give
 * up at. */
struct vma_tries {
	struct vma_check c;
	__u64 pc, until;
	long err;
};

/* A bpf_find_vma callback: whether the VMA found maps what the mapping in c says. */
static long check_vma(void *task, void *area, void *arg)
{
	struct vm_area_struct___at *vma = area;
	struct vma_check *c = arg;
	struct file___at *file = BPF_CORE_READ(vma, vm_file);

	(void)task;
	c->vma = (__u64)(unsigned long)vma;
	if (!file) {
		c->same = c->inode == 0;
		return 0;
	}
	__u64 delta = (BPF_CORE_READ(vma, vm_pgoff) << 12) - BPF_CORE_READ(vma, vm_start);
	c->same = BPF_CORE_READ(file, f_inode, i_ino) == c->inode && delta == c->file_delta;
	return 0;
}

/* One try of the check (a bpf_loop callback): 1 to stop, when the lock was had or the time is
 * up. EBUSY: another thread holds the address space's lock for a moment. */
static long vma_try(__u32 i, void *arg)
{
	struct vma_tries *t = arg;

	t->err = bpf_find_vma(bpf_get_current_task_btf(), t->pc, check_vma, &t->c, 0);
	if (t->err != -16 /* EBUSY */)
		return 1;
	return (i & 7) == 7 && bpf_ktime_get_ns() > t->until;
}

/* Whether vma, read without the lock, is still in its address space's tree: a removed one
 * (unmapped, its memory free or about to be) may still read as it was. 0 on a kernel that says
 * neither way. */
static __always_inline int vma_attached(struct vm_area_struct___at *vma)
{
	struct vm_area_struct___detached *old = (void *)vma;

	if (bpf_core_field_exists(vma->vm_refcnt))
		return BPF_CORE_READ(vma, vm_refcnt.refs.counter) != 0;
	if (bpf_core_field_exists(old->detached))
		return !BPF_CORE_READ(old, detached);
	return 0;
}

/* Whether the VMA the last check of m found (m->vma), read without the lock, is this address
 * space's, still in its tree, and maps pc from m's file at m's offset. Read with
 * bpf_probe_read_kernel: the memory of a VMA freed since holds a free pointer over its bounds,
 * or another VMA (of another place, file or process), and does not pass. A file mapped again at
 * the same place from the same offset passes: it is the mapping the daemon read, as the check
 * under the lock would say. */
static __always_inline int vma_still_maps(const struct at_bpf_mapping *m, __u64 pc)
{
	struct vm_area_struct___at *vma = (void *)(unsigned long)m->vma;
	struct task_struct___mm *task = (void *)bpf_get_current_task_btf();

	if (!vma || BPF_CORE_READ(vma, vm_mm) != BPF_CORE_READ(task, mm) || !vma_attached(vma))
		return 0;
	__u64 start = BPF_CORE_READ(vma, vm_start);

	if (pc < start || pc >= BPF_CORE_READ(vma, vm_end))
		return 0;
	struct file___at *file = BPF_CORE_READ(vma, vm_file);

	if (!file)
		return m->inode == 0;
	return BPF_CORE_READ(file, f_inode, i_ino) == m->inode &&
	       (BPF_CORE_READ(vma, vm_pgoff) << 12) - start == m->file_delta;
}

/* Whether mapping m, which holds pc, is still what the daemon read (struct at_bpf_mapping):
 * 0 yes; -1 no (m is forgotten); -2 the address space is being changed and cannot be looked at
 * now. While another thread holds the address space's lock, the VMA the last check found is
 * read without it; when that does not answer, the lock is tried for AT_VMA_WAIT_NS. A global
 * function: verified once, not once per path of the walk that calls it. */
__noinline int mapping_still_there(struct at_bpf_mapping *m, __u64 pc, __u32 seq)
{
	struct vma_tries t = { { 0, 0, 0, 0 }, pc, 0, -16 };

	if (!m)
		return -2;
	t.c.inode = m->inode;
	t.c.file_delta = m->file_delta;
	vma_try(0, &t);
	if (t.err == -16 && vma_still_maps(m, pc))
		return 0; /* valid_seq left: the next walk checks under the lock again */
	if (t.err == -16) {
		t.until = bpf_ktime_get_ns() + AT_VMA_WAIT_NS;
		bpf_loop(AT_VMA_TRIES, vma_try, &t, 0);
	}
	long err = t.err;

	if (err == -16)
		return -2;
	if (err || !t.c.same) {
		m->table = AT_BPF_NO_TABLE;
		m->serial = 0;
		m->vma = 0;
		return -1;
	}
	m->vma = t.c.vma;
	if (!(seq & 1)) /* an odd value: a change under way, checked again next time */
		m->valid_seq = seq;
	return 0;
}

/* What the walk (stack_walk.h) reaches: the maps, the user stack, the VMA check. */
#define AT_WALK_TABLE(w, ti)                                                              \
	((const struct at_bpf_table *)bpf_map_lookup_elem(&unwind_tables, &(ti)))
#define AT_WALK_PAGE(w, pi)                                                               \
	((const struct at_unwind_page *)bpf_map_lookup_elem(&unwind_pages, &(pi)))
#define AT_WALK_ENTRY_PAIR(w, pair)                                                       \
	((const struct at_bpf_entry_pair *)bpf_map_lookup_elem(&unwind_entries, &(pair)))
#define AT_WALK_RULE(w, ri)                                                               \
	((const struct at_unwind_rule *)bpf_map_lookup_elem(&unwind_rules, &(ri)))
#define AT_WALK_READ(w, dst, n, addr) bpf_probe_read_user(dst, n, (void *)(addr))
#define AT_WALK_MAPPING_CHECK(m, pc, seq) mapping_still_there(m, pc, seq)
#define AT_WALK_END(w, why) ((void)0)
#define AT_WALK_FALLBACK(w) ((void)0)
#define AT_WALK_STATE_EXTRA

#include "../stack_walk.h"

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

/* The call now entering (process tgid) took the stack hash, incomplete at a pc in no known
 * mapping (why AT_BPF_HOLD_TABLES) or new with a Python module's frame not named yet
 * (AT_BPF_HOLD_PYTHON): holds the thread for the daemon (struct at_bpf_held), unless the
 * process's holds of that kind are over their rate (hold_after) or the signal cannot serve
 * now. */
static __noinline void hold_thread(struct pt_regs *ctx, __u32 tgid, __u64 hash, __u32 why)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 bucket = why == AT_BPF_HOLD_PYTHON ? tgid | AT_BPF_PY_HOLD_KEY : tgid;
	__u64 gap = why == AT_BPF_HOLD_PYTHON ? AT_BPF_PY_HOLD_GAP_NS : AT_BPF_HOLD_GAP_NS;
	__u64 burst = why == AT_BPF_HOLD_PYTHON ? AT_BPF_PY_HOLD_BURST : AT_BPF_HOLD_BURST;
	__u64 *due = bpf_map_lookup_elem(&hold_after, &bucket);
	__u64 next = now + gap;

	if (!ctx)
		return;
	if (due) {
		if (*due > now + (burst - 1) * gap)
			return;
		if (*due > now)
			next = *due + gap;
		*due = next;
	} else {
		bpf_map_update_elem(&hold_after, &bucket, &next, BPF_ANY);
	}
	if (!hold_signal_free())
		return;

	struct at_bpf_held h = { AT_ARCH_PC(ctx), AT_ARCH_SP(ctx), AT_ARCH_FP(ctx), 0, hash, 0,
				 why };
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 key = regs_key(ctx);
	__u32 slot;
	struct at_thread *s = key_slot(key, &slot);

	if (s && s->owner == key)
		h.slot = slot + 1;
	if (bpf_probe_read_user(&h.ra, sizeof(h.ra), (void *)AT_ARCH_ENTRY_RA_AT(h.sp)) == 0 &&
	    bpf_map_update_elem(&held, &tid, &h, BPF_ANY) == 0 &&
	    bpf_send_signal_thread(AT_BPF_HOLD_SIGNAL) == 0)
		count_stacks(AT_STACKS_HELD);
}

/* The calling thread's address space's mm_lock_seq (changed by every mmap, munmap, mprotect,
 * brk...); on a kernel without it, a value that changes at every call, so that every mapping is
 * checked at every walk. Read with plain loads through the task's typed pointer, which the
 * verifier makes loads that cannot fault, rather than BPF_CORE_READ's two calls of
 * bpf_probe_read_kernel: the walk is made at every allocation. */
static __always_inline __u32 address_space_seq(void)
{
	struct task_struct___mm *task = (void *)bpf_get_current_task_btf();

	if (!bpf_core_field_exists(task->mm->mm_lock_seq))
		return (__u32)bpf_ktime_get_ns() | 2;
	return task->mm->mm_lock_seq.sequence;
}

/* Takes the user stack of the call now entering and stores it in the stacks map under its
 * hash. Returns the hash, or 0 when it could not be stored (counted). */
static __noinline __u64 take_stack(struct pt_regs *ctx, __u32 tgid)
{
	__u32 zero = 0;
	int python = 0;
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
		w.out->pcs[0] = AT_ARCH_PC(ctx);
		w.out->serials[0] = 0;
		w.out->kinds[0] = AT_FRAME_NATIVE;
		w.out->count = 1;
		w.out->flags = AT_STACK_INCOMPLETE | AT_BPF_STACK_NO_TABLE;
		w.hash = at_stack_hash_unwalked(tgid, AT_ARCH_PC(ctx));
	} else {
		w.pc = AT_ARCH_PC(ctx);
		w.sp = AT_ARCH_SP(ctx);
		w.fp = AT_ARCH_FP(ctx);
		w.hash = at_stack_hash_begin(tgid);
		w.tgid = tgid;
		w.flags = AT_STACK_TRUNCATED;
		w.out->flags = 1; /* the first pc is exact (see walk_frame) */
		bpf_loop(AT_BPF_MAX_FRAMES, walk_frame, &w, 0);
		python = python_frames(w.out, &w.hash, tgid);
		if (python & AT_PY_FILLED) /* the Python frames filled the stack */
			w.flags |= AT_STACK_TRUNCATED;
		w.out->flags = (__u16)w.flags;
		w.hash = at_stack_hash_flags(w.hash, w.flags);
	}
	w.out->pid = tgid;
	count_stacks(AT_STACKS_WALKED);
	w.hash = at_stack_hash_key(w.hash);
	/* a stack stored already is found without a lock: an insert, even one refused, takes its
	 * bucket's lock, and every thread of a process calling from one site hashes to the same
	 * bucket, so that lock's line would pass between their CPUs at every call */
	long err = bpf_map_lookup_elem(&stacks, &w.hash) ? -17
		   : bpf_map_update_elem(&stacks, &w.hash, w.out, BPF_NOEXIST);
	if (err && err != -17 /* EEXIST: known already */) {
		count_stacks(AT_STACKS_NOT_STORED);
		return 0;
	}
	if (!err && python) {
		announce_python_stack(w.hash, tgid);
		if (w.maps && w.maps->hold_on_miss && python_module_unnamed(w.out, tgid))
			hold_thread(ctx, tgid, w.hash, AT_BPF_HOLD_PYTHON);
	}
	if (w.maps && (w.flags & AT_BPF_STACK_NO_TABLE) && w.maps->hold_on_miss)
		hold_thread(ctx, tgid, w.hash, AT_BPF_HOLD_TABLES);
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

#endif
