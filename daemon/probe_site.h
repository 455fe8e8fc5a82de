/* probe_site.h: where in a file the probes of a function go. */
#ifndef ALLOCTAP_PROBE_SITE_H
#define ALLOCTAP_PROBE_SITE_H

#include <stdint.h>

#include "elfsym.h"

/* Whether entry probes are moved to a cheaper instruction (on unless --probe-at-entry). */
extern int at_probe_placement;

/* Where a function's entry probe goes, and why. */
struct at_probe_choice {
	uint64_t entry_offset;   /* file offset of the entry probe */
	uint64_t function_offset; /* file offset of the function's first instruction */
	uint64_t function_vaddr; /* its virtual address (the entry probe's is function_vaddr +
				  * entry_offset - function_offset) */
	uint64_t function_size;  /* its size in bytes, 0 when unknown */
	const char *insn;        /* mnemonic at the site, "entry" when not moved */
	const char *why;         /* the reason, for -v */
};

/* Chooses the entry probe site of function name. A function that also gets a return probe
 * keeps its entry probe at its first instruction: a uretprobe hijacks the return address
 * there, and one trap then serves both. Otherwise, with placement on, the probe moves to the
 * first instruction the kernel emulates (x86_insn.h), given that the probe reads the argument
 * registers in reads. Returns 1 with *c set, 0 if the file does not define the function, -1 if
 * its address is in no executable segment. */
int at_probe_entry_site(struct at_elf *e, const char *name, int has_return, uint16_t reads,
			struct at_probe_choice *c);

/* The file offset at which the return probe of function name goes: always its first
 * instruction. Same returns as above. */
int at_probe_return_offset(struct at_elf *e, const char *name, uint64_t *offset);

#endif
