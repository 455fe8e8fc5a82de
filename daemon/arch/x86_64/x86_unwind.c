/* x86_unwind.c: x86-64's side of the unwind tables, behind arch.h: the DWARF numbers of its
 * registers (rbp 6, rsp 7, the return address 16), the rules libdw's CFI rows reduce to (the
 * return address at CFA - 8, ld's expression for lazy PLT entries, the kernel's signal frame as
 * glibc's __restore_rt describes it), the synthetic rules of PLT sections without CFI, the
 * rule of code without CFI (the frame record rbp points at), and the bytes of alignment
 * padding. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdbool.h>
#include <string.h>

#include "alloctap.h"
#include "arch.h"
#include "eh_frame.h"

#define DWARF_RBP 6
#define DWARF_RSP 7
#define DWARF_RA 16

static const struct at_unwind_rule rule_unsupported = { .kind = AT_UNWIND_UNSUPPORTED };

/* rbp points at the caller's rbp, the return address just above it: CFA = rbp + 16. */
const struct at_unwind_rule at_arch_frame_pointer_rule = {
	.kind = AT_UNWIND_FRAME_POINTER, .fp = AT_UNWIND_FP_AT_CFA, .fp_offset = -16,
	.cfa_offset = 16,
};

/* Whether ops is the CFA expression ld writes for lazy PLT entries:
 * rsp + 8 + ((rip & 15) >= K ? 8 : 0). Sets *k. */
static int is_plt_expression(const Dwarf_Op *ops, size_t n, int32_t *k)
{
	if (n != 9 || ops[0].atom != DW_OP_breg7 || ops[0].number != 8 ||
	    ops[1].atom != DW_OP_breg16 || ops[1].number != 0 || ops[2].atom != DW_OP_lit15 ||
	    ops[3].atom != DW_OP_and || ops[4].atom < DW_OP_lit0 || ops[4].atom > DW_OP_lit15 ||
	    ops[5].atom != DW_OP_ge || ops[6].atom != DW_OP_lit3 || ops[7].atom != DW_OP_shl ||
	    ops[8].atom != DW_OP_plus)
		return 0;
	*k = ops[4].atom - DW_OP_lit0;
	return 1;
}

/* Whether a register rule is "saved at CFA + offset" (sets *offset). */
static int is_saved_at_cfa(const Dwarf_Op *ops, size_t n, int64_t *offset)
{
	if (n == 1 && ops[0].atom == DW_OP_call_frame_cfa) {
		*offset = 0;
		return 1;
	}
	if (n == 2 && ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_plus_uconst) {
		*offset = (int64_t)ops[1].number;
		return 1;
	}
	return 0;
}

/* Whether a register rule is "saved at rsp + offset", rsp being the frame's own (sets *offset):
 * DW_CFA_expression (DW_OP_breg7 offset), which libdw gives after the CFA it pushes first. */
static int is_saved_at_rsp(const Dwarf_Op *ops, size_t n, int64_t *offset)
{
	if (n == 2 && ops[0].atom == DW_OP_call_frame_cfa)
		ops++, n--;
	if (n != 1 || ops[0].atom != DW_OP_breg7)
		return 0;
	*offset = (int64_t)ops[0].number;
	return 1;
}

/* The rule of a signal frame (its CIE's 'S' augmentation), as glibc's __restore_rt describes
 * the kernel's rt_sigframe: the interrupted rsp saved at rsp + K (CFA = *(rsp + K)), its rip
 * just above (at rsp + K + 8) and its rbp at rsp + offset, all inside the saved ucontext.
 * Any other shape is unsupported. */
static struct at_unwind_rule signal_rule(Dwarf_Frame *frame)
{
	struct at_unwind_rule r = { .kind = AT_UNWIND_SIGNAL };
	Dwarf_Op mem[3], *ops;
	size_t n;
	int64_t rsp_at, at;

	if (dwarf_frame_cfa(frame, &ops, &n) != 0 || n != 2 || ops[0].atom != DW_OP_breg7 ||
	    ops[1].atom != DW_OP_deref)
		return rule_unsupported;
	rsp_at = (int64_t)ops[0].number;
	if (rsp_at <= 0 || rsp_at > INT32_MAX - 8 ||
	    dwarf_frame_register(frame, DWARF_RA, mem, &ops, &n) != 0 ||
	    !is_saved_at_rsp(ops, n, &at) || at != rsp_at + 8)
		return rule_unsupported;
	r.cfa_offset = (int32_t)rsp_at;
	if (dwarf_frame_register(frame, DWARF_RBP, mem, &ops, &n) != 0)
		return rule_unsupported;
	if (n == 0 && ops == NULL)
		return r;
	if (!is_saved_at_rsp(ops, n, &at) || at < 0 || at > INT16_MAX)
		return rule_unsupported;
	r.fp = AT_UNWIND_FP_AT_SP;
	r.fp_offset = (int16_t)at;
	return r;
}

