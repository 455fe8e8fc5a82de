/* x86_abi.c: x86-64's calling convention and address space, behind arch.h.
 *
 * The System V x86-64 ABI passes the first integer arguments in rdi, rsi, rdx (then rcx, r8,
 * r9); registers are numbered as ModRM and REX encode them (enum at_x86_reg, x86_insn.h). User
 * space lies below 2^47 (four-level page tables: the kernel maps no process higher unless it
 * asks). */
#include "arch.h"
#include "x86_insn.h"

const uint8_t at_arch_arg_regs[AT_ARCH_ARGS] = { AT_RDI, AT_RSI, AT_RDX };

const uint64_t at_arch_user_top = 1ull << 47;

uint16_t at_arch_arg_mask(unsigned n)
{
	uint16_t mask = 0;

	for (unsigned a = 0; a < n && a < AT_ARCH_ARGS; a++)
		mask |= (uint16_t)AT_REG_BIT(at_arch_arg_regs[a]);
	return mask;
}

const char *at_arch_reg_name(unsigned reg)
{
	static const char *const names[16] = { "rax", "rcx", "rdx", "rbx", "rsp", "rbp",
					       "rsi", "rdi", "r8",  "r9",  "r10", "r11",
					       "r12", "r13", "r14", "r15" };

	return reg < 16 ? names[reg] : "?";
}
