/* test_daemon_eh_frame.c: the .eh_frame reader and CFA interpreter (daemon/stacks/eh_frame.c).
 *
 * Sections assembled here byte by byte: one case per CFA opcode (the rows it gives and the rule
 * each row reduces to, at_arch_rule_of_row), the augmentations (zR, zPLR, S, none), CIE versions
 * 1, 3 and 4, 64-bit DWARF lengths, the DW_EH_PE encodings of an FDE's address, the zero
 * terminator, and hostile sections (truncated, lengths past the end, CIE pointers out of the
 * section or at an FDE, huge advances, failing programs). Then libdw as the oracle: objects
 * built here from .cfi_* directives and escapes (every opcode, signal frames, personality and
 * LSDA, CIE version 3, gold's linker) and the machine's own objects (libc, ld.so, libstdc++,
 * python3.11, node or libLLVM) give the same table with eh_frame.c as with libdw's queries
 * (at_unwind_table_build_libdw): pages, entries, rules and counts (printed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../daemon/arch/arch.h"
#include "../../daemon/stacks/eh_frame.h"
#include "../../daemon/stacks/unwind_table.h"

#define VADDR 0x10000u /* the section's address */
#define LO 0x1000u    /* every FDE's range: [LO, LO + LEN) */
#define LEN 0x100u

/* --- sections assembled by hand ---------------------------------------------------------- */

struct sec {
	uint8_t b[8192];
	size_t n;
};

static void put(struct sec *s, const void *p, size_t n)
{
	assert_true(s->n + n <= sizeof(s->b));
	if (n)
		memcpy(s->b + s->n, p, n);
	s->n += n;
}

static void le(struct sec *s, uint64_t v, size_t size)
{
	for (size_t i = 0; i < size; i++) {
		uint8_t b = (uint8_t)(v >> (8 * i));
		put(s, &b, 1);
	}
}

static void uleb(struct sec *s, uint64_t v)
{
	do {
		uint8_t b = v & 0x7f;
		v >>= 7;
		if (v)
			b |= 0x80;
		put(s, &b, 1);
	} while (v);
}

static void sleb(struct sec *s, int64_t v)
{
	for (;;) {
		uint8_t b = v & 0x7f;
		v >>= 7;
		if ((v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40))) {
			put(s, &b, 1);
			return;
		}
		b |= 0x80;
		put(s, &b, 1);
	}
}

/* Starts an entry (its length patched by end_entry): its offset. */
static size_t begin(struct sec *s, int dwarf64)
{
	size_t off = s->n;

	if (dwarf64) {
		le(s, 0xffffffff, 4);
		le(s, 0, 8);
	} else {
		le(s, 0, 4);
	}
	return off;
}

static void end(struct sec *s, size_t off, int dwarf64)
{
	uint64_t len = s->n - off - (dwarf64 ? 12 : 4);

	for (size_t i = 0; i < (dwarf64 ? 8u : 4u); i++)
		s->b[off + (dwarf64 ? 4 : 0) + i] = (uint8_t)(len >> (8 * i));
}

/* A CIE's fields. */
struct cie_spec {
	uint8_t version;
	const char *aug;
	const uint8_t *augdata;
	size_t augn;
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra;
	const uint8_t *insns;
	size_t insn_n;
	int dwarf64;
};

/* The usual CIE: version 1, "zR" (pc-relative sdata4), CFA = rsp + 8, return address at CFA - 8. */
static const uint8_t zr_data[] = { 0x1b };
static const uint8_t cie_insns[] = { 0x0c, 0x07, 0x08, 0x90, 0x01 };
static const struct cie_spec usual = { 1, "zR", zr_data, 1, 1, -8, 16, cie_insns, 5, 0 };

/* Appends a CIE: its offset. */
static size_t cie(struct sec *s, const struct cie_spec *c)
{
	size_t off = begin(s, c->dwarf64);

	le(s, 0, c->dwarf64 ? 8 : 4);
	put(s, &c->version, 1);
	put(s, c->aug, strlen(c->aug) + 1);
	if (c->version >= 4) {
		le(s, 8, 1);
		le(s, 0, 1);
	}
	uleb(s, c->code_align);
	sleb(s, c->data_align);
	if (c->version == 1)
		le(s, c->ra, 1);
	else
		uleb(s, c->ra);
	if (c->aug[0] == 'z') {
		uleb(s, c->augn);
		put(s, c->augdata, c->augn);
	}
	put(s, c->insns, c->insn_n);
	end(s, off, c->dwarf64);
	return off;
}

/* Appends a value in DW_EH_PE encoding enc (pc-relative: to its own address). */
static void encoded(struct sec *s, uint8_t enc, uint64_t v, int applied)
{
	static const size_t sizes[16] = { 8, 0, 2, 4, 8, 0, 0, 0, 0, 0, 2, 4, 8 };

	if (applied && (enc & 0x70) == 0x10)
		v -= VADDR + s->n;
	if ((enc & 0x0f) == 0x01)
		uleb(s, v);
	else
		le(s, v, sizes[enc & 0x0f]);
}

/* Appends an FDE of the CIE at cie_off for [lo, lo + len), its CIE's encoding enc, augmentation
 * data (an empty block) if z. */
