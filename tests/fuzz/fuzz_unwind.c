/* fuzz_unwind.c: the unwind-table builder (daemon/stacks/unwind_table.c), which parses every object a
 * traced program maps (hostile input), on a file whose bytes are the input, then the BPF
 * program's walk compiled for user space (daemon/stacks/unwind_walk.c) over the table it made.
 *
 * The input goes to an in-memory file opened by its /proc/self/fd path, as the daemon opens an
 * object. A table that builds must hold together: rules[0] the empty rule, every page's run of
 * entries inside the entries, starting at offset 0 and sorted, every entry's rule a rule of the
 * table, every rule of a known kind; a lookup anywhere gives one of its rules. A walk from every
 * few addresses of each executable segment, over a stack of the input's own bytes, ends. */
#include "daemon/stacks/unwind_table.h"
#include "daemon/stacks/unwind_walk.h"
#include "fuzz_input.h"
#include "unwind_checks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = fuzz_memfd(data, size);
	char path[64];
	struct at_unwind_table t;
	const char *why = NULL;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (at_unwind_table_build(path, &t, &why) == 0) {
		fuzz_check_table(&t);
		FUZZ_CHECK(at_unwind_table_lookup(&t, 0) != NULL);
		FUZZ_CHECK(at_unwind_table_lookup(&t, UINT64_MAX) != NULL);
		fuzz_walk_segments(&t, data, size, 16);
		at_unwind_table_free(&t);
	} else {
		FUZZ_CHECK(why != NULL);
	}
	close(fd);
	return 0;
}
