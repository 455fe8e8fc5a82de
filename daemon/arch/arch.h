/* arch.h: what the daemon knows of the machine's instruction set and calling convention, as one
 * interface that every room uses and no room looks behind.
 *
 * Each architecture implements it in a folder of its own, daemon/arch/NAME/ (NAME as `uname -m`
 * says it: x86_64/), with arch.mk, the names the build needs (its BPF target, its multiarch
 * tuple: AT_MULTIARCH). The Makefile builds the machine's folder alone and refuses a machine that
 * has none. The BPF program's side of the same facts (the registers it reads by these numbers,
 * where the unwinder's rules find a frame's return address) is bpf/arch/'s.
 *
 * Registers are named by the architecture's own numbers, 0 to 15: the probe cookie carries an
 * argument's register in 4 bits (bpf/alloctap.h), and a set of registers is a 16-bit mask of
 * AT_REG_BIT. */
#ifndef ALLOCTAP_ARCH_H
#define ALLOCTAP_ARCH_H

#include <stddef.h>
#include <stdint.h>

/* --- the calling convention ---------------------------------------------------------------- */

/* How many integer arguments an entry program may read: the cookie has room for three. */
#define AT_ARCH_ARGS 3
#define AT_REG_BIT(r) (1u << (r))

/* The registers of the first AT_ARCH_ARGS integer arguments, in order. */
extern const uint8_t at_arch_arg_regs[AT_ARCH_ARGS];

/* The registers of the first n integer arguments (n at most AT_ARCH_ARGS), as a mask. */
uint16_t at_arch_arg_mask(unsigned n);

/* Register reg's name for messages (a static string); "?" for a number the machine lacks. */
const char *at_arch_reg_name(unsigned reg);

/* --- where a function's probes cost least --------------------------------------------------- */

/* A function's probe site. */
struct at_probe_site {
	uint32_t offset;               /* bytes from the function's entry */
	uint8_t arg_reg[AT_ARCH_ARGS]; /* where each argument is at the site */
	const char *insn;              /* mnemonic at the site ("entry" when unknown) */
	const char *why;               /* why the walk stopped where it did */
};

/* Chooses the probe site of a function whose first bytes are code[0..len): the first
 * instruction the kernel emulates (a trap without a single step), provided every instruction
 * before it runs straight through and changes neither the registers in reads (the arguments the
 * entry program reads) nor what the return probe needs to find the return address. With copies
 * set, an argument may move: a register-to-register copy of it lets the walk go on as long as
 * every argument read is still in some register (site->arg_reg says which; without copies,
 * always the argument's own). Looks at most at len bytes. Always succeeds; offset 0 means "at
 * the entry", which is always correct. */
void at_arch_probe_site(const uint8_t *code, size_t len, uint16_t reads, int copies,
			struct at_probe_site *site);

/* --- an allocator's direct calls to its own entry points ------------------------------------ */

/* One direct transfer into an entry point: a call, or a tail jump. */
struct at_direct_call {
	uint64_t site;   /* virtual address of the instruction */
	uint64_t target; /* virtual address of the entry point it reaches */
	int is_call;     /* 1 a call, 0 a jump */
};

typedef int (*at_direct_call_fn)(void *arg, const struct at_direct_call *c);

/* Finds in code (len bytes at virtual address vaddr) every direct call or jump, by relative
 * displacement, whose target is one of targets[0..ntargets), and calls found for each; stops at
 * the first non-zero return of found and returns it, else 0. The scan may look at every byte,
 * not only at instruction boundaries: a pattern inside another instruction that happens to
 * point exactly at an entry point is taken too (harmless: its return address is then one no
 * call returns to). */
int at_arch_find_direct_calls(const uint8_t *code, size_t len, uint64_t vaddr,
			      const uint64_t *targets, unsigned ntargets, at_direct_call_fn found,
			      void *arg);

/* --- the unwind tables' rules (daemon/stacks/unwind_table.c) ------------------------------- */

struct Dwarf_Frame_s;  /* libdw's Dwarf_Frame */
struct at_unwind_rule; /* bpf/alloctap.h; its kinds are bpf/unwind_rule.h's */

/* The rule of code that no CFI covers: the frame record the frame pointer points at (kind
 * AT_UNWIND_FRAME_POINTER). */
extern const struct at_unwind_rule at_arch_frame_pointer_rule;

/* Reduces libdw's frame state at one address (a row of the object's CFI) to the rule that
 * unwinds it, reading the architecture's registers by their DWARF numbers: kind
 * AT_UNWIND_UNSUPPORTED for a row this unwinder cannot follow. The caller owns frame. */
struct at_unwind_rule at_arch_rule_of_frame(struct Dwarf_Frame_s *frame);

struct at_cfi_state;   /* daemon/stacks/eh_frame.h */
struct at_cfi_row;

/* The rules of the registers before a CIE's program runs, as libdw's backend for the machine
 * sets them (its ABI's call-saved registers): the state eh_frame.c starts every CIE from. */
void at_arch_cfi_initial_state(struct at_cfi_state *s);

/* The rule of one row of the object's CFI as eh_frame.c reads it, the same rule
 * at_arch_rule_of_frame gives for libdw's frame state at any address of the row: kind
 * AT_UNWIND_UNSUPPORTED for a row this unwinder cannot follow or without a state. */
struct at_unwind_rule at_arch_rule_of_row(const struct at_cfi_row *row);

/* The sections the architecture's linker writes PLT entries into, NULL-terminated: code that
 * may have no CFI, whose rules at_arch_plt_parts gives. */
extern const char *const at_arch_plt_sections[];

/* One part of a PLT section: rule holds from offset from (bytes from the section's start) to
 * the next part's, the last to the section's end. rule is static. */
#define AT_ARCH_PLT_PARTS 3
struct at_arch_plt_part {
	uint64_t from;
	const struct at_unwind_rule *rule;
};

/* The parts of PLT section name (one of at_arch_plt_sections) whose bytes are code[0..len),
 * as the linker lays its entries out, into parts: how many (1 to AT_ARCH_PLT_PARTS). */
unsigned at_arch_plt_parts(const char *name, const uint8_t *code, size_t len,
			   struct at_arch_plt_part parts[AT_ARCH_PLT_PARTS]);

/* Whether code[0..len) holds only the bytes of the instructions a compiler pads between
 * functions with (nops, traps): 1 yes, 0 no. */
int at_arch_is_padding(const uint8_t *code, size_t len);

/* --- the address space ---------------------------------------------------------------------- */

/* The first address above user space: nothing at or above it ([vsyscall]) is a pc of a user
 * stack. */
extern const uint64_t at_arch_user_top;

#endif
