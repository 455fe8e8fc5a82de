/* probe_site.c: where in a file an entry probe goes.
 *
 * The one place that decides it: entry uprobes and uretprobes both go at the function's first
 * instruction for now. */
#include "probe_site.h"

int at_probe_return_offset(struct at_elf *e, const char *name, uint64_t *offset)
{
	uint64_t vaddr;
	int rc = at_elf_find_function(e, name, &vaddr);

	if (rc <= 0)
		return rc;
	if (at_elf_vaddr_to_offset(e, vaddr, offset) < 0)
		return -1;
	return 1;
}

int at_probe_entry_offset(struct at_elf *e, const char *name, uint64_t *offset)
{
	return at_probe_return_offset(e, name, offset);
}
