/* test_daemon_unwind_table.c: unwind tables of Debian's own objects (daemon/stacks/unwind_table.c):
 * rules at known places of libc and python3.11 (malloc's entry, the lazy PLT, _start), the
 * synthetic PLT rules against ld's CFI, the build-id, load biases, sharing through the cache,
 * and the size and build time of the tables of libc, python3.11, cc1 and libstdc++ (printed). */
#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../daemon/probes/elfsym.h"
#include "../../daemon/stacks/unwind_table.h"

#define LIBC "/lib/" AT_MULTIARCH "/libc.so.6"
#define LIBC_USR "/usr/lib/" AT_MULTIARCH "/libc.so.6"
#define PYTHON "/usr/bin/python3.11"
#define CC1 "/usr/lib/gcc/" AT_MULTIARCH "/12/cc1"
#define LIBSTDCXX "/lib/" AT_MULTIARCH "/libstdc++.so.6"
#define LOADER "/lib64/ld-linux-x86-64.so.2"

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

static void assert_rule(const struct at_unwind_rule *r, int kind, int32_t cfa_offset, int fp,
			int16_t fp_offset)
{
	assert_int_equal(r->kind, kind);
	assert_int_equal(r->cfa_offset, cfa_offset);
	assert_int_equal(r->fp, fp);
	assert_int_equal(r->fp_offset, fp_offset);
}

static void test_libc_rules(void **state)
{
	(void)state;
	struct at_unwind_table t;
	const char *why = NULL;

	assert_int_equal(at_unwind_table_build(LIBC, &t, &why), 0);
	/* at malloc's entry the return address is at [rsp]: CFA = rsp + 8 */
	uint64_t malloc_at = function_vaddr(LIBC, "malloc");
	assert_rule(at_unwind_table_lookup(&t, malloc_at), AT_UNWIND_CFA_SP, 8,
		    AT_UNWIND_FP_SAME, 0);
	/* the lazy PLT: PLT0 before and after its push, then ld's expression for the entries */
	uint64_t plt_size = 0, plt = section_vaddr(LIBC, ".plt", &plt_size);
	assert_true(plt != 0 && plt_size > 32);
	assert_rule(at_unwind_table_lookup(&t, plt), AT_UNWIND_CFA_SP, 16, AT_UNWIND_FP_SAME, 0);
	assert_rule(at_unwind_table_lookup(&t, plt + 6), AT_UNWIND_CFA_SP, 24, AT_UNWIND_FP_SAME,
		    0);
	assert_rule(at_unwind_table_lookup(&t, plt + 16), AT_UNWIND_PLT, 11, AT_UNWIND_FP_SAME, 0);
	assert_rule(at_unwind_table_lookup(&t, plt + plt_size - 1), AT_UNWIND_PLT, 11,
		    AT_UNWIND_FP_SAME, 0);
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

/* Compiles src with the cc options opts into dir/name (dir made here). */
static void compile(char *dir, const char *src, const char *opts, const char *name, char *out,
		    size_t out_size)
{
	char cmd[1024];

	if (dir[strlen(dir) - 6] == 'X')
		assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "%s/%s.c", dir, name);
	FILE *f = fopen(cmd, "w");
	assert_non_null(f);
	fputs(src, f);
	fclose(f);
	snprintf(out, out_size, "%s/%s", dir, name);
	snprintf(cmd, sizeof(cmd), "cc %s -o %s %s/%s.c", opts, out, dir, name);
	assert_int_equal(system(cmd), 0);
}

static void remove_dir(const char *dir)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* Asserts that two tables give the same rule at every address of a's executable segments. */
static void assert_same_rules(const struct at_unwind_table *a, const struct at_unwind_table *b)
{
	assert_int_equal(a->segment_count, b->segment_count);
	for (uint32_t i = 0; i < a->segment_count; i++) {
		const struct at_unwind_segment *s = &a->segments[i];

		for (uint64_t x = s->vaddr; x < s->vaddr + s->size; x++)
			assert_memory_equal(at_unwind_table_lookup(a, x), at_unwind_table_lookup(b, x),
					    sizeof(struct at_unwind_rule));
	}
}

