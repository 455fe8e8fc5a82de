/* fuzz_x86.c: the x86-64 decoder of daemon/arch/x86_64/x86_insn.c and the probe-site walk on top of it.
 *
 * The input is code, copied to a block of its exact size. Checked at every offset: a decoded
 * instruction is 1 to 15 bytes and within the bytes given; it decodes the same with exactly its
 * own bytes available and fails with one byte fewer (the decoder reads what it needs, no more).
 * For the probe site, with the argument registers of each probed function: the site is the
 * entry or the start of an emulated instruction reached by decoding from the entry. */
#include "daemon/arch/x86_64/x86_insn.h"
#include "fuzz_input.h"

static void check_decode(const uint8_t *code, size_t avail)
{
	struct at_x86_insn a, b;

	if (at_x86_decode(code, avail, &a) < 0)
		return;
	FUZZ_CHECK(a.len >= 1 && a.len <= 15 && a.len <= avail);
	FUZZ_CHECK(a.name != NULL);
	FUZZ_CHECK(a.emulated == 0 || a.emulated == 1);
	FUZZ_CHECK(at_x86_decode(code, a.len, &b) == 0);
	FUZZ_CHECK(b.len == a.len && b.emulated == a.emulated && b.branch == a.branch &&
		   b.writes == a.writes && strcmp(b.name, a.name) == 0);
	FUZZ_CHECK(at_x86_decode(code, a.len - 1u, &b) < 0);
}

/* The site must be the entry, or an emulated instruction on the straight path from it, with
 * every argument read in the register the site names: a model of the registers' contents
 * (which argument each holds) run over the instructions before it agrees. */
static void check_site(const uint8_t *code, size_t len, uint16_t reads, int copies)
{
	struct at_probe_site site;
	int holds[16];

	at_arch_probe_site(code, len, reads, copies, &site);
	FUZZ_CHECK(site.insn != NULL && site.why != NULL);
	for (int r = 0; r < 16; r++)
		holds[r] = -1;
	for (int a = 0; a < AT_ARCH_ARGS; a++)
		holds[at_arch_arg_regs[a]] = a;
	size_t off = 0;
	while (off < site.offset) {
		struct at_x86_insn insn;
		FUZZ_CHECK(at_x86_decode(code + off, len - off, &insn) == 0);
		FUZZ_CHECK(!insn.branch && !insn.emulated);
		FUZZ_CHECK(!(insn.writes & AT_REG_BIT(AT_RSP)));
		int copied = insn.copy_from >= 0 ? holds[insn.copy_from] : -1;
		for (int r = 0; r < 16; r++)
			if (insn.writes & AT_REG_BIT(r))
				holds[r] = -1;
		if (insn.copy_from >= 0) {
			FUZZ_CHECK(insn.writes == AT_REG_BIT(insn.copy_to));
			holds[insn.copy_to] = copied;
		}
		off += insn.len;
	}
	FUZZ_CHECK(off == site.offset);
	for (int a = 0; a < AT_ARCH_ARGS; a++) {
		if (!(reads & AT_REG_BIT(at_arch_arg_regs[a])))
			continue;
		FUZZ_CHECK(site.arg_reg[a] < 16 && holds[site.arg_reg[a]] == a);
		FUZZ_CHECK(copies || site.arg_reg[a] == at_arch_arg_regs[a]);
	}
	if (site.offset == 0)
		return;
	FUZZ_CHECK(site.offset < len);
	struct at_x86_insn at;
	FUZZ_CHECK(at_x86_decode(code + off, len - off, &at) == 0 && at.emulated);
	FUZZ_CHECK(strcmp(at.name, site.insn) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint16_t reads[] = {
		AT_REG_BIT(AT_RDI),
		AT_REG_BIT(AT_RDI) | AT_REG_BIT(AT_RSI),
		AT_REG_BIT(AT_RDI) | AT_REG_BIT(AT_RSI) | AT_REG_BIT(AT_RDX),
	};
	uint8_t *code = (uint8_t *)fuzz_exact_copy(data, size);

	for (size_t off = 0; off < size; off++)
		check_decode(code + off, size - off);
	for (size_t i = 0; i < sizeof(reads) / sizeof(reads[0]); i++)
		for (int copies = 0; copies < 2; copies++)
			check_site(code, size, reads[i], copies);
	free(code);
	return 0;
}
