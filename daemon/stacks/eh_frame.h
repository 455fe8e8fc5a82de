/* eh_frame.h: a reader of an object's .eh_frame (its CIEs and FDEs) and an interpreter of their
 * CFA programs, which gives per FDE the rows of its unwind table: address ranges, each with the
 * rule of the CFA and of the first AT_CFI_REGS registers.
 *
 * The bytes are hostile (an object of a process the daemon does not trust): every read is
 * bounded by the section, nothing is allocated by a size the input gives beyond the section's
 * own size, and a program is run only if it passes at_cfi_program_fits (registers at most
 * AT_CFI_REGISTER_MAX, at most AT_CFI_REMEMBER_MAX remembered states, known opcodes, operands
 * inside the program): an FDE that does not, or whose CIE does not, is left out and counted.
 *
 * The rows are those libdw's dwarf_cfi_addrframe gives (elfutils' CFI reader: the unwind
 * tables were built with it first and the tests compare both): the same walk of the entries,
 * the same decoding of LEB128 and of DW_EH_PE values, the same rows for programs that move their
 * location backwards, and the same failures (a row with no state where libdw gives no frame).
 * What the ABI says of registers before a CIE's program runs is the caller's (the initial
 * state it passes in). Everything is in the object's own byte order, which is the machine's. */
#ifndef ALLOCTAP_EH_FRAME_H
#define ALLOCTAP_EH_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define AT_CFI_REGS 32          /* registers whose rules a row holds; others are read, dropped */
#define AT_CFI_REGISTER_MAX 255 /* the highest register a program may name */
#define AT_CFI_REMEMBER_MAX 64  /* the most DW_CFA_remember_state a program may hold */

/* A register's rule. */
enum at_cfi_reg_rule {
	AT_CFI_UNDEFINED,      /* also a register no rule names */
	AT_CFI_SAME_VALUE,
	AT_CFI_OFFSET,         /* saved at CFA + value */
	AT_CFI_VAL_OFFSET,     /* its value is CFA + value */
	AT_CFI_REGISTER,       /* in register value */
	AT_CFI_EXPRESSION,     /* saved at the address expr computes (the CFA pushed first) */
	AT_CFI_VAL_EXPRESSION, /* its value is what expr computes (the CFA pushed first) */
};

/* The CFA's rule. */
enum at_cfi_cfa_rule {
	AT_CFI_CFA_UNDEFINED,
	AT_CFI_CFA_OFFSET,     /* register cfa_reg + cfa_offset */
	AT_CFI_CFA_EXPRESSION, /* what cfa_expr computes */
	AT_CFI_CFA_INVALID,    /* an offset or register set while the rule was an expression */
};

struct at_cfi_reg {
	uint8_t rule;          /* enum at_cfi_reg_rule */
	uint64_t value;        /* the offset (two's complement) or the register */
	const uint8_t *expr;   /* DW_OP bytes inside the section */
	uint64_t expr_len;
};

/* The rules in effect at an address. */
struct at_cfi_state {
	uint8_t cfa_rule;      /* enum at_cfi_cfa_rule */
	uint64_t cfa_reg;
	uint64_t cfa_offset;   /* two's complement */
	const uint8_t *cfa_expr;
	uint64_t cfa_expr_len;
	struct at_cfi_reg regs[AT_CFI_REGS];
};

/* One row: state holds over [lo, hi). state is NULL where libdw has no frame (a program that
 * fails: DW_CFA_restore_state with nothing remembered, an advance in a CIE, a CIE whose
 * augmentation libdw refuses). The row and its state are the reader's, valid in the call. */
struct at_cfi_row {
	uint64_t lo, hi;
	const struct at_cfi_state *state;
	uint64_t ra_register;  /* the CIE's return address column */
	int signal_frame;      /* the CIE's 'S' augmentation */
};

/* A CIE the walk read (the reader's; callers look at none of it). */
struct at_eh_cie {
	uint64_t offset;
	uint64_t code_align, data_align, ra_register;
	int fde_encoding;      /* DW_EH_PE_*, -1 for one the table cannot decode */
	int augmented;         /* 'z': FDEs have augmentation data */
	int signal_frame;
	int fits;              /* its initial instructions pass at_cfi_program_fits */
	int ok;                /* its initial state could be made (else its rows have none) */
	struct at_cfi_state initial;
};

