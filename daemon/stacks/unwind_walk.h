/* unwind_walk.h: the reference stack walker over unwind tables (unwind_table.h).
 *
 * It works from exactly what the BPF program has at an allocation's entry: the registers, a copy
 * of the stack from rsp up, and the process's executable mappings, and it is written the way the
 * BPF program must be: fixed-size arrays, loops with constant bounds, no recursion, no
 * allocation. The BPF port follows it step by step.
 *
 * One step: find the mapping that holds the frame's pc (binary search over mappings sorted by
 * start), look the rule up in the mapping's table at pc - bias (pc - 1 for every frame but the
 * first and the one a signal interrupted: a return address may be the first byte after a call
 * that ends a function), compute the CFA, read the return address at CFA - 8 and, if saved,
 * rbp; the caller's rsp is the CFA. A signal frame (AT_UNWIND_SIGNAL) gives the interrupted
 * rsp, rip and rbp from the context the kernel saved on the stack. */
#ifndef ALLOCTAP_UNWIND_WALK_H
#define ALLOCTAP_UNWIND_WALK_H

#include <stdint.h>

#include "unwind_table.h"

/* An executable mapping of the traced process. table is NULL while its object has none. */
struct at_unwind_mapping {
	uint64_t start, end;
	int64_t bias;          /* process address - bias = object address */
	const struct at_unwind_table *table;
};

/* The process's executable mappings, sorted by start, not overlapping. */
struct at_unwind_mappings {
	uint32_t count;
	struct at_unwind_mapping m[AT_BPF_MAX_MAPPINGS];
};

struct at_unwind_regs {
	uint64_t rip, rsp, rbp;
};

/* A copy of len bytes of the stack that start at base (normally base = rsp). */
struct at_unwind_stack {
	uint64_t base;
	uint64_t len;
	const uint8_t *bytes;
};

/* How a walk ended. */
enum at_unwind_end {
	AT_UNWIND_END_OF_STACK = 0, /* reached the outermost frame: complete */
	AT_UNWIND_TRUNCATED,        /* AT_BPF_MAX_FRAMES frames and more to go */
	AT_UNWIND_NO_TABLE,         /* a pc in no mapping, or in one without a table yet */
	AT_UNWIND_UNSUPPORTED_RULE, /* a rule the walker does not implement */
	AT_UNWIND_STACK_SHORT,      /* a read past the end of the stack copy */
	AT_UNWIND_BAD_FRAME,        /* a CFA not above rsp, or a read below the copy */
};

struct at_unwind_result {
	uint32_t count;                     /* frames in pcs; pcs[0] is rip */
	uint32_t fallback_frames;           /* frames unwound with the frame-pointer rule */
	uint64_t stack_used;                /* bytes of the copy the walk read (from base) */
	enum at_unwind_end end;
	uint64_t pcs[AT_BPF_MAX_FRAMES];
};

/* Walks the stack. Always fills r; r->end says whether the walk is complete. */
void at_unwind_walk(const struct at_unwind_mappings *maps, const struct at_unwind_regs *regs,
		    const struct at_unwind_stack *stack, struct at_unwind_result *r);

/* The mapping that holds pc, or NULL. */
const struct at_unwind_mapping *at_unwind_find_mapping(const struct at_unwind_mappings *maps,
						       uint64_t pc);

/* A short name for an end ("end of stack", "truncated", ...). */
const char *at_unwind_end_name(enum at_unwind_end end);

#endif