static void fde(struct sec *s, size_t cie_off, uint8_t enc, int z, uint64_t lo, uint64_t len,
		const uint8_t *insns, size_t n, int dwarf64)
{
	size_t off = begin(s, dwarf64);

	le(s, s->n - cie_off, dwarf64 ? 8 : 4);
	encoded(s, enc, lo, 1);
	encoded(s, enc, len, 0);
	if (z)
		uleb(s, 0);
	put(s, insns, n);
	end(s, off, dwarf64);
}

/* What an FDE's rows were. */
#define MAX_ROWS 8
struct got {
	size_t n;
	uint64_t lo[MAX_ROWS], hi[MAX_ROWS];
	int has_state[MAX_ROWS];
	struct at_cfi_state state[MAX_ROWS];
	struct at_unwind_rule rule[MAX_ROWS];
};

static int collect(void *arg, const struct at_cfi_row *row)
{
	struct got *g = arg;

	assert_true(g->n < MAX_ROWS);
	g->lo[g->n] = row->lo;
	g->hi[g->n] = row->hi;
	g->has_state[g->n] = row->state != NULL;
	if (row->state)
		g->state[g->n] = *row->state;
	g->rule[g->n] = at_arch_rule_of_row(row);
	g->n++;
	return 0;
}

static void read_sec(struct sec *s, struct at_eh_frame *f)
{
	struct at_cfi_state initial;

	at_arch_cfi_initial_state(&initial);
	assert_int_equal(at_eh_frame_read(f, s->b, s->n, VADDR, &initial), 0);
}

/* The rows of FDE i over its whole range. */
static void rows_of(struct at_eh_frame *f, size_t i, struct got *g)
{
	memset(g, 0, sizeof(*g));
	assert_int_equal(at_eh_fde_rows(f, i, f->fdes[i].lo, f->fdes[i].hi, collect, g), 0);
}

/* --- one case per opcode ----------------------------------------------------------------- */

/* A row expected: [lo, hi) as offsets from LO, and its rule. */
struct want {
	uint16_t lo, hi;
	uint8_t kind;
	int32_t cfa_offset;
	uint8_t fp;
	int16_t fp_offset;
};

struct op_case {
	const char *name;
	uint8_t insns[32];
	size_t n;
	struct want rows[4];
	size_t nrows;
};

#define SP AT_UNWIND_CFA_SP
#define FP AT_UNWIND_CFA_FP
#define UNSUP AT_UNWIND_UNSUPPORTED
#define SAME AT_UNWIND_FP_SAME
#define AT_CFA AT_UNWIND_FP_AT_CFA

