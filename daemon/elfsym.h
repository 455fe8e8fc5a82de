/* elfsym.h: function symbols of an ELF file, with libelf. */
#ifndef ALLOCTAP_ELFSYM_H
#define ALLOCTAP_ELFSYM_H

#include <stdint.h>

struct at_elf {
	int fd;
	void *elf;         /* Elf * */
	int has_symtab;    /* 0 for a stripped file: only .dynsym is left */
	const char *path;
};

/* Opens an ELF file. 0, or -1 with a reason in *why (errno-style message or libelf's). */
int at_elf_open(struct at_elf *e, const char *path, const char **why);
void at_elf_close(struct at_elf *e);

/* Finds a defined function named name: in .symtab if the file has one, else (or if it is not
 * there) in .dynsym. Returns 1 with *vaddr set, 0 if there is no such function, -1 on a
 * malformed file. */
int at_elf_find_function(struct at_elf *e, const char *name, uint64_t *vaddr);

/* Converts a virtual address to a file offset through the PT_LOAD headers (PIE or not).
 * 0, or -1 if no executable PT_LOAD covers it. */
int at_elf_vaddr_to_offset(struct at_elf *e, uint64_t vaddr, uint64_t *offset);

/* Whether the file defines malloc. */
int at_elf_defines_malloc(const char *path);

#endif
