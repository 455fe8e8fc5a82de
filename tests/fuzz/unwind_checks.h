/* unwind_checks.h: what every unwind table a harness gets must hold, for fuzz_unwind.c (a table
 * built from an object) and fuzz_table_cache.c (a table read back from a cache file). Included
 * by each harness after fuzz_input.h and unwind_walk.h. */
#ifndef ALLOCTAP_FUZZ_UNWIND_CHECKS_H
#define ALLOCTAP_FUZZ_UNWIND_CHECKS_H

/* Asserts the layout invariants of a table: rules[0] the empty rule, every page's run of
 * entries inside the entries, starting at offset 0 and sorted, every entry's rule a rule of the
 * table, every rule of a known kind. */
static void fuzz_check_table(const struct at_unwind_table *t)
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

/* Looks up and walks from `steps` addresses of every executable segment, mapped at its own
 * address (bias 0; a segment that wraps past the address space's end is left out), over a
 * stack copy made of the input's bytes: a lookup gives a rule of the table or the empty one,
 * each walk ends with a count it can hold, having read no more than the stack. */
static void fuzz_walk_segments(const struct at_unwind_table *t, const uint8_t *data, size_t size,
			       unsigned steps)
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
		uint64_t step = (maps.m[i].end - maps.m[i].start) / steps + 1;

		for (uint64_t pc = maps.m[i].start; pc < maps.m[i].end && pc >= maps.m[i].start;
		     pc += step) {
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

#endif
