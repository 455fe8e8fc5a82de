/* probe_site.c: where in a file the probes of a function go.
 *
 * The one place that decides it. Return probes, and the entry probes of functions that have
 * one, sit at the first instruction. The entry probe of a function without a return probe (free)
 * moves to the first instruction the kernel emulates, when nothing before it can change what
 * the probe reads: on Debian's glibc, free's `je` three bytes in, after `test %rdi,%rdi`, so the
 * trap no longer single-steps the test. Since the walk stops at the first branch, every call
 * passes the site: no call, free(NULL) included, goes unrecorded. */
#include <unistd.h>

#include "probe_site.h"
#include "x86_insn.h"

/* Bytes of a function read for the walk: more than the 16 instructions it looks at need in
 * practice, fewer than a page. */
#define PROLOGUE_BYTES 64

int at_probe_placement = 1;

/* The function's virtual address, size and file offset. Same returns as
 * at_probe_return_offset. */
static int locate_function(struct at_elf *e, const char *name, uint64_t *vaddr, uint64_t *size,
			   uint64_t *offset)
{
	int rc = at_elf_find_function_extent(e, name, vaddr, size);

	if (rc <= 0)
		return rc;
	if (at_elf_vaddr_to_offset(e, *vaddr, offset) < 0)
		return -1;
	return 1;
}

int at_probe_return_offset(struct at_elf *e, const char *name, uint64_t *offset)
{
	uint64_t vaddr, size;

	return locate_function(e, name, &vaddr, &size, offset);
}

int at_probe_entry_site(struct at_elf *e, const char *name, int has_return, uint16_t reads,
			struct at_probe_choice *c)
{
	int rc = locate_function(e, name, &c->function_vaddr, &c->function_size,
				 &c->function_offset);

	if (rc <= 0)
		return rc;
	c->entry_offset = c->function_offset;
	c->insn = "entry";
	if (has_return) {
		c->why = "a return probe needs the entry";
		return 1;
	}
	if (!at_probe_placement) {
		c->why = "--probe-at-entry";
		return 1;
	}
	uint8_t code[PROLOGUE_BYTES];
	ssize_t n = pread(e->fd, code, sizeof(code), (off_t)c->function_offset);
	if (n <= 0) {
		c->why = "its code could not be read";
		return 1;
	}
	struct at_probe_site site;
	at_x86_probe_site(code, (size_t)n, reads, &site);
	c->entry_offset = c->function_offset + site.offset;
	c->insn = site.insn;
	c->why = site.why;
	return 1;
}
