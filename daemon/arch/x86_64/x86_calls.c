/* x86_calls.c: x86-64's direct calls and tail jumps, behind arch.h: `call rel32` (e8) and
 * `jmp rel32` (e9), five bytes, the displacement counted from the next instruction. */
#include <string.h>

#include "arch.h"

#define OPCODE_CALL_REL32 0xe8
#define OPCODE_JMP_REL32 0xe9
#define INSN_LEN 5

/* Whether addr is one of targets[0..n). */
static int is_target(uint64_t addr, const uint64_t *targets, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (targets[i] == addr)
			return 1;
	return 0;
}

int at_arch_find_direct_calls(const uint8_t *code, size_t len, uint64_t vaddr,
			      const uint64_t *targets, unsigned ntargets, at_direct_call_fn found,
			      void *arg)
{
	for (size_t i = 0; i + INSN_LEN <= len; i++) {
		if (code[i] != OPCODE_CALL_REL32 && code[i] != OPCODE_JMP_REL32)
			continue;
		int32_t rel;
		memcpy(&rel, code + i + 1, sizeof(rel));
		struct at_direct_call c = {
			.site = vaddr + i,
			.target = vaddr + i + INSN_LEN + (uint64_t)(int64_t)rel,
			.is_call = code[i] == OPCODE_CALL_REL32,
		};
		if (!is_target(c.target, targets, ntargets))
			continue;
		int rc = found(arg, &c);
		if (rc)
			return rc;
	}
	return 0;
}
