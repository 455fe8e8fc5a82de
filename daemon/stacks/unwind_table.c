/* unwind_table.c: compact unwind tables from .eh_frame.
 *
 * The build walks every executable segment of the object in address order. Where an FDE covers
 * an address, its program, run once by eh_frame.c, gives the rows (ranges with one rule each);
 * a row is reduced to an at_unwind_rule (or marked unsupported) by the architecture
 * (at_arch_rule_of_row). The same rows can be had from libdw's CFI interface
 * (dwarf_cfi_addrframe at each row's start, at_arch_rule_of_frame): the tests' oracle. Where no
 * FDE does, a PLT section gets the architecture's synthetic rules and anything else its
 * frame-pointer rule. Equal neighbours merge; unique rules, 64 KiB pages and their entries then
 * make the table (layout: unwind_table.h). */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "arch.h"
#include "eh_frame.h"
#include "prim.h"
#include "unwind_table.h"

/* One address range's rule, before compaction. */
struct row {
	uint64_t addr;
	struct at_unwind_rule rule;
};

struct rows {
	struct row *v;
	size_t n, cap;
};

struct range {
	uint64_t lo, hi;
	size_t fde; /* its index in the object's at_eh_frame (not libdw's build) */
};

/* A PLT section and its synthetic rules (at_arch_plt_parts; parts[i].from an address here). */
struct plt_section {
	uint64_t lo, hi;
	struct at_arch_plt_part parts[AT_ARCH_PLT_PARTS];
	unsigned part_count;
};

#define MAX_PLT_SECTIONS 3

/* What the build reads from the ELF file. */
struct object {
	Elf *elf;
	const uint8_t *file;
	size_t file_size;
	int libdw;            /* the rows from libdw's CFI queries, else from eh */
	Dwarf_CFI *cfi;
	struct at_eh_frame eh;
	struct range *fdes;
	size_t fde_count;
	struct plt_section plts[MAX_PLT_SECTIONS];
	size_t plt_count;
	uint64_t entry; /* the ELF header's entry point, 0 for none */
};

static const struct at_unwind_rule rule_none = { .kind = AT_UNWIND_NONE };
static const struct at_unwind_rule rule_unsupported = { .kind = AT_UNWIND_UNSUPPORTED };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int same_rule(const struct at_unwind_rule *a, const struct at_unwind_rule *b)
{
	return a->kind == b->kind && a->fp == b->fp && a->fp_offset == b->fp_offset &&
	       a->cfa_offset == b->cfa_offset;
}

/* Appends a row unless the previous one already has the same rule (a row at the address of
 * the previous one replaces it). 0, or -1 out of memory. */
static int push_row(struct rows *r, uint64_t addr, const struct at_unwind_rule *rule)
{
	if (r->n && same_rule(&r->v[r->n - 1].rule, rule))
		return 0;
	if (r->n && r->v[r->n - 1].addr == addr) {
		r->v[r->n - 1].rule = *rule;
		return 0;
	}
	if (at_grow((void **)&r->v, &r->cap, r->n, sizeof(*r->v)) < 0)
		return -1;
	r->v[r->n].addr = addr;
	r->v[r->n].rule = *rule;
	r->n++;
	return 0;
}

/* --- build-id ------------------------------------------------------------------------------ */

/* Looks for an NT_GNU_BUILD_ID note in one note block. Its length, or 0. */
static int build_id_in_notes(Elf_Data *data, uint8_t id[AT_UNWIND_BUILD_ID_MAX])
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while (data && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *name = (const char *)data->d_buf + name_off;

		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
		    nh.n_descsz > 0) {
			size_t len = nh.n_descsz < AT_UNWIND_BUILD_ID_MAX ? nh.n_descsz
									  : AT_UNWIND_BUILD_ID_MAX;
			memcpy(id, (const char *)data->d_buf + desc_off, len);
			return (int)len;
		}
	}
	return 0;
}

/* The build-id from the note sections, else from the PT_NOTE segments. */
static int elf_build_id(Elf *elf, uint8_t id[AT_UNWIND_BUILD_ID_MAX])
{
	Elf_Scn *scn = NULL;
	size_t n;
	int len;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE &&
		    (len = build_id_in_notes(elf_getdata(scn, NULL), id)) > 0)
			return len;
	}
	if (elf_getphdrnum(elf, &n) != 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_NOTE &&
		    (len = build_id_in_notes(elf_getdata_rawchunk(elf, (int64_t)ph.p_offset,
								  ph.p_filesz, ELF_T_NHDR),
					     id)) > 0)
			return len;
	}
	return 0;
}