static const struct op_case op_cases[] = {
	{ "nop", { 0x00, 0x00 }, 2, { { 0, LEN, SP, 8, SAME, 0 } }, 1 },
	{ "advance_loc, def_cfa_offset", { 0x44, 0x0e, 0x10, 0x41, 0x0e, 0x08 }, 6,
	  { { 0, 4, SP, 8, SAME, 0 }, { 4, 5, SP, 16, SAME, 0 }, { 5, LEN, SP, 8, SAME, 0 } }, 3 },
	{ "advance_loc1", { 0x02, 0x20, 0x0e, 0x10 }, 4,
	  { { 0, 0x20, SP, 8, SAME, 0 }, { 0x20, LEN, SP, 16, SAME, 0 } }, 2 },
	{ "advance_loc2", { 0x03, 0x30, 0x00, 0x0e, 0x10 }, 5,
	  { { 0, 0x30, SP, 8, SAME, 0 }, { 0x30, LEN, SP, 16, SAME, 0 } }, 2 },
	{ "advance_loc4", { 0x04, 0x40, 0, 0, 0, 0x0e, 0x10 }, 7,
	  { { 0, 0x40, SP, 8, SAME, 0 }, { 0x40, LEN, SP, 16, SAME, 0 } }, 2 },
	{ "MIPS_advance_loc8", { 0x1d, 0x50, 0, 0, 0, 0, 0, 0, 0, 0x0e, 0x10 }, 11,
	  { { 0, 0x50, SP, 8, SAME, 0 }, { 0x50, LEN, SP, 16, SAME, 0 } }, 2 },
	{ "def_cfa", { 0x0c, 0x06, 0x10 }, 3, { { 0, LEN, FP, 16, SAME, 0 } }, 1 },
	{ "def_cfa_sf", { 0x12, 0x07, 0x7d }, 3, { { 0, LEN, SP, 24, SAME, 0 } }, 1 },
	{ "def_cfa_register", { 0x0d, 0x06 }, 2, { { 0, LEN, FP, 8, SAME, 0 } }, 1 },
	{ "def_cfa_offset_sf", { 0x13, 0x7c }, 2, { { 0, LEN, SP, 32, SAME, 0 } }, 1 },
	{ "def_cfa_expression (ld's PLT)",
	  { 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22 }, 13,
	  { { 0, LEN, AT_UNWIND_PLT, 11, SAME, 0 } }, 1 },
	{ "def_cfa_offset after an expression", { 0x0f, 0x01, 0x77, 0x0e, 0x10 }, 5,
	  { { 0, LEN, UNSUP, 0, 0, 0 } }, 1 },
	{ "offset", { 0x86, 0x02 }, 2, { { 0, LEN, SP, 8, AT_CFA, -16 } }, 1 },
	{ "offset_extended", { 0x05, 0x06, 0x03 }, 3, { { 0, LEN, SP, 8, AT_CFA, -24 } }, 1 },
	{ "offset_extended_sf", { 0x11, 0x06, 0x7e }, 3, { { 0, LEN, SP, 8, AT_CFA, 16 } }, 1 },
	{ "GNU_negative_offset_extended", { 0x2f, 0x06, 0x02 }, 3,
	  { { 0, LEN, SP, 8, AT_CFA, 16 } }, 1 },
	{ "restore", { 0x86, 0x02, 0x41, 0xc6 }, 4,
	  { { 0, 1, SP, 8, AT_CFA, -16 }, { 1, LEN, SP, 8, SAME, 0 } }, 2 },
	{ "restore_extended", { 0x86, 0x02, 0x41, 0x06, 0x06 }, 5,
	  { { 0, 1, SP, 8, AT_CFA, -16 }, { 1, LEN, SP, 8, SAME, 0 } }, 2 },
	{ "undefined return address", { 0x07, 0x10 }, 2, { { 0, LEN, AT_UNWIND_END, 0, 0, 0 } }, 1 },
	{ "same_value", { 0x86, 0x02, 0x08, 0x06 }, 4, { { 0, LEN, SP, 8, SAME, 0 } }, 1 },
	{ "val_offset", { 0x14, 0x06, 0x02 }, 3, { { 0, LEN, UNSUP, 0, 0, 0 } }, 1 },
	{ "val_offset_sf", { 0x15, 0x06, 0x7e }, 3, { { 0, LEN, UNSUP, 0, 0, 0 } }, 1 },
	{ "register", { 0x09, 0x06, 0x03 }, 3, { { 0, LEN, UNSUP, 0, 0, 0 } }, 1 },
	{ "expression", { 0x10, 0x06, 0x02, 0x23, 0x10 }, 5, { { 0, LEN, SP, 8, AT_CFA, 16 } }, 1 },
	{ "val_expression", { 0x16, 0x06, 0x02, 0x23, 0x10 }, 5, { { 0, LEN, UNSUP, 0, 0, 0 } }, 1 },
	{ "remember_state, restore_state", { 0x0a, 0x0e, 0x10, 0x41, 0x0b }, 5,
	  { { 0, 1, SP, 16, SAME, 0 }, { 1, LEN, SP, 8, SAME, 0 } }, 2 },
	{ "restore_state with nothing remembered", { 0x41, 0x0b, 0x41 }, 3,
	  { { 0, 1, SP, 8, SAME, 0 }, { 1, LEN, UNSUP, 0, 0, 0 } }, 2 },
	{ "GNU_args_size", { 0x2e, 0x10 }, 2, { { 0, LEN, SP, 8, SAME, 0 } }, 1 },
	{ "GNU_window_save", { 0x2d }, 1, { { 0, LEN, UNSUP, 0, 0, 0 } }, 1 },
	{ "an advance that does not move", { 0x40, 0x0e, 0x10, 0x42 }, 4,
	  { { 0, 2, SP, 16, SAME, 0 }, { 2, LEN, SP, 16, SAME, 0 } }, 2 },
	{ "an advance past the range", { 0x04, 0, 0, 0, 0x10, 0x0e, 0x10 }, 7,
	  { { 0, LEN, SP, 8, SAME, 0 } }, 1 },
	{ "a huge advance (wraps)", { 0x44, 0x1d, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				      0x0e, 0x20, 0x48 }, 13,
	  { { 0, 4, SP, 8, SAME, 0 }, { 4, 11, SP, 32, SAME, 0 }, { 11, LEN, SP, 32, SAME, 0 } }, 3 },
};

static void test_opcodes(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(op_cases) / sizeof(op_cases[0]); k++) {
		const struct op_case *c = &op_cases[k];
		struct sec s = { .n = 0 };
		struct at_eh_frame f;
		struct got g;

		size_t ci = cie(&s, &usual);
		fde(&s, ci, 0x1b, 1, LO, LEN, c->insns, c->n, 0);
		read_sec(&s, &f);
		assert_int_equal(f.fde_count, 1);
		assert_int_equal(f.unreadable_fdes, 0);
		rows_of(&f, 0, &g);
		if (g.n != c->nrows)
			fail_msg("%s: %zu rows, not %zu", c->name, g.n, c->nrows);
		for (size_t i = 0; i < g.n; i++) {
			const struct want *w = &c->rows[i];
			const struct at_unwind_rule *r = &g.rule[i];

			if (g.lo[i] != LO + w->lo || g.hi[i] != LO + w->hi || r->kind != w->kind ||
			    r->cfa_offset != w->cfa_offset || r->fp != w->fp ||
			    r->fp_offset != w->fp_offset)
				fail_msg("%s, row %zu: [%#lx, %#lx) kind %u cfa %d fp %u %d", c->name,
					 i, (unsigned long)g.lo[i], (unsigned long)g.hi[i], r->kind,
					 r->cfa_offset, r->fp, r->fp_offset);
		}
		at_eh_frame_free(&f);
	}
}

/* Rows asked for from inside the FDE, to an end short of it, are cut to [lo, hi). */
static void test_rows_cut(void **state)
{
	(void)state;
	static const uint8_t insns[] = { 0x44, 0x0e, 0x10, 0x44, 0x0e, 0x18, 0x44, 0x0e, 0x20 };
	struct sec s = { .n = 0 };
	struct at_eh_frame f;
	struct got g = { 0 };

	fde(&s, cie(&s, &usual), 0x1b, 1, LO, LEN, insns, sizeof(insns), 0);
	read_sec(&s, &f);
	assert_int_equal(at_eh_fde_rows(&f, 0, LO + 5, LO + 10, collect, &g), 0);
	assert_int_equal(g.n, 2);
	assert_int_equal(g.lo[0], LO + 5);
	assert_int_equal(g.hi[0], LO + 8);
	assert_int_equal(g.rule[0].cfa_offset, 16);
	assert_int_equal(g.lo[1], LO + 8);
	assert_int_equal(g.hi[1], LO + 10);
	assert_int_equal(g.rule[1].cfa_offset, 24);
	at_eh_frame_free(&f);
}

