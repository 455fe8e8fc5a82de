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

/* Asserts the layout invariants of a table read back. */
static void check_table(const struct at_unwind_table *t)
{
	FUZZ_CHECK(t->rule_count >= 1 && t->rules != NULL && t->rules[0].kind == AT_UNWIND_NONE);
	FUZZ_CHECK(t->page_count >= 1 && t->page_count <= AT_UNWIND_MAX_PAGES);
	FUZZ_CHECK(t->segment_count >= 1 && t->segment_count <= AT_UNWIND_MAX_SEGMENTS);
	for (uint32_t i = 0; i < t->rule_count; i++)
		FUZZ_CHECK(t->rules[i].kind <= AT_UNWIND_SIGNAL &&
			   t->rules[i].fp <= AT_UNWIND_FP_AT_SP);
	for (uint32_t p = 0; p < t->page_count; p++) {
		const struct at_unwind_page *pg = &t->pages[p];

		if (pg->count == 0)
			continue;
		FUZZ_CHECK(pg->first < t->entry_count && pg->count <= t->entry_count - pg->first);
		FUZZ_CHECK(t->entries[pg->first].offset == 0);
		for (uint32_t e = pg->first; e < pg->first + pg->count; e++) {
			FUZZ_CHECK(t->entries[e].rule < t->rule_count);
			if (e > pg->first)
				FUZZ_CHECK(t->entries[e].offset > t->entries[e - 1].offset);
		}
	}
}

/* Looks up and walks from a few addresses of each segment (mapped at its own address) over a
 * stack made of the input's bytes. */
static void walk_segments(const struct at_unwind_table *t, const uint8_t *data, size_t size)
{
	static struct at_bpf_mappings maps;
	static struct at_unwind_result r;
	struct at_unwind_stack stack = { 0x7fff0000, size, data };
	struct at_bpf_table dir = { .first_page = t->first_page, .page_count = t->page_count };
	struct at_stack_tables arrays = {
		.rules = t->rules, .pages = t->pages, .entries = t->entries, .tables = &dir,
		.rule_used = t->rule_count, .page_used = t->page_count,
		.entry_used = t->entry_count, .table_used = 1,
	};

	maps.count = 0;
	for (uint32_t i = 0; i < t->segment_count; i++) {
		const struct at_unwind_segment *s = &t->segments[i];

		if (s->size == 0 || (maps.count && s->vaddr < maps.m[maps.count - 1].end))
			continue;
		maps.m[maps.count++] = (struct at_bpf_mapping){ .start = s->vaddr,
								.end = s->vaddr + s->size };
	}
	for (uint32_t i = 0; i < maps.count; i++) {
		uint64_t step = (maps.m[i].end - maps.m[i].start) / 8 + 1;

		for (uint64_t pc = maps.m[i].start; pc < maps.m[i].end && pc >= maps.m[i].start;
		     pc += step) {
			const struct at_unwind_rule *rule = at_unwind_table_lookup(t, pc);
			FUZZ_CHECK((rule >= t->rules && rule < t->rules + t->rule_count) ||
				   rule->kind == AT_UNWIND_NONE);
			struct at_unwind_regs regs = { pc, stack.base, stack.base + 64 };
			at_unwind_walk(&maps, &arrays, &regs, &stack, &r);
			FUZZ_CHECK(r.count >= 1 && r.count <= AT_BPF_MAX_FRAMES);
		}
	}
}

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
		check_table(&t);
		walk_segments(&t, data, size);
		at_unwind_table_free(&t);
	} else {
		FUZZ_CHECK(why != NULL && t.rules == NULL && t.pages == NULL && t.entries == NULL);
	}
	return 0;
}
