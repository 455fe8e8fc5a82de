/* x86_insn.c: a small x86-64 decoder for choosing cheap uprobe sites. */
#include <string.h>

#include "x86_insn.h"

#define MAX_WALK_INSNS 16

/* The kernel's own nops (x86_nops[len] on x86-64); a uprobe on one of these byte strings is
 * emulated like a jump of length zero. */
static const uint8_t kernel_nops[9][8] = {
	{ 0 },
	{ 0x90 },
	{ 0x66, 0x90 },
	{ 0x0f, 0x1f, 0x00 },
	{ 0x0f, 0x1f, 0x40, 0x00 },
	{ 0x0f, 0x1f, 0x44, 0x00, 0x00 },
	{ 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 },
	{ 0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00 },
	{ 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00 },
};

/* What an opcode's ModRM operand does, for the register-write analysis. */
enum dest {
	D_NONE,   /* writes no general register (test, cmp, stores to memory, SSE) */
	D_RM,     /* writes the r/m operand (a register only when mod == 3) */
	D_REG,    /* writes the reg operand */
	D_BOTH,   /* writes both (xchg) */
};

/* Decoding state of one instruction. */
struct decoding {
	const uint8_t *p, *end;
	int rex_w, rex_r, rex_b, rex_x;
	int has_66, has_prefix, has_rex;
	int modrm_mod, modrm_reg, modrm_rm;
};

static int take(struct decoding *d, size_t n)
{
	if ((size_t)(d->end - d->p) < n)
		return -1;
	d->p += n;
	return 0;
}

/* Reads a ModRM byte with its SIB and displacement. */
static int take_modrm(struct decoding *d)
{
	if (d->p >= d->end)
		return -1;
	uint8_t m = *d->p++;
	d->modrm_mod = m >> 6;
	d->modrm_reg = ((m >> 3) & 7) | (d->rex_r << 3);
	d->modrm_rm = (m & 7) | (d->rex_b << 3);
	if (d->modrm_mod == 3)
		return 0;
	size_t disp = d->modrm_mod == 1 ? 1 : d->modrm_mod == 2 ? 4 : 0;
	if ((m & 7) == 4) {
		if (d->p >= d->end)
			return -1;
		uint8_t sib = *d->p++;
		if (d->modrm_mod == 0 && (sib & 7) == 5)
			disp = 4;
	} else if (d->modrm_mod == 0 && (m & 7) == 5) {
		disp = 4; /* RIP-relative */
	}
	return take(d, disp);
}

/* Immediate of the operand size: 2 bytes with 0x66, else 4. */
static size_t imm_z(const struct decoding *d)
{
	return d->has_66 && !d->rex_w ? 2 : 4;
}

static uint16_t dest_mask(const struct decoding *d, enum dest dest)
{
	uint16_t w = 0;

	if ((dest == D_RM || dest == D_BOTH) && d->modrm_mod == 3)
		w |= AT_REG_BIT(d->modrm_rm);
	if (dest == D_REG || dest == D_BOTH)
		w |= AT_REG_BIT(d->modrm_reg);
	return w;
}

/* ModRM instruction with an immediate of imm bytes writing dest. */
static int modrm_op(struct decoding *d, struct at_x86_insn *out, size_t imm, enum dest dest,
		    const char *name)
{
	if (take_modrm(d) < 0 || take(d, imm) < 0)
		return -1;
	out->writes |= dest_mask(d, dest);
	out->name = name;
	return 0;
}

/* mov between registers or memory (0x88, 0x89, 0x8a, 0x8b); a 64-bit register-to-register one
 * is a copy (a 32-bit one truncates). */
static int mov_op(struct decoding *d, struct at_x86_insn *out, uint8_t op)
{
	enum dest dest = op & 2 ? D_REG : D_RM;

	if (modrm_op(d, out, 0, dest, "mov") < 0)
		return -1;
	if ((op & 1) && d->rex_w && !d->has_prefix && d->modrm_mod == 3) {
		out->copy_from = (int8_t)(dest == D_REG ? d->modrm_rm : d->modrm_reg);
		out->copy_to = (int8_t)(dest == D_REG ? d->modrm_reg : d->modrm_rm);
	}
	return 0;
}

