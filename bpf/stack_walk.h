/* stack_walk.h: the stack walk, one source for the BPF program and for user space.
 *
 * From the registers at an allocation's entry, frame by frame: find the mapping that holds the
 * frame's pc (binary search over the process's mappings, struct at_bpf_mappings), look its rule
 * up in the mapping's table at pc - bias (pc - 1 for every frame but the first and the one a
 * signal interrupted: a return address may be the first byte after a call that ends a
 * function), compute the CFA, read the return address below it (AT_ARCH_RA_BELOW_CFA) and, if
 * saved, the frame pointer (fp); the caller's sp is the CFA. A signal frame (AT_UNWIND_SIGNAL)
 * gives the interrupted sp, pc and fp from the context the kernel saved on the stack. walk_frame is one
 * frame; the caller runs it up to AT_BPF_MAX_FRAMES times (bpf_loop in BPF) until it returns 1.
 *
 * It is written the way the verifier needs: fixed-size arrays, loops with constant bounds, no
 * recursion, binary searches whose steps move a bound by arithmetic rather than by a branch.
 *
 * The includer defines what the walk reaches outside itself, before including this header:
 *   AT_WALK_TABLE(w, ti)        const struct at_bpf_table * of table ti, or NULL
 *   AT_WALK_PAGE(w, pi)         const struct at_unwind_page * of page pi, or NULL
 *   AT_WALK_ENTRY_PAIR(w, pair) const struct at_bpf_entry_pair * of pair pair, or NULL
 *   AT_WALK_RULE(w, ri)         const struct at_unwind_rule * of rule ri, or NULL
 *   AT_WALK_READ(w, dst, n, addr)  reads n bytes of the stack at user address addr: 0, or
 *                               non-zero when they cannot be read
 *   AT_WALK_MAPPING_CHECK(m, pc, seq)  whether mapping m is still what the daemon read:
 *                               0 yes, -1 no (forgotten), -2 cannot be told now
 *   AT_WALK_END(w, why)         the walk ends, for the reason why (enum at_unwind_end of
 *                               daemon/stacks/unwind_walk.h; a read that fails says its own)
 *   AT_WALK_FALLBACK(w)         a frame is unwound by the frame-pointer rule
 *   AT_WALK_STATE_EXTRA         more fields of struct walk_state
 * The BPF program (prog/unwind.h) maps them to its maps, bpf_probe_read_user and its VMA check,
 * the last three to nothing; daemon/stacks/unwind_walk.c to the daemon's arrays (struct
 * at_stack_tables) and a copy of the stack, as the held-thread walk, the tests and the fuzzer
 * run it. */
#ifndef ALLOCTAP_STACK_WALK_H
#define ALLOCTAP_STACK_WALK_H

#include "alloctap.h"

/* In BPF the mapping search is a global function: the verifier checks it once, alone, and
 * every call site sees only its result, instead of walking its steps again in every state the
 * walk reaches it in (most of the program's verification time when it was inline). */
#ifdef __bpf__
#define AT_WALK_GLOBAL __noinline
#else
#define AT_WALK_GLOBAL static inline
#endif

/* What the walk carries from one frame to the next. */
struct walk_state {
	__u64 pc, sp, fp;
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
	AT_WALK_STATE_EXTRA
};

/* Reads the 8 bytes of the stack at user address addr: from the page in the window, which is
 * read whole when the walk first needs it (one read costs about as much as eight bytes' read
 * alone, and holds all the frames on the page), as one aligned word (a copy of unknown
 * alignment compiles to eight byte loads and their shifts). A value not aligned to 8 bytes
 * (none that a compiler's frames save), or a page that cannot be read whole, is read alone.
 * 0, or non-zero when it cannot be read. */
