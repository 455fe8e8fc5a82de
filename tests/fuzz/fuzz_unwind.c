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

/* Asserts the layout invariants of a table that built. */
static void check_table(const struct at_unwind_table *t)
{
	FUZZ_CHECK(t->rule_count >= 1 && t->rules != NULL);
	FUZZ_CHECK(t->rules[0].kind == AT_UNWIND_NONE);
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

/* Walks from addresses of every executable segment, mapped at its own address (bias 0), over
 * a stack copy made of the input's bytes: each walk must end with a count it can hold. */
static void walk_segments(const struct at_unwind_table *t, const uint8_t *data, size_t size)
{
	static struct at_bpf_mappings maps;
	static struct at_unwind_result r;
	struct at_unwind_stack stack = { 0x7fff0000, size, data };
	/* the table's own arrays, as the one table of the BPF program's */
	struct at_bpf_table dir = { .first_page = t->first_page, .page_count = t->page_count };
	struct at_stack_tables arrays = {
		.rules = t->rules, .pages = t->pages, .entries = t->entries, .tables = &dir,
		.rule_used = t->rule_count, .page_used = t->page_count,
		.entry_used = t->entry_count, .table_used = 1,
	};

	maps.count = 0;
	for (uint32_t i = 0; i < t->segment_count; i++) {
		const struct at_unwind_segment *s = &t->segments[i];

		if (s->size == 0 || s->vaddr + s->size < s->vaddr ||
		    (maps.count && s->vaddr < maps.m[maps.count - 1].end))
			continue;
		maps.m[maps.count++] = (struct at_bpf_mapping){ .start = s->vaddr,
								.end = s->vaddr + s->size,
								.table = 0 };
	}
	for (uint32_t i = 0; i < maps.count; i++) {
		uint64_t step = (maps.m[i].end - maps.m[i].start) / 16 + 1;

		for (uint64_t pc = maps.m[i].start; pc < maps.m[i].end; pc += step) {
			const struct at_unwind_rule *rule = at_unwind_table_lookup(t, pc);
			/* a table row, or the rule of code nothing covers (a segment without FDEs) */
			FUZZ_CHECK((rule >= t->rules && rule < t->rules + t->rule_count) ||
				   rule->kind == AT_UNWIND_NONE);
			struct at_unwind_regs regs = { pc, stack.base, stack.base + 64 };
			at_unwind_walk(&maps, &arrays, &regs, &stack, &r);
			FUZZ_CHECK(r.count >= 1 && r.count <= AT_BPF_MAX_FRAMES);
			FUZZ_CHECK(r.stack_used <= stack.len);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = fuzz_memfd(data, size);
	char path[64];
	struct at_unwind_table t;
	const char *why = NULL;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (at_unwind_table_build(path, &t, &why) == 0) {
		check_table(&t);
		FUZZ_CHECK(at_unwind_table_lookup(&t, 0) != NULL);
		FUZZ_CHECK(at_unwind_table_lookup(&t, UINT64_MAX) != NULL);
		walk_segments(&t, data, size);
		at_unwind_table_free(&t);
	} else {
		FUZZ_CHECK(why != NULL);
	}
	close(fd);
	return 0;
}
