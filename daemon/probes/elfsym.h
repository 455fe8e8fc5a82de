/* elfsym.h: function symbols of an ELF file, with libelf. */
#ifndef ALLOCTAP_ELFSYM_H
#define ALLOCTAP_ELFSYM_H

#include <stddef.h>
#include <stdint.h>

struct at_elf {
	int fd;
	void *elf;         /* Elf * */
	int has_symtab;    /* 0 for a stripped file: only .dynsym is left */
	const char *path;
};

/* Opens an ELF file: a regular file only (at_open_regular: a FIFO, a device or a directory is
 * refused without blocking). 0, or -1 with a reason in *why (at_open_regular's, or
 * libelf's). */
int at_elf_open(struct at_elf *e, const char *path, const char **why);
/* The same for a descriptor already open (at_open_regular's), which e then owns: closed by
 * at_elf_close, or here when it is no ELF file. path only names it. */
int at_elf_open_fd(struct at_elf *e, int fd, const char *path, const char **why);
void at_elf_close(struct at_elf *e);

/* Finds a defined function named name: in .symtab if the file has one, else (or if it is not
 * there) in .dynsym. Returns 1 with *vaddr set, 0 if there is no such function, -1 on a
 * malformed file. */
int at_elf_find_function(struct at_elf *e, const char *name, uint64_t *vaddr);

/* The same for a data object (STT_OBJECT): 1 with *vaddr set, 0, or -1. */
int at_elf_find_object(struct at_elf *e, const char *name, uint64_t *vaddr);

/* The same, with the function's size in bytes (st_size, 0 when unknown). */
int at_elf_find_function_extent(struct at_elf *e, const char *name, uint64_t *vaddr,
				uint64_t *size);

/* Converts a virtual address to a file offset through the PT_LOAD headers (PIE or not).
 * 0, or -1 if no executable PT_LOAD covers it. */
int at_elf_vaddr_to_offset(struct at_elf *e, uint64_t vaddr, uint64_t *offset);

/* Whether the file is a program rather than a shared library: ET_EXEC, a PIE (DF_1_PIE), or a
 * file that defines main. */
int at_elf_is_program(struct at_elf *e);

/* Calls fn for each section of machine code (allocated, executable, PROGBITS, not a PLT): its
 * virtual address and bytes. Stops at the first non-zero return of fn and returns it; 0 when
 * every section was seen, -1 if the file cannot be read. */
typedef int (*at_elf_code_fn)(void *arg, uint64_t vaddr, const uint8_t *code, size_t len);
int at_elf_for_each_code(struct at_elf *e, at_elf_code_fn fn, void *arg);

/* Whether the file defines malloc. */
int at_elf_defines_malloc(const char *path);

/* Whether the program at path has a dynamic loader (a PT_INTERP header): 0 for a statically
 * linked program, which maps no library; 1 also when the file cannot be read (not known to be
 * static). at_elf_has_interp: the same of an open file. */
int at_elf_needs_loader(const char *path);
int at_elf_has_interp(struct at_elf *e);

/* Whether the file at path is a dynamic loader run as the program (`ld.so PROGRAM`): a shared
 * object without PT_INTERP that defines _dl_debug_state and _r_debug. 0 also when it cannot be
 * read. at_elf_runs_as_loader: the same of an open file. */
int at_elf_is_loader(const char *path);
int at_elf_runs_as_loader(struct at_elf *e);

#endif
