/* test_daemon_unwind_table.c: unwind tables of Debian's own objects (daemon/unwind_table.c):
 * rules at known places of libc and python3.11 (malloc's entry, the lazy PLT, _start), the
 * synthetic PLT rules against ld's CFI, the build-id, load biases, sharing through the cache,
 * and the size and build time of the tables of libc, python3.11, cc1 and libstdc++ (printed). */
#include <gelf.h>
#include <libelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../daemon/elfsym.h"
#include "../../daemon/unwind_table.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"
#define LIBC_USR "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define PYTHON "/usr/bin/python3.11"
#define CC1 "/usr/lib/gcc/x86_64-linux-gnu/12/cc1"
#define LIBSTDCXX "/lib/x86_64-linux-gnu/libstdc++.so.6"

static uint64_t function_vaddr(const char *path, const char *name)
{
	struct at_elf e;
	const char *why = NULL;
	uint64_t vaddr = 0;

	assert_int_equal(at_elf_open(&e, path, &why), 0);
	assert_int_equal(at_elf_find_function(&e, name, &vaddr), 1);
	at_elf_close(&e);
	return vaddr;
}

static uint64_t entry_vaddr(const char *path)
{
	struct at_elf e;
	const char *why = NULL;
	GElf_Ehdr eh;

	assert_int_equal(at_elf_open(&e, path, &why), 0);
	assert_non_null(gelf_getehdr(e.elf, &eh));
	at_elf_close(&e);
	return eh.e_entry;
}

/* The address and size of a section by name; 0 if the file has none. */
static uint64_t section_vaddr(const char *path, const char *name, uint64_t *size)
{
	struct at_elf e;
	const char *why = NULL;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	uint64_t vaddr = 0;

	assert_int_equal(at_elf_open(&e, path, &why), 0);
	assert_int_equal(elf_getshdrstrndx(e.elf, &shstrndx), 0);
	while ((scn = elf_nextscn(e.elf, scn))) {
		GElf_Shdr sh;
		const char *s;

		if (gelf_getshdr(scn, &sh) && (s = elf_strptr(e.elf, shstrndx, sh.sh_name)) &&
		    strcmp(s, name) == 0) {
			vaddr = sh.sh_addr;
			*size = sh.sh_size;
		}
	}
	at_elf_close(&e);
	return vaddr;
}

static void assert_rule(const struct at_unwind_rule *r, int kind, int32_t cfa_offset, int rbp,
			int16_t rbp_offset)
{
	assert_int_equal(r->kind, kind);
	assert_int_equal(r->cfa_offset, cfa_offset);
	assert_int_equal(r->rbp, rbp);
	assert_int_equal(r->rbp_offset, rbp_offset);
}

static void test_libc_rules(void **state)
{
	(void)state;
	struct at_unwind_table t;
	const char *why = NULL;

	assert_int_equal(at_unwind_table_build(LIBC, &t, &why), 0);
	/* at malloc's entry the return address is at [rsp]: CFA = rsp + 8 */
	uint64_t malloc_at = function_vaddr(LIBC, "malloc");
	assert_rule(at_unwind_table_lookup(&t, malloc_at), AT_UNWIND_CFA_RSP, 8,
		    AT_UNWIND_RBP_SAME, 0);
	/* the lazy PLT: PLT0 before and after its push, then ld's expression for the entries */
	uint64_t plt_size = 0, plt = section_vaddr(LIBC, ".plt", &plt_size);
	assert_true(plt != 0 && plt_size > 32);
	assert_rule(at_unwind_table_lookup(&t, plt), AT_UNWIND_CFA_RSP, 16, AT_UNWIND_RBP_SAME, 0);
	assert_rule(at_unwind_table_lookup(&t, plt + 6), AT_UNWIND_CFA_RSP, 24, AT_UNWIND_RBP_SAME,
		    0);
	assert_rule(at_unwind_table_lookup(&t, plt + 16), AT_UNWIND_PLT, 11, AT_UNWIND_RBP_SAME, 0);
	assert_rule(at_unwind_table_lookup(&t, plt + plt_size - 1), AT_UNWIND_PLT, 11,
		    AT_UNWIND_RBP_SAME, 0);
	/* outside the executable segment there is no rule */
	assert_int_equal(at_unwind_table_lookup(&t, 0)->kind, AT_UNWIND_NONE);
	assert_int_equal(at_unwind_table_lookup(&t, t.segments[0].vaddr - 1)->kind, AT_UNWIND_NONE);
	assert_int_equal(at_unwind_table_lookup(&t, t.segments[0].vaddr + t.segments[0].size)->kind,
			 AT_UNWIND_NONE);
	assert_int_equal(at_unwind_table_lookup(&t, UINT64_MAX)->kind, AT_UNWIND_NONE);
	assert_true(t.stats.fdes > 1000);
	assert_true(t.stats.fallback_bytes < 4096);

	/* the build-id of the note, and the load bias of a mapping of the text */
	uint8_t id[AT_UNWIND_BUILD_ID_MAX];
	assert_int_equal(at_unwind_read_build_id(LIBC, id), 20);
	assert_int_equal(t.build_id_len, 20);
	assert_memory_equal(id, t.build_id, 20);
	int64_t bias = 0;
	const struct at_unwind_segment *s = &t.segments[0];
	uint64_t map_offset = s->offset & ~(uint64_t)4095;
	assert_int_equal(at_unwind_table_bias(&t, 0x7f0000000000 + map_offset, map_offset, &bias),
			 0);
	assert_int_equal(bias, 0x7f0000000000 + (int64_t)(s->offset - s->vaddr));
	assert_int_equal(at_unwind_table_bias(&t, 0x7f0000000000, s->offset + s->size + 4096, &bias),
			 -1);
	at_unwind_table_free(&t);
}

