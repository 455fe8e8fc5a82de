/* eh_frame.c: .eh_frame's CIEs and FDEs, and their CFA programs run once per FDE (eh_frame.h).
 *
 * The walk follows the layout of the LSB's exception frames (DWARF's CFI with .eh_frame's CIE
 * pointers and pointer encodings), read the way libdw reads it, entry by entry: a length (0: the
 * terminator; 0xffffffff: a 64-bit one follows), a CIE id or pointer, then the CIE's or FDE's
 * fields. The interpreter keeps the state of one row and a stack of remembered ones; a row ends
 * where the location moves past the address the row started at, as a query of libdw's at that
 * address would end it. */
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "eh_frame.h"
#include "prim.h"

/* --- LEB128 and encoded values ----------------------------------------------------------- */

uint64_t at_cfi_uleb(const uint8_t **p, const uint8_t *end)
{
	size_t max = (size_t)(end - *p) < 10 ? (size_t)(end - *p) : 10;
	uint64_t v = 0;

	for (size_t i = 0; i < max; i++) {
		uint8_t b = *(*p)++;

		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80))
			return v;
	}
	return UINT64_MAX;
}

int64_t at_cfi_sleb(const uint8_t **p, const uint8_t *end)
{
	size_t max = (size_t)(end - *p) < 9 ? (size_t)(end - *p) : 9;
	uint64_t v = 0;

	for (size_t i = 0; i < max; i++) {
		uint8_t b = *(*p)++;

		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			if (b & 0x40)
				v |= ~(uint64_t)0 << (7 * (i + 1));
			return (int64_t)v;
		}
	}
	if (*p == end)
		return INT64_MAX;
	uint8_t b = *(*p)++; /* a tenth byte: only its low bit (the sign) is left */
	if (b & 0x80)
		return INT64_MAX;
	return (int64_t)(v | (uint64_t)b << 63);
}

/* Reads size bytes little-endian at p. */
static uint64_t read_le(const uint8_t *p, size_t size)
{
	uint64_t v = 0;

	for (size_t i = 0; i < size; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

int at_eh_read_encoded(const uint8_t **p, const uint8_t *end, uint8_t enc, uint64_t field_addr,
		       int applied, uint64_t *value)
{
	const uint8_t *s = *p;
	uint64_t v;
	size_t size;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: size = 8; break;
	case DW_EH_PE_udata2: case DW_EH_PE_sdata2: size = 2; break;
	case DW_EH_PE_udata4: case DW_EH_PE_sdata4: size = 4; break;
	case DW_EH_PE_udata8: case DW_EH_PE_sdata8: size = 8; break;
	default: return -1;
	}
	if ((size_t)(end - s) < size)
		return -1;
	v = read_le(s, size);
	if ((enc & 0x0f) == DW_EH_PE_sdata2)
		v = (uint64_t)(int64_t)(int16_t)v;
	else if ((enc & 0x0f) == DW_EH_PE_sdata4)
		v = (uint64_t)(int64_t)(int32_t)v;
	if (applied) {
		if ((enc & 0x70) == DW_EH_PE_pcrel)
			v += field_addr;
		else if ((enc & 0x70) != DW_EH_PE_absptr || (enc & DW_EH_PE_indirect))
			return -1;
	}
	*p = s + size;
	*value = v;
	return 0;
}

int at_eh_cie_fde_encoding(const char *a, const uint8_t *d, size_t size)
{
	const uint8_t *end = d + size;

	if (a[0] != 'z')
		return a[0] == '\0' ? DW_EH_PE_absptr : -1;
	for (a++; *a; a++) {
		uint64_t ignored;

		switch (*a) {
		case 'R':
			return d < end ? *d : -1;
		case 'L': /* its byte is not checked here: libdw checks it when it uses the CIE */
			d++;
			break;
		case 'P':
			if (d >= end)
				return -1;
			uint8_t enc = *d++;
			if (at_eh_read_encoded(&d, end, enc, 0, 0, &ignored) < 0)
				return -1;
			break;
		case 'S': case 'B': case 'G':
			break;
		default:
			return -1;
		}
	}
	return DW_EH_PE_absptr;
}

/* --- screening ------------------------------------------------------------------------------ */

/* Reads an unsigned LEB128 of at most 64 bits at *p (before end) into *v: 0, or -1. */
static int read_uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t r = 0;

	for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
		uint8_t b = *(*p)++;
		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return -1;
}

