/* prog/unwind.h: the BPF program's stack walk (--stacks): from the registers at an allocation's
 * entry, frame by frame over the unwind tables the daemon loaded (alloctap.h), through the rule
 * cache and a per-CPU window on the stack; the check that a mapping is still what the daemon
 * read; the hold of a thread whose walk met code the daemon has not scanned yet; the stack
 * stored under its hash. Included by alloctap.bpf.c only, after maps.h, kernel.h and
 * thread_state.h. */
#ifndef ALLOCTAP_BPF_UNWIND_H
#define ALLOCTAP_BPF_UNWIND_H

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
	__u64 page = addr >> AT_UNWIND_PAGE_SHIFT;

	if (!t || page < t->first_page || page - t->first_page >= t->page_count)
		return -1;
	__u32 pi = t->page_base + (__u32)(page - t->first_page);
	struct at_unwind_page *pg = bpf_map_lookup_elem(&unwind_pages, &pi);
	if (!pg || pg->count == 0)
		return -1;
	__u32 base = t->entry_base + pg->first;
	__u16 low = (__u16)(addr & ((1u << AT_UNWIND_PAGE_SHIFT) - 1));
	__u32 lo = 0, hi = pg->count;

	for (int step = 0; step < AT_UNWIND_SEARCH_STEPS; step++) {
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

/* The caller of a signal frame (rule kind AT_UNWIND_SIGNAL): the interrupted rsp (*sp) and rip
 * (*pc, just above it) where the kernel saved them, and rbp when the rule says where. Read
 * directly, not through the window: signal frames are rare, and the verifier walks each read
 * of the window as paths of its own. 0, or non-zero when one cannot be read. */
static __always_inline long read_signal_frame(struct walk_state *w, struct at_unwind_rule *rule,
					      __u64 *sp, __u64 *pc, __u64 *bp)
{
	__u64 saved[2];

	if (bpf_probe_read_user(saved, sizeof(saved),
				(void *)(w->sp + (__u64)(__s64)rule->cfa_offset)))
		return 1;
	*sp = saved[0];
	*pc = saved[1];
	if (rule->rbp != AT_UNWIND_RBP_AT_SP)
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
	w->hash = at_stack_hash_frame(w->hash, w->pc, serial);
	if (ri == -2)
		goto incomplete;
	if (ri < 0)
		goto no_table;

	__u32 rk = (__u32)ri;
	struct at_unwind_rule *rule = bpf_map_lookup_elem(&unwind_rules, &rk);
	if (!rule)
		goto no_table;
	__u64 cfa, ra, bp = w->bp;

	switch (rule->kind) {
	case AT_UNWIND_CFA_RSP:
		cfa = w->sp + (__u64)(__s64)rule->cfa_offset;
		break;
	case AT_UNWIND_SIGNAL:
		if (read_signal_frame(w, rule, &cfa, &ra, &bp) || cfa <= w->sp)
			goto incomplete;
		out->flags = 1;
		goto advance;
	case AT_UNWIND_CFA_RBP:
	case AT_UNWIND_FRAME_POINTER:
		cfa = w->bp + (__u64)(__s64)rule->cfa_offset;
		break;
	case AT_UNWIND_PLT:
		cfa = at_arch_plt_cfa(w->pc, w->sp, rule->cfa_offset);
		break;
	case AT_UNWIND_END:
		w->flags = 0;
			return 1;
	case AT_UNWIND_NONE:
		goto no_table;
	default:
		goto incomplete;
	}
	if (cfa <= w->sp)
		goto incomplete;
	if (read_stack(w, cfa - AT_ARCH_RA_BELOW_CFA, &ra))
		goto incomplete;
	if (rule->rbp == AT_UNWIND_RBP_AT_CFA &&
	    read_stack(w, cfa + (__u64)(__s64)rule->rbp_offset, &bp))
		goto incomplete;
	out->flags = 0;
advance:
	w->pc = ra;
	w->sp = cfa;
	w->bp = bp;
	return 0;
no_table:
	w->flags = AT_STACK_INCOMPLETE | AT_BPF_STACK_NO_TABLE;
	return 1;
incomplete:
	w->flags = AT_STACK_INCOMPLETE;
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

	struct at_bpf_held h = { AT_ARCH_PC(ctx), AT_ARCH_SP(ctx), AT_ARCH_FP(ctx), 0, hash, 0, 0 };
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
		w.out->pcs[0] = AT_ARCH_PC(ctx);
		w.out->serials[0] = 0;
		w.out->count = 1;
		w.out->flags = AT_STACK_INCOMPLETE | AT_BPF_STACK_NO_TABLE;
		w.hash = at_stack_hash_unwalked(tgid, AT_ARCH_PC(ctx));
	} else {
		w.pc = AT_ARCH_PC(ctx);
		w.sp = AT_ARCH_SP(ctx);
		w.bp = AT_ARCH_FP(ctx);
		w.hash = at_stack_hash_begin(tgid);
		w.tgid = tgid;
		w.flags = AT_STACK_TRUNCATED;
		w.out->flags = 1; /* the first pc is exact (see walk_frame) */
		bpf_loop(AT_BPF_MAX_FRAMES, walk_frame, &w, 0);
		w.out->flags = (__u16)w.flags;
		w.hash = at_stack_hash_flags(w.hash, w.flags);
	}
	w.out->pid = tgid;
	count_stacks(AT_STACKS_WALKED);
	w.hash = at_stack_hash_key(w.hash);
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

#endif