static void test_outermost_frame(void **state)
{
	(void)state;
	struct at_unwind_table t;
	const char *why = NULL;

	assert_int_equal(at_unwind_table_build(PYTHON, &t, &why), 0);
	/* _start (the entry point) marks the return address undefined */
	uint64_t start = entry_vaddr(PYTHON);
	assert_int_equal(at_unwind_table_lookup(&t, start)->kind, AT_UNWIND_END);
	assert_int_equal(at_unwind_table_lookup(&t, start + 4)->kind, AT_UNWIND_END);
	at_unwind_table_free(&t);
	uint8_t id[AT_UNWIND_BUILD_ID_MAX];
	assert_int_equal(at_unwind_read_build_id("/etc/passwd", id), -1);
	assert_int_equal(at_unwind_table_build("/etc/passwd", &t, &why), -1);
	assert_non_null(why);
}

/* A library linked twice, with and without ld's CFI for its PLT: the synthetic PLT rules must
 * be ld's, at every byte of .plt and .plt.got. */
static void test_synthetic_plt_rules(void **state)
{
	(void)state;
	char dir[] = "/tmp/test_daemon_unwind_table.XXXXXX", cmd[1024], with[256], without[256];
	static const char src[] = "#include <stdlib.h>\n#include <string.h>\n"
				  "size_t f(const char *s) { char *p = strdup(s); size_t n = "
				  "strlen(p); free(p); return n + (size_t)atoi(s); }\n";

	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "%s/plt.c", dir);
	FILE *f = fopen(cmd, "w");
	assert_non_null(f);
	fputs(src, f);
	fclose(f);
	snprintf(with, sizeof(with), "%s/with.so", dir);
	snprintf(without, sizeof(without), "%s/without.so", dir);
	snprintf(cmd, sizeof(cmd),
		 "cc -shared -fPIC -O2 -o %s %s/plt.c && "
		 "cc -shared -fPIC -O2 -Wl,--no-ld-generated-unwind-info -o %s %s/plt.c",
		 with, dir, without, dir);
	assert_int_equal(system(cmd), 0);

	struct at_unwind_table a, b;
	const char *why = NULL;
	assert_int_equal(at_unwind_table_build(with, &a, &why), 0);
	assert_int_equal(at_unwind_table_build(without, &b, &why), 0);
	assert_int_equal(a.stats.plt_bytes, 0);
	static const char *const sections[] = { ".plt", ".plt.got" };
	for (size_t i = 0; i < 2; i++) {
		uint64_t size = 0, at = section_vaddr(with, sections[i], &size);
		uint64_t size_b = 0, at_b = section_vaddr(without, sections[i], &size_b);

		assert_true(at != 0 && size > 0);
		assert_int_equal(at, at_b);
		assert_int_equal(size, size_b);
		for (uint64_t x = at; x < at + size; x++)
			assert_memory_equal(at_unwind_table_lookup(&a, x),
					    at_unwind_table_lookup(&b, x),
					    sizeof(struct at_unwind_rule));
	}
	assert_true(b.stats.plt_bytes > 0);
	at_unwind_table_free(&a);
	at_unwind_table_free(&b);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_cache_shares_by_build_id(void **state)
{
	(void)state;
	struct at_unwind_cache c = { 0 };
	const char *why = NULL;

	const struct at_unwind_table *a = at_unwind_cache_get(&c, LIBC, &why);
	assert_non_null(a);
	/* the same file under another name (Debian's merged /usr) is the same table */
	const struct at_unwind_table *b = at_unwind_cache_get(&c, LIBC_USR, &why);
	assert_ptr_equal(a, b);
	const struct at_unwind_table *p = at_unwind_cache_get(&c, PYTHON, &why);
	assert_non_null(p);
	assert_ptr_not_equal(a, p);
	assert_int_equal(c.count, 2);
	assert_null(at_unwind_cache_get(&c, "/nonexistent", &why));
	assert_int_equal(c.count, 2);
	at_unwind_cache_free(&c);
}

/* Prints size and build time of the tables the design is measured on. */
static void test_table_sizes(void **state)
{
	(void)state;
	static const char *const objects[] = { LIBC, PYTHON, CC1, LIBSTDCXX };

	for (size_t i = 0; i < sizeof(objects) / sizeof(objects[0]); i++) {
		struct at_unwind_table t;
		const char *why = NULL;

		if (access(objects[i], R_OK) != 0) {
			print_message("%s: not installed\n", objects[i]);
			continue;
		}
		assert_int_equal(at_unwind_table_build(objects[i], &t, &why), 0);
		print_message("%s: %zu bytes (%u rules, %u pages, %u entries; %u FDEs, %u "
			      "unsupported rows, %llu bytes without CFI), built in %.1f ms\n",
			      objects[i], at_unwind_table_bytes(&t), t.rule_count, t.page_count,
			      t.entry_count, t.stats.fdes, t.stats.unsupported_rows,
			      (unsigned long long)t.stats.fallback_bytes,
			      (double)t.stats.build_ns / 1e6);
		/* every page with code starts with an entry at offset 0 */
		for (uint32_t p = 0; p < t.page_count; p++)
			if (t.pages[p].count)
				assert_int_equal(t.entries[t.pages[p].first].offset, 0);
		at_unwind_table_free(&t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_libc_rules),
		cmocka_unit_test(test_outermost_frame),
		cmocka_unit_test(test_synthetic_plt_rules),
		cmocka_unit_test(test_cache_shares_by_build_id),
		cmocka_unit_test(test_table_sizes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