static const char gold_src[] =
	"#include <stdlib.h>\n"
	"static void *volatile sink;\n"
	"__attribute__((noinline)) void c3(unsigned n) { sink = malloc(n); free(sink); }\n"
	"__attribute__((noinline)) void c2(unsigned n) { volatile unsigned k = n; c3(n); "
	"(void)k; }\n"
	"int main(int argc, char **argv) { (void)argv; c2((unsigned)argc); return 0; }\n";

/* The FDE count of the object's .eh_frame_hdr (its search table's, encoded udata4). */
static uint32_t eh_frame_hdr_fdes(const char *path)
{
	struct at_elf e;
	const char *why = NULL;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	uint32_t count = 0;

	assert_int_equal(at_elf_open(&e, path, &why), 0);
	assert_int_equal(elf_getshdrstrndx(e.elf, &shstrndx), 0);
	while ((scn = elf_nextscn(e.elf, scn))) {
		GElf_Shdr sh;
		const char *s;
		Elf_Data *d;

		if (gelf_getshdr(scn, &sh) && (s = elf_strptr(e.elf, shstrndx, sh.sh_name)) &&
		    strcmp(s, ".eh_frame_hdr") == 0 && (d = elf_rawdata(scn, NULL)) &&
		    d->d_size >= 12) {
			assert_int_equal(((const uint8_t *)d->d_buf)[2], 0x03);
			memcpy(&count, (const uint8_t *)d->d_buf + 8, 4);
		}
	}
	at_elf_close(&e);
	return count;
}

/* A program linked by GNU gold: its .eh_frame is of type SHT_X86_64_UNWIND, and its CFI is
 * found all the same, through .eh_frame_hdr (every FDE of its search table); also in a copy
 * without section headers. */
static void test_gold_eh_frame(void **state)
{
	(void)state;
	char dir[] = "/tmp/test_daemon_unwind_table.XXXXXX", gold[256], bare[300];
	char cmd[1024];

	compile(dir, gold_src, "-O2 -fomit-frame-pointer -fuse-ld=gold", "gold", gold,
		sizeof(gold));
	struct at_unwind_table g, b;
	const char *why = NULL;
	assert_int_equal(at_unwind_table_build(gold, &g, &why), 0);
	assert_true(eh_frame_hdr_fdes(gold) >= 4);
	assert_int_equal(g.stats.fdes, eh_frame_hdr_fdes(gold));
	assert_int_equal(g.stats.unreadable_fdes, 0);
	/* at c3's entry the return address is at [rsp]; gold's _start is the outermost frame */
	assert_rule(at_unwind_table_lookup(&g, function_vaddr(gold, "c3")), AT_UNWIND_CFA_SP, 8,
		    AT_UNWIND_FP_SAME, 0);
	assert_int_equal(at_unwind_table_lookup(&g, entry_vaddr(gold))->kind, AT_UNWIND_END);

	/* the section headers gone: e_shoff, e_shnum and e_shstrndx zero */
	snprintf(bare, sizeof(bare), "%s.bare", gold);
	snprintf(cmd, sizeof(cmd), "cp %s %s", gold, bare);
	assert_int_equal(system(cmd), 0);
	int fd = open(bare, O_RDWR);
	assert_true(fd >= 0);
	GElf_Ehdr eh;
	assert_int_equal(pread(fd, &eh, sizeof(Elf64_Ehdr), 0), sizeof(Elf64_Ehdr));
	eh.e_shoff = 0;
	eh.e_shnum = 0;
	eh.e_shstrndx = 0;
	assert_int_equal(pwrite(fd, &eh, sizeof(Elf64_Ehdr), 0), sizeof(Elf64_Ehdr));
	close(fd);
	assert_int_equal(at_unwind_table_build(bare, &b, &why), 0);
	assert_int_equal(b.stats.fdes, g.stats.fdes);
	assert_same_rules(&g, &b);
	at_unwind_table_free(&g);
	at_unwind_table_free(&b);
	remove_dir(dir);
}

