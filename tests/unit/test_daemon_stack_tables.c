/* test_daemon_stack_tables.c: unit tests of daemon/stacks/stack_tables.c, unwind tables laid out in
 * the BPF program's arrays: the directory's bases, the rows copied as they are, a table added
 * twice loaded once, a full array refused without a half-written directory entry, and the
 * lookup the BPF program makes over the arrays (written here as bpf/alloctap.bpf.c does it,
 * branch-free binary searches with fixed step counts) giving the table's own rule at every
 * address of the C library. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../daemon/stacks/stack_tables.h"

#define LIBC "/usr/lib/" AT_MULTIARCH "/libc.so.6"

struct arrays {
	struct at_unwind_rule rules[64];
	struct at_unwind_page pages[16];
	struct at_unwind_entry entries[64];
	struct at_bpf_table tables[4];
};

/* A small table: pages from first_page, entries per page as given, rule i = (kind CFA_RSP,
 * offset 8 * i). */
struct small {
	struct at_unwind_table t;
	struct at_unwind_rule rules[8];
	struct at_unwind_page pages[4];
	struct at_unwind_entry entries[16];
};

static void make_small(struct small *s, uint64_t first_page, uint32_t rules, uint32_t pages,
		       uint32_t per_page)
{
	memset(s, 0, sizeof(*s));
	for (uint32_t i = 0; i < rules; i++)
		s->rules[i] = (struct at_unwind_rule){ AT_UNWIND_CFA_SP, 0, 0, (int32_t)(8 * i) };
	for (uint32_t p = 0; p < pages; p++) {
		s->pages[p] = (struct at_unwind_page){ p * per_page, per_page };
		for (uint32_t e = 0; e < per_page; e++)
			s->entries[p * per_page + e] =
				(struct at_unwind_entry){ (uint16_t)(e * 0x100), (uint16_t)(e % rules) };
	}
	s->t.first_page = first_page;
	s->t.rule_count = rules;
	s->t.page_count = pages;
	s->t.entry_count = pages * per_page;
	s->t.rules = s->rules;
	s->t.pages = s->pages;
	s->t.entries = s->entries;
}

static void init(struct at_stack_tables *s, struct arrays *a, uint32_t entry_cap)
{
	memset(a, 0xa5, sizeof(*a));
	assert_int_equal(at_stack_tables_init(s, a->rules, 64, a->pages, 16, a->entries, entry_cap,
					      a->tables, 4), 0);
}

static void test_bases_and_rows(void **state)
{
	(void)state;
	static struct arrays a;
	static struct small x, y;
	struct at_stack_tables s;
	uint32_t ix, iy, again;

	init(&s, &a, 64);
	make_small(&x, 0x10, 3, 2, 4);
	make_small(&y, 0x7f00, 5, 3, 2);
	assert_int_equal(at_stack_tables_add(&s, &x.t, &ix), 0);
	assert_int_equal(at_stack_tables_add(&s, &y.t, &iy), 0);
	assert_int_equal(at_stack_tables_add(&s, &x.t, &again), 0);
	assert_int_equal(ix, 0);
	assert_int_equal(iy, 1);
	assert_int_equal(again, 0);
	assert_int_equal(s.table_used, 2);
	static const struct at_bpf_table want[2] = { { 0x10, 2, 0, 0, 0 }, { 0x7f00, 3, 2, 8, 3 } };
	for (int i = 0; i < 2; i++) {
		assert_int_equal(a.tables[i].first_page, want[i].first_page);
		assert_int_equal(a.tables[i].page_count, want[i].page_count);
		assert_int_equal(a.tables[i].page_base, want[i].page_base);
		assert_int_equal(a.tables[i].entry_base, want[i].entry_base);
		assert_int_equal(a.tables[i].rule_base, want[i].rule_base);
	}
	assert_memory_equal(a.rules, x.rules, 3 * sizeof(x.rules[0]));
	assert_memory_equal(a.rules + 3, y.rules, 5 * sizeof(y.rules[0]));
	assert_memory_equal(a.pages + 2, y.pages, 3 * sizeof(y.pages[0]));
	assert_memory_equal(a.entries + 8, y.entries, 6 * sizeof(y.entries[0]));
	assert_int_equal(at_stack_tables_bytes_used(&s),
			 8 * 8 + 5 * 8 + 14 * 4 + 2 * sizeof(struct at_bpf_table));
	at_stack_tables_free(&s);
}

/* A table's index is found again by the table; one never added, or none, has no index. */
static void test_index(void **state)
{
	(void)state;
	static struct arrays a;
	static struct small x, y, z;
	struct at_stack_tables s;
	uint32_t ix, iy;

	init(&s, &a, 64);
	make_small(&x, 0x10, 3, 2, 4);
	make_small(&y, 0x7f00, 5, 3, 2);
	make_small(&z, 0x20, 2, 1, 2);
	assert_int_equal(at_stack_tables_add(&s, &x.t, &ix), 0);
	assert_int_equal(at_stack_tables_add(&s, &y.t, &iy), 0);
	assert_int_equal(at_stack_tables_index(&s, &x.t), 0);
	assert_int_equal(at_stack_tables_index(&s, &y.t), 1);
	assert_int_equal(at_stack_tables_index(&s, &z.t), AT_BPF_NO_TABLE);
	assert_int_equal(at_stack_tables_index(&s, NULL), AT_BPF_NO_TABLE);
	at_stack_tables_free(&s);
}

