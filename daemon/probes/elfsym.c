/* elfsym.c: function symbols of an ELF file, with libelf. */
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

#include "elfsym.h"
#include "prim.h"

int at_elf_open(struct at_elf *e, const char *path, const char **why)
{
	int fd = at_open_regular(path, 0, why);

	if (fd < 0) {
		memset(e, 0, sizeof(*e));
		e->fd = -1;
		e->path = path;
		return -1;
	}
	return at_elf_open_fd(e, fd, path, why);
}

int at_elf_open_fd(struct at_elf *e, int fd, const char *path, const char **why)
{
	memset(e, 0, sizeof(*e));
	e->fd = fd;
	e->path = path;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		*why = elf_errmsg(-1);
		close(e->fd);
		e->fd = -1;
		return -1;
	}
	Elf *elf = elf_begin(e->fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		*why = elf ? "not an ELF file" : elf_errmsg(-1);
		if (elf)
			elf_end(elf);
		close(e->fd);
		e->fd = -1;
		return -1;
	}
	e->elf = elf;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			e->has_symtab = 1;
	}
	return 0;
}

void at_elf_close(struct at_elf *e)
{
	if (e->elf)
		elf_end(e->elf);
	if (e->fd >= 0)
		close(e->fd);
	e->elf = NULL;
	e->fd = -1;
}

/* Looks for a defined symbol of type st_type (STT_FUNC, STT_OBJECT) named name in the section
 * of type sh_type. 1 found, 0 not, -1 malformed. */
static int find_in_section(Elf *elf, Elf64_Word sh_type, unsigned st_type, const char *name,
			   uint64_t *vaddr, uint64_t *size)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return -1;
		if (sh.sh_type != sh_type || sh.sh_entsize == 0)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		if (!data)
			return -1;
		size_t count = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < count; i++) {
			GElf_Sym sym;

			if (!gelf_getsym(data, (int)i, &sym))
				return -1;
			if (GELF_ST_TYPE(sym.st_info) != st_type || sym.st_shndx == SHN_UNDEF ||
			    sym.st_value == 0)
				continue;
			const char *s = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (s && strcmp(s, name) == 0) {
				*vaddr = sym.st_value;
				*size = sym.st_size;
				return 1;
			}
		}
	}
	return 0;
}

int at_elf_find_function_extent(struct at_elf *e, const char *name, uint64_t *vaddr,
				uint64_t *size)
{
	int rc = find_in_section(e->elf, SHT_SYMTAB, STT_FUNC, name, vaddr, size);

	if (rc != 0)
		return rc;
	return find_in_section(e->elf, SHT_DYNSYM, STT_FUNC, name, vaddr, size);
}

int at_elf_find_object(struct at_elf *e, const char *name, uint64_t *vaddr)
{
	uint64_t size;
	int rc = find_in_section(e->elf, SHT_SYMTAB, STT_OBJECT, name, vaddr, &size);

	if (rc != 0)
		return rc;
	return find_in_section(e->elf, SHT_DYNSYM, STT_OBJECT, name, vaddr, &size);
}

int at_elf_find_function(struct at_elf *e, const char *name, uint64_t *vaddr)
{
	uint64_t size;

	return at_elf_find_function_extent(e, name, vaddr, &size);
}

int at_elf_vaddr_to_offset(struct at_elf *e, uint64_t vaddr, uint64_t *offset)
{
	size_t n;

	if (elf_getphdrnum(e->elf, &n) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e->elf, (int)i, &ph))
			return -1;
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_memsz) {
			*offset = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -1;
}

/* The DT_FLAGS_1 entry of the dynamic section, or 0. */
static uint64_t dynamic_flags_1(Elf *elf)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || sh.sh_entsize == 0)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		if (!data)
			return 0;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;

			if (gelf_getdyn(data, (int)i, &dyn) && dyn.d_tag == DT_FLAGS_1)
				return dyn.d_un.d_val;
		}
	}
	return 0;
}

int at_elf_is_program(struct at_elf *e)
{
	GElf_Ehdr eh;
	uint64_t vaddr;

	if (!gelf_getehdr(e->elf, &eh))
		return 1;
	if (eh.e_type == ET_EXEC || (dynamic_flags_1(e->elf) & DF_1_PIE))
		return 1;
	return at_elf_find_function(e, "main", &vaddr) == 1;
}

int at_elf_for_each_code(struct at_elf *e, at_elf_code_fn fn, void *arg)
{
	Elf_Scn *scn = NULL;
	size_t names;

	if (elf_getshdrstrndx(e->elf, &names) != 0)
		return -1;
	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return -1;
		if (sh.sh_type != SHT_PROGBITS || (sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) !=
							  (SHF_ALLOC | SHF_EXECINSTR))
			continue;
		const char *name = elf_strptr(e->elf, names, sh.sh_name);
		if (name && strncmp(name, ".plt", 4) == 0)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf)
			return -1;
		int rc = fn(arg, sh.sh_addr, data->d_buf, data->d_size);
		if (rc)
			return rc;
	}
	return 0;
}

int at_elf_defines_malloc(const char *path)
{
	struct at_elf e;
	const char *why;
	uint64_t vaddr;

	if (at_elf_open(&e, path, &why) < 0)
		return 0;
	int rc = at_elf_find_function(&e, "malloc", &vaddr);
	at_elf_close(&e);
	return rc == 1;
}

int at_elf_has_interp(struct at_elf *e)
{
	size_t n;
	int needs = 1;

	if (elf_getphdrnum(e->elf, &n) == 0) {
		needs = 0;
		for (size_t i = 0; i < n && !needs; i++) {
			GElf_Phdr ph;

			needs = !gelf_getphdr(e->elf, (int)i, &ph) || ph.p_type == PT_INTERP;
		}
	}
	return needs;
}

int at_elf_runs_as_loader(struct at_elf *e)
{
	uint64_t vaddr;
	GElf_Ehdr eh;

	return !at_elf_has_interp(e) && gelf_getehdr(e->elf, &eh) && eh.e_type == ET_DYN &&
	       at_elf_find_function(e, "_dl_debug_state", &vaddr) == 1 &&
	       at_elf_find_object(e, "_r_debug", &vaddr) == 1;
}

int at_elf_needs_loader(const char *path)
{
	struct at_elf e;
	const char *why;

	if (at_elf_open(&e, path, &why) < 0)
		return 1;
	int needs = at_elf_has_interp(&e);
	at_elf_close(&e);
	return needs;
}

int at_elf_is_loader(const char *path)
{
	struct at_elf e;
	const char *why;

	if (at_elf_open(&e, path, &why) < 0)
		return 0;
	int is = at_elf_runs_as_loader(&e);
	at_elf_close(&e);
	return is;
}
