/* fuzz_table_cache.c: the reader of the unwind-table cache's files (daemon/stacks/table_cache.c),
 * which a local user could forge if the cache's folder were not the daemon's alone: a file is
 * checked whole before its table is used, and the table it gives must never send the BPF walk
 * out of its arrays.
 *
 * An input is a cache file, decoded for the key its own header names (so that the fuzzer gets
 * past the key's check). A table that decodes must hold together: rules[0] the empty rule,
 * every page's run of entries inside the entries, starting at offset 0 and sorted, every
 * entry's rule a rule of the table, every rule of a known kind; a lookup anywhere gives one of
 * its rules, and a walk from each segment's addresses over a stack of the input's own bytes
 * ends. An input that is an ELF object instead has its table built, written and read back: the
 * same table. */
#include "daemon/stacks/table_cache.h"
#include "daemon/stacks/unwind_walk.h"
#include "fuzz_input.h"
#include "unwind_checks.h"

/* An ELF object: its table written and read back is the same. */
static void round_trip(const uint8_t *data, size_t size)
{
	int fd = fuzz_memfd(data, size);
	char path[64];
	struct at_unwind_table t, back;
	const char *why = NULL;
	size_t len;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (at_unwind_table_build(path, &t, &why) == 0) {
		uint8_t *buf = at_table_cache_encode(&t, &len);
		FUZZ_CHECK(buf != NULL);
		if (at_table_cache_decode(buf, len, t.build_id, t.build_id_len, &back, &why) < 0) {
			fprintf(stderr, "a built table read back is refused: %s\n", why);
			abort();
		}
		FUZZ_CHECK(back.entry_count == t.entry_count && back.page_count == t.page_count &&
			   back.rule_count == t.rule_count);
		FUZZ_CHECK(memcmp(back.entries, t.entries, t.entry_count * sizeof(*t.entries)) == 0);
		FUZZ_CHECK(memcmp(back.pages, t.pages, t.page_count * sizeof(*t.pages)) == 0);
		FUZZ_CHECK(memcmp(back.rules, t.rules, t.rule_count * sizeof(*t.rules)) == 0);
		at_unwind_table_free(&back);
		free(buf);
		at_unwind_table_free(&t);
	}
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct at_unwind_table t;
	const char *why = NULL;
	uint8_t key[AT_UNWIND_BUILD_ID_MAX] = { 0 };
	uint8_t key_len = 0;

	if (size >= 4 && memcmp(data, "\177ELF", 4) == 0) {
		round_trip(data, size);
		return 0;
	}
	if (size >= 16 + AT_UNWIND_BUILD_ID_MAX) { /* the header's key_len and key */
		key_len = data[14];
		memcpy(key, data + 16, sizeof(key));
	}
	if (at_table_cache_decode(data, size, key, key_len, &t, &why) == 0) {
		fuzz_check_table(&t);
		fuzz_walk_segments(&t, data, size, 8);
		at_unwind_table_free(&t);
	} else {
		FUZZ_CHECK(why != NULL && t.rules == NULL && t.pages == NULL && t.entries == NULL);
	}
	return 0;
}
