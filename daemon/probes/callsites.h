/* callsites.h: the direct calls an allocator makes to its own entry points.
 *
 * A program reaches the malloc family through the PLT (or the GOT); an allocator that calls one
 * of its own entry points straight, with `call rel32`, does it for its own needs: glibc's
 * thread exit flushes the thread's cache so, freeing blocks the program already freed. Such a
 * call's return address is known from the file: the byte after the call. The BPF program drops
 * the calls whose return address is one of these. */
#ifndef ALLOCTAP_CALLSITES_H
#define ALLOCTAP_CALLSITES_H

#include <stddef.h>
#include <stdint.h>

#include "elfsym.h"

/* One direct transfer into an entry point: a call (e8 rel32) or a tail jump (e9 rel32). */
struct at_direct_call {
	uint64_t site;    /* virtual address of the instruction */
	uint64_t target;  /* virtual address of the entry point it reaches */
	int is_call;      /* 1 call (returns to site + 5), 0 jump */
};

typedef int (*at_direct_call_fn)(void *arg, const struct at_direct_call *c);

/* Finds in code (len bytes at virtual address vaddr) every e8/e9 rel32 whose target is one of
 * targets[0..ntargets), and calls found for each; stops at the first non-zero return of found
 * and returns it, else 0. The scan looks at every byte, not only at instruction boundaries: a
 * 5-byte pattern inside another instruction that happens to point exactly at an entry point is
 * taken too (harmless: its "return address" is then an address no call returns to). */
int at_find_direct_calls(const uint8_t *code, size_t len, uint64_t vaddr,
			 const uint64_t *targets, unsigned ntargets, at_direct_call_fn found,
			 void *arg);

/* The same over every section of machine code of an ELF file. -1 if it cannot be read. */
int at_elf_find_direct_calls(struct at_elf *e, const uint64_t *targets, unsigned ntargets,
			     at_direct_call_fn found, void *arg);

#endif
