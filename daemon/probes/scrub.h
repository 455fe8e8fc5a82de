/* scrub.h: taking inherited breakpoints out of a process that is not traced. A uprobe writes
 * its breakpoint into the private copy of the page in each process it is planted in, and a
 * child made by fork copies that memory: it takes the trap on every call of a probed function
 * while the probes last, though its calls are never recorded (the kernel's filter drops them,
 * and never removes a uprobe_multi link's breakpoint from a process). A child the daemon does
 * not trace gets the original bytes back, as a debugger puts back its breakpoints: only where a
 * site still holds a breakpoint, one byte each. */
#ifndef ALLOCTAP_SCRUB_H
#define ALLOCTAP_SCRUB_H

#include <stdint.h>
#include <sys/types.h>

/* The breakpoint's byte on x86-64 (int3), which a site holds while probed. */
#define AT_SCRUB_BREAKPOINT 0xcc

/* A probed site: its offset in the file, and the first byte of its instruction there. */
struct at_site_byte {
	uint64_t offset;
	uint8_t insn;
};

/* Whether process pid shares its memory with process other (a vfork child, until its exec:
 * its breakpoints are the other's): 1, 0, or -1 with errno set when the kernel cannot tell
 * (kcmp). A child that does not share it at its creation never shares it later. */
int at_scrub_shares_memory(pid_t pid, pid_t other);

/* Puts back, in process pid, the first byte of each of the n sites of the file (dev, inode)
 * that holds a breakpoint there, in each of the process's executable mappings of the file. The
 * process's memory is opened before its mappings are read, so that an exec meanwhile leaves the
 * new program alone. Returns how many bytes were put back, or -1 with errno set when the
 * process's memory or mappings cannot be read. */
int at_scrub_sites(pid_t pid, uint64_t dev, uint64_t inode, const struct at_site_byte *sites,
		   unsigned n);

#endif