/* DW_CFA_set_loc (absolute, the CIE's encoding), forward then back: a row ends only where the
 * location passes its start, as libdw's query from that start would end it. */
static void test_set_loc(void **state)
{
	(void)state;
	static const uint8_t abs_data[] = { 0x00 };
	struct cie_spec c = usual;
	struct sec s = { .n = 0 };
	struct at_eh_frame f;
	struct got g;
	uint8_t insns[40];
	size_t n = 0;

	c.augdata = abs_data;
	insns[n++] = 0x01; /* set_loc LO + 0x10 */
	for (int i = 0; i < 8; i++)
		insns[n++] = (uint8_t)((uint64_t)(LO + 0x10) >> (8 * i));
	insns[n++] = 0x0e, insns[n++] = 0x10;
	insns[n++] = 0x01; /* set_loc LO + 4: backwards, no row */
	for (int i = 0; i < 8; i++)
		insns[n++] = (uint8_t)((uint64_t)(LO + 4) >> (8 * i));
	insns[n++] = 0x0e, insns[n++] = 0x20;
	insns[n++] = 0x5c; /* advance 0x1c: to LO + 0x20 */
	insns[n++] = 0x0e, insns[n++] = 0x08;
	fde(&s, cie(&s, &c), 0x00, 1, LO, LEN, insns, n, 0);
	read_sec(&s, &f);
	rows_of(&f, 0, &g);
	assert_int_equal(g.n, 3);
	assert_int_equal(g.hi[0], LO + 0x10);
	assert_int_equal(g.rule[0].cfa_offset, 8);
	assert_int_equal(g.hi[1], LO + 0x20);
	assert_int_equal(g.rule[1].cfa_offset, 32);
	assert_int_equal(g.hi[2], LO + LEN);
	assert_int_equal(g.rule[2].cfa_offset, 8);
	at_eh_frame_free(&f);
}

/* --- CIEs: augmentations, versions, lengths, encodings ---------------------------------- */

struct cie_case {
	const char *name;
	struct cie_spec cie;
	uint8_t enc; /* the FDE's encoding of its address */
	int kept;    /* 1 kept, 0 unreadable */
	uint8_t kind;
	int signal;
};

static const uint8_t zplr_data[] = { 0x9b, 0, 0, 0, 0, 0x1b, 0x1b }; /* P (indirect pcrel), L, R */
static const uint8_t udata4_data[] = { 0x03 }, udata2_data[] = { 0x02 }, udata8_data[] = { 0x04 };
static const uint8_t sdata4_data[] = { 0x0b }, datarel_data[] = { 0x3b }, uleb_data[] = { 0x01 };
static const uint8_t indirect_data[] = { 0x80 }, zl_short_data[] = { 0x1b };
/* the signal frame of glibc's __restore_rt: CFA = [rsp + 160], rip at rsp + 168, rbp at
 * rsp + 120 */
static const uint8_t sig_insns[] = { 0x0f, 0x04, 0x77, 0xa0, 0x01, 0x06, 0x10, 0x10, 0x03,
				     0x77, 0xa8, 0x01, 0x10, 0x06, 0x03, 0x77, 0xf8, 0x00 };