/* An object whose .eh_frame holds no FDE, only the zero terminator (crtend.o's): the
 * frame-pointer rule over all its code, and no FDE to sort. */
static void test_object_without_cfi(void **state)
{
	(void)state;
	char dir[] = "/tmp/test_daemon_unwind_table.XXXXXX", so[256];
	static const char src[] = "int f(int x) { return x * 3 + 1; }\n"
				  "int g(int x) { return f(x) - 2; }\n"
				  "__asm__(\".pushsection .eh_frame,\\\"a\\\",@progbits\\n.long 0\\n"
				  ".popsection\\n\");\n";

	compile(dir, src,
		"-O2 -shared -fPIC -nostdlib -fno-asynchronous-unwind-tables -fno-unwind-tables "
		"-Wl,--no-eh-frame-hdr -Wl,--no-ld-generated-unwind-info",
		"nocfi.so", so, sizeof(so));
	struct at_unwind_table t;
	const char *why = NULL;
	assert_int_equal(at_unwind_table_build(so, &t, &why), 0);
	assert_int_equal(t.stats.fdes, 0);
	assert_true(t.stats.fallback_bytes > 0);
	assert_rule(at_unwind_table_lookup(&t, function_vaddr(so, "g")), AT_UNWIND_FRAME_POINTER,
		    16, AT_UNWIND_FP_AT_CFA, -16);
	at_unwind_table_free(&t);
	remove_dir(dir);
}

/* CFA programs libdw must not run: one naming register 2^26 (libdw would keep a rule for every
 * register up to it: gigabytes), one remembering 65 states. Their FDEs are left out and
 * counted unreadable; the other functions keep their rules. */
static void test_hostile_cfa_programs(void **state)
{
	(void)state;
	char dir[] = "/tmp/test_daemon_unwind_table.XXXXXX", so[256], body[512];
	char src[8192] =
		"__asm__(\".text\\n.globl far_reg\\n.type far_reg,@function\\nfar_reg:\\n"
		".cfi_startproc\\npush %rbp\\n.cfi_escape 0x05,0x80,0x80,0x80,0x20,0x08\\n"
		"pop %rbp\\nret\\n.cfi_endproc\\n"
		".globl many_states\\n.type many_states,@function\\nmany_states:\\n"
		".cfi_startproc\\n";
	for (int i = 0; i < 65; i++)
		strcat(src, ".cfi_remember_state\\n");
	snprintf(body, sizeof(body), "ret\\n.cfi_endproc\\n\");\n"
		 "int good(int x) { return x * 3 + 1; }\n");
	strcat(src, body);

	compile(dir, src, "-O2 -shared -fPIC -nostdlib -Wl,--no-eh-frame-hdr", "hostile.so", so,
		sizeof(so));
	struct at_unwind_table t;
	const char *why = NULL;
	assert_int_equal(at_unwind_table_build(so, &t, &why), 0);
	assert_int_equal(t.stats.unreadable_fdes, 2);
	assert_int_equal(t.stats.fdes, 1); /* good's */
	const struct at_unwind_rule *r = at_unwind_table_lookup(&t, function_vaddr(so, "good"));
	assert_non_null(r);
	assert_int_equal(r->kind, AT_UNWIND_CFA_SP);
	at_unwind_table_free(&t);
	remove_dir(dir);
}

/* An object whose executable segment is there twice (another PT_LOAD's header overwritten with
 * its own): its rows would go back over themselves, and a page's entries out of order; it is
 * refused, with the reason. */