/* Opens path as ELF. The Elf handle, or NULL with *why and the descriptor closed. */
static Elf *open_elf(const char *path, int *fd, const char **why)
{
	if (elf_version(EV_CURRENT) == EV_NONE) {
		*why = elf_errmsg(-1);
		return NULL;
	}
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0) {
		*why = strerror(errno);
		return NULL;
	}
	Elf *elf = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		*why = elf ? "not an ELF file" : elf_errmsg(-1);
		if (elf)
			elf_end(elf);
		close(*fd);
		*fd = -1;
		return NULL;
	}
	return elf;
}

int at_unwind_read_build_id(const char *path, uint8_t id[AT_UNWIND_BUILD_ID_MAX])
{
	const char *why;
	int fd;
	Elf *elf = open_elf(path, &fd, &why);

	if (!elf)
		return -1;
	int len = elf_build_id(elf, id);
	elf_end(elf);
	close(fd);
	return len;
}

/* --- FDE address ranges ------------------------------------------------------------------- */

struct cie_encoding {
	Dwarf_Off offset;
	int encoding;
	int fits;      /* its initial instructions pass cfa_program_fits */
	int augmented; /* its FDEs have augmentation data ('z') before their instructions */
};

static int by_lo(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The contents of the section called name (its address in *addr), or NULL. */
static Elf_Data *find_section(Elf *elf, const char *name, uint64_t *addr)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *s;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS &&
		    (s = elf_strptr(elf, shstrndx, sh.sh_name)) && strcmp(s, name) == 0) {
			*addr = sh.sh_addr;
			return elf_getdata(scn, NULL);
		}
	}
	return NULL;
}

/* The address range an FDE describes, decoded with its CIE's pointer encoding; .eh_frame's
 * data is at section address sh_addr. 0, or -1 if it cannot be decoded or is empty. */
static int fde_range(const Dwarf_FDE *fde, int enc, const Elf_Data *data, uint64_t sh_addr,
		     struct range *r)
{
	const uint8_t *p = fde->start;
	uint64_t field = sh_addr + (uint64_t)(p - (const uint8_t *)data->d_buf);
	uint64_t lo = 0, len = 0;

	if (enc < 0 || at_eh_read_encoded(&p, fde->end, (uint8_t)enc, field, 1, &lo) < 0 ||
	    at_eh_read_encoded(&p, fde->end, (uint8_t)enc, 0, 0, &len) < 0 || lo == 0 || len == 0)
		return -1;
	*r = (struct range){ lo, lo + len, 0 };
	return 0;
}

/* The file bytes [offset, offset + size) as data, or NULL if they are not all in the file. */
static Elf_Data *file_chunk(struct object *o, uint64_t offset, uint64_t size)
{
	if (offset > o->file_size || size > o->file_size - offset || size == 0)
		return NULL;
	return elf_getdata_rawchunk(o->elf, (int64_t)offset, size, ELF_T_BYTE);
}

/* The file offset of object address addr and the bytes from there to the end of the PT_LOAD
 * segment that holds it (in *room). 0, or -1 if no segment holds it in the file. */
static int vaddr_to_offset(Elf *elf, uint64_t addr, uint64_t *offset, uint64_t *room)
{
	size_t n;

	if (elf_getphdrnum(elf, &n) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && addr >= ph.p_vaddr &&
		    addr - ph.p_vaddr < ph.p_filesz) {
			*offset = ph.p_offset + (addr - ph.p_vaddr);
			*room = ph.p_filesz - (addr - ph.p_vaddr);
			return 0;
		}
	}
	return -1;
}

/* The size of the section at address addr whose name is name (any type but SHT_NOBITS), or 0
 * when the object has no such section headers (they may be stripped). */
static uint64_t section_size_at(Elf *elf, const char *name, uint64_t addr)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *s;

		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS && sh.sh_addr == addr &&
		    (s = elf_strptr(elf, shstrndx, sh.sh_name)) && strcmp(s, name) == 0)
			return sh.sh_size;
	}
	return 0;
}

/* The address of .eh_frame as .eh_frame_hdr (the PT_GNU_EH_FRAME segment) gives it: version 1,
 * then the encoding of eh_frame_ptr, and eh_frame_ptr at byte 4. 0, or -1 without one. */
