/* fuzz_elfsym.c: the ELF symbol reader (daemon/probes/elfsym.c) and the probe placement on top of it
 * (daemon/probes/probe_site.c), on a file whose bytes are the input.
 *
 * The input goes to an in-memory file opened by its /proc/self/fd path, the way the daemon
 * opens a library: at_elf_open, at_elf_find_function and at_elf_vaddr_to_offset for the
 * functions the daemon probes, at_probe_site (which reads the function's first bytes
 * and walks them with the architecture's walk), and at_elf_defines_malloc. */
#include "daemon/probes/elfsym.h"
#include "daemon/probes/probe_site.h"
#include "daemon/arch/arch.h"
#include "fuzz_input.h"

static const char *const names[] = { "malloc", "free", "calloc", "realloc", "_start", "" };

static void probe_all(struct at_elf *e)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		uint64_t vaddr = 0, offset = 0;
		int rc = at_elf_find_function(e, names[i], &vaddr);
		FUZZ_CHECK(rc >= -1 && rc <= 1);
		if (rc == 1)
			FUZZ_CHECK(at_elf_vaddr_to_offset(e, vaddr, &offset) >= -1);

		struct at_probe_choice c;
		uint16_t reads = at_arch_arg_mask(i != 1 ? 2 : 1);
		rc = at_probe_site(e, names[i], reads, i != 1, &c);
		FUZZ_CHECK(rc >= -1 && rc <= 1);
		if (rc == 1) {
			FUZZ_CHECK(c.insn != NULL && c.why != NULL);
			FUZZ_CHECK(c.site_offset >= c.function_offset);
			FUZZ_CHECK(c.site_offset - c.function_offset < 64);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = fuzz_memfd(data, size);
	char path[64];
	struct at_elf e;
	const char *why = NULL;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (at_elf_open(&e, path, &why) == 0) {
		FUZZ_CHECK(e.elf != NULL && e.fd >= 0);
		probe_all(&e);
		at_elf_close(&e);
		FUZZ_CHECK(e.elf == NULL && e.fd == -1);
	} else {
		FUZZ_CHECK(why != NULL);
	}
	int defines = at_elf_defines_malloc(path);
	FUZZ_CHECK(defines == 0 || defines == 1);
	close(fd);
	return 0;
}
