/* callsites.c: the direct calls an allocator makes to its own entry points. */
#include "callsites.h"

struct scan {
	const uint64_t *targets;
	unsigned ntargets;
	at_direct_call_fn found;
	void *arg;
};

static int scan_section(void *arg, uint64_t vaddr, const uint8_t *code, size_t len)
{
	struct scan *s = arg;

	return at_arch_find_direct_calls(code, len, vaddr, s->targets, s->ntargets, s->found,
					 s->arg);
}

int at_elf_find_direct_calls(struct at_elf *e, const uint64_t *targets, unsigned ntargets,
			     at_direct_call_fn found, void *arg)
{
	struct scan s = { targets, ntargets, found, arg };

	return at_elf_for_each_code(e, scan_section, &s);
}