static int eh_frame_from_hdr(struct object *o, uint64_t *addr)
{
	size_t n;

	if (elf_getphdrnum(o->elf, &n) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(o->elf, (int)i, &ph) || ph.p_type != PT_GNU_EH_FRAME)
			continue;
		Elf_Data *d = file_chunk(o, ph.p_offset, ph.p_filesz);
		if (!d || !d->d_buf || d->d_size < 8)
			return -1;
		const uint8_t *h = d->d_buf, *p = h + 4;
		uint8_t enc = h[1];
		uint64_t v;

		if (h[0] != 1 || enc == DW_EH_PE_omit)
			return -1;
		if ((enc & 0x70) == DW_EH_PE_datarel) { /* relative to .eh_frame_hdr's start */
			if (at_eh_read_encoded(&p, h + d->d_size, enc & 0x0f, 0, 0, &v) < 0)
				return -1;
			v += ph.p_vaddr;
		} else if (at_eh_read_encoded(&p, h + d->d_size, enc, ph.p_vaddr + 4, 1, &v) < 0) {
			return -1;
		}
		*addr = v;
		return 0;
	}
	return -1;
}

/* The bytes of .eh_frame (its address in *addr), or NULL if the object has none. Found as the
 * unwinders of the field find it: through .eh_frame_hdr's eh_frame_ptr (which section headers
 * need not be there for), else by section name, of type SHT_PROGBITS or SHT_X86_64_UNWIND (GNU
 * gold's). Its size is the section's, or without section headers the rest of its segment
 * (the CFI ends at its zero terminator, as libdw reads it too). */
static Elf_Data *find_eh_frame(struct object *o, uint64_t *addr)
{
	uint64_t at = 0, offset, room, size;

	if (eh_frame_from_hdr(o, &at) < 0) {
		size_t shstrndx;
		Elf_Scn *scn = NULL;

		if (elf_getshdrstrndx(o->elf, &shstrndx) != 0)
			return NULL;
		while ((scn = elf_nextscn(o->elf, scn))) {
			GElf_Shdr sh;
			const char *s;

			if (gelf_getshdr(scn, &sh) &&
			    (sh.sh_type == SHT_PROGBITS || sh.sh_type == SHT_X86_64_UNWIND) &&
			    (s = elf_strptr(o->elf, shstrndx, sh.sh_name)) &&
			    strcmp(s, ".eh_frame") == 0) {
				at = sh.sh_addr;
				break;
			}
		}
		if (!scn)
			return NULL;
	}
	if (vaddr_to_offset(o->elf, at, &offset, &room) < 0)
		return NULL;
	size = section_size_at(o->elf, ".eh_frame", at);
	if (size == 0 || size > room)
		size = room;
	*addr = at;
	return file_chunk(o, offset, size);
}

/* Whether an FDE's own program (after its range and augmentation data) is one libdw may run
 * (at_cfi_program_fits). */
static int fde_program_fits(const Dwarf_FDE *fde, const struct cie_encoding *cie)
{
	const uint8_t *insns;

	if (at_eh_fde_program(fde->start, fde->end, cie->encoding, cie->augmented, &insns) < 0)
		return 0;
	return at_cfi_program_fits(insns, fde->end, cie->encoding);
}

/* Collects the address range of every FDE of .eh_frame, sorted, with libdw's walk. 0, or -1
 * out of memory. An FDE whose program, or its CIE's, libdw should not run
 * (at_cfi_program_fits) is left out: its addresses have no rule, and its frames are unwound as
 * any address without CFI is. */
static int read_fde_ranges_libdw(struct object *o, struct at_unwind_stats *st)
{
	uint64_t sh_addr = 0;
	Elf_Data *data = find_eh_frame(o, &sh_addr);

	if (!data || !data->d_buf)
		return 0;
	const unsigned char *ident = (const unsigned char *)elf_getident(o->elf, NULL);
	struct cie_encoding *cies = NULL;
	size_t cie_count = 0, cie_cap = 0, fde_cap = 0;
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;
	int rc = 0, got;

	for (; (got = dwarf_next_cfi(ident, data, true, off, &next, &e)) != 1; off = next) {
		if (got < 0) {
			if (next == (Dwarf_Off)-1 || next <= off)
				break;
			continue;
		}
		if (dwarf_cfi_cie_p(&e)) {
			if ((rc = at_grow((void **)&cies, &cie_cap, cie_count, sizeof(*cies))) < 0)
				break;
			int enc = at_eh_cie_fde_encoding(e.cie.augmentation,
							 e.cie.augmentation_data,
							 e.cie.augmentation_data_size);
			cies[cie_count++] = (struct cie_encoding){
				off, enc, at_cfi_program_fits(e.cie.initial_instructions,
							   e.cie.initial_instructions_end, enc),
				e.cie.augmentation[0] == 'z' };
			continue;
		}
		const struct cie_encoding *cie = NULL;
		for (size_t i = cie_count; i-- > 0 && !cie;)
			if (cies[i].offset == e.fde.CIE_pointer)
				cie = &cies[i];
		struct range r;
		if (!cie || fde_range(&e.fde, cie->encoding, data, sh_addr, &r) < 0 || !cie->fits ||
		    !fde_program_fits(&e.fde, cie)) {
			st->unreadable_fdes++;
			continue;
		}
		if ((rc = at_grow((void **)&o->fdes, &fde_cap, o->fde_count, sizeof(*o->fdes))) < 0)
			break;
		o->fdes[o->fde_count++] = r;
	}
	free(cies);
	st->fdes = (uint32_t)o->fde_count;
	if (o->fde_count) /* o->fdes is NULL without FDEs: qsort's arguments must not be */
		qsort(o->fdes, o->fde_count, sizeof(*o->fdes), by_lo);
	return rc;
}