static const struct cie_case cie_cases[] = {
	{ "zR", { 1, "zR", zr_data, 1, 1, -8, 16, cie_insns, 5, 0 }, 0x1b, 1, SP, 0 },
	{ "zPLR", { 1, "zPLR", zplr_data, 7, 1, -8, 16, cie_insns, 5, 0 }, 0x1b, 1, SP, 0 },
	{ "no augmentation (absptr)", { 1, "", NULL, 0, 1, -8, 16, cie_insns, 5, 0 }, 0x00, 1, SP, 0 },
	{ "version 3", { 3, "zR", zr_data, 1, 1, -8, 16, cie_insns, 5, 0 }, 0x1b, 1, SP, 0 },
	{ "version 3, a column past 127", { 3, "zR", zr_data, 1, 1, -8, 0x4010, cie_insns, 5,
						 0 }, 0x1b, 1, UNSUP, 0 },
	{ "version 4", { 4, "zR", zr_data, 1, 1, -8, 16, cie_insns, 5, 0 }, 0x1b, 1, SP, 0 },
	{ "64-bit DWARF", { 1, "zR", zr_data, 1, 1, -8, 16, cie_insns, 5, 1 }, 0x1b, 1, SP, 0 },
	{ "udata4", { 1, "zR", udata4_data, 1, 1, -8, 16, cie_insns, 5, 0 }, 0x03, 1, SP, 0 },
	{ "udata2", { 1, "zR", udata2_data, 1, 1, -8, 16, cie_insns, 5, 0 }, 0x02, 1, SP, 0 },
	{ "udata8", { 1, "zR", udata8_data, 1, 1, -8, 16, cie_insns, 5, 0 }, 0x04, 1, SP, 0 },
	{ "sdata4", { 1, "zR", sdata4_data, 1, 1, -8, 16, cie_insns, 5, 0 }, 0x0b, 1, SP, 0 },
	{ "S (signal frame)", { 1, "zRS", zr_data, 1, 1, -8, 16, sig_insns, sizeof(sig_insns), 0 },
	  0x1b, 1, AT_UNWIND_SIGNAL, 1 },
	{ "the return address elsewhere", { 1, "zR", zr_data, 1, 1, -8, 15, cie_insns, 5, 0 }, 0x1b,
	  1, UNSUP, 0 },
	{ "datarel: unreadable", { 1, "zR", datarel_data, 1, 1, -8, 16, cie_insns, 5, 0 }, 0x3b, 0,
	  0, 0 },
	{ "uleb128: unreadable", { 1, "zR", uleb_data, 1, 1, -8, 16, cie_insns, 5, 0 }, 0x01, 0, 0,
	  0 },
	{ "absolute indirect: unreadable", { 1, "zR", indirect_data, 1, 1, -8, 16, cie_insns, 5, 0 },
	  0x80, 0,
	  0, 0 },
	{ "unknown letter: unreadable", { 1, "zXR", zr_data, 1, 1, -8, 16, cie_insns, 5, 0 }, 0x1b,
	  0, 0, 0 },
	{ "no z, a letter: unreadable", { 1, "R", NULL, 0, 1, -8, 16, cie_insns, 5, 0 }, 0x00, 0, 0,
	  0 },
	{ "version 2: unreadable", { 2, "zR", zr_data, 1, 1, -8, 16, cie_insns, 5, 0 }, 0x1b, 0, 0,
	  0 },
	{ "zRL, no byte for L: unreadable", { 1, "zRL", zl_short_data, 1, 1, -8, 16, cie_insns, 5,
					      0 }, 0x1b, 0, 0, 0 },
	{ "zBL, no byte for L (libdw refuses the CIE when it uses it)", { 1, "zBL", NULL, 0, 1, -8,
		16, cie_insns, 5, 0 }, 0x00, 1, UNSUP, 0 },
};

static void test_cies(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(cie_cases) / sizeof(cie_cases[0]); k++) {
		const struct cie_case *c = &cie_cases[k];
		struct sec s = { .n = 0 };
		struct at_eh_frame f;
		struct got g;

		size_t ci = cie(&s, &c->cie);
		fde(&s, ci, c->enc, c->cie.aug[0] == 'z', LO, LEN, NULL, 0, c->cie.dwarf64);
		read_sec(&s, &f);
		if (f.fde_count != (size_t)c->kept || f.unreadable_fdes != (uint32_t)!c->kept)
			fail_msg("%s: %zu kept, %u unreadable", c->name, f.fde_count,
				 f.unreadable_fdes);
		if (c->kept) {
			assert_int_equal(f.fdes[0].lo, LO);
			assert_int_equal(f.fdes[0].hi, LO + LEN);
			rows_of(&f, 0, &g);
			assert_int_equal(g.n, 1);
			if (g.rule[0].kind != c->kind)
				fail_msg("%s: kind %u, not %u", c->name, g.rule[0].kind, c->kind);
			if (c->signal) {
				assert_int_equal(g.rule[0].cfa_offset, 160);
				assert_int_equal(g.rule[0].fp, AT_UNWIND_FP_AT_SP);
				assert_int_equal(g.rule[0].fp_offset, 120);
			}
		}
		at_eh_frame_free(&f);
	}
}

/* --- the walk, and hostile sections -------------------------------------------------------- */

/* Three FDEs, sorted by address whatever their order in the section, the zero terminator ending
 * the walk (an FDE after it is not read). */
static void test_walk_and_terminator(void **state)
{
	(void)state;
	struct sec s = { .n = 0 };
	struct at_eh_frame f;

	size_t ci = cie(&s, &usual);
	fde(&s, ci, 0x1b, 1, 0x3000, 0x10, NULL, 0, 0);
	fde(&s, ci, 0x1b, 1, 0x1000, 0x10, NULL, 0, 0);
	fde(&s, ci, 0x1b, 1, 0x2000, 0x10, NULL, 0, 0);
	le(&s, 0, 4);
	fde(&s, ci, 0x1b, 1, 0x4000, 0x10, NULL, 0, 0);
	read_sec(&s, &f);
	assert_int_equal(f.fde_count, 3);
	assert_int_equal(f.fdes[0].lo, 0x1000);
	assert_int_equal(f.fdes[1].lo, 0x2000);
	assert_int_equal(f.fdes[2].lo, 0x3000);
	at_eh_frame_free(&f);
}

/* Hostile sections: each must read without a fault, keeping exactly the FDEs it says. */
enum hostile {
	TRUNCATED,        /* the section ends inside the second FDE */
	LENGTH_PAST_END,  /* an FDE's length runs past the section */
	POINTER_OUT,      /* a CIE pointer before the section's start: skipped */
	POINTER_AT_FDE,   /* a CIE pointer at an FDE (itself): unreadable */
	ZERO_RANGE,       /* an empty range: unreadable */
	FAR_REGISTER,     /* register 2^26 */
	MANY_STATES,      /* 65 remembered states */
	UNKNOWN_OPCODE,   /* DW_CFA 0x3f */
	LONG_LEB,         /* an 11-byte ULEB128 */
	OPERAND_PAST_END, /* def_cfa_expression's block past the FDE's end */
	CIE_ADVANCE,      /* an advance in a CIE's program: libdw has no frame */
	CIE_RESTORE,      /* a restore in a CIE's program: libdw has no frame */
	HUGE_ALIGN,       /* a code alignment of 2^63: every advance wraps or stays */
	SHORT_64BIT,      /* a 64-bit length cut short */
	HOSTILE_CASES
};