/* Reads a register operand: 0 when it is at most AT_CFI_REGISTER_MAX. */
static int read_register(const uint8_t **p, const uint8_t *end)
{
	uint64_t reg;

	return read_uleb(p, end, &reg) == 0 && reg <= AT_CFI_REGISTER_MAX ? 0 : -1;
}

/* Skips n bytes of operand: 0, or -1 past end. */
static int skip(const uint8_t **p, const uint8_t *end, uint64_t n)
{
	if ((uint64_t)(end - *p) < n)
		return -1;
	*p += n;
	return 0;
}

/* The operands after a low opcode (the DW_CFA_* below 0x40): registers checked, the rest
 * skipped; set_loc's address in the FDE encoding enc. 0, or -1 for an opcode not known, an
 * operand past end or a register past the limit. */
static int cfa_operands(uint8_t op, const uint8_t **p, const uint8_t *end, int enc)
{
	uint64_t n;

	switch (op) {
	case DW_CFA_nop: case DW_CFA_remember_state: case DW_CFA_restore_state:
	case DW_CFA_GNU_window_save:
		return 0;
	case DW_CFA_set_loc:
		return enc < 0 ? -1 : at_eh_read_encoded(p, end, (uint8_t)enc, 0, 0, &n);
	case DW_CFA_advance_loc1: return skip(p, end, 1);
	case DW_CFA_advance_loc2: return skip(p, end, 2);
	case DW_CFA_advance_loc4: return skip(p, end, 4);
	case DW_CFA_MIPS_advance_loc8: return skip(p, end, 8);
	case DW_CFA_def_cfa_offset: case DW_CFA_def_cfa_offset_sf: case DW_CFA_GNU_args_size:
		return read_uleb(p, end, &n); /* a SLEB128 is skipped as a ULEB128 is */
	case DW_CFA_def_cfa_expression:
		return read_uleb(p, end, &n) < 0 ? -1 : skip(p, end, n);
	case DW_CFA_restore_extended: case DW_CFA_undefined: case DW_CFA_same_value:
	case DW_CFA_def_cfa_register:
		return read_register(p, end);
	case DW_CFA_offset_extended: case DW_CFA_def_cfa: case DW_CFA_offset_extended_sf:
	case DW_CFA_def_cfa_sf: case DW_CFA_val_offset: case DW_CFA_val_offset_sf:
	case DW_CFA_GNU_negative_offset_extended:
		return read_register(p, end) < 0 ? -1 : read_uleb(p, end, &n);
	case DW_CFA_register:
		return read_register(p, end) < 0 ? -1 : read_register(p, end);
	case DW_CFA_expression: case DW_CFA_val_expression:
		if (read_register(p, end) < 0 || read_uleb(p, end, &n) < 0)
			return -1;
		return skip(p, end, n);
	default:
		return -1;
	}
}

int at_cfi_program_fits(const uint8_t *p, const uint8_t *end, int enc)
{
	unsigned remembered = 0;

	while (p < end) {
		uint8_t op = *p++;

		if ((op & 0xc0) == DW_CFA_offset) { /* register in the low bits (< 64), an offset */
			uint64_t n;
			if (read_uleb(&p, end, &n) < 0)
				return 0;
		} else if ((op & 0xc0) == 0 && cfa_operands(op, &p, end, enc) < 0) {
			return 0;
		}
		if (op == DW_CFA_remember_state && ++remembered > AT_CFI_REMEMBER_MAX)
			return 0;
	}
	return 1;
}