/* The same ranges, and the FDEs' programs, read by eh_frame.c (o->eh). 0, or -1 out of
 * memory. */
static int read_fde_ranges_eh(struct object *o, struct at_unwind_stats *st)
{
	uint64_t sh_addr = 0;
	Elf_Data *data = find_eh_frame(o, &sh_addr);
	struct at_cfi_state initial;

	at_arch_cfi_initial_state(&initial);
	if (at_eh_frame_read(&o->eh, data ? data->d_buf : NULL, data ? data->d_size : 0, sh_addr,
			     &initial) < 0)
		return -1;
	st->unreadable_fdes = o->eh.unreadable_fdes;
	st->fdes = (uint32_t)o->eh.fde_count;
	if (!o->eh.fde_count)
		return 0;
	o->fdes = malloc(o->eh.fde_count * sizeof(*o->fdes));
	if (!o->fdes)
		return -1;
	for (size_t i = 0; i < o->eh.fde_count; i++)
		o->fdes[i] = (struct range){ o->eh.fdes[i].lo, o->eh.fdes[i].hi, i };
	o->fde_count = o->eh.fde_count;
	return 0;
}

/* --- rules from CFI ----------------------------------------------------------------------- */

/* Where eh_frame.c's rows go. */
struct eh_rows {
	struct rows *rows;
	struct at_unwind_stats *st;
};

/* One row of an FDE's program: its rule (at_arch_rule_of_row), counted as fde_rows_libdw counts
 * libdw's. 0, or -1 out of memory. */
static int eh_row(void *arg, const struct at_cfi_row *row)
{
	struct eh_rows *e = arg;
	struct at_unwind_rule rule = at_arch_rule_of_row(row);

	e->st->rows++;
	if (rule.kind == AT_UNWIND_UNSUPPORTED)
		e->st->unsupported_rows++;
	return push_row(e->rows, row->lo, &rule);
}

/* Rows for [lo, hi) inside one FDE, one per range dwarf_cfi_addrframe reports. */
static int fde_rows_libdw(struct object *o, uint64_t lo, uint64_t hi, struct rows *rows,
			  struct at_unwind_stats *st)
{
	uint64_t a = lo;

	while (a < hi) {
		Dwarf_Frame *frame = NULL;
		Dwarf_Addr start, end;
		struct at_unwind_rule rule = rule_unsupported;
		uint64_t next = hi;

		if (dwarf_cfi_addrframe(o->cfi, a, &frame) == 0) {
			rule = at_arch_rule_of_frame(frame);
			if (dwarf_frame_info(frame, &start, &end, NULL) >= 0 && end > a && end < hi)
				next = end;
			free(frame);
		}
		st->rows++;
		if (rule.kind == AT_UNWIND_UNSUPPORTED)
			st->unsupported_rows++;
		if (push_row(rows, a, &rule) < 0)
			return -1;
		a = next;
	}
	return 0;
}

/* Rows for [lo, hi) inside FDE fde: libdw's, or from one run of its program (the same rows). */
static int fde_rows(struct object *o, const struct range *fde, uint64_t lo, uint64_t hi,
		    struct rows *rows, struct at_unwind_stats *st)
{
	struct eh_rows e = { rows, st };

	if (o->libdw)
		return fde_rows_libdw(o, lo, hi, rows, st);
	return at_eh_fde_rows(&o->eh, fde->fde, lo, hi, eh_row, &e);
}

/* Synthetic rows for [lo, hi) of a PLT section without CFI: its parts' rules, as the
 * architecture's linker lays its entries out (at_arch_plt_parts). */