static void test_full(void **state)
{
	(void)state;
	static struct arrays a;
	static struct small x, y;
	struct at_stack_tables s;
	uint32_t ix, iy = 77;

	init(&s, &a, 10); /* room for x's 8 entries, not for y's 6 more */
	make_small(&x, 0x10, 3, 2, 4);
	make_small(&y, 0x20, 3, 3, 2);
	assert_int_equal(at_stack_tables_add(&s, &x.t, &ix), 0);
	errno = 0;
	assert_int_equal(at_stack_tables_add(&s, &y.t, &iy), -1);
	assert_int_equal(errno, ENOSPC);
	assert_int_equal(iy, 77);
	assert_int_equal(s.refused, 1);
	assert_int_equal(s.table_used, 1);
	assert_int_equal(s.entry_used, 8);
	assert_int_equal(a.tables[1].page_count, 0xa5a5a5a5); /* untouched */
	at_stack_tables_free(&s);
}

/* The BPF program's lookup over the arrays (bpf/alloctap.bpf.c, rule_index): -1 for none. */
static int64_t bpf_rule_index(const struct at_stack_tables *s, uint32_t ti, uint64_t addr)
{
	const struct at_bpf_table *t = &s->tables[ti];
	uint64_t page = addr >> AT_UNWIND_PAGE_SHIFT;

	if (page < t->first_page || page - t->first_page >= t->page_count)
		return -1;
	const struct at_unwind_page *pg = &s->pages[t->page_base + (uint32_t)(page - t->first_page)];
	if (pg->count == 0)
		return -1;
	uint32_t base = t->entry_base + pg->first, lo = 0, hi = pg->count;
	uint16_t low = (uint16_t)(addr & ((1u << AT_UNWIND_PAGE_SHIFT) - 1));

	for (int step = 0; step < AT_UNWIND_SEARCH_STEPS; step++) {
		uint32_t mid = lo + (hi - lo) / 2;
		uint64_t above = ((uint64_t)low - s->entries[base + mid].offset) >> 63;

		lo += (uint32_t)((1 - above) * (mid - lo));
		hi -= (uint32_t)(above * (hi - mid));
	}
	return t->rule_base + s->entries[base + lo].rule;
}

static void test_libc_lookups(void **state)
{
	(void)state;
	struct at_unwind_table libc;
	const char *why = NULL;
	struct at_stack_tables s;
	static struct small x;
	uint32_t ix, il;

	if (at_unwind_table_build(LIBC, &libc, &why) < 0)
		fail_msg("cannot build the table of %s: %s", LIBC, why);
	struct at_unwind_rule *rules = calloc(1u << 16, sizeof(*rules));
	struct at_unwind_page *pages = calloc(1u << 12, sizeof(*pages));
	struct at_unwind_entry *entries = calloc(1u << 20, sizeof(*entries));
	struct at_bpf_table *tables = calloc(4, sizeof(*tables));
	assert_true(rules && pages && entries && tables);
	assert_int_equal(at_stack_tables_init(&s, rules, 1u << 16, pages, 1u << 12, entries,
					      1u << 20, tables, 4), 0);
	make_small(&x, 0x10, 3, 2, 4); /* libc's rows go after another table's */
	assert_int_equal(at_stack_tables_add(&s, &x.t, &ix), 0);
	assert_int_equal(at_stack_tables_add(&s, &libc, &il), 0);
	uint64_t lo = libc.first_page << AT_UNWIND_PAGE_SHIFT;
	uint64_t hi = (libc.first_page + libc.page_count) << AT_UNWIND_PAGE_SHIFT;
	unsigned compared = 0, covered = 0;
	for (uint64_t addr = lo - 4096; addr < hi + 4096; addr += 7) {
		const struct at_unwind_rule *want = at_unwind_table_lookup(&libc, addr);
		int64_t got = bpf_rule_index(&s, il, addr);

		compared++;
		if (want->kind == AT_UNWIND_NONE && got < 0)
			continue;
		assert_true(got >= 0);
		assert_memory_equal(&rules[got], want, sizeof(*want));
		covered++;
	}
	print_message("%u addresses of libc compared, %u with a rule\n", compared, covered);
	assert_true(covered > compared / 2);
	at_stack_tables_free(&s);
	at_unwind_table_free(&libc);
	free(rules);
	free(pages);
	free(entries);
	free(tables);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bases_and_rows),
		cmocka_unit_test(test_index),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_libc_lookups),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