/* The rule of libdw's frame state (arch.h): the CFA from rsp or rbp plus an offset (or ld's
 * PLT expression), rbp unchanged or saved at CFA plus an offset, the return address at CFA - 8
 * or undefined (the outermost frame); a signal frame's by signal_rule. Anything else is
 * unsupported. */
struct at_unwind_rule at_arch_rule_of_frame(Dwarf_Frame *frame)
{
	struct at_unwind_rule r = { 0 };
	Dwarf_Op mem[3], *ops;
	size_t n;
	bool signal;
	int64_t off;
	int32_t k;

	/* the return address: undefined (libdw gives no ops in mem) or at CFA - 8 */
	if (dwarf_frame_info(frame, NULL, NULL, &signal) != DWARF_RA)
		return rule_unsupported;
	if (signal)
		return signal_rule(frame);
	if (dwarf_frame_register(frame, DWARF_RA, mem, &ops, &n) != 0)
		return rule_unsupported;
	if (n == 0 && ops == mem)
		return (struct at_unwind_rule){ .kind = AT_UNWIND_END };
	if (!is_saved_at_cfa(ops, n, &off) || off != -8)
		return rule_unsupported;

	/* the CFA: a register plus an offset comes as one DW_OP_bregx */
	if (dwarf_frame_cfa(frame, &ops, &n) != 0)
		return rule_unsupported;
	if (n == 1 && ops[0].atom == DW_OP_bregx &&
	    (ops[0].number == DWARF_RSP || ops[0].number == DWARF_RBP)) {
		off = (int64_t)ops[0].number2;
		if (off < INT32_MIN || off > INT32_MAX)
			return rule_unsupported;
		r.kind = ops[0].number == DWARF_RSP ? AT_UNWIND_CFA_SP : AT_UNWIND_CFA_FP;
		r.cfa_offset = (int32_t)off;
	} else if (is_plt_expression(ops, n, &k)) {
		r.kind = AT_UNWIND_PLT;
		r.cfa_offset = k;
	} else {
		return rule_unsupported;
	}

	/* rbp: the same value (no ops, NULL) or saved at CFA + offset */
	if (dwarf_frame_register(frame, DWARF_RBP, mem, &ops, &n) != 0)
		return rule_unsupported;
	if (n == 0 && ops == NULL)
		return r;
	if (!is_saved_at_cfa(ops, n, &off) || off < INT16_MIN || off > INT16_MAX)
		return rule_unsupported;
	r.fp = AT_UNWIND_FP_AT_CFA;
	r.fp_offset = (int16_t)off;
	return r;
}

/* --- the same rules from eh_frame.c's rows ------------------------------------------------ */

/* libdw's x86-64 backend: rbx, rbp, r12-r15 and the return address keep their values, rsp is
 * the CFA; the CFA itself is undefined until the CIE's program defines it (arch.h). */
void at_arch_cfi_initial_state(struct at_cfi_state *s)
{
	static const uint8_t same[] = { 0, DWARF_RBP, 12, 13, 14, 15, DWARF_RA };

	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < sizeof(same); i++)
		s->regs[same[i]].rule = AT_CFI_SAME_VALUE;
	s->regs[DWARF_RSP].rule = AT_CFI_VAL_OFFSET;
}

/* One DWARF expression operation, as libdw decodes it. */
struct op {
	uint8_t atom;
	uint64_t number;
};

#define MAX_OPS 10 /* one more than the longest pattern (ld's PLT expression) */

/* Decodes expr[0..len) after the n operations already in ops (at most MAX_OPS in all): the
 * count, or -1 for an operation no pattern here holds, one whose operand is missing, or too
 * many. -1 makes the rule unsupported, as anything libdw makes of such an expression would. */