static int plt_rows(const struct plt_section *p, uint64_t lo, uint64_t hi, struct rows *rows,
		    struct at_unwind_stats *st)
{
	st->plt_bytes += hi - lo;
	for (unsigned i = 0; i < p->part_count; i++) {
		uint64_t from = p->parts[i].from > lo ? p->parts[i].from : lo;
		uint64_t to = i + 1 < p->part_count ? p->parts[i + 1].from : p->hi;

		if (to > hi)
			to = hi;
		if (from < to && push_row(rows, from, p->parts[i].rule) < 0)
			return -1;
	}
	return 0;
}

/* Whether [lo, hi) is alignment padding between two functions: short, and only the bytes of
 * the architecture's padding (at_arch_is_padding). */
static int is_padding(const struct object *o, const struct at_unwind_table *t, uint64_t lo,
		      uint64_t hi)
{
	const struct at_unwind_segment *s = NULL;

	if (hi - lo >= 64)
		return 0;
	for (uint32_t i = 0; i < t->segment_count; i++)
		if (lo >= t->segments[i].vaddr && hi <= t->segments[i].vaddr + t->segments[i].size)
			s = &t->segments[i];
	if (!s)
		return 0;
	uint64_t at = lo - s->vaddr; /* [lo, hi) in the file: checked without a sum that can wrap */
	if (s->offset > o->file_size || at > o->file_size - s->offset ||
	    hi - lo > o->file_size - s->offset - at)
		return 0;
	return at_arch_is_padding(o->file + s->offset + at, hi - lo);
}

/* Rows for [lo, hi), code without CFI: the frame-pointer rule, but from the object's entry point
 * on (in the range that holds it) the outermost frame. The dynamic loader's entry (_start, then
 * _dl_start_user, which calls _dl_init and so every constructor of the libraries loaded at
 * startup) has no CFI; nothing returns there but from the outermost calls. */
static int no_cfi_rows(const struct object *o, uint64_t lo, uint64_t hi, struct rows *rows,
		       struct at_unwind_stats *st)
{
	static const struct at_unwind_rule outermost = { .kind = AT_UNWIND_END };
	uint64_t end = o->entry > lo && o->entry < hi ? o->entry : hi;

	if (o->entry && o->entry == lo)
		end = lo;
	st->fallback_bytes += end - lo;
	if (lo < end && push_row(rows, lo, &at_arch_frame_pointer_rule) < 0)
		return -1;
	return end < hi ? push_row(rows, end, &outermost) : 0;
}

/* Rows for [lo, hi), an executable range no FDE covers: alignment padding after a function takes
 * its last rule (it is never executed), PLT sections get their synthetic rule, the rest the
 * frame-pointer rule. */
static int gap_rows(struct object *o, const struct at_unwind_table *t, uint64_t lo, uint64_t hi,
		    struct rows *rows, struct at_unwind_stats *st)
{
	if (rows->n && rows->v[rows->n - 1].rule.kind != AT_UNWIND_NONE && is_padding(o, t, lo, hi))
		return 0;
	while (lo < hi) {
		uint64_t next = hi;
		const struct plt_section *in = NULL;

		for (size_t i = 0; i < o->plt_count; i++) {
			const struct plt_section *p = &o->plts[i];

			if (p->lo <= lo && lo < p->hi)
				in = p;
			else if (p->lo > lo && p->lo < next)
				next = p->lo;
		}
		if (in) {
			next = in->hi < hi ? in->hi : hi;
			if (plt_rows(in, lo, next, rows, st) < 0)
				return -1;
		} else if (no_cfi_rows(o, lo, next, rows, st) < 0) {
			return -1;
		}
		lo = next;
	}
	return 0;
}

/* Rows for one executable segment [lo, hi), ended by an AT_UNWIND_NONE row. */
static int segment_rows(struct object *o, struct at_unwind_table *t, uint64_t lo, uint64_t hi,
			struct rows *rows)
{
	struct at_unwind_stats *st = &t->stats;
	size_t i = 0;
	uint64_t a = lo;

	while (a < hi) {
		while (i < o->fde_count && o->fdes[i].hi <= a)
			i++;
		uint64_t fde_lo = i < o->fde_count ? o->fdes[i].lo : hi;
		if (fde_lo > a) {
			uint64_t end = fde_lo < hi ? fde_lo : hi;
			if (gap_rows(o, t, a, end, rows, st) < 0)
				return -1;
			a = end;
			continue;
		}
		uint64_t end = o->fdes[i].hi < hi ? o->fdes[i].hi : hi;
		if (fde_rows(o, &o->fdes[i], a, end, rows, st) < 0)
			return -1;
		a = end;
	}
	return push_row(rows, hi, &rule_none);
}

