/* x86_insn.h: just enough x86-64 decoding to choose where a function's probes cost least.
 *
 * A uprobe on an instruction the kernel emulates (push reg, jmp, call rel32, jcc, nop) costs a
 * trap; on any other it costs a trap plus a single step out of line, several times more
 * (doc/DESIGN.md, decision 5, measures it). x86-64's at_arch_probe_site() (arch.h) walks a
 * function's first instructions and returns the first emulated one, provided every instruction
 * before it is straight-line code that writes none of the registers the probe reads and not the
 * stack pointer, where the kernel's uretprobe code finds the return address ([rsp]). Since jumps and
 * calls are themselves emulated, the walk stops at the first branch, so no path can bypass the
 * site.
 * The decoder knows the instructions compilers put in prologues; anything else ends the walk and
 * the probe stays at the function's entry, which is always correct. The walk looks at 16
 * instructions at most; an argument's copy is a 64-bit register-to-register mov. */
#ifndef ALLOCTAP_X86_INSN_H
#define ALLOCTAP_X86_INSN_H

#include <stddef.h>
#include <stdint.h>

#include "arch.h"

/* x86-64's register numbers (arch.h), as ModRM and REX encode them. */
enum at_x86_reg {
	AT_RAX, AT_RCX, AT_RDX, AT_RBX, AT_RSP, AT_RBP, AT_RSI, AT_RDI,
	AT_R8, AT_R9, AT_R10, AT_R11, AT_R12, AT_R13, AT_R14, AT_R15
};

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

#endif
