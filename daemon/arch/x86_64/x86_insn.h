/* x86_insn.h: just enough x86-64 decoding to choose where a function's probes cost least.
 *
 * A uprobe on an instruction the kernel emulates (push reg, jmp, call rel32, jcc, nop) costs a
 * trap; on any other it costs a trap plus a single step out of line, several times more
 * (doc/DESIGN.md, decision 5, measures it). at_x86_probe_site() walks a function's first instructions and
 * returns the first emulated one, provided every instruction before it is straight-line code
 * that writes none of the registers the probe reads and not the stack pointer. Since jumps and
 * calls are themselves emulated, the walk stops at the first branch, so no path can bypass the
 * site.
 * The decoder knows the instructions compilers put in prologues; anything else ends the walk and
 * the probe stays at the function's entry, which is always correct. */
#ifndef ALLOCTAP_X86_INSN_H
#define ALLOCTAP_X86_INSN_H

#include <stddef.h>
#include <stdint.h>

/* Register numbers as in ModRM/REX encoding. */
enum at_x86_reg {
	AT_RAX, AT_RCX, AT_RDX, AT_RBX, AT_RSP, AT_RBP, AT_RSI, AT_RDI,
	AT_R8, AT_R9, AT_R10, AT_R11, AT_R12, AT_R13, AT_R14, AT_R15
};
#define AT_REG_BIT(r) (1u << (r))

/* One decoded instruction. */
struct at_x86_insn {
	uint8_t len;          /* bytes, 1 to 15 */
	uint8_t emulated;     /* the kernel emulates it: probing it costs no single step */
	uint8_t branch;       /* changes control flow (jcc, jmp, call, ret, ...) */
	uint16_t writes;      /* registers it may write (AT_REG_BIT mask), conservative */
	int8_t copy_from, copy_to; /* a 64-bit register-to-register mov: its source and its
				    * destination (written); -1 when it is not one */
	const char *name;     /* mnemonic family, for messages: "push", "mov", "jcc", ... */
};

/* Decodes the instruction at code[0..avail). Returns 0, or -1 if it is truncated or not one the
 * decoder knows (then nothing may be assumed about it). */
int at_x86_decode(const uint8_t *code, size_t avail, struct at_x86_insn *out);

/* The argument registers, in order (System V x86-64). */
#define AT_X86_ARGS 3
extern const uint8_t at_x86_arg_regs[AT_X86_ARGS];

struct at_probe_site {
	uint32_t offset;      /* bytes from the function's entry */
	uint8_t arg_reg[AT_X86_ARGS]; /* where each argument is at the site (enum at_x86_reg) */
	const char *insn;     /* mnemonic at the site ("entry" when unknown) */
	const char *why;      /* why the walk stopped where it did */
};

/* Chooses the probe site of a function whose first bytes are code[0..len). reads: the
 * registers the entry program reads (for free: AT_REG_BIT(AT_RDI)); the stack pointer is always
 * kept, for the return probe finds the return address at [rsp]. With copies set, an argument
 * may move: a 64-bit mov copies it to another register, and the walk goes on as long as every
 * argument read is still in some register (site->arg_reg says which; without copies, always the
 * argument's own). The walk looks at most `len` bytes and 16 instructions. Always succeeds;
 * offset 0 means "at the entry". */
void at_x86_probe_site(const uint8_t *code, size_t len, uint16_t reads, int copies,
		       struct at_probe_site *site);

#endif