static int decode_ops(const uint8_t *expr, uint64_t len, struct op *ops, int n)
{
	const uint8_t *p = expr, *end = expr + len;

	while (p < end) {
		uint8_t a = *p++;

		if (n == MAX_OPS)
			return -1;
		ops[n] = (struct op){ a, 0 };
		if (a >= DW_OP_breg0 && a <= DW_OP_breg31) {
			if (p >= end)
				return -1;
			ops[n].number = (uint64_t)at_cfi_sleb(&p, end);
		} else if (a == DW_OP_plus_uconst) {
			if (p >= end)
				return -1;
			ops[n].number = at_cfi_uleb(&p, end);
		} else if (!(a >= DW_OP_lit0 && a <= DW_OP_lit31) && a != DW_OP_and &&
			   a != DW_OP_ge && a != DW_OP_shl && a != DW_OP_plus && a != DW_OP_deref &&
			   a != DW_OP_call_frame_cfa) {
			return -1;
		}
		n++;
	}
	return n;
}

/* The operations dwarf_frame_register gives for a saved-at-an-address rule: the CFA, then
 * the offset or the expression. Their count, or -1 for any other rule. */
static int saved_ops(const struct at_cfi_reg *g, struct op *ops)
{
	ops[0] = (struct op){ DW_OP_call_frame_cfa, 0 };
	if (g->rule == AT_CFI_OFFSET) {
		if (g->value == 0)
			return 1;
		ops[1] = (struct op){ DW_OP_plus_uconst, g->value };
		return 2;
	}
	if (g->rule == AT_CFI_EXPRESSION)
		return decode_ops(g->expr, g->expr_len, ops, 1);
	return -1;
}

/* Whether a register's rule is "saved at CFA + offset" (is_saved_at_cfa's reading). */
static int row_saved_at_cfa(const struct at_cfi_reg *g, int64_t *offset)
{
	struct op ops[MAX_OPS];
	int n = saved_ops(g, ops);

	if (n == 1) {
		*offset = 0;
		return 1;
	}
	if (n == 2 && ops[1].atom == DW_OP_plus_uconst) {
		*offset = (int64_t)ops[1].number;
		return 1;
	}
	return 0;
}

/* Whether a register's rule is "saved at rsp + offset" (is_saved_at_rsp's reading). */
static int row_saved_at_rsp(const struct at_cfi_reg *g, int64_t *offset)
{
	struct op ops[MAX_OPS];
	int n = g->rule == AT_CFI_EXPRESSION ? saved_ops(g, ops) : -1;

	if (n != 2 || ops[1].atom != DW_OP_breg7)
		return 0;
	*offset = (int64_t)ops[1].number;
	return 1;
}

/* The CFA's operations as dwarf_frame_cfa gives them: their count, or -1 (no CFA). */
static int cfa_ops(const struct at_cfi_state *s, struct op *ops, uint64_t *offset)
{
	switch (s->cfa_rule) {
	case AT_CFI_CFA_OFFSET:
		ops[0] = (struct op){ DW_OP_bregx, s->cfa_reg };
		*offset = s->cfa_offset;
		return 1;
	case AT_CFI_CFA_EXPRESSION:
		return decode_ops(s->cfa_expr, s->cfa_expr_len, ops, 0);
	default:
		return -1;
	}
}

/* signal_rule's reading of a row. */
static struct at_unwind_rule signal_rule_of_row(const struct at_cfi_state *s)
{
	struct at_unwind_rule r = { .kind = AT_UNWIND_SIGNAL };
	struct op ops[MAX_OPS];
	uint64_t ignored;
	int64_t rsp_at, at;

	if (cfa_ops(s, ops, &ignored) != 2 || ops[0].atom != DW_OP_breg7 ||
	    ops[1].atom != DW_OP_deref)
		return rule_unsupported;
	rsp_at = (int64_t)ops[0].number;
	if (rsp_at <= 0 || rsp_at > INT32_MAX - 8 ||
	    !row_saved_at_rsp(&s->regs[DWARF_RA], &at) || at != rsp_at + 8)
		return rule_unsupported;
	r.cfa_offset = (int32_t)rsp_at;
	if (s->regs[DWARF_RBP].rule == AT_CFI_SAME_VALUE)
		return r;
	if (!row_saved_at_rsp(&s->regs[DWARF_RBP], &at) || at < 0 || at > INT16_MAX)
		return rule_unsupported;
	r.fp = AT_UNWIND_FP_AT_SP;
	r.fp_offset = (int16_t)at;
	return r;
}

/* Whether ops are ld's lazy PLT expression (is_plt_expression over decoded operations). */
static int row_plt_expression(const struct op *o, int n, int32_t *k)
{
	Dwarf_Op ops[9];

	if (n != 9)
		return 0;
	for (int i = 0; i < 9; i++)
		ops[i] = (Dwarf_Op){ .atom = o[i].atom, .number = o[i].number };
	return is_plt_expression(ops, 9, k);
}