int at_eh_fde_program(const uint8_t *p, const uint8_t *end, int enc, int augmented,
		      const uint8_t **insns)
{
	uint64_t v;

	if (enc < 0 || at_eh_read_encoded(&p, end, (uint8_t)enc, 0, 0, &v) < 0 ||
	    at_eh_read_encoded(&p, end, (uint8_t)enc, 0, 0, &v) < 0)
		return -1;
	if (augmented && (read_uleb(&p, end, &v) < 0 || skip(&p, end, v) < 0))
		return -1;
	*insns = p;
	return 0;
}

/* --- the interpreter ---------------------------------------------------------------------- */

/* One run of a program: a CIE's initial instructions, or an FDE's rows from cur to hi. */
struct run {
	struct at_eh_frame *f;
	const struct at_eh_cie *cie;
	int in_cie;          /* a CIE's program: no advance, no restore */
	unsigned depth;      /* f->stack[depth] is the current state */
	uint64_t loc;        /* the program's location */
	uint64_t cur, hi;    /* the next row starts at cur; rows end at hi */
	at_cfi_row_fn fn;
	void *arg;
	int rc;              /* fn's return, when it stopped the rows */
};

/* Gives the row [r->cur, to) with state (NULL: no frame). 0, or fn's non-zero return. */
static int emit(struct run *r, uint64_t to, const struct at_cfi_state *state)
{
	struct at_cfi_row row = { r->cur, to, state, r->cie->ra_register, r->cie->signal_frame };

	r->rc = r->fn(r->arg, &row);
	return r->rc;
}

static void set_reg(struct at_cfi_state *s, uint64_t reg, uint8_t rule, uint64_t value,
		    const uint8_t *expr, uint64_t len)
{
	if (reg < AT_CFI_REGS)
		s->regs[reg] = (struct at_cfi_reg){ rule, value, expr, len };
}

/* DW_CFA_def_cfa_register and _offset need an offset rule already (libdw's require_cfa_offset):
 * on an expression the CFA becomes invalid. */
static void require_cfa_offset(struct at_cfi_state *s)
{
	if (s->cfa_rule != AT_CFI_CFA_OFFSET)
		s->cfa_rule = AT_CFI_CFA_INVALID;
}

/* A register's expression block: ULEB128 length, bytes (checked by the screening). */
static void read_block(const uint8_t **p, const uint8_t *end, const uint8_t **expr, uint64_t *len)
{
	*len = at_cfi_uleb(p, end);
	if (*len > (uint64_t)(end - *p))
		*len = (uint64_t)(end - *p);
	*expr = *p;
	*p += *len;
}

/* DW_CFA_GNU_window_save: SPARC's shorthand, as libdw reads it on every machine but AArch64. */
static void window_save(struct at_cfi_state *s)
{
	for (unsigned reg = 8; reg < 16; reg++)
		set_reg(s, reg, AT_CFI_REGISTER, reg + 16, NULL, 0);
	for (unsigned reg = 16; reg < 32; reg++)
		set_reg(s, reg, AT_CFI_OFFSET, (uint64_t)(reg - 16) * 8, NULL, 0);
}

/* Runs a CFA opcode (DW_CFA_def_cfa*). 1 if op is one, else 0. */
static int cfa_op(struct run *r, uint8_t op, const uint8_t **p, const uint8_t *end)
{
	struct at_cfi_state *s = &r->f->stack[r->depth];
	uint64_t da = r->cie->data_align, reg;

	switch (op) {
	case DW_CFA_def_cfa: case DW_CFA_def_cfa_sf:
		reg = at_cfi_uleb(p, end);
		s->cfa_offset = op == DW_CFA_def_cfa ? at_cfi_uleb(p, end)
						     : (uint64_t)at_cfi_sleb(p, end) * da;
		s->cfa_rule = AT_CFI_CFA_OFFSET;
		s->cfa_reg = reg;
		return 1;
	case DW_CFA_def_cfa_register:
		reg = at_cfi_uleb(p, end);
		require_cfa_offset(s);
		s->cfa_reg = reg;
		return 1;
	case DW_CFA_def_cfa_offset: case DW_CFA_def_cfa_offset_sf:
		require_cfa_offset(s);
		s->cfa_offset = op == DW_CFA_def_cfa_offset ? at_cfi_uleb(p, end)
							    : (uint64_t)at_cfi_sleb(p, end) * da;
		return 1;
	case DW_CFA_def_cfa_expression:
		read_block(p, end, &s->cfa_expr, &s->cfa_expr_len);
		s->cfa_rule = AT_CFI_CFA_EXPRESSION;
		return 1;
	default:
		return 0;
	}
}