struct hostile_want {
	size_t kept;
	uint32_t unreadable;
	uint8_t kind; /* the first kept FDE's first row */
};

static const struct hostile_want hostile_wants[HOSTILE_CASES] = {
	[TRUNCATED] = { 1, 0, SP },       [LENGTH_PAST_END] = { 1, 0, SP },
	[POINTER_OUT] = { 1, 0, SP },     [POINTER_AT_FDE] = { 1, 1, SP },
	[ZERO_RANGE] = { 1, 1, SP },      [FAR_REGISTER] = { 1, 1, SP },
	[MANY_STATES] = { 1, 1, SP },     [UNKNOWN_OPCODE] = { 1, 1, SP },
	[LONG_LEB] = { 1, 1, SP },        [OPERAND_PAST_END] = { 1, 1, SP },
	[CIE_ADVANCE] = { 1, 0, UNSUP },  [CIE_RESTORE] = { 1, 0, UNSUP },
	[HUGE_ALIGN] = { 1, 0, SP },      [SHORT_64BIT] = { 1, 0, SP },
};

/* Builds hostile case h: a good FDE first, then the hostile part. */
static void hostile_section(enum hostile h, struct sec *s)
{
	static const uint8_t far_reg[] = { 0x05, 0x80, 0x80, 0x80, 0x20, 0x08 };
	static const uint8_t unknown[] = { 0x3f };
	static const uint8_t long_leb[] = { 0x0e, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
					    0x80, 0x80, 0x00 };
	static const uint8_t past[] = { 0x0f, 0x40, 0x77 };
	static const uint8_t cie_adv[] = { 0x0c, 0x07, 0x08, 0x90, 0x01, 0x41 };
	static const uint8_t cie_rest[] = { 0x0c, 0x07, 0x08, 0x90, 0x01, 0xc6 };
	static const uint8_t adv[] = { 0x41, 0x0e, 0x10, 0x41 };
	uint8_t states[65];
	struct cie_spec c = usual;
	size_t ci, at;

	memset(states, 0x0a, sizeof(states));
	if (h == CIE_ADVANCE || h == CIE_RESTORE) {
		c.insns = h == CIE_ADVANCE ? cie_adv : cie_rest;
		c.insn_n = 6;
	}
	if (h == HUGE_ALIGN)
		c.code_align = (uint64_t)1 << 63;
	ci = cie(s, &c);
	fde(s, ci, 0x1b, 1, LO, LEN, h == HUGE_ALIGN ? adv : NULL, h == HUGE_ALIGN ? 4 : 0, 0);
	switch (h) {
	case TRUNCATED:
		fde(s, ci, 0x1b, 1, 0x2000, 0x10, NULL, 0, 0);
		s->n -= 5;
		break;
	case LENGTH_PAST_END:
		at = s->n;
		fde(s, ci, 0x1b, 1, 0x2000, 0x10, NULL, 0, 0);
		s->b[at] = 0xf0;
		break;
	case POINTER_OUT:
		at = s->n;
		fde(s, ci, 0x1b, 1, 0x2000, 0x10, NULL, 0, 0);
		s->b[at + 4] = 0xff, s->b[at + 5] = 0xff, s->b[at + 6] = 0, s->b[at + 7] = 0;
		break;
	case POINTER_AT_FDE:
		at = s->n;
		fde(s, ci, 0x1b, 1, 0x2000, 0x10, NULL, 0, 0);
		s->b[at + 4] = 4, s->b[at + 5] = 0; /* its own offset */
		break;
	case ZERO_RANGE: fde(s, ci, 0x1b, 1, 0x2000, 0, NULL, 0, 0); break;
	case FAR_REGISTER: fde(s, ci, 0x1b, 1, 0x2000, 0x10, far_reg, sizeof(far_reg), 0); break;
	case MANY_STATES: fde(s, ci, 0x1b, 1, 0x2000, 0x10, states, sizeof(states), 0); break;
	case UNKNOWN_OPCODE: fde(s, ci, 0x1b, 1, 0x2000, 0x10, unknown, 1, 0); break;
	case LONG_LEB: fde(s, ci, 0x1b, 1, 0x2000, 0x10, long_leb, sizeof(long_leb), 0); break;
	case OPERAND_PAST_END: fde(s, ci, 0x1b, 1, 0x2000, 0x10, past, sizeof(past), 0); break;
	case SHORT_64BIT:
		le(s, 0xffffffff, 4);
		le(s, 0x10, 3);
		break;
	default:
		break;
	}
}

static void test_hostile_sections(void **state)
{
	(void)state;
	for (int h = 0; h < HOSTILE_CASES; h++) {
		const struct hostile_want *w = &hostile_wants[h];
		struct sec s = { .n = 0 };
		struct at_eh_frame f;
		struct got g;

		hostile_section((enum hostile)h, &s);
		read_sec(&s, &f);
		if (f.fde_count != w->kept || f.unreadable_fdes != w->unreadable)
			fail_msg("hostile case %d: %zu kept, %u unreadable", h, f.fde_count,
				 f.unreadable_fdes);
		rows_of(&f, 0, &g);
		if (g.rule[0].kind != w->kind)
			fail_msg("hostile case %d: kind %u", h, g.rule[0].kind);
		if (h == HUGE_ALIGN) { /* advances of 2^63: to LO + 2^63 (past), then wraps to LO */
			assert_int_equal(g.n, 1);
			assert_int_equal(g.hi[0], LO + LEN);
		}
		at_eh_frame_free(&f);
	}
}