/* at_arch_rule_of_frame's reading of a row (arch.h). */
struct at_unwind_rule at_arch_rule_of_row(const struct at_cfi_row *row)
{
	const struct at_cfi_state *s = row->state;
	struct at_unwind_rule r = { 0 };
	struct op ops[MAX_OPS];
	uint64_t cfa_offset = 0;
	int64_t off;
	int32_t k;
	int n;

	/* dwarf_frame_info's return address column is an int */
	if (!s || (uint32_t)row->ra_register != DWARF_RA)
		return rule_unsupported;
	if (row->signal_frame)
		return signal_rule_of_row(s);
	if (s->regs[DWARF_RA].rule == AT_CFI_UNDEFINED)
		return (struct at_unwind_rule){ .kind = AT_UNWIND_END };
	if (!row_saved_at_cfa(&s->regs[DWARF_RA], &off) || off != -8)
		return rule_unsupported;

	n = cfa_ops(s, ops, &cfa_offset);
	if (n == 1 && ops[0].atom == DW_OP_bregx &&
	    (ops[0].number == DWARF_RSP || ops[0].number == DWARF_RBP)) {
		off = (int64_t)cfa_offset;
		if (off < INT32_MIN || off > INT32_MAX)
			return rule_unsupported;
		r.kind = ops[0].number == DWARF_RSP ? AT_UNWIND_CFA_SP : AT_UNWIND_CFA_FP;
		r.cfa_offset = (int32_t)off;
	} else if (row_plt_expression(ops, n, &k)) {
		r.kind = AT_UNWIND_PLT;
		r.cfa_offset = k;
	} else {
		return rule_unsupported;
	}

	if (s->regs[DWARF_RBP].rule == AT_CFI_SAME_VALUE)
		return r;
	if (!row_saved_at_cfa(&s->regs[DWARF_RBP], &off) || off < INT16_MIN || off > INT16_MAX)
		return rule_unsupported;
	r.fp = AT_UNWIND_FP_AT_CFA;
	r.fp_offset = (int16_t)off;
	return r;
}

/* The PLT sections' rules (arch.h). A lazy .plt starts with PLT0 (push GOT[1], ff 35; jmp
 * *GOT[2]) then 16-byte entries (jmp *GOT[n]; push n; jmp PLT0, the push done 11 bytes in), as
 * ld describes them when it writes their CFI; other PLT sections only jump (CFA = rsp + 8
 * throughout). */
const char *const at_arch_plt_sections[] = { ".plt", ".plt.sec", ".plt.got", NULL };

unsigned at_arch_plt_parts(const char *name, const uint8_t *code, size_t len,
			   struct at_arch_plt_part parts[AT_ARCH_PLT_PARTS])
{
	static const struct at_unwind_rule jump = { .kind = AT_UNWIND_CFA_SP, .cfa_offset = 8 };
	static const struct at_unwind_rule plt0 = { .kind = AT_UNWIND_CFA_SP, .cfa_offset = 16 };
	static const struct at_unwind_rule plt0_pushed = { .kind = AT_UNWIND_CFA_SP,
							   .cfa_offset = 24 };
	static const struct at_unwind_rule entry = { .kind = AT_UNWIND_PLT, .cfa_offset = 11 };

	if (strcmp(name, ".plt") == 0 && len >= 2 && code[0] == 0xff && code[1] == 0x35) {
		parts[0] = (struct at_arch_plt_part){ 0, &plt0 };
		parts[1] = (struct at_arch_plt_part){ 6, &plt0_pushed };
		parts[2] = (struct at_arch_plt_part){ 16, &entry };
		return 3;
	}
	parts[0] = (struct at_arch_plt_part){ 0, &jump };
	return 1;
}

/* Padding bytes (arch.h): those of nop, the multi-byte nops (0f 1f with their prefixes,
 * ModRM, SIB and displacement bytes) and int3. */
int at_arch_is_padding(const uint8_t *code, size_t len)
{
	static const uint8_t pad[256] = {
		[0x90] = 1, [0xcc] = 1, [0x66] = 1, [0x2e] = 1, [0x0f] = 1, [0x1f] = 1,
		[0x84] = 1, [0x80] = 1, [0x44] = 1, [0x40] = 1, [0x00] = 1,
	};

	for (size_t i = 0; i < len; i++)
		if (!pad[code[i]])
			return 0;
	return 1;
}