/* Runs a register opcode below 0x40 but the restores. 1 if op is one, else 0. */
static int reg_op(struct run *r, uint8_t op, const uint8_t **p, const uint8_t *end)
{
	struct at_cfi_state *s = &r->f->stack[r->depth];
	uint64_t da = r->cie->data_align, reg = 0, v = 0;
	const uint8_t *expr = NULL;
	uint8_t rule;

	switch (op) {
	case DW_CFA_undefined: case DW_CFA_same_value:
		rule = op == DW_CFA_undefined ? AT_CFI_UNDEFINED : AT_CFI_SAME_VALUE;
		reg = at_cfi_uleb(p, end);
		break;
	case DW_CFA_offset_extended: case DW_CFA_val_offset:
		rule = op == DW_CFA_val_offset ? AT_CFI_VAL_OFFSET : AT_CFI_OFFSET;
		reg = at_cfi_uleb(p, end);
		v = at_cfi_uleb(p, end) * da;
		break;
	case DW_CFA_offset_extended_sf: case DW_CFA_val_offset_sf:
		rule = op == DW_CFA_val_offset_sf ? AT_CFI_VAL_OFFSET : AT_CFI_OFFSET;
		reg = at_cfi_uleb(p, end);
		v = (uint64_t)at_cfi_sleb(p, end) * da;
		break;
	case DW_CFA_GNU_negative_offset_extended:
		rule = AT_CFI_OFFSET;
		reg = at_cfi_uleb(p, end);
		v = (0 - at_cfi_uleb(p, end)) * da;
		break;
	case DW_CFA_register:
		rule = AT_CFI_REGISTER;
		reg = at_cfi_uleb(p, end);
		v = at_cfi_uleb(p, end);
		break;
	case DW_CFA_expression: case DW_CFA_val_expression:
		rule = op == DW_CFA_expression ? AT_CFI_EXPRESSION : AT_CFI_VAL_EXPRESSION;
		reg = at_cfi_uleb(p, end);
		read_block(p, end, &expr, &v);
		break;
	default:
		return 0;
	}
	set_reg(s, reg, rule, expr ? 0 : v, expr, expr ? v : 0);
	return 1;
}

/* Runs the opcodes below 0x40 but the advances: the CFA's, the registers', the restores, the
 * remembered states, those that do nothing here. 0, or -1 where libdw fails. */
static int extended_op(struct run *r, uint8_t op, const uint8_t **p, const uint8_t *end)
{
	struct at_cfi_state *s = &r->f->stack[r->depth];
	uint64_t reg;

	if (cfa_op(r, op, p, end) || reg_op(r, op, p, end))
		return 0;
	switch (op) {
	case DW_CFA_nop:
		return 0;
	case DW_CFA_GNU_args_size:
		at_cfi_uleb(p, end);
		return 0;
	case DW_CFA_restore_extended:
		reg = at_cfi_uleb(p, end);
		if (r->in_cie)
			return -1; /* a CIE has no initial state to restore yet */
		if (reg < AT_CFI_REGS)
			s->regs[reg] = r->cie->initial.regs[reg];
		return 0;
	case DW_CFA_remember_state:
		if (r->depth == AT_CFI_REMEMBER_MAX)
			return -1; /* not reached: the screening counts them */
		r->f->stack[r->depth + 1] = *s;
		r->depth++;
		return 0;
	case DW_CFA_restore_state:
		if (r->depth == 0)
			return -1;
		r->depth--;
		return 0;
	case DW_CFA_GNU_window_save:
		window_save(s);
		return 0;
	default:
		return -1;
	}
}