/* --- sections and segments ---------------------------------------------------------------- */

/* The PLT sections the architecture's linker writes (at_arch_plt_sections), with their
 * synthetic rules. */
static void find_plt_sections(struct object *o)
{
	for (size_t i = 0; at_arch_plt_sections[i] && o->plt_count < MAX_PLT_SECTIONS; i++) {
		uint64_t addr = 0;
		Elf_Data *d = find_section(o->elf, at_arch_plt_sections[i], &addr);

		if (!d || !d->d_buf || d->d_size == 0)
			continue;
		struct plt_section *p = &o->plts[o->plt_count++];
		p->lo = addr;
		p->hi = addr + d->d_size;
		p->part_count = at_arch_plt_parts(at_arch_plt_sections[i], d->d_buf, d->d_size,
						  p->parts);
		for (unsigned k = 0; k < p->part_count; k++)
			p->parts[k].from += addr;
	}
}

/* The executable PT_LOAD segments, sorted by address. 0, or -1 if there are none, too many, or
 * two that overlap or one that wraps around the address space (the rows of a table are made
 * segment after segment, in increasing address order). */
static int find_segments(Elf *elf, struct at_unwind_table *t)
{
	size_t n;

	if (elf_getphdrnum(elf, &n) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) ||
		    ph.p_filesz == 0)
			continue;
		if (t->segment_count == AT_UNWIND_MAX_SEGMENTS || ph.p_vaddr + ph.p_filesz < ph.p_vaddr)
			return -1;
		size_t j = t->segment_count++;
		while (j > 0 && t->segments[j - 1].vaddr > ph.p_vaddr) {
			t->segments[j] = t->segments[j - 1];
			j--;
		}
		t->segments[j] = (struct at_unwind_segment){ ph.p_vaddr, ph.p_offset, ph.p_filesz };
	}
	for (uint32_t i = 1; i < t->segment_count; i++)
		if (t->segments[i].vaddr < t->segments[i - 1].vaddr + t->segments[i - 1].size)
			return -1;
	return t->segment_count ? 0 : -1;
}

/* --- compaction --------------------------------------------------------------------------- */

static uint64_t rule_key(const struct at_unwind_rule *r)
{
	return (uint64_t)r->kind | (uint64_t)r->fp << 8 | (uint64_t)(uint16_t)r->fp_offset << 16 |
	       (uint64_t)(uint32_t)r->cfa_offset << 32;
}

/* Sets idx[i] to the index in t->rules of row i's rule, adding unique rules as they come;
 * rules[0] is AT_UNWIND_NONE. 0, or -1 out of memory or past 65536 rules. */
static int index_rules(struct at_unwind_table *t, const struct rows *rows, uint16_t *idx)
{
	size_t slots = 1024;

	while (slots < 4 * rows->n)
		slots *= 2;
	uint32_t *hash = calloc(slots, sizeof(*hash)); /* rule index + 1, 0 empty */
	t->rules = malloc(65536 * sizeof(*t->rules));
	if (!hash || !t->rules) {
		free(hash);
		return -1;
	}
	t->rules[0] = rule_none;
	t->rule_count = 1;
	for (size_t i = 0; i < rows->n; i++) {
		const struct at_unwind_rule *r = &rows->v[i].rule;
		uint64_t key = rule_key(r);
		size_t h = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 40) & (slots - 1);

		if (r->kind == AT_UNWIND_NONE) {
			idx[i] = 0;
			continue;
		}
		while (hash[h] && rule_key(&t->rules[hash[h] - 1]) != key)
			h = (h + 1) & (slots - 1);
		if (!hash[h]) {
			if (t->rule_count == 65536) {
				free(hash);
				return -1;
			}
			t->rules[t->rule_count] = *r;
			hash[h] = ++t->rule_count;
		}
		idx[i] = (uint16_t)(hash[h] - 1);
	}
	free(hash);
	struct at_unwind_rule *shrunk = realloc(t->rules, t->rule_count * sizeof(*t->rules));
	if (shrunk)
		t->rules = shrunk;
	return 0;
}

/* Cuts the rows into 64 KiB pages: each page with code gets an entry at offset 0 for the rule in
 * effect there, then one per row inside it. 0, or -1 out of memory or for executable segments
 * spread over more than AT_UNWIND_MAX_PAGES pages. */
