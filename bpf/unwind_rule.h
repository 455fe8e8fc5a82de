/* unwind_rule.h: how a frame of the unwind tables is unwound (struct at_unwind_rule of
 * alloctap.h), in terms of any architecture's registers: the stack pointer (sp), the frame
 * pointer (fp), the canonical frame address (CFA) and the return address. The numbers and
 * layouts that differ between architectures (where the return address lies below the CFA, a
 * lazy PLT entry's CFA, a signal frame's saved registers) are the architecture's header's
 * (arch/). Plain numbers, valid for clang's BPF target and for cc. */
#ifndef ALLOCTAP_UNWIND_RULE_H
#define ALLOCTAP_UNWIND_RULE_H

/* How the caller's frame is found (struct at_unwind_rule's kind). The return address is at
 * CFA - AT_ARCH_RA_BELOW_CFA but in a signal frame. */
enum at_unwind_kind {
	AT_UNWIND_NONE = 0,        /* no code here: the address has no table */
	AT_UNWIND_CFA_SP,          /* CFA = sp + cfa_offset */
	AT_UNWIND_CFA_FP,          /* CFA = fp + cfa_offset */
	AT_UNWIND_PLT,             /* lazy PLT entry: CFA = at_arch_plt_cfa(pc, sp, cfa_offset) */
	AT_UNWIND_FRAME_POINTER,   /* no CFI: CFA = fp + cfa_offset, fp saved at CFA + fp_offset
				    * (the architecture's frame record) */
	AT_UNWIND_END,             /* outermost frame (_start, a thread start, the dynamic
				    * loader's entry): RA undefined */
	AT_UNWIND_UNSUPPORTED,     /* a rule this unwinder does not implement */
	AT_UNWIND_SIGNAL,          /* a signal frame (__restore_rt): the interrupted sp is saved
				    * at sp + cfa_offset, its pc AT_ARCH_SIGNAL_PC_AFTER_SP bytes
				    * above (not at CFA - AT_ARCH_RA_BELOW_CFA); the caller's pc
				    * is the interrupted instruction itself, looked up as it is
				    * (not pc - 1) */
};

/* Where the caller's frame pointer is (struct at_unwind_rule's fp). */
enum at_unwind_fp {
	AT_UNWIND_FP_SAME = 0,     /* unchanged */
	AT_UNWIND_FP_AT_CFA,       /* saved at CFA + fp_offset */
	AT_UNWIND_FP_AT_SP,        /* saved at sp + fp_offset, sp the frame's own (a signal
				    * frame's saved context) */
};

#endif
