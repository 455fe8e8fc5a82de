/* arch/x86_64.h: everything of x86-64 the BPF side knows, and nothing else does.
 *
 * For both compilers (clang's BPF target, cc for the daemon and the user-space walk): where a
 * frame's return address lies (CFA - 8), the CFA of a lazy PLT entry, where a signal frame's
 * saved pc is, and what a call pushes (the rule kinds these serve are unwind_rule.h's). For the
 * BPF program only: the registers at a probe (struct pt_regs: pc, sp, frame pointer, and the
 * general registers by ModRM number, as the cookie of a site past moved arguments names them);
 * the arguments come through libbpf's BPF_KPROBE, for -D__TARGET_ARCH_x86 (Makefile).
 *
 * A second architecture is a second header beside this one, chosen where alloctap.h includes
 * it. */
#ifndef ALLOCTAP_BPF_ARCH_X86_64_H
#define ALLOCTAP_BPF_ARCH_X86_64_H

#include <linux/types.h>

/* In a signal frame's saved registers (the kernel's struct sigcontext), rip is the word just
 * after rsp (rule kind AT_UNWIND_SIGNAL, unwind_rule.h). */
#define AT_ARCH_SIGNAL_PC_AFTER_SP 8

/* A call pushes the return address (8 bytes): the callee's first instruction sees the stack
 * pointer 8 below the caller's; a frame's return address is the 8 bytes below its CFA. */
#define AT_ARCH_CALL_PUSH 8
#define AT_ARCH_RA_BELOW_CFA 8

/* Where the return address is at a function's entry (a probe's pc), sp the stack pointer there:
 * the word at sp, as the call pushed it. */
#define AT_ARCH_ENTRY_RA_AT(sp) (sp)

/* The CFA of a lazy PLT entry (rule kind AT_UNWIND_PLT) at pc with stack pointer sp: the
 * return address just above sp, and 8 more bytes once the entry has pushed its argument, at
 * (pc & 15) >= push (the rule's cfa_offset). */
static inline __attribute__((always_inline)) __u64 at_arch_plt_cfa(__u64 pc, __u64 sp, __s32 push)
{
	return sp + 8 + ((__s32)(pc & 15) >= push ? 8 : 0);
}

#ifdef __bpf__
/* The registers of a probe's context. */
#define AT_ARCH_PC(ctx) PT_REGS_IP(ctx)
#define AT_ARCH_SP(ctx) PT_REGS_SP(ctx)
#define AT_ARCH_FP(ctx) PT_REGS_FP(ctx)

#define AT_ARCH_GENERAL_REGS 16

/* The general registers at the probe, by ModRM number (rax 0, rcx 1, ... rdi 7, r8 8, ...):
 * each read at a constant offset of the context, the only kind of access the verifier allows
 * to it, into an array that can then be indexed (a read of the context through
 * bpf_probe_read_kernel at a variable offset costs a call per register). */
static __always_inline void at_arch_general_registers(struct pt_regs *ctx,
						      __u64 regs[AT_ARCH_GENERAL_REGS])
{
	regs[0] = ctx->rax;
	regs[1] = ctx->rcx;
	regs[2] = ctx->rdx;
	regs[3] = ctx->rbx;
	regs[4] = ctx->rsp;
	regs[5] = ctx->rbp;
	regs[6] = ctx->rsi;
	regs[7] = ctx->rdi;
	regs[8] = ctx->r8;
	regs[9] = ctx->r9;
	regs[10] = ctx->r10;
	regs[11] = ctx->r11;
	regs[12] = ctx->r12;
	regs[13] = ctx->r13;
	regs[14] = ctx->r14;
	regs[15] = ctx->r15;
}

/* The value in regs (at_arch_general_registers') of the register numbered reg, as the
 * cookie's 4-bit fields name it (bpf/alloctap.h): its bits above the 4 a number takes are
 * ignored, so a field may be passed with the cookie's higher fields still above it. */
static __always_inline __u64 at_arch_register(const __u64 regs[AT_ARCH_GENERAL_REGS], __u64 reg)
{
	return regs[reg & (AT_ARCH_GENERAL_REGS - 1)];
}
#endif

#endif