static int make_pages(struct at_unwind_table *t, const struct rows *rows, const uint16_t *idx)
{
	const struct at_unwind_segment *last = &t->segments[t->segment_count - 1];
	uint64_t first = t->segments[0].vaddr >> AT_UNWIND_PAGE_SHIFT;
	uint64_t end = ((last->vaddr + last->size - 1) >> AT_UNWIND_PAGE_SHIFT) + 1;

	if (end - first > AT_UNWIND_MAX_PAGES)
		return -1;
	t->first_page = first;
	t->page_count = (uint32_t)(end - first);
	t->pages = calloc(t->page_count, sizeof(*t->pages));
	t->entries = malloc((rows->n + t->page_count) * sizeof(*t->entries));
	if (!t->pages || !t->entries)
		return -1;
	size_t r = 0;
	uint16_t in_effect = 0;
	for (uint32_t p = 0; p < t->page_count; p++) {
		uint64_t base = (first + p) << AT_UNWIND_PAGE_SHIFT;
		struct at_unwind_page *pg = &t->pages[p];

		pg->first = t->entry_count;
		if (!(r < rows->n && rows->v[r].addr == base))
			t->entries[t->entry_count++] = (struct at_unwind_entry){ 0, in_effect };
		for (; r < rows->n && rows->v[r].addr < base + AT_UNWIND_PAGE_SIZE; r++) {
			if (rows->v[r].addr < base)
				continue;
			t->entries[t->entry_count++] = (struct at_unwind_entry){
				(uint16_t)(rows->v[r].addr - base), idx[r] };
			in_effect = idx[r];
		}
		pg->count = t->entry_count - pg->first;
		if (pg->count == 1 && t->entries[pg->first].rule == 0) {
			pg->count = 0;
			t->entry_count--;
		}
	}
	return 0;
}

/* --- the table ---------------------------------------------------------------------------- */

/* Unique rules, then pages and entries, from the rows. 0, or -1 with *why. */
static int compact(struct at_unwind_table *t, const struct rows *rows, const char **why)
{
	uint16_t *idx = malloc((rows->n ? rows->n : 1) * sizeof(*idx));
	int rc = -1;

	if (!idx)
		*why = strerror(ENOMEM);
	else if (index_rules(t, rows, idx) < 0)
		*why = "out of memory, or more than 65536 unique rules";
	else if (make_pages(t, rows, idx) < 0)
		*why = "out of memory, or executable segments more than 4 GiB apart";
	else
		rc = 0;
	free(idx);
	return rc;
}

/* Reads the object and builds its table. 0, or -1 with *why. */
static int build(struct object *o, struct at_unwind_table *t, const char **why)
{
	struct rows rows = { 0 };
	int rc = 0;

	GElf_Ehdr eh;

	if (find_segments(o->elf, t) < 0) {
		*why = "no executable segment, too many, or overlapping ones";
		return -1;
	}
	o->entry = gelf_getehdr(o->elf, &eh) ? eh.e_entry : 0;
	o->file = (const uint8_t *)elf_rawfile(o->elf, &o->file_size);
	if ((o->libdw ? read_fde_ranges_libdw(o, &t->stats) : read_fde_ranges_eh(o, &t->stats)) <
	    0) {
		*why = strerror(ENOMEM);
		return -1;
	}
	find_plt_sections(o);
	if (o->libdw) {
		o->cfi = dwarf_getcfi_elf(o->elf);
		if (!o->cfi)
			o->fde_count = 0; /* no usable CFI: the frame-pointer rule everywhere */
	}
	for (uint32_t i = 0; i < t->segment_count && rc == 0; i++) {
		const struct at_unwind_segment *s = &t->segments[i];

		rc = segment_rows(o, t, s->vaddr, s->vaddr + s->size, &rows);
	}
	if (rc < 0)
		*why = strerror(ENOMEM);
	else
		rc = compact(t, &rows, why);
	free(rows.v);
	return rc;
}

/* Builds t from the object at path, its rows from libdw's queries (libdw) or eh_frame.c's. */
static int build_table(const char *path, struct at_unwind_table *t, int libdw, const char **why)
{
	uint64_t t0 = now_ns();
	struct object o = { .libdw = libdw };
	int fd;

	memset(t, 0, sizeof(*t));
	o.elf = open_elf(path, &fd, why);
	if (!o.elf)
		return -1;
	int len = elf_build_id(o.elf, t->build_id);
	struct stat st;
	if (len > 0) {
		t->build_id_len = (uint8_t)len;
	} else if (fstat(fd, &st) == 0) {
		memcpy(t->build_id, &st.st_dev, 8);
		memcpy(t->build_id + 8, &st.st_ino, 8);
	}
	int rc = build(&o, t, why);
	if (o.cfi)
		dwarf_cfi_end(o.cfi);
	at_eh_frame_free(&o.eh);
	free(o.fdes);
	elf_end(o.elf);
	close(fd);
	if (rc < 0)
		at_unwind_table_free(t);
	t->stats.build_ns = now_ns() - t0;
	return rc;
}