static int branch_op(struct decoding *d, struct at_x86_insn *out, size_t imm, const char *name)
{
	if (take(d, imm) < 0)
		return -1;
	out->branch = 1;
	out->emulated = !d->has_prefix && !d->has_rex; /* the kernel refuses 0x66 on branches */
	out->name = name;
	return 0;
}

static int decode_0f(struct decoding *d, struct at_x86_insn *out)
{
	if (d->p >= d->end)
		return -1;
	uint8_t op = *d->p++;

	if (op >= 0x80 && op <= 0x8f)
		return branch_op(d, out, 4, "jcc");
	if (op >= 0x40 && op <= 0x4f)
		return modrm_op(d, out, 0, D_REG, "cmov");
	if (op >= 0x90 && op <= 0x9f)
		return modrm_op(d, out, 0, D_RM, "setcc");
	switch (op) {
	case 0x1f:
		return modrm_op(d, out, 0, D_NONE, "nop");
	case 0x1e: /* endbr64 and other hint nops */
	case 0x18: /* prefetch */
	case 0x0d: /* prefetchw */
		return modrm_op(d, out, 0, D_NONE, "hint");
	case 0x10: case 0x11: case 0x28: case 0x29: case 0x57: case 0x6f: case 0x7f:
	case 0xd6: case 0xef: case 0x6e: case 0x16: case 0x17: case 0x12: case 0x13:
		return modrm_op(d, out, 0, D_NONE, "sse");
	case 0x7e:
		return modrm_op(d, out, 0, d->has_66 ? D_RM : D_NONE, "movq");
	case 0xaf:
		return modrm_op(d, out, 0, D_REG, "imul");
	case 0xb6: case 0xb7: case 0xbe: case 0xbf:
		return modrm_op(d, out, 0, D_REG, "movx");
	case 0xa3:
		return modrm_op(d, out, 0, D_NONE, "bt");
	default:
		return -1;
	}
}

/* Groups 1, 2, 3, 5 and the other one-byte opcodes whose ModRM reg field selects the operation. */
static int decode_group(struct decoding *d, struct at_x86_insn *out, uint8_t op)
{
	if (take_modrm(d) < 0)
		return -1;
	int sub = d->modrm_reg & 7;
	size_t imm = 0;
	enum dest dest = D_RM;

	switch (op) {
	case 0x80: case 0x83: imm = 1; dest = sub == 7 ? D_NONE : D_RM; break;
	case 0x81: imm = imm_z(d); dest = sub == 7 ? D_NONE : D_RM; break;
	case 0xc0: case 0xc1: imm = 1; break;
	case 0xd0: case 0xd1: case 0xd2: case 0xd3: break;
	case 0xc6: if (sub) return -1; imm = 1; break;
	case 0xc7: if (sub) return -1; imm = imm_z(d); break;
	case 0xf6: case 0xf7:
		if (sub <= 1) {
			imm = op == 0xf6 ? 1 : imm_z(d);
			dest = D_NONE;
		} else if (sub >= 4) {
			out->writes |= AT_REG_BIT(AT_RAX) | AT_REG_BIT(AT_RDX);
			dest = D_NONE;
		}
		break;
	case 0xfe: if (sub > 1) return -1; break;
	case 0xff:
		if (sub == 2 || sub == 4) { /* indirect call or jump: a branch the kernel single-steps */
			out->branch = 1;
			out->name = "indirect";
			return 0;
		}
		if (sub == 6) {
			out->writes |= AT_REG_BIT(AT_RSP);
			dest = D_NONE;
		} else if (sub > 1) {
			return -1;
		}
		break;
	default:
		return -1;
	}
	if (take(d, imm) < 0)
		return -1;
	out->writes |= dest_mask(d, dest);
	out->name = "alu";
	return 0;
}

/* Returns 1 when the bytes are one of the kernel's nops. */
static int is_kernel_nop(const uint8_t *code, size_t len)
{
	return len < sizeof(kernel_nops) / sizeof(kernel_nops[0]) && len > 0 &&
	       memcmp(code, kernel_nops[len], len) == 0;
}

