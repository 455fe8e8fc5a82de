/* unwind_table.h: compact unwind tables built from an ELF object's .eh_frame,
 * keyed by build-id so that every process mapping the same object shares one table.
 *
 * A table answers "how do I find the caller's frame from this instruction?" for every address of
 * the object's executable segments. Its rules, pages and entries are in the layouts the BPF
 * unwinder reads from its maps (struct at_unwind_rule, at_unwind_page, at_unwind_entry and the
 * rule kinds, defined once in bpf/alloctap.h and bpf/unwind_rule.h). What is the architecture's
 * (its DWARF registers, the rules its CFI rows and PLT sections reduce to) is behind
 * daemon/arch/arch.h.
 *
 * Addresses are the object's own virtual addresses (as in its ELF headers and CFI); a process
 * address minus the mapping's load bias (at_unwind_table_bias) is one. */
#ifndef ALLOCTAP_UNWIND_TABLE_H
#define ALLOCTAP_UNWIND_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "alloctap.h"

#define AT_UNWIND_BUILD_ID_MAX 20
#define AT_UNWIND_MAX_SEGMENTS 4 /* executable PT_LOAD segments kept per object */
#define AT_UNWIND_MAX_PAGES 65536 /* 4 GiB of addresses from the first executable byte */

/* An executable PT_LOAD segment: what a mapping's load bias is computed from. */
struct at_unwind_segment {
	uint64_t vaddr, offset, size;
};

/* How the table was made, for -v and the tests. */
struct at_unwind_stats {
	uint64_t build_ns;
	uint32_t fdes;             /* FDEs read from .eh_frame */
	uint32_t unreadable_fdes;  /* FDEs whose address range could not be decoded, or whose
				    * CFA program (or its CIE's) names a register past the
				    * processor's, remembers too many states or cannot be read:
				    * left out, so that its program is never run */
	uint32_t rows;             /* address ranges with one rule, before merging equal
				    * neighbours */
	uint32_t unsupported_rows; /* rows whose rule is AT_UNWIND_UNSUPPORTED */
	uint64_t fallback_bytes;   /* executable bytes without CFI (frame-pointer rule) */
	uint64_t plt_bytes;        /* bytes of PLT sections given a synthetic rule */
};

struct at_unwind_table {
	uint8_t build_id[AT_UNWIND_BUILD_ID_MAX];
	uint8_t build_id_len;      /* 0: the object has none; build_id holds its device and
				    * inode instead */
	uint64_t first_page;       /* lowest executable address >> AT_UNWIND_PAGE_SHIFT */
	uint32_t page_count, entry_count, rule_count;
	struct at_unwind_page *pages;
	struct at_unwind_entry *entries;
	struct at_unwind_rule *rules;
	uint32_t segment_count;
	struct at_unwind_segment segments[AT_UNWIND_MAX_SEGMENTS];
	struct at_unwind_stats stats;
};

/* Reads an ELF object's GNU build-id note. Returns its length (1..AT_UNWIND_BUILD_ID_MAX),
 * 0 if the object has none, -1 if the file cannot be read as ELF. */
int at_unwind_read_build_id(const char *path, uint8_t id[AT_UNWIND_BUILD_ID_MAX]);

/* Builds the table of the ELF object at path. 0, or -1 with a reason in *why. The table is
 * freed with at_unwind_table_free. Its FDEs' programs are run once each (eh_frame.c). */
int at_unwind_table_build(const char *path, struct at_unwind_table *t, const char **why);
/* The same table, with libdw's CFI interface queried at every row instead (dwarf_cfi_addrframe,
 * at_arch_rule_of_frame): much slower; the tests' oracle for at_unwind_table_build. */
int at_unwind_table_build_libdw(const char *path, struct at_unwind_table *t, const char **why);
void at_unwind_table_free(struct at_unwind_table *t);

/* Bytes the table takes as it is loaded into maps (rules, pages, entries). */
size_t at_unwind_table_bytes(const struct at_unwind_table *t);

/* The rule for an object address (NULL-free: AT_UNWIND_NONE when nothing covers it): the BPF
 * walk's own search (bpf/stack_walk.h's rule_index) over t's arrays, a page index, then a
 * bounded binary search. Defined in unwind_walk.c. */
const struct at_unwind_rule *at_unwind_table_lookup(const struct at_unwind_table *t,
						    uint64_t addr);

/* The load bias of a mapping of the object (start and file offset from /proc/PID/maps):
 * process address - bias = object address. 0, or -1 if no executable segment holds the
 * mapping's file offset. */
int at_unwind_table_bias(const struct at_unwind_table *t, uint64_t map_start,
			 uint64_t map_offset, int64_t *bias);

/* Tables shared by build-id: one per object, whichever process maps it. */
struct at_unwind_cache {
	struct at_unwind_table **tables;
	size_t count, cap;
};

/* The table of the object at path, built on first use. NULL with a reason in *why if it cannot
 * be built (a failure is not remembered). Tables live until at_unwind_cache_free. */
const struct at_unwind_table *at_unwind_cache_get(struct at_unwind_cache *c, const char *path,
						  const char **why);
void at_unwind_cache_free(struct at_unwind_cache *c);

/* The key the cache knows the object at path by: its build-id (*len its length), or when it
 * has none its device and inode (*len 0). 0, or -1 with a reason in *why. Touches no shared
 * state: any thread may call it. */
int at_unwind_object_key(const char *path, uint8_t id[AT_UNWIND_BUILD_ID_MAX], uint8_t *len,
			 const char **why);
/* The table in c of the object with that key, or NULL: nothing is built. */
const struct at_unwind_table *at_unwind_cache_find(const struct at_unwind_cache *c,
						   const uint8_t id[AT_UNWIND_BUILD_ID_MAX],
						   uint8_t len);
/* c takes t, a table built elsewhere (a builder thread), and frees it with itself. 0, or -1
 * (ENOMEM: t is freed). */
int at_unwind_cache_put(struct at_unwind_cache *c, struct at_unwind_table *t);

#endif
