/* callsites.c: the direct calls an allocator makes to its own entry points. */
#include <string.h>

#include "callsites.h"

#define OPCODE_CALL_REL32 0xe8
#define OPCODE_JMP_REL32 0xe9
#define INSN_LEN 5

static int is_target(uint64_t addr, const uint64_t *targets, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (targets[i] == addr)
			return 1;
	return 0;
}

int at_find_direct_calls(const uint8_t *code, size_t len, uint64_t vaddr,
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

struct scan {
	const uint64_t *targets;
	unsigned ntargets;
	at_direct_call_fn found;
	void *arg;
};

static int scan_section(void *arg, uint64_t vaddr, const uint8_t *code, size_t len)
{
	struct scan *s = arg;

	return at_find_direct_calls(code, len, vaddr, s->targets, s->ntargets, s->found, s->arg);
}

int at_elf_find_direct_calls(struct at_elf *e, const uint64_t *targets, unsigned ntargets,
			     at_direct_call_fn found, void *arg)
{
	struct scan s = { targets, ntargets, found, arg };

	return at_elf_for_each_code(e, scan_section, &s);
}