int at_unwind_table_build(const char *path, struct at_unwind_table *t, const char **why)
{
	return build_table(path, t, 0, why);
}

int at_unwind_table_build_libdw(const char *path, struct at_unwind_table *t, const char **why)
{
	return build_table(path, t, 1, why);
}

void at_unwind_table_free(struct at_unwind_table *t)
{
	free(t->pages);
	free(t->entries);
	free(t->rules);
	t->pages = NULL;
	t->entries = NULL;
	t->rules = NULL;
	t->page_count = t->entry_count = t->rule_count = 0;
}

size_t at_unwind_table_bytes(const struct at_unwind_table *t)
{
	return t->rule_count * sizeof(*t->rules) + t->page_count * sizeof(*t->pages) +
	       t->entry_count * sizeof(*t->entries);
}

int at_unwind_table_bias(const struct at_unwind_table *t, uint64_t map_start,
			 uint64_t map_offset, int64_t *bias)
{
	for (uint32_t i = 0; i < t->segment_count; i++) {
		const struct at_unwind_segment *s = &t->segments[i];
		/* the mapping starts at the page that holds the segment's first byte */
		uint64_t page_offset = s->offset & ~(uint64_t)4095;

		if (map_offset >= page_offset && map_offset < s->offset + s->size) {
			*bias = (int64_t)(map_start - map_offset + s->offset - s->vaddr);
			return 0;
		}
	}
	return -1;
}

/* --- the cache ---------------------------------------------------------------------------- */

static int same_object(const struct at_unwind_table *t, const uint8_t id[AT_UNWIND_BUILD_ID_MAX],
		       uint8_t len)
{
	return t->build_id_len == len && memcmp(t->build_id, id, AT_UNWIND_BUILD_ID_MAX) == 0;
}

int at_unwind_object_key(const char *path, uint8_t id[AT_UNWIND_BUILD_ID_MAX], uint8_t *len,
			 const char **why)
{
	struct stat st;
	int n;

	memset(id, 0, AT_UNWIND_BUILD_ID_MAX);
	n = at_unwind_read_build_id(path, id);
	if (n < 0) {
		*why = "not a readable ELF file";
		return -1;
	}
	if (n == 0) {
		if (stat(path, &st) < 0) {
			*why = strerror(errno);
			return -1;
		}
		memcpy(id, &st.st_dev, 8);
		memcpy(id + 8, &st.st_ino, 8);
	}
	*len = (uint8_t)n;
	return 0;
}

const struct at_unwind_table *at_unwind_cache_find(const struct at_unwind_cache *c,
						   const uint8_t id[AT_UNWIND_BUILD_ID_MAX],
						   uint8_t len)
{
	for (size_t i = 0; i < c->count; i++)
		if (same_object(c->tables[i], id, len))
			return c->tables[i];
	return NULL;
}

int at_unwind_cache_put(struct at_unwind_cache *c, struct at_unwind_table *t)
{
	if (c->count == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		struct at_unwind_table **v = realloc(c->tables, cap * sizeof(*v));
		if (!v) {
			at_unwind_table_free(t);
			free(t);
			errno = ENOMEM;
			return -1;
		}
		c->tables = v;
		c->cap = cap;
	}
	c->tables[c->count++] = t;
	return 0;
}

const struct at_unwind_table *at_unwind_cache_get(struct at_unwind_cache *c, const char *path,
						  const char **why)
{
	uint8_t id[AT_UNWIND_BUILD_ID_MAX];
	uint8_t len;

	if (at_unwind_object_key(path, id, &len, why) < 0)
		return NULL;
	const struct at_unwind_table *found = at_unwind_cache_find(c, id, len);
	if (found)
		return found;
	struct at_unwind_table *t = malloc(sizeof(*t));
	if (!t) {
		*why = strerror(ENOMEM);
		return NULL;
	}
	if (at_unwind_table_build(path, t, why) < 0) {
		free(t);
		return NULL;
	}
	if (at_unwind_cache_put(c, t) < 0) {
		*why = strerror(ENOMEM);
		return NULL;
	}
	return t;
}

void at_unwind_cache_free(struct at_unwind_cache *c)
{
	for (size_t i = 0; i < c->count; i++) {
		at_unwind_table_free(c->tables[i]);
		free(c->tables[i]);
	}
	free(c->tables);
	memset(c, 0, sizeof(*c));
}