/* The location an advance opcode moves to (*loc), DW_CFA_set_loc's included. 1 if op is one,
 * 0 if it is not, -1 if its operand cannot be read. */
static int advance(struct run *r, uint8_t op, const uint8_t **p, const uint8_t *end,
		   uint64_t *loc)
{
	static const uint8_t sizes[] = {
		[DW_CFA_advance_loc1] = 1, [DW_CFA_advance_loc2] = 2,
		[DW_CFA_advance_loc4] = 4, [DW_CFA_MIPS_advance_loc8] = 8,
	};
	uint64_t delta;

	if ((op & 0xc0) == DW_CFA_advance_loc) {
		delta = op & 0x3f;
	} else if (op == DW_CFA_set_loc) {
		uint64_t field = r->f->vaddr + (uint64_t)(*p - r->f->data);

		return r->cie->fde_encoding < 0 ||
		       at_eh_read_encoded(p, end, (uint8_t)r->cie->fde_encoding, field, 1, loc) < 0
			       ? -1 : 1;
	} else if (op < sizeof(sizes) && sizes[op]) {
		if ((size_t)(end - *p) < sizes[op])
			return -1;
		delta = read_le(*p, sizes[op]);
		*p += sizes[op];
	} else {
		return 0;
	}
	*loc = r->loc + delta * r->cie->code_align;
	return 1;
}

/* Runs a primary DW_CFA_offset or DW_CFA_restore (the register in op's low bits), or else an
 * opcode below 0x40 (extended_op). 0, or -1 where libdw fails. */
static int rule_op(struct run *r, uint8_t op, const uint8_t **p, const uint8_t *end)
{
	struct at_cfi_state *s = &r->f->stack[r->depth];
	unsigned reg = op & 0x3f;

	if ((op & 0xc0) == DW_CFA_offset) {
		set_reg(s, reg, AT_CFI_OFFSET, at_cfi_uleb(p, end) * r->cie->data_align, NULL, 0);
		return 0;
	}
	if ((op & 0xc0) == DW_CFA_restore) {
		if (r->in_cie)
			return -1; /* a CIE has no initial state to restore yet */
		if (reg < AT_CFI_REGS)
			s->regs[reg] = r->cie->initial.regs[reg];
		return 0;
	}
	return extended_op(r, op, p, end);
}

/* Runs [p, end). An FDE's rows are given as the location moves past the current row's start;
 * the last one ends at hi; where libdw fails, a row without state to hi. A CIE's program may
 * not move the location. 0, -1 where a CIE's program fails, or fn's return. */
static int run_program(struct run *r, const uint8_t *p, const uint8_t *end)
{
	while (p < end && r->cur < r->hi) {
		uint8_t op = *p++;
		uint64_t loc;
		int moved = advance(r, op, &p, end, &loc);

		if (moved == 0 && rule_op(r, op, &p, end) == 0)
			continue;
		if (moved <= 0 || r->in_cie)
			return r->in_cie ? -1 : emit(r, r->hi, NULL);
		r->loc = loc;
		if (loc > r->cur) {
			uint64_t to = loc < r->hi ? loc : r->hi;
			if (emit(r, to, &r->f->stack[r->depth]))
				return r->rc;
			r->cur = to;
		}
	}
	if (r->in_cie || r->cur >= r->hi)
		return 0;
	return emit(r, r->hi, &r->f->stack[r->depth]);
}