/* An FDE kept: its address range [lo, hi), its program, its CIE (an index into cies). */
struct at_eh_fde {
	uint64_t lo, hi;
	const uint8_t *insns, *insns_end;
	const uint8_t *field;  /* its initial location's bytes: where it is in the section */
	uint32_t cie;
};

/* .eh_frame as read: FDEs kept sorted by lo (then by offset). */
struct at_eh_frame {
	const uint8_t *data;   /* the section's bytes: the caller's, alive as long as this */
	size_t size;
	uint64_t vaddr;        /* the section's address */
	struct at_eh_cie *cies;
	size_t cie_count;
	struct at_eh_fde *fdes;
	size_t fde_count;
	uint32_t unreadable_fdes;
	struct at_cfi_state *stack; /* the interpreter's states: AT_CFI_REMEMBER_MAX + 1 */
};

/* Reads .eh_frame's entries (data[0..size), at address vaddr) as libdw's dwarf_next_cfi walks
 * them (to the zero terminator, the end, or an entry whose length cannot be right), keeping each
 * FDE whose CIE was read before it, whose address range decodes (absolute or pc-relative, not
 * empty, not at 0) and whose programs fit; the others are counted in unreadable_fdes. initial
 * is the state before every CIE's program (the ABI's). 0, or -1 out of memory (f is then
 * freed). f is freed with at_eh_frame_free. */
int at_eh_frame_read(struct at_eh_frame *f, const uint8_t *data, size_t size, uint64_t vaddr,
		     const struct at_cfi_state *initial);
void at_eh_frame_free(struct at_eh_frame *f);

/* Called with each row in address order; a non-zero return stops the rows and is returned. */
typedef int (*at_cfi_row_fn)(void *arg, const struct at_cfi_row *row);

/* Runs FDE i's program once and gives the rows that cover [lo, hi) (inside the FDE's range), cut
 * to it: one per range that libdw's dwarf_cfi_addrframe would report, queried from lo on.
 * Returns 0, or row's first non-zero return. */
int at_eh_fde_rows(struct at_eh_frame *f, size_t i, uint64_t lo, uint64_t hi, at_cfi_row_fn row,
		   void *arg);

/* --- the pieces, for the screening of libdw's own walk (unwind_table.c) ---------------- */

/* Reads a DW_EH_PE-encoded value at *p (before end), a field at address field_addr. applied:
 * its pc-relative or absolute application counts (an address); otherwise the value is taken as
 * it is (a length). 0 (*p moved past it), or -1 for an encoding the table does not read
 * (LEB128, indirect, text-, data- or function-relative) or a value past end. */
int at_eh_read_encoded(const uint8_t **p, const uint8_t *end, uint8_t enc, uint64_t field_addr,
		       int applied, uint64_t *value);

/* The FDE pointer encoding a CIE announces ('R'; absptr without one), from its augmentation
 * string and data; -1 if the augmentation cannot be read. */
int at_eh_cie_fde_encoding(const char *augmentation, const uint8_t *data, size_t size);

/* Whether the CFA program [p, end) may be run: every opcode known, every register at most
 * AT_CFI_REGISTER_MAX, at most AT_CFI_REMEMBER_MAX states remembered, no operand past end; enc
 * is DW_CFA_set_loc's encoding (-1: none may be read). 1 or 0. */
int at_cfi_program_fits(const uint8_t *p, const uint8_t *end, int enc);

/* Where an FDE's program starts, from the bytes after its CIE pointer [start, end): past the
 * initial location and range (encoding enc) and, for an augmented CIE, the augmentation data.
 * 0, or -1 if they do not fit. */
int at_eh_fde_program(const uint8_t *start, const uint8_t *end, int enc, int augmented,
		      const uint8_t **insns);

/* LEB128 as libdw reads it, at *p (which must be before end): at most 10 bytes (a signed one 9,
 * then the sign bit of a tenth); one that does not end there reads as UINT64_MAX (INT64_MAX
 * signed). *p moves past what was read. */
uint64_t at_cfi_uleb(const uint8_t **p, const uint8_t *end);
int64_t at_cfi_sleb(const uint8_t **p, const uint8_t *end);

#endif
