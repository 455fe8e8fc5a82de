/* unwind_walk.h: the BPF program's stack walk (bpf/stack_walk.h), compiled for user space.
 *
 * The same source the BPF program runs, over a small shim: the unwind tables are read from the
 * daemon's arrays (struct at_stack_tables, laid out as the BPF maps, or the arrays of one table),
 * the stack from a copy of it, and a mapping is taken as the daemon read it (no VMA check, no
 * rule cache, no window). The daemon walks a held thread with it (stacks.c); the tests compare
 * it with libdw and the fuzzer feeds it tables and stacks.
 *
 * It works from exactly what the BPF program has at an allocation's entry: the registers, the
 * stack from sp up, the process's executable mappings (struct at_bpf_mappings, each with the
 * index of its table in the arrays, AT_BPF_NO_TABLE or AT_BPF_OPAQUE). Beyond what the program
 * keeps, it says why a walk ended, how many frames took the frame-pointer rule and how much of
 * the copy it read. */
#ifndef ALLOCTAP_UNWIND_WALK_H
#define ALLOCTAP_UNWIND_WALK_H

#include <stdint.h>

#include "alloctap.h"
#include "stack_tables.h"
#include "unwind_table.h"

/* The registers a walk starts from: the pc, the stack pointer, the frame pointer. */
struct at_unwind_regs {
	uint64_t pc, sp, fp;
};

/* A copy of len bytes of the stack that start at base (normally base = sp). */
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
	AT_UNWIND_BAD_FRAME,        /* a CFA not above sp, or a read below the copy */
};

struct at_unwind_result {
	uint32_t count;                     /* frames in pcs; pcs[0] is the first pc */
	uint32_t fallback_frames;           /* frames unwound with the frame-pointer rule */
	uint64_t stack_used;                /* bytes of the copy the walk read (from base) */
	enum at_unwind_end end;
	uint64_t pcs[AT_BPF_MAX_FRAMES];
};

/* Walks the stack over maps, whose table indices are those of tables. Always fills r; r->end
 * says whether the walk is complete. Reads maps and tables only. */
void at_unwind_walk(const struct at_bpf_mappings *maps, const struct at_stack_tables *tables,
		    const struct at_unwind_regs *regs, const struct at_unwind_stack *stack,
		    struct at_unwind_result *r);

/* The mapping that holds pc, or NULL (the walk's own search). */
const struct at_bpf_mapping *at_unwind_find_mapping(const struct at_bpf_mappings *maps,
						    uint64_t pc);

/* A short name for an end ("end of stack", "truncated", ...). */
const char *at_unwind_end_name(enum at_unwind_end end);

#endif
