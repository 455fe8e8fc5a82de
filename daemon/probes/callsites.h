/* callsites.h: the direct calls an allocator makes to its own entry points.
 *
 * A program reaches the malloc family through the PLT (or the GOT); an allocator that calls one
 * of its own entry points straight, with a direct call, does it for its own needs: glibc's
 * thread exit flushes the thread's cache so, freeing blocks the program already freed. Such a
 * call instruction is known from the file: the daemon puts a probe on it, and the BPF program
 * drops the call that follows. Which instructions are direct calls is the architecture's
 * (at_arch_find_direct_calls, arch.h); this module finds them in an ELF file's code. */
#ifndef ALLOCTAP_CALLSITES_H
#define ALLOCTAP_CALLSITES_H

#include <stddef.h>
#include <stdint.h>

#include "arch.h"
#include "elfsym.h"

/* at_arch_find_direct_calls over every section of machine code of an ELF file (struct
 * at_direct_call, at_direct_call_fn: arch.h). -1 if it cannot be read. */
int at_elf_find_direct_calls(struct at_elf *e, const uint64_t *targets, unsigned ntargets,
			     at_direct_call_fn found, void *arg);

#endif
