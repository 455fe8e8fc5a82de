/* stack_tables.c: unwind tables copied into the BPF program's arrays (stack_tables.h). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "stack_tables.h"

int at_stack_tables_init(struct at_stack_tables *s, struct at_unwind_rule *rules, uint32_t rule_cap,
			 struct at_unwind_page *pages, uint32_t page_cap,
			 struct at_unwind_entry *entries, uint32_t entry_cap,
			 struct at_bpf_table *tables, uint32_t table_cap)
{
	memset(s, 0, sizeof(*s));
	s->loaded = calloc(table_cap ? table_cap : 1, sizeof(*s->loaded));
	if (!s->loaded)
		return -1;
	s->rules = rules;
	s->pages = pages;
	s->entries = entries;
	s->tables = tables;
	s->rule_cap = rule_cap;
	s->page_cap = page_cap;
	s->entry_cap = entry_cap;
	s->table_cap = table_cap;
	return 0;
}

void at_stack_tables_free(struct at_stack_tables *s)
{
	free(s->loaded);
	s->loaded = NULL;
}

/* Whether n more rows fit an array of cap rows with used taken. */
static int fits(uint32_t used, uint32_t cap, uint32_t n)
{
	return n <= cap && used <= cap - n;
}

int at_stack_tables_add(struct at_stack_tables *s, const struct at_unwind_table *t,
			uint32_t *index)
{
	for (uint32_t i = 0; i < s->table_used; i++)
		if (s->loaded[i] == t) {
			*index = i;
			return 0;
		}
	if (!fits(s->table_used, s->table_cap, 1) || !fits(s->rule_used, s->rule_cap, t->rule_count) ||
	    !fits(s->page_used, s->page_cap, t->page_count) ||
	    !fits(s->entry_used, s->entry_cap, t->entry_count)) {
		s->refused++;
		errno = ENOSPC;
		return -1;
	}
	memcpy(s->rules + s->rule_used, t->rules, (size_t)t->rule_count * sizeof(*t->rules));
	memcpy(s->pages + s->page_used, t->pages, (size_t)t->page_count * sizeof(*t->pages));
	memcpy(s->entries + s->entry_used, t->entries,
	       (size_t)t->entry_count * sizeof(*t->entries));
	struct at_bpf_table dir = {
		.first_page = t->first_page,
		.page_count = t->page_count,
		.page_base = s->page_used,
		.entry_base = s->entry_used,
		.rule_base = s->rule_used,
	};
	/* the rows are in place before the directory entry that leads to them */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	s->tables[s->table_used] = dir;
	s->loaded[s->table_used] = t;
	*index = s->table_used++;
	s->rule_used += t->rule_count;
	s->page_used += t->page_count;
	s->entry_used += t->entry_count;
	return 0;
}

uint32_t at_stack_tables_index(const struct at_stack_tables *s, const struct at_unwind_table *t)
{
	for (uint32_t i = 0; t && i < s->table_used; i++)
		if (s->loaded[i] == t)
			return i;
	return AT_BPF_NO_TABLE;
}

uint64_t at_stack_tables_bytes_used(const struct at_stack_tables *s)
{
	return (uint64_t)s->rule_used * sizeof(struct at_unwind_rule) +
	       (uint64_t)s->page_used * sizeof(struct at_unwind_page) +
	       (uint64_t)s->entry_used * sizeof(struct at_unwind_entry) +
	       (uint64_t)s->table_used * sizeof(struct at_bpf_table);
}