int at_eh_fde_rows(struct at_eh_frame *f, size_t i, uint64_t lo, uint64_t hi, at_cfi_row_fn fn,
		   void *arg)
{
	const struct at_eh_fde *fde = &f->fdes[i];
	const struct at_eh_cie *cie = &f->cies[fde->cie];
	struct run r = { f, cie, 0, 0, fde->lo, lo, hi, fn, arg, 0 };

	if (lo >= hi)
		return 0;
	if (!cie->ok)
		return emit(&r, hi, NULL);
	f->stack[0] = cie->initial;
	return run_program(&r, fde->insns, fde->insns_end);
}

/* --- the walk ------------------------------------------------------------------------------ */

/* What libdw's encoded_value_size gives for a personality pointer's encoding, its value at p
 * (a ULEB128's length counted to its first byte with the high bit set: libdw's reading). */
static size_t encoded_size(const struct at_eh_frame *f, uint8_t enc, const uint8_t *p)
{
	if (enc == DW_EH_PE_omit)
		return 0;
	switch (enc & 0x07) {
	case DW_EH_PE_udata2: return 2;
	case DW_EH_PE_udata4: return 4;
	case DW_EH_PE_udata8: return 8;
	case DW_EH_PE_absptr: return 8;
	case DW_EH_PE_uleb128:
		for (const uint8_t *e = p; p && e < f->data + f->size;)
			if (*e++ & 0x80)
				return (size_t)(e - p);
		return 0;
	default:
		return 0;
	}
}

/* A CIE's fields as dwarf_next_cfi reads them. */
struct cie_fields {
	const char *augmentation;
	const uint8_t *aug_data;
	uint64_t aug_size;
	const uint8_t *insns;
};

/* Reads a CIE's fields after its id, [b, limit), as dwarf_next_cfi does: version 1, 3 or 4,
 * the augmentation string, alignment factors, return address column, augmentation data.
 * 0, or -1 where libdw finds the entry invalid. */
static int cie_header(const struct at_eh_frame *f, const uint8_t *b, const uint8_t *limit,
		      struct at_eh_cie *c, struct cie_fields *cf)
{
	uint8_t version = *b++;

	if (version != 1 && (version < 3 || version > 4))
		return -1;
	cf->augmentation = (const char *)b;
	const uint8_t *nul = memchr(b, '\0', (size_t)(limit - b));
	if (!nul)
		return -1;
	b = nul + 1;
	if (version >= 4) {
		if (limit - b < 5 || b[0] != 8 || b[1] != 0)
			return -1;
		b += 2;
	}
	const char *ap = cf->augmentation;
	if (ap[0] == 'e' && ap[1] == 'h') {
		ap += 2;
		b = limit - b < 8 ? limit : b + 8;
	}
	if (b >= limit)
		return -1;
	c->code_align = at_cfi_uleb(&b, limit);
	if (b >= limit)
		return -1;
	c->data_align = (uint64_t)at_cfi_sleb(&b, limit);
	if (b >= limit)
		return -1;
	c->ra_register = version >= 3 ? at_cfi_uleb(&b, limit) : *b++;
	int sized = *ap == 'z';
	cf->aug_data = b;
	if (sized) {
		ap++;
		if (b >= limit)
			return -1;
		cf->aug_size = at_cfi_uleb(&b, limit);
		if ((uint64_t)(limit - b) < cf->aug_size)
			return -1;
		cf->aug_data = b;
	}
	for (; *ap && sized; ap++) {
		if (*ap == 'S')
			continue;
		if (*ap != 'L' && *ap != 'R' && *ap != 'P')
			break;
		if (b >= limit)
			return -1;
		uint8_t enc = *b++;
		size_t n = *ap == 'P' ? encoded_size(f, enc, b) : 0;
		if (n > (size_t)(limit - b))
			return -1; /* past the augmentation data */
		b += n;
	}
	if (!sized) {
		cf->aug_size = (uint64_t)(b - cf->aug_data);
	} else {
		if (b > cf->aug_data + cf->aug_size)
			return -1;
		b = cf->aug_data + cf->aug_size;
	}
	cf->insns = b;
	return 0;
}