/* An empty or absent section: no FDE. */
static void test_empty_section(void **state)
{
	(void)state;
	struct at_eh_frame f;
	struct at_cfi_state initial;
	static const uint8_t four[4] = { 0 };

	at_arch_cfi_initial_state(&initial);
	assert_int_equal(at_eh_frame_read(&f, NULL, 0, 0, &initial), 0);
	assert_int_equal(f.fde_count, 0);
	at_eh_frame_free(&f);
	assert_int_equal(at_eh_frame_read(&f, four, sizeof(four), 0, &initial), 0);
	assert_int_equal(f.fde_count, 0);
	at_eh_frame_free(&f);
}

/* --- libdw as the oracle ------------------------------------------------------------------ */

/* Asserts that path's tables built both ways are the same (build times aside); prints them. */
static void assert_same_as_libdw(const char *path)
{
	struct at_unwind_table a, b;
	const char *why = NULL;

	if (at_unwind_table_build(path, &a, &why) < 0)
		fail_msg("%s: %s", path, why);
	if (at_unwind_table_build_libdw(path, &b, &why) < 0)
		fail_msg("%s (libdw): %s", path, why);
	printf("# %s: %u rows (%u unsupported), %u FDEs (%u unreadable), %u pages, %u entries, "
	       "%u rules; %.1f ms, libdw %.1f ms\n",
	       path, a.stats.rows, a.stats.unsupported_rows, a.stats.fdes, a.stats.unreadable_fdes,
	       a.page_count, a.entry_count, a.rule_count, a.stats.build_ns / 1e6,
	       b.stats.build_ns / 1e6);
	a.stats.build_ns = b.stats.build_ns = 0;
	assert_memory_equal(&a.stats, &b.stats, sizeof(a.stats));
	assert_int_equal(a.first_page, b.first_page);
	assert_int_equal(a.page_count, b.page_count);
	assert_int_equal(a.entry_count, b.entry_count);
	assert_int_equal(a.rule_count, b.rule_count);
	assert_int_equal(a.segment_count, b.segment_count);
	assert_memory_equal(a.pages, b.pages, a.page_count * sizeof(*a.pages));
	assert_memory_equal(a.entries, b.entries, a.entry_count * sizeof(*a.entries));
	assert_memory_equal(a.rules, b.rules, a.rule_count * sizeof(*a.rules));
	at_unwind_table_free(&a);
	at_unwind_table_free(&b);
}

/* Every opcode as .cfi_* directives or escapes, one function each, with a personality and an
 * LSDA for some (zPLR), a signal frame (S), and CIE version 3. */
#define FN(name, body) \
	".globl " name "\\n.type " name ",@function\\n" name ":\\n.cfi_startproc\\n" body \
	".cfi_endproc\\n"
static const char asm_src[] =
	"__asm__(\".text\\n"
	FN("f_push", "push %rbp\\n.cfi_def_cfa_offset 16\\n.cfi_offset %rbp,-16\\nmov %rsp,%rbp\\n"
		     ".cfi_def_cfa_register %rbp\\nnop\\npop %rbp\\n.cfi_def_cfa %rsp,8\\nret\\n")
	FN("f_states", "push %rbx\\n.cfi_adjust_cfa_offset 8\\n.cfi_remember_state\\n"
		       "pop %rbx\\n.cfi_adjust_cfa_offset -8\\nret\\n.cfi_restore_state\\nnop\\n"
		       "pop %rbx\\n.cfi_restore %rbx\\n.cfi_def_cfa_offset 8\\nret\\n")
	FN("f_escapes", "nop\\n.cfi_escape 0x12,0x07,0x7e\\nnop\\n.cfi_escape 0x13,0x7d\\nnop\\n"
			".cfi_escape 0x05,0x06,0x03\\nnop\\n.cfi_escape 0x11,0x06,0x7e\\nnop\\n"
			".cfi_escape 0x2f,0x06,0x02\\nnop\\n.cfi_escape 0x06,0x06\\nnop\\n"
			".cfi_escape 0x14,0x06,0x02\\nnop\\n.cfi_escape 0x15,0x06,0x7e\\nnop\\n"
			".cfi_escape 0x09,0x06,0x03\\nnop\\n.cfi_escape 0x10,0x06,0x02,0x23,0x10\\n"
			"nop\\n.cfi_escape 0x16,0x06,0x02,0x23,0x10\\nnop\\n"
			".cfi_escape 0x08,0x06\\nnop\\n.cfi_escape 0x2e,0x10\\nnop\\n"
			".cfi_escape 0x00\\nnop\\n.cfi_escape 0x07,0x10\\nnop\\n"
			".cfi_escape 0x0c,0x07,0x08\\nnop\\n.cfi_escape 0x2d\\nnop\\nret\\n")
	FN("f_plt", ".cfi_escape 0x0f,0x0b,0x77,0x08,0x80,0x00,0x3f,0x1a,0x3b,0x2a,0x33,0x24,0x22\\n"
		    "nop\\n.cfi_escape 0x0f,0x01,0x77\\nnop\\n.cfi_escape 0x0e,0x10\\nnop\\n"
		    ".cfi_escape 0x0c,0x07,0x08\\nnop\\n.cfi_escape 0x0b\\nnop\\nret\\n")
	FN("f_advances", ".cfi_def_cfa_offset 16\\n.skip 300,0x90\\n.cfi_def_cfa_offset 24\\n"
			 ".skip 70000,0x90\\n.cfi_def_cfa_offset 8\\nret\\n")
	FN("f_lsda", ".cfi_personality 0x1b,pers\\n.cfi_lsda 0x1b,lsda\\n"
		     "push %rbp\\n.cfi_def_cfa_offset 16\\npop %rbp\\n.cfi_def_cfa_offset 8\\nret\\n")
	FN("f_signal", ".cfi_signal_frame\\n"
		       ".cfi_escape 0x0f,0x04,0x77,0xa0,0x01,0x06\\n"
		       ".cfi_escape 0x10,0x10,0x03,0x77,0xa8,0x01\\n"
		       ".cfi_escape 0x10,0x06,0x03,0x77,0xf8,0x00\\nnop\\nmov $15,%rax\\nsyscall\\n")
	"pers: ret\\n"
	".section .gcc_except_table,\\\"a\\\"\\nlsda: .byte 0xff,0x03,0x01,0x00\\n"
	".text\\n\");\n"
	"int good(int x) { return x * 3 + 1; }\n";

