/* probe_site.c: where in a file the probes of a function go.
 *
 * The one place that decides it. With placement on, a function's probes move to the first
 * instruction the kernel emulates, when nothing before it can change what the probes read: the
 * argument registers the entry program reads, and what the return probe needs to find the
 * return address, which the kernel's uretprobe code reads when the probe fires, wherever it is.
 * Which instructions those are is the architecture's walk (at_arch_probe_site, arch.h;
 * doc/DESIGN.md decision 5 names the sites it finds in glibc and jemalloc): the trap no
 * longer single-steps the instructions before. Since the walk stops at the first branch, every
 * call passes the site: no call, free(NULL) included, goes unrecorded. A function with both
 * probes gets both at the same site, so one trap serves the two. */
#include <string.h>
#include <unistd.h>

#include "arch.h"
#include "probe_site.h"

/* Bytes of a function read for the walk: more than the instructions it looks at need in
 * practice, fewer than a page. */
#define PROLOGUE_BYTES 64

int at_probe_placement = 1;

/* The function's virtual address, size and file offset. Same returns as at_probe_site. */
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

int at_probe_site(struct at_elf *e, const char *name, uint16_t reads, int copies,
		  struct at_probe_choice *c)
{
	int rc = locate_function(e, name, &c->function_vaddr, &c->function_size,
				 &c->function_offset);

	if (rc <= 0)
		return rc;
	c->site_offset = c->function_offset;
	c->insn = "entry";
	memcpy(c->arg_reg, at_arch_arg_regs, sizeof(c->arg_reg));
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
	at_arch_probe_site(code, (size_t)n, reads, copies, &site);
	memcpy(c->arg_reg, site.arg_reg, sizeof(c->arg_reg));
	c->site_offset = c->function_offset + site.offset;
	c->insn = site.insn;
	c->why = site.why;
	return 1;
}
