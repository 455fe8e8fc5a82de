/* stack_tables.h: unwind tables (unwind_table.h) laid out in the BPF program's arrays.
 *
 * Every object's rules, pages and entries go, one table after the other, into three arrays
 * (the unwind_rules, unwind_pages and unwind_entries maps, mapped into the daemon's memory),
 * and a directory entry (unwind_tables) says where each table starts in them. Tables are only
 * ever added: a table is loaded once, whichever processes map its object, and its index stays
 * valid for the whole trace. The arrays are given by the caller, so the layout is tested on
 * plain memory. The rows are the table's own (struct at_unwind_rule, at_unwind_page,
 * at_unwind_entry of bpf/alloctap.h), copied as they are. */
#ifndef ALLOCTAP_STACK_TABLES_H
#define ALLOCTAP_STACK_TABLES_H

#include <linux/types.h>
#include <stdint.h>

#include "alloctap.h"
#include "unwind_table.h"

struct at_stack_tables {
	struct at_unwind_rule *rules;
	struct at_unwind_page *pages;
	struct at_unwind_entry *entries;
	struct at_bpf_table *tables;
	uint32_t rule_cap, page_cap, entry_cap, table_cap;
	uint32_t rule_used, page_used, entry_used, table_used;
	const struct at_unwind_table **loaded; /* table_cap pointers: what each index holds */
	uint64_t refused;                      /* tables that did not fit */
};

/* Sets up s over the given arrays (capacities in elements). 0, or -1 (ENOMEM). */
int at_stack_tables_init(struct at_stack_tables *s, struct at_unwind_rule *rules, uint32_t rule_cap,
			 struct at_unwind_page *pages, uint32_t page_cap,
			 struct at_unwind_entry *entries, uint32_t entry_cap,
			 struct at_bpf_table *tables, uint32_t table_cap);
void at_stack_tables_free(struct at_stack_tables *s);

/* The index of table t in the directory, copying it into the arrays on first use. 0, or -1
 * with errno ENOSPC when an array is full (counted in s->refused; nothing is half-written:
 * the directory entry is written last, after its rows). */
int at_stack_tables_add(struct at_stack_tables *s, const struct at_unwind_table *t,
			uint32_t *index);

/* The index in the directory of table t, or AT_BPF_NO_TABLE when it was never added. */
uint32_t at_stack_tables_index(const struct at_stack_tables *s, const struct at_unwind_table *t);

/* Bytes the arrays hold in use (what the loaded tables take in kernel memory). */
uint64_t at_stack_tables_bytes_used(const struct at_stack_tables *s);

#endif
