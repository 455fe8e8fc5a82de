/* unwind_walk.c: the BPF stack walk (bpf/stack_walk.h) over a user-space shim (unwind_walk.h),
 * and at_unwind_table_lookup (unwind_table.h), the walk's rule search over one table. */
#include <string.h>

#include "unwind_walk.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

struct walk_state;

/* What the shim gives the walk: the arrays of the tables, the stack copy, and what it reports
 * beyond the program's flags. */
struct walk_user {
	const struct at_stack_tables *tables;
	const struct at_unwind_stack *stack;
	struct at_unwind_result *r;
	enum at_unwind_end end;
};

#define AT_WALK_STATE_EXTRA struct walk_user *user;

/* Row i of an array of used rows, or NULL past them (as a map lookup past max_entries). */
#define ROW(array, used, i) ((uint64_t)(i) < (used) ? &(array)[i] : NULL)

#define AT_WALK_TABLE(w, ti) ROW((w)->user->tables->tables, (w)->user->tables->table_used, ti)
#define AT_WALK_PAGE(w, pi) ROW((w)->user->tables->pages, (w)->user->tables->page_used, pi)
#define AT_WALK_RULE(w, ri) ROW((w)->user->tables->rules, (w)->user->tables->rule_used, ri)
#define AT_WALK_ENTRY_PAIR(w, pair) entry_pair((w)->user->tables, pair)
#define AT_WALK_READ(w, dst, n, addr) read_copy((w)->user, dst, n, addr)
#define AT_WALK_MAPPING_CHECK(m, pc, seq) ((void)(m), (void)(pc), (void)(seq), 0)
#define AT_WALK_END(w, why) ((w)->user->end = (why))
#define AT_WALK_FALLBACK(w) ((w)->user->r->fallback_frames++)

/* The pair of entries pair of the tables' entries (the BPF map's element), or NULL when its
 * first entry is past those used. Only the entry asked for is read of it. */
static const struct at_bpf_entry_pair *entry_pair(const struct at_stack_tables *t, uint32_t pair)
{
	if ((uint64_t)pair * 2 >= t->entry_used)
		return NULL;
	return (const struct at_bpf_entry_pair *)(const void *)(t->entries + (uint64_t)pair * 2);
}

/* Reads n bytes at user address addr from the stack copy: 0, or -1 with u->end saying why
 * (below the copy: a bad frame; past it: the copy is short). */
static long read_copy(struct walk_user *u, void *dst, uint64_t n, uint64_t addr)
{
	const struct at_unwind_stack *s = u->stack;

	if (addr < s->base) {
		u->end = AT_UNWIND_BAD_FRAME;
		return -1;
	}
	uint64_t at = addr - s->base;
	if (at > s->len || s->len - at < n) {
		u->end = AT_UNWIND_STACK_SHORT;
		return -1;
	}
	memcpy(dst, s->bytes + at, n);
	if (at + n > u->r->stack_used)
		u->r->stack_used = at + n;
	return 0;
}

#include "stack_walk.h"

void at_unwind_walk(const struct at_bpf_mappings *maps, const struct at_stack_tables *tables,
		    const struct at_unwind_regs *regs, const struct at_unwind_stack *stack,
		    struct at_unwind_result *r)
{
	struct at_bpf_stack out;
	struct walk_user u = { tables, stack, r, AT_UNWIND_TRUNCATED };
	/* the shim never writes a mapping: only the VMA check does, and it has none */
	struct walk_state w = { .pc = regs->pc, .sp = regs->sp, .fp = regs->fp,
				.maps = (struct at_bpf_mappings *)maps, .out = &out,
				.flags = AT_STACK_TRUNCATED, .user = &u };

	memset(r, 0, sizeof(*r));
	out.count = 0;
	out.flags = 1; /* the first pc is exact (see walk_frame) */
	for (uint32_t i = 0; i < AT_BPF_MAX_FRAMES; i++)
		if (walk_frame(i, &w))
			break;
	r->count = out.count;
	memcpy(r->pcs, out.pcs, out.count * sizeof(r->pcs[0]));
	r->end = u.end;
}

const struct at_bpf_mapping *at_unwind_find_mapping(const struct at_bpf_mappings *maps,
						    uint64_t pc)
{
	int i = mapping_index((struct at_bpf_mappings *)maps, pc);

	return i < 0 ? NULL : &maps->m[i];
}

const struct at_unwind_rule *at_unwind_table_lookup(const struct at_unwind_table *t,
						    uint64_t addr)
{
	static const struct at_unwind_rule none = { .kind = AT_UNWIND_NONE };
	struct at_bpf_table dir = { .first_page = t->first_page, .page_count = t->page_count };
	struct at_stack_tables one = {
		.rules = t->rules, .pages = t->pages, .entries = t->entries, .tables = &dir,
		.rule_used = t->rule_count, .page_used = t->page_count,
		.entry_used = t->entry_count, .table_used = 1,
	};
	struct walk_user u = { .tables = &one };
	struct walk_state w = { .user = &u };
	int ri = rule_index(&w, 0, addr);

	return ri < 0 || (uint32_t)ri >= t->rule_count ? &none : &t->rules[ri];
}

const char *at_unwind_end_name(enum at_unwind_end end)
{
	switch (end) {
	case AT_UNWIND_END_OF_STACK: return "end of stack";
	case AT_UNWIND_TRUNCATED: return "truncated";
	case AT_UNWIND_NO_TABLE: return "no table";
	case AT_UNWIND_UNSUPPORTED_RULE: return "unsupported rule";
	case AT_UNWIND_STACK_SHORT: return "stack copy too short";
	case AT_UNWIND_BAD_FRAME: return "bad frame";
	}
	return "?";
}
