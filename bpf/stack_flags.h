/* stack_flags.h: a stack's bound and how a stack walk ended, in a stack's flags: set by the
 * BPF walk and by the daemon's, kept in the trace (struct at_stack of lib/stack.h) but for
 * AT_BPF_STACK_NO_TABLE, which the daemon reads and clears. Plain numbers, valid for clang's
 * BPF target and for cc. */
#ifndef ALLOCTAP_STACK_FLAGS_H
#define ALLOCTAP_STACK_FLAGS_H

/* The most frames a stack has: the format's bound (lib/stack.h) and the walks' (bpf/alloctap.h's
 * AT_BPF_MAX_FRAMES is this one). A power of two: the BPF walk masks a frame's index with it. */
#define AT_STACK_MAX_FRAMES 128
_Static_assert((AT_STACK_MAX_FRAMES & (AT_STACK_MAX_FRAMES - 1)) == 0,
	       "the BPF walk masks a frame's index with AT_STACK_MAX_FRAMES - 1");

enum at_stack_flags {
	AT_STACK_TRUNCATED = 1u,  /* AT_STACK_MAX_FRAMES frames, and the stack goes on */
	AT_STACK_INCOMPLETE = 2u, /* the walk stopped before the outermost frame (a pc in no
				   * mapping or in one without a table yet, a rule the unwinder
				   * lacks, an unreadable frame): the frames it has are right */
	AT_STACK_KINDS = 4u,      /* the record holds each frame's kind (lib/stack.h): a reader
				   * that found them sets it; a writer writes kinds[] only when it
				   * is set; never set by a walk */
	AT_BPF_STACK_NO_TABLE = 0x100u, /* with AT_STACK_INCOMPLETE from the BPF walk: the pc had
					 * no mapping or no table (the daemon then rescans the
					 * process's mappings); never in a trace */
};

#endif