static int decode_onebyte(struct decoding *d, struct at_x86_insn *out, uint8_t op)
{
	if (op < 0x40 && (op & 7) < 6) { /* add, or, adc, sbb, and, sub, xor, cmp */
		int is_cmp = (op >> 3) == 7;
		switch (op & 7) {
		case 0: case 1: return modrm_op(d, out, 0, is_cmp ? D_NONE : D_RM, "alu");
		case 2: case 3: return modrm_op(d, out, 0, is_cmp ? D_NONE : D_REG, "alu");
		case 4: case 5:
			if (!is_cmp)
				out->writes |= AT_REG_BIT(AT_RAX);
			out->name = "alu";
			return take(d, (op & 7) == 4 ? 1 : imm_z(d));
		}
	}
	if (op >= 0x50 && op <= 0x57) {
		out->writes |= AT_REG_BIT(AT_RSP);
		out->name = "push";
		/* push_setup_xol_ops takes no prefix but REX.B */
		out->emulated = !d->has_prefix &&
				(!d->has_rex || (d->rex_b && !d->rex_w && !d->rex_r && !d->rex_x));
		return 0;
	}
	if (op >= 0x58 && op <= 0x5f) {
		out->writes |= AT_REG_BIT(AT_RSP) | AT_REG_BIT((op & 7) | (d->rex_b << 3));
		out->name = "pop";
		return 0;
	}
	if (op >= 0x70 && op <= 0x7f)
		return branch_op(d, out, 1, "jcc");
	if (op >= 0x91 && op <= 0x97) {
		out->writes |= AT_REG_BIT(AT_RAX) | AT_REG_BIT((op & 7) | (d->rex_b << 3));
		out->name = "xchg";
		return 0;
	}
	if (op >= 0xb0 && op <= 0xbf) {
		out->writes |= AT_REG_BIT((op & 7) | (d->rex_b << 3));
		out->name = "mov";
		return take(d, op < 0xb8 ? 1 : d->rex_w ? 8 : imm_z(d));
	}
	switch (op) {
	case 0x63: return modrm_op(d, out, 0, D_REG, "movsxd");
	case 0x69: return modrm_op(d, out, imm_z(d), D_REG, "imul");
	case 0x6b: return modrm_op(d, out, 1, D_REG, "imul");
	case 0x84: case 0x85: return modrm_op(d, out, 0, D_NONE, "test");
	case 0x86: case 0x87: return modrm_op(d, out, 0, D_BOTH, "xchg");
	case 0x88: case 0x89: case 0x8a: case 0x8b: return mov_op(d, out, op);
	case 0x8d: return modrm_op(d, out, 0, D_REG, "lea");
	case 0x90:
		if (d->rex_b) { /* xchg r8, rax */
			out->writes |= AT_REG_BIT(AT_RAX) | AT_REG_BIT(AT_R8);
			out->name = "xchg";
		} else {
			out->name = "nop";
		}
		return 0;
	case 0x98: out->writes |= AT_REG_BIT(AT_RAX); out->name = "cdqe"; return 0;
	case 0x99: out->writes |= AT_REG_BIT(AT_RDX); out->name = "cqo"; return 0;
	case 0xa8: out->name = "test"; return take(d, 1);
	case 0xa9: out->name = "test"; return take(d, imm_z(d));
	case 0xc2: case 0xc3: out->branch = 1; out->name = "ret"; return take(d, op == 0xc2 ? 2 : 0);
	case 0xc9: out->writes |= AT_REG_BIT(AT_RSP) | AT_REG_BIT(AT_RBP); out->name = "leave"; return 0;
	case 0xe8: return branch_op(d, out, 4, "call");
	case 0xe9: return branch_op(d, out, 4, "jmp");
	case 0xeb: return branch_op(d, out, 1, "jmp");
	case 0x0f: return decode_0f(d, out);
	default: return decode_group(d, out, op);
	}
}

