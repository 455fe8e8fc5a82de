/* unwind_walk.c: the reference stack walker, in the style the BPF program needs (unwind_walk.h). */
#include <string.h>

#include "unwind_walk.h"

/* What one step decided: go on with the caller's registers, or how the walk ends. */
#define STEP_CONTINUE (-1)

/* The caller's registers as one step leaves them. exact: pc is not a return address (the
 * interrupted instruction of the first frame, or of the frame a signal interrupted), so its
 * rule is looked up at pc itself rather than at pc - 1. */
struct frame_regs {
	uint64_t pc, sp, bp;
	int exact;
};

const struct at_unwind_mapping *at_unwind_find_mapping(const struct at_unwind_mappings *maps,
						       uint64_t pc)
{
	uint32_t lo = 0, hi = maps->count; /* m[< lo].start <= pc < m[>= hi].start */

	if (hi > AT_BPF_MAX_MAPPINGS)
		hi = AT_BPF_MAX_MAPPINGS;
	for (int step = 0; step < AT_BPF_MAPPING_STEPS && lo < hi; step++) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (maps->m[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || lo != hi)
		return NULL;
	const struct at_unwind_mapping *m = &maps->m[lo - 1];
	return pc < m->end ? m : NULL;
}

/* Reads the 8 bytes at addr from the stack copy. STEP_CONTINUE, or how the walk ends. */
static int read_stack(const struct at_unwind_stack *stack, uint64_t addr, uint64_t *value,
		      struct at_unwind_result *r)
{
	if (addr < stack->base)
		return AT_UNWIND_BAD_FRAME;
	uint64_t at = addr - stack->base;
	if (at > stack->len || stack->len - at < 8)
		return AT_UNWIND_STACK_SHORT;
	memcpy(value, stack->bytes + at, 8);
	if (at + 8 > r->stack_used)
		r->stack_used = at + 8;
	return STEP_CONTINUE;
}

/* The CFA a rule gives for the frame in f, and where the return address is (*ra_at): CFA - 8,
 * or in a signal frame the saved rip, above the saved rsp that is the CFA. STEP_CONTINUE, or
 * how the walk ends. */
static int rule_cfa(const struct at_unwind_stack *stack, const struct at_unwind_rule *rule,
		    const struct frame_regs *f, uint64_t *cfa, uint64_t *ra_at,
		    struct at_unwind_result *r)
{
	uint64_t signal_at = f->sp + (uint64_t)(int64_t)rule->cfa_offset;

	switch (rule->kind) {
	case AT_UNWIND_CFA_RSP:
		*cfa = f->sp + (uint64_t)(int64_t)rule->cfa_offset;
		break;
	case AT_UNWIND_CFA_RBP:
		*cfa = f->bp + (uint64_t)(int64_t)rule->cfa_offset;
		break;
	case AT_UNWIND_FRAME_POINTER:
		r->fallback_frames++;
		*cfa = f->bp + (uint64_t)(int64_t)rule->cfa_offset;
		break;
	case AT_UNWIND_PLT:
		*cfa = f->sp + 8 + ((int32_t)(f->pc & 15) >= rule->cfa_offset ? 8 : 0);
		break;
	case AT_UNWIND_SIGNAL:
		*ra_at = signal_at + 8;
		return read_stack(stack, signal_at, cfa, r);
	case AT_UNWIND_END:
		return AT_UNWIND_END_OF_STACK;
	case AT_UNWIND_NONE:
		return AT_UNWIND_NO_TABLE;
	default:
		return AT_UNWIND_UNSUPPORTED_RULE;
	}
	*ra_at = *cfa - 8;
	return STEP_CONTINUE;
}

/* Unwinds one frame: f becomes the caller's. STEP_CONTINUE, or how the walk ends. */
static int step(const struct at_unwind_mappings *maps, const struct at_unwind_stack *stack,
		struct frame_regs *f, struct at_unwind_result *r)
{
	uint64_t lookup = f->exact ? f->pc : f->pc - 1;
	const struct at_unwind_mapping *m = at_unwind_find_mapping(maps, lookup);

	if (!m || !m->table)
		return AT_UNWIND_NO_TABLE;
	const struct at_unwind_rule *rule =
		at_unwind_table_lookup(m->table, lookup - (uint64_t)m->bias);
	uint64_t cfa, ra_at, ra, bp = f->bp;
	int rc = rule_cfa(stack, rule, f, &cfa, &ra_at, r);

	if (rc != STEP_CONTINUE)
		return rc;
	if (cfa <= f->sp)
		return AT_UNWIND_BAD_FRAME;
	if ((rc = read_stack(stack, ra_at, &ra, r)) != STEP_CONTINUE)
		return rc;
	if (rule->rbp != AT_UNWIND_RBP_SAME &&
	    (rc = read_stack(stack,
			     (rule->rbp == AT_UNWIND_RBP_AT_SP ? f->sp : cfa) +
				     (uint64_t)(int64_t)rule->rbp_offset,
			     &bp, r)) != STEP_CONTINUE)
		return rc;
	f->pc = ra;
	f->sp = cfa;
	f->bp = bp;
	f->exact = rule->kind == AT_UNWIND_SIGNAL;
	return STEP_CONTINUE;
}

void at_unwind_walk(const struct at_unwind_mappings *maps, const struct at_unwind_regs *regs,
		    const struct at_unwind_stack *stack, struct at_unwind_result *r)
{
	struct frame_regs f = { regs->rip, regs->rsp, regs->rbp, 1 };

	r->count = 0;
	r->fallback_frames = 0;
	r->stack_used = 0;
	r->end = AT_UNWIND_TRUNCATED;
	for (uint32_t i = 0; i < AT_BPF_MAX_FRAMES; i++) {
		r->pcs[i] = f.pc;
		r->count = i + 1;
		int rc = step(maps, stack, &f, r);
		if (rc != STEP_CONTINUE) {
			r->end = (enum at_unwind_end)rc;
			return;
		}
	}
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
