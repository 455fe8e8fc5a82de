/* fuzz_eh_frame.c: the .eh_frame reader and CFA interpreter (daemon/stacks/eh_frame.c) on a
 * section whose bytes are the input (hostile: an object of a process the daemon does not
 * trust), without the ELF file around it that fuzz_unwind.c needs.
 *
 * The input is copied to a buffer of exactly its size, so that a read past the section is
 * caught. Every FDE kept must have a program inside the section, and the rows of each, over its
 * whole range, must follow one another from its start to its end without a gap, one at most
 * per byte of its program plus one, each reduced to a rule of a known kind. */
#include "alloctap.h"
#include "daemon/arch/arch.h"
#include "daemon/stacks/eh_frame.h"
#include "fuzz_input.h"

#define SECTION_VADDR 0x400000

/* Where the rows of one FDE must go. */
struct expect {
	uint64_t next, hi;
	size_t rows, max_rows;
};

static int check_row(void *arg, const struct at_cfi_row *row)
{
	struct expect *e = arg;
	struct at_unwind_rule r = at_arch_rule_of_row(row);

	FUZZ_CHECK(row->lo == e->next && row->hi > row->lo && row->hi <= e->hi);
	FUZZ_CHECK(r.kind <= AT_UNWIND_SIGNAL && r.fp <= AT_UNWIND_FP_AT_SP);
	FUZZ_CHECK(++e->rows <= e->max_rows);
	e->next = row->hi;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);
	struct at_cfi_state initial;
	struct at_eh_frame f;

	FUZZ_CHECK(copy != NULL);
	if (size)
		memcpy(copy, data, size);
	at_arch_cfi_initial_state(&initial);
	if (at_eh_frame_read(&f, copy, size, SECTION_VADDR, &initial) == 0) {
		/* an entry takes 9 bytes at least */
		FUZZ_CHECK(f.fde_count + f.unreadable_fdes <= size / 9);
		for (size_t i = 0; i < f.fde_count; i++) {
			const struct at_eh_fde *d = &f.fdes[i];
			size_t program = (size_t)(d->insns_end - d->insns);
			struct expect e = { d->lo, d->hi, 0, program + 1 };

			FUZZ_CHECK(d->insns >= copy && d->insns <= d->insns_end &&
				   d->insns_end <= copy + size);
			FUZZ_CHECK(i == 0 || f.fdes[i - 1].lo <= d->lo);
			FUZZ_CHECK(at_eh_fde_rows(&f, i, d->lo, d->hi, check_row, &e) == 0);
			FUZZ_CHECK(d->lo >= d->hi || e.next == d->hi);
		}
		at_eh_frame_free(&f);
	}
	free(copy);
	return 0;
}