int at_x86_decode(const uint8_t *code, size_t avail, struct at_x86_insn *out)
{
	struct decoding d = { .p = code, .end = code + (avail < 15 ? avail : 15) };

	memset(out, 0, sizeof(*out));
	out->copy_from = out->copy_to = -1;
	for (;;) { /* legacy prefixes */
		if (d.p >= d.end)
			return -1;
		uint8_t b = *d.p;
		if (b == 0x66)
			d.has_66 = 1;
		else if (!(b == 0x67 || b == 0xf0 || b == 0xf2 || b == 0xf3 || b == 0x2e ||
			   b == 0x36 || b == 0x3e || b == 0x26 || b == 0x64 || b == 0x65))
			break;
		d.has_prefix = 1;
		d.p++;
	}
	if ((*d.p & 0xf0) == 0x40) {
		uint8_t rex = *d.p++;
		d.has_rex = 1;
		d.rex_w = (rex >> 3) & 1;
		d.rex_r = (rex >> 2) & 1;
		d.rex_x = (rex >> 1) & 1;
		d.rex_b = rex & 1;
		if (d.p >= d.end)
			return -1;
	}
	uint8_t op = *d.p++;
	if (decode_onebyte(&d, out, op) < 0)
		return -1;
	out->len = (uint8_t)(d.p - code);
	if (!out->emulated && is_kernel_nop(code, out->len)) {
		out->emulated = 1;
		out->name = "nop";
	}
	return 0;
}

/* The register of the mask to name an argument by: its own when it holds it still, else the
 * lowest. */
static uint8_t holder(uint16_t holds, uint8_t own)
{
	if (holds & AT_REG_BIT(own))
		return own;
	for (uint8_t r = 0; r < 16; r++)
		if (holds & AT_REG_BIT(r))
			return r;
	return own;
}

/* Ends the walk at offset off (0: the entry, with every argument in its own register). */
static void settle(struct at_probe_site *site, size_t off, const char *insn, const char *why,
		   const uint16_t *holds)
{
	site->offset = (uint32_t)off;
	site->insn = insn;
	site->why = why;
	for (int a = 0; a < AT_ARCH_ARGS; a++)
		site->arg_reg[a] = off ? holder(holds[a], at_arch_arg_regs[a]) : at_arch_arg_regs[a];
}

void at_arch_probe_site(const uint8_t *code, size_t len, uint16_t reads, int copies,
			struct at_probe_site *site)
{
	uint16_t holds[AT_ARCH_ARGS]; /* per argument, the registers that hold it */
	uint16_t args = at_arch_arg_mask(AT_ARCH_ARGS);
	size_t off = 0;

	for (int a = 0; a < AT_ARCH_ARGS; a++)
		holds[a] = AT_REG_BIT(at_arch_arg_regs[a]);
	for (int i = 0; i < MAX_WALK_INSNS && off < len; i++) {
		struct at_x86_insn insn;
		if (at_x86_decode(code + off, len - off, &insn) < 0) {
			settle(site, 0, "entry", "an instruction the decoder does not know", holds);
			return;
		}
		if (insn.emulated) {
			settle(site, off, insn.name,
			       off ? "first emulated instruction" : "the entry is emulated", holds);
			return;
		}
		if (insn.branch) {
			settle(site, 0, "entry", "a branch the kernel single-steps", holds);
			return;
		}
		/* the stack pointer, and any register read that is not an argument, stay put */
		int lost = (insn.writes & (AT_REG_BIT(AT_RSP) | (reads & ~args))) != 0;
		for (int a = 0; a < AT_ARCH_ARGS; a++) {
			uint16_t had = holds[a];
			holds[a] &= (uint16_t)~insn.writes;
			if (copies && insn.copy_from >= 0 && (had & AT_REG_BIT(insn.copy_from)))
				holds[a] |= AT_REG_BIT(insn.copy_to);
			lost |= (reads & AT_REG_BIT(at_arch_arg_regs[a])) && !holds[a];
		}
		if (lost) {
			settle(site, 0, "entry",
			       "an instruction writes an argument register or the stack pointer", holds);
			return;
		}
		off += insn.len;
	}
	settle(site, 0, "entry", "no emulated instruction close to the entry", holds);
}