/* Writes src to dir/name.c, builds it with opts into dir/name. 0, or -1 if cc fails. */
static int build(const char *dir, const char *src, const char *opts, const char *name,
		 char *out, size_t size)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "%s/%s.c", dir, name);
	FILE *f = fopen(cmd, "w");
	assert_non_null(f);
	fputs(src, f);
	fclose(f);
	snprintf(out, size, "%s/%s", dir, name);
	snprintf(cmd, sizeof(cmd), "cc %s -o %s %s/%s.c 2>&1", opts, out, dir, name);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_opcodes_against_libdw(void **state)
{
	(void)state;
	char dir[] = "/tmp/test_daemon_eh_frame.XXXXXX", so[256], so3[256], cmd[512];

	assert_non_null(mkdtemp(dir));
	assert_int_equal(build(dir, asm_src, "-O2 -shared -fPIC -nostdlib", "ops.so", so,
			       sizeof(so)), 0);
	assert_same_as_libdw(so);
	/* the same with CIE version 3 (DWARF 3's ULEB128 return address column) */
	assert_int_equal(build(dir, asm_src, "-O2 -shared -fPIC -nostdlib -Wa,--gdwarf-cie-version=3",
			       "ops3.so", so3, sizeof(so3)), 0);
	assert_same_as_libdw(so3);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static const char c_src[] =
	"#include <stdio.h>\n#include <stdlib.h>\n"
	"static void *volatile sink;\n"
	"__attribute__((noinline)) void c3(unsigned n) { sink = malloc(n); free(sink); }\n"
	"__attribute__((noinline)) void c2(unsigned n) { volatile char b[64]; b[n % 64] = 1; "
	"c3(n + b[0]); }\n"
	"int main(int argc, char **argv) { (void)argv; c2((unsigned)argc); "
	"printf(\"%p\\n\", sink); return 0; }\n";

/* A -O2 C program linked by GNU ld, and by GNU gold where it is installed. */
static void test_c_programs_against_libdw(void **state)
{
	(void)state;
	char dir[] = "/tmp/test_daemon_eh_frame.XXXXXX", exe[256], cmd[512];

	assert_non_null(mkdtemp(dir));
	assert_int_equal(build(dir, c_src, "-O2", "o2", exe, sizeof(exe)), 0);
	assert_same_as_libdw(exe);
	if (access("/usr/bin/ld.gold", X_OK) == 0) {
		assert_int_equal(build(dir, c_src, "-O2 -fuse-ld=gold", "gold", exe, sizeof(exe)), 0);
		assert_same_as_libdw(exe);
	} else {
		printf("# no ld.gold: the gold-linked program skipped\n");
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* The machine's own objects; node (or the biggest of the LLVM libraries) when installed. */
static void test_system_objects_against_libdw(void **state)
{
	(void)state;
	static const char *const objects[] = {
		"/lib/" AT_MULTIARCH "/libc.so.6",
		"/lib64/ld-linux-x86-64.so.2",
		"/lib/" AT_MULTIARCH "/libstdc++.so.6",
		"/usr/bin/python3.11",
	};
	static const char *const big[] = {
		"/usr/bin/node",
		"/usr/lib/" AT_MULTIARCH "/libLLVM-15.so.1",
		"/usr/lib/" AT_MULTIARCH "/libLLVM-14.so.1",
	};

	for (size_t i = 0; i < sizeof(objects) / sizeof(objects[0]); i++)
		assert_same_as_libdw(objects[i]);
	for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++)
		if (access(big[i], R_OK) == 0) {
			assert_same_as_libdw(big[i]);
			return;
		}
	printf("# neither node nor libLLVM: no big C++ object compared\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opcodes),
		cmocka_unit_test(test_rows_cut),
		cmocka_unit_test(test_set_loc),
		cmocka_unit_test(test_cies),
		cmocka_unit_test(test_walk_and_terminator),
		cmocka_unit_test(test_hostile_sections),
		cmocka_unit_test(test_empty_section),
		cmocka_unit_test(test_opcodes_against_libdw),
		cmocka_unit_test(test_c_programs_against_libdw),
		cmocka_unit_test(test_system_objects_against_libdw),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