static __always_inline long read_stack(struct walk_state *w, __u64 addr, __u64 *value)
{
	__u64 page = addr & ~(__u64)(AT_BPF_WINDOW - 1);
	__u32 off = (__u32)(addr & (AT_BPF_WINDOW - 1));
	struct at_bpf_window *win = w->win;

	if (!win || (off & (sizeof(*value) - 1)))
		return AT_WALK_READ(w, value, sizeof(*value), addr);
	if (page != w->win_page) {
		if (AT_WALK_READ(w, win->bytes, sizeof(win->bytes), page)) {
			w->win_page = 0;
			return AT_WALK_READ(w, value, sizeof(*value), addr);
		}
		w->win_page = page;
	}
	__builtin_memcpy(value,
			 __builtin_assume_aligned(&win->bytes[off & (AT_BPF_WINDOW - sizeof(*value))],
						  sizeof(*value)),
			 sizeof(*value));
	return 0;
}

/* The index of the mapping that holds pc, or -1: a bounded binary search over the sorted
 * mappings. Its steps have no branches (see rule_index). A global function in BPF
 * (AT_WALK_GLOBAL). */
AT_WALK_GLOBAL int mapping_index(struct at_bpf_mappings *maps, __u64 pc)
{
	__u32 lo = 0, hi;

	if (!maps) /* a global function's pointer may be NULL for the verifier */
		return -1;
	hi = maps->count;
	if (hi > AT_BPF_MAX_MAPPINGS)
		hi = AT_BPF_MAX_MAPPINGS;
	for (int step = 0; step < AT_BPF_MAPPING_STEPS; step++) {
		if (lo >= hi) /* an exit, not a fork: the verifier's paths stay linear */
			break;
		__u64 open = ((__u64)lo - hi) >> 63;  /* lo < hi */
		__u32 mid = (lo + (hi - lo) / 2) & (AT_BPF_MAX_MAPPINGS - 1);
		__u64 above = (pc - maps->m[mid].start) >> 63; /* pc < start: go low */

		/* without branches: one path for the verifier instead of two per step. The
		 * compiler, knowing above is 0 or 1, turns the products below back into a branch
		 * (a select), so it is told nothing of above's value */
		asm volatile("" : "+r"(above));
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
static __always_inline int rule_index(struct walk_state *w, __u32 ti, __u64 addr)
{
	const struct at_bpf_table *t = AT_WALK_TABLE(w, ti);
	__u64 page = addr >> AT_UNWIND_PAGE_SHIFT;

	if (!t || page < t->first_page || page - t->first_page >= t->page_count)
		return -1;
	__u32 pi = t->page_base + (__u32)(page - t->first_page);
	const struct at_unwind_page *pg = AT_WALK_PAGE(w, pi);
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
		const struct at_bpf_entry_pair *e = AT_WALK_ENTRY_PAIR(w, pair);

		if (!e)
			return -1;
		__u64 above = ((__u64)low - e->e[ei & 1].offset) >> 63; /* low < offset: go low */

		lo += (__u32)((1 - above) * (mid - lo));
		hi -= (__u32)(above * (hi - mid));
	}
	__u32 ei = base + lo, pair = ei >> 1;
	const struct at_bpf_entry_pair *e = AT_WALK_ENTRY_PAIR(w, pair);
	if (!e)
		return -1;
	return (int)(t->rule_base + e->e[ei & 1].rule);
}

/* In BPF the rule search is a global function too (the BPF program's maps need no walk
 * state): checked once, not again in every state of the walk that reaches it. */
#ifdef __bpf__
AT_WALK_GLOBAL int rule_index_global(__u32 ti, __u64 addr)
{
	return rule_index(NULL, ti, addr);
}
#define AT_RULE_INDEX(w, ti, addr) rule_index_global(ti, addr)
#else
#define AT_RULE_INDEX(w, ti, addr) rule_index(w, ti, addr)
#endif

/* The caller of a signal frame (rule kind AT_UNWIND_SIGNAL): the interrupted sp (*sp) and pc
 * (*pc, AT_ARCH_SIGNAL_PC_AFTER_SP above it) where the kernel saved them, and fp when the rule
 * says where. Both read at once when the pc is the next word. Read directly, not through the window: signal frames are rare, and the verifier walks each read
 * of the window as paths of its own. 0, or non-zero when one cannot be read. */
static __always_inline long read_signal_frame(struct walk_state *w,
					      const struct at_unwind_rule *rule,
					      __u64 *sp, __u64 *pc, __u64 *fp)
{
	_Static_assert(AT_ARCH_SIGNAL_PC_AFTER_SP == sizeof(__u64),
		       "a signal frame's pc is read with its sp, as the next word");
	__u64 saved[2];

	if (AT_WALK_READ(w, saved, sizeof(saved), w->sp + (__u64)(__s64)rule->cfa_offset))
		return 1;
	*sp = saved[0];
	*pc = saved[1];
	if (rule->fp != AT_UNWIND_FP_AT_SP)
		return 0;
	return AT_WALK_READ(w, fp, sizeof(*fp), w->sp + (__u64)(__s64)rule->fp_offset);
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
		int still = AT_WALK_MAPPING_CHECK(m, lookup, w->mm_seq);
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
	int ri = AT_RULE_INDEX(w, m->table, lookup - (__u64)m->bias);
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

/* One frame of the walk (a bpf_loop callback): records the frame's pc, its mapping's serial and
 * its kind (native), then unwinds to the caller. 0 to go on, 1 when the walk has ended (w->flags says how). */
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
	out->kinds[i & (AT_BPF_MAX_FRAMES - 1)] = AT_FRAME_NATIVE;
	out->count = (__u16)(i + 1);
	w->hash = at_stack_hash_frame(w->hash, w->pc, serial);
	if (ri == -2) {
		AT_WALK_END(w, AT_UNWIND_NO_TABLE);
		goto incomplete;
	}
	if (ri < 0)
		goto no_table;

	__u32 rk = (__u32)ri;
	const struct at_unwind_rule *rule = AT_WALK_RULE(w, rk);
	if (!rule)
		goto no_table;
	__u64 cfa, ra, fp = w->fp;

	switch (rule->kind) {
	case AT_UNWIND_CFA_SP:
		cfa = w->sp + (__u64)(__s64)rule->cfa_offset;
		break;
	case AT_UNWIND_SIGNAL:
		if (read_signal_frame(w, rule, &cfa, &ra, &fp))
			goto incomplete;
		if (cfa <= w->sp) {
			AT_WALK_END(w, AT_UNWIND_BAD_FRAME);
			goto incomplete;
		}
		out->flags = 1;
		goto advance;
	case AT_UNWIND_FRAME_POINTER:
		AT_WALK_FALLBACK(w);
		/* fall through */
	case AT_UNWIND_CFA_FP:
		cfa = w->fp + (__u64)(__s64)rule->cfa_offset;
		break;
	case AT_UNWIND_PLT:
		cfa = at_arch_plt_cfa(w->pc, w->sp, rule->cfa_offset);
		break;
	case AT_UNWIND_END:
		AT_WALK_END(w, AT_UNWIND_END_OF_STACK);
		w->flags = 0;
		return 1;
	case AT_UNWIND_NONE:
		goto no_table;
	default:
		AT_WALK_END(w, AT_UNWIND_UNSUPPORTED_RULE);
		goto incomplete;
	}
	if (cfa <= w->sp) {
		AT_WALK_END(w, AT_UNWIND_BAD_FRAME);
		goto incomplete;
	}
	if (read_stack(w, cfa - AT_ARCH_RA_BELOW_CFA, &ra))
		goto incomplete;
	if (rule->fp == AT_UNWIND_FP_AT_CFA &&
	    read_stack(w, cfa + (__u64)(__s64)rule->fp_offset, &fp))
		goto incomplete;
	out->flags = 0;
advance:
	w->pc = ra;
	w->sp = cfa;
	w->fp = fp;
	return 0;
no_table:
	AT_WALK_END(w, AT_UNWIND_NO_TABLE);
	w->flags = AT_STACK_INCOMPLETE | AT_BPF_STACK_NO_TABLE;
	return 1;
incomplete:
	w->flags = AT_STACK_INCOMPLETE;
	return 1;
}

#endif
