/* probe_site.h: where in a file the probes of a function go. */
#ifndef ALLOCTAP_PROBE_SITE_H
#define ALLOCTAP_PROBE_SITE_H

#include <stdint.h>

#include "arch.h"
#include "elfsym.h"

/* Whether probes are moved to a cheaper instruction (on unless --probe-at-entry). */
extern int at_probe_placement;

/* Where a function's probes go, and why. */
struct at_probe_choice {
	uint64_t site_offset;    /* file offset of the entry probe and of the return probe */
	uint64_t function_offset; /* file offset of the function's first instruction */
	uint64_t function_vaddr; /* its virtual address (the site's is function_vaddr +
				  * site_offset - function_offset) */
	uint64_t function_size;  /* its size in bytes, 0 when unknown */
	uint8_t arg_reg[AT_ARCH_ARGS]; /* where each argument is at the site (arch.h's numbers) */
	const char *insn;        /* mnemonic at the site, "entry" when not moved */
	const char *why;         /* the reason, for -v */
};

/* Chooses the site of function name's probes: its entry probe and, if it has one, its return
 * probe, both at one place so that one trap serves the two. With placement on, the site moves
 * to the first instruction the kernel emulates (at_arch_probe_site, arch.h), given that the
 * entry program reads the argument registers in reads; nothing before it changes where the
 * return probe finds the return address. With copies set, the entry program can read
 * an argument from another register (c->arg_reg), and the site may lie past a copy of
 * it before its own register was overwritten. Returns 1 with *c set, 0 if the file does not
 * define the function, -1 if its address is in no executable segment. */
int at_probe_site(struct at_elf *e, const char *name, uint16_t reads, int copies,
		  struct at_probe_choice *c);

#endif