/* Whether libdw accepts the CIE's augmentation when it uses it (intern_new_cie): with 'z', each
 * L, R and P must find its byte in the augmentation data. Sets the signal-frame flag. */
static int cie_interned(const struct at_eh_frame *f, struct at_eh_cie *c,
			const struct cie_fields *cf)
{
	const char *ap = cf->augmentation;
	const uint8_t *d = cf->aug_data, *limit = cf->aug_data + cf->aug_size;
	int sized = *ap == 'z';
	size_t past = 0; /* bytes P's size takes d beyond limit (then every later letter fails) */

	for (ap += sized; *ap; ap++) {
		if (*ap == 'S') {
			c->signal_frame = 1;
			continue;
		}
		if (*ap != 'L' && *ap != 'R' && *ap != 'P') {
			if (sized)
				continue;
			break;
		}
		if (!sized)
			continue;
		if (past || d >= limit)
			return 0;
		uint8_t enc = *d++;
		if (*ap == 'P') {
			size_t n = encoded_size(f, enc, d);
			if (n > (size_t)(limit - d))
				past = n;
			else
				d += n;
		}
	}
	return 1;
}

/* Reads the CIE at offset (fields [b, limit) after its id) into c, runs its initial
 * instructions from the ABI's state. 0, or -1 if libdw's walk finds the entry invalid. */
static int read_cie(struct at_eh_frame *f, uint64_t offset, const uint8_t *b,
		    const uint8_t *limit, const struct at_cfi_state *initial, struct at_eh_cie *c)
{
	struct cie_fields cf;

	memset(c, 0, sizeof(*c));
	c->offset = offset;
	if (cie_header(f, b, limit, c, &cf) < 0)
		return -1;
	c->fde_encoding = at_eh_cie_fde_encoding(cf.augmentation, cf.aug_data, cf.aug_size);
	c->augmented = cf.augmentation[0] == 'z';
	c->fits = at_cfi_program_fits(cf.insns, limit, c->fde_encoding);
	c->ok = cie_interned(f, c, &cf);
	if (c->fits && c->ok) {
		struct run r = { f, c, 1, 0, 0, 0, 1, NULL, NULL, 0 };

		f->stack[0] = *initial;
		c->ok = run_program(&r, cf.insns, limit) == 0;
		c->initial = f->stack[r.depth]; /* the remembered states are dropped */
	}
	return 0;
}

/* The CIE read at offset, or NULL: a binary search, CIEs being read in offset order. */
static const struct at_eh_cie *cie_at(const struct at_eh_frame *f, uint64_t offset, uint32_t *i)
{
	size_t lo = 0, hi = f->cie_count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->cies[mid].offset < offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == f->cie_count || f->cies[lo].offset != offset)
		return NULL;
	*i = (uint32_t)lo;
	return &f->cies[lo];
}

/* Reads an FDE (fields [b, limit) after its CIE pointer, its CIE at cie_offset) into d. 0 if it
 * is kept, -1 if not (counted unreadable). */
static int read_fde(const struct at_eh_frame *f, uint64_t cie_offset, const uint8_t *b,
		    const uint8_t *limit, struct at_eh_fde *d)
{
	const struct at_eh_cie *c = cie_at(f, cie_offset, &d->cie);
	const uint8_t *p = b;
	uint64_t lo, len;

	if (!c || c->fde_encoding < 0 || !c->fits)
		return -1;
	uint8_t enc = (uint8_t)c->fde_encoding;
	if (at_eh_read_encoded(&p, limit, enc, f->vaddr + (uint64_t)(b - f->data), 1, &lo) < 0 ||
	    at_eh_read_encoded(&p, limit, enc, 0, 0, &len) < 0 || lo == 0 || len == 0 ||
	    at_eh_fde_program(b, limit, c->fde_encoding, c->augmented, &d->insns) < 0 ||
	    !at_cfi_program_fits(d->insns, limit, c->fde_encoding))
		return -1;
	d->lo = lo;
	d->hi = lo + len;
	d->insns_end = limit;
	d->field = b;
	return 0;
}