static void test_overlapping_segments(void **state)
{
	(void)state;
	char dir[] = "/tmp/test_daemon_unwind_table.XXXXXX", exe[256];

	compile(dir, gold_src, "-O2", "twice", exe, sizeof(exe));
	int fd = open(exe, O_RDWR);
	assert_true(fd >= 0);
	Elf64_Ehdr eh;
	Elf64_Phdr ph[32];
	assert_int_equal(pread(fd, &eh, sizeof(eh), 0), sizeof(eh));
	assert_true(eh.e_phnum <= 32 && eh.e_phentsize == sizeof(Elf64_Phdr));
	assert_int_equal(pread(fd, ph, eh.e_phnum * sizeof(*ph), (off_t)eh.e_phoff),
			 eh.e_phnum * sizeof(*ph));
	int x = -1, other = -1;
	for (int i = 0; i < eh.e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X))
			x = i;
		else if (ph[i].p_type == PT_LOAD && other < 0)
			other = i;
	assert_true(x >= 0 && other >= 0);
	assert_int_equal(pwrite(fd, &ph[x], sizeof(*ph), (off_t)(eh.e_phoff + other * sizeof(*ph))),
			 sizeof(*ph));
	close(fd);

	struct at_unwind_table t;
	const char *why = NULL;
	assert_int_equal(at_unwind_table_build(exe, &t, &why), -1);
	assert_non_null(strstr(why, "overlapping"));
	remove_dir(dir);
}

static void ignore_signal(int sig)
{
	(void)sig;
}

/* The C library's signal trampoline (__restore_rt, which sigaction hands the kernel as the
 * handler's return address, and gives back in sa_restorer): its FDE, with the 'S'
 * augmentation, starts a byte before it; the interrupted rsp, rip and rbp are in the
 * ucontext at rsp: uc_mcontext is at 40, its gregs rbp, rsp and rip at 80, 120 and 128. */
static void test_signal_frame_rule(void **state)
{
	(void)state;
	struct sigaction sa, old;
	Dl_info info;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = ignore_signal;
	assert_int_equal(sigaction(SIGUSR2, &sa, NULL), 0);
	assert_int_equal(sigaction(SIGUSR2, NULL, &old), 0);
	assert_non_null(old.sa_restorer);
	assert_true(dladdr((void *)old.sa_restorer, &info) != 0);
	uint64_t restore_rt = (uint64_t)old.sa_restorer - (uint64_t)info.dli_fbase;

	struct at_unwind_table t;
	const char *why = NULL;
	assert_int_equal(at_unwind_table_build(info.dli_fname, &t, &why), 0);
	assert_rule(at_unwind_table_lookup(&t, restore_rt - 1), AT_UNWIND_SIGNAL, 160,
		    AT_UNWIND_FP_AT_SP, 120);
	assert_rule(at_unwind_table_lookup(&t, restore_rt), AT_UNWIND_SIGNAL, 160,
		    AT_UNWIND_FP_AT_SP, 120);
	assert_int_equal(t.stats.unsupported_rows, 6); /* was 7: the trampoline's one among them */
	at_unwind_table_free(&t);
}

/* The dynamic loader's entry (_start, _dl_start_user: no CFI) is the outermost frame of every
 * constructor it runs; the code before it keeps its own rule. */
static void test_loader_entry(void **state)
{
	(void)state;
	struct at_unwind_table t;
	const char *why = NULL;
	uint64_t entry = entry_vaddr(LOADER);

	assert_int_equal(at_unwind_table_build(LOADER, &t, &why), 0);
	for (uint64_t x = entry; x < entry + 0x30; x++)
		assert_int_equal(at_unwind_table_lookup(&t, x)->kind, AT_UNWIND_END);
	assert_int_not_equal(at_unwind_table_lookup(&t, entry - 0x10)->kind, AT_UNWIND_END);
	at_unwind_table_free(&t);
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
		cmocka_unit_test(test_gold_eh_frame),
		cmocka_unit_test(test_object_without_cfi),
		cmocka_unit_test(test_hostile_cfa_programs),
		cmocka_unit_test(test_overlapping_segments),
		cmocka_unit_test(test_signal_frame_rule),
		cmocka_unit_test(test_loader_entry),
		cmocka_unit_test(test_cache_shares_by_build_id),
		cmocka_unit_test(test_table_sizes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