/* One entry of the walk. */
enum entry_kind { ENTRY_END, ENTRY_BAD, ENTRY_CIE, ENTRY_FDE };

/* Reads the entry at off as dwarf_next_cfi does. ENTRY_END at the terminator, the end, or a
 * length that cannot be right; ENTRY_BAD for an entry to step over (*next set); otherwise its
 * fields [*body, *limit), its CIE's offset (an FDE's) and *next. */
static enum entry_kind next_entry(const struct at_eh_frame *f, size_t off, size_t *next,
				  const uint8_t **body, const uint8_t **limit, uint64_t *cie)
{
	if (off >= f->size || f->size - off <= 4)
		return ENTRY_END;
	const uint8_t *b = f->data + off, *end = f->data + f->size;
	uint64_t length = read_le(b, 4);
	size_t offset_size = 4;

	b += 4;
	if (length == 0xffffffffu) {
		if (end - b < 8)
			return ENTRY_END;
		length = read_le(b, 8);
		b += 8;
		offset_size = 8;
	}
	if (length == 0 || (uint64_t)(end - b) < length || length < offset_size + 1)
		return ENTRY_END;
	*next = (size_t)(b - f->data) + (size_t)length;
	*limit = b + length;
	uint64_t id = read_le(b, offset_size);
	size_t pos = (size_t)(b - f->data);
	*body = b + offset_size;
	if (id == 0)
		return ENTRY_CIE;
	if (id > pos || pos <= offset_size)
		return ENTRY_BAD;
	*cie = pos - id;
	return ENTRY_FDE;
}

static int by_lo(const void *a, const void *b)
{
	const struct at_eh_fde *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->field < y->field ? -1 : x->field > y->field;
}

/* Walks the entries: CIEs read, FDEs kept or counted. 0, or -1 out of memory. */
static int walk(struct at_eh_frame *f, const struct at_cfi_state *initial)
{
	size_t off = 0, next = 0, cie_cap = 0, fde_cap = 0;
	const uint8_t *body, *limit;
	uint64_t cie;
	enum entry_kind k;

	for (; (k = next_entry(f, off, &next, &body, &limit, &cie)) != ENTRY_END; off = next) {
		if (k == ENTRY_CIE) {
			if (at_grow((void **)&f->cies, &cie_cap, f->cie_count, sizeof(*f->cies)) < 0)
				return -1;
			if (read_cie(f, off, body, limit, initial, &f->cies[f->cie_count]) == 0)
				f->cie_count++;
		} else if (k == ENTRY_FDE) {
			if (at_grow((void **)&f->fdes, &fde_cap, f->fde_count, sizeof(*f->fdes)) < 0)
				return -1;
			if (read_fde(f, cie, body, limit, &f->fdes[f->fde_count]) == 0)
				f->fde_count++;
			else
				f->unreadable_fdes++;
		}
	}
	return 0;
}

int at_eh_frame_read(struct at_eh_frame *f, const uint8_t *data, size_t size, uint64_t vaddr,
		     const struct at_cfi_state *initial)
{
	memset(f, 0, sizeof(*f));
	f->data = data;
	f->size = data ? size : 0;
	f->vaddr = vaddr;
	f->stack = malloc((AT_CFI_REMEMBER_MAX + 1) * sizeof(*f->stack));
	if (!f->stack || walk(f, initial) < 0) {
		at_eh_frame_free(f);
		errno = ENOMEM;
		return -1;
	}
	if (f->fde_count)
		qsort(f->fdes, f->fde_count, sizeof(*f->fdes), by_lo);
	return 0;
}

void at_eh_frame_free(struct at_eh_frame *f)
{
	free(f->cies);
	free(f->fdes);
	free(f->stack);
	f->cies = NULL;
	f->fdes = NULL;
	f->stack = NULL;
	f->cie_count = f->fde_count = 0;
}
