/* test_daemon_elf.c: symbol lookup and allocator discovery on small ELF files the test builds
 * with cc: PIE, non-PIE, stripped (only .dynsym), shared libraries with and without malloc.
 * The truth for a file offset is the program itself: it finds its own functions in
 * /proc/self/maps and prints their file offsets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../daemon/discover.h"
#include "../../daemon/elfsym.h"
#include "../../daemon/probe_site.h"

static char dir[] = "/tmp/test_daemon_elf.XXXXXX";

/* A program with its own malloc (a bump allocator) that prints the file offsets of its
 * functions target_fn and malloc, computed from its own mappings. */
static const char self_locating_src[] =
	"#include <stdio.h>\n#include <stdint.h>\n#include <stddef.h>\n#include <string.h>\n"
	"static char arena[1 << 20]; static size_t used;\n"
	"__attribute__((noinline, used)) void *malloc(size_t n) { void *p = arena + used;\n"
	"  used += (n + 15) & ~(size_t)15; return p; }\n"
	"__attribute__((noinline, used)) void free(void *p) { (void)p; }\n"
	"__attribute__((noinline, used)) void *calloc(size_t a, size_t b) {\n"
	"  return memset(malloc(a * b), 0, a * b); }\n"
	"__attribute__((noinline, used)) void *realloc(void *p, size_t n) { void *q = malloc(n);\n"
	"  if (p) memcpy(q, p, n); return q; }\n"
	"__attribute__((noinline, used)) int target_fn(int x) { return x * 3 + 1; }\n"
	"static unsigned long offset_of(void *fn) {\n"
	"  FILE *f = fopen(\"/proc/self/maps\", \"r\"); char line[512];\n"
	"  unsigned long a = (unsigned long)fn, s, e, off;\n"
	"  while (fgets(line, sizeof line, f))\n"
	"    if (sscanf(line, \"%lx-%lx %*s %lx\", &s, &e, &off) == 3 && a >= s && a < e)\n"
	"      return a - s + off;\n"
	"  return 0; }\n"
	"int main(void) { printf(\"%lu %lu\\n\", offset_of((void *)target_fn),\n"
	"  offset_of((void *)malloc)); return 0; }\n";

static const char plain_src[] =
	"#include <stdlib.h>\nint target_fn(int x) { return x + 1; }\n"
	"int main(void) { return target_fn(-1); }\n";

static const char lib_without_malloc_src[] = "int lib_fn(int x) { return x * 7; }\n";

static const char lib_with_malloc_src[] =
	"#include <stddef.h>\nstatic char arena[4096]; static size_t used;\n"
	"void *malloc(size_t n) { void *p = arena + used; used += n; return p; }\n"
	"void free(void *p) { (void)p; }\n";

static void path_of(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", dir, name);
}

/* Writes src to DIR/name.c and runs "cc FLAGS -o DIR/name DIR/name.c" then POST (with %s =
 * the output path). */
static int build(const char *name, const char *src, const char *flags, const char *post)
{
	char c_path[600], out[512], cmd[2048];
	FILE *f;

	path_of(out, sizeof(out), name);
	snprintf(c_path, sizeof(c_path), "%s.c", out);
	f = fopen(c_path, "w");
	if (!f)
		return -1;
	fputs(src, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cc -O1 %s -o %s %s", flags, out, c_path);
	if (system(cmd) != 0)
		return -1;
	if (post) {
		char p[1024];
		snprintf(p, sizeof(p), post, out);
		if (system(p) != 0)
			return -1;
	}
	return 0;
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	if (build("pie", self_locating_src, "-fPIE -pie", NULL) ||
	    build("nopie", self_locating_src, "-fno-pie -no-pie", NULL) ||
	    build("stripped", self_locating_src, "-fPIE -pie -rdynamic", "strip --strip-all %s") ||
	    build("plain", plain_src, "-fPIE -pie", NULL) ||
	    build("libnomalloc.so", lib_without_malloc_src, "-shared -fPIC", NULL) ||
	    build("libmalloc.so", lib_with_malloc_src, "-shared -fPIC", "strip --strip-all %s")) {
		fprintf(stderr, "cannot build the ELF fixtures with cc and strip in %s\n", dir);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	char cmd[600];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Runs DIR/name and reads the two offsets it prints. */
static void self_offsets(const char *name, uint64_t *target, uint64_t *malloc_off)
{
	char path[512];
	unsigned long a = 0, b = 0;

	path_of(path, sizeof(path), name);
	FILE *p = popen(path, "r");
	assert_non_null(p);
	assert_int_equal(fscanf(p, "%lu %lu", &a, &b), 2);
	assert_int_equal(pclose(p), 0);
	assert_true(a != 0 && b != 0);
	*target = a;
	*malloc_off = b;
}

static void check_offsets(const char *name, int want_symtab)
{
	char path[512];
	struct at_elf e;
	const char *why = NULL;
	uint64_t want_target, want_malloc, off;

	self_offsets(name, &want_target, &want_malloc);
	path_of(path, sizeof(path), name);
	assert_int_equal(at_elf_open(&e, path, &why), 0);
	assert_int_equal(e.has_symtab, want_symtab);
	assert_int_equal(at_probe_return_offset(&e, "target_fn", &off), 1);
	assert_int_equal(off, want_target);
	/* malloc also gets a return probe: its entry probe stays on its first instruction */
	struct at_probe_choice choice;
	assert_int_equal(at_probe_entry_site(&e, "malloc", 1, 0, &choice), 1);
	assert_int_equal(choice.function_offset, want_malloc);
	assert_int_equal(choice.entry_offset, want_malloc);
	assert_int_equal(at_probe_entry_site(&e, "no_such_function", 1, 0, &choice), 0);
	/* an undefined reference is not a definition */
	assert_int_equal(at_probe_entry_site(&e, "fopen", 1, 0, &choice), 0);
	assert_int_equal(at_probe_return_offset(&e, "fopen", &off), 0);
	at_elf_close(&e);
}

static void test_pie(void **state)
{
	(void)state;
	check_offsets("pie", 1);
}

static void test_non_pie(void **state)
{
	(void)state;
	check_offsets("nopie", 1);
}

static void test_stripped_dynsym_only(void **state)
{
	(void)state;
	check_offsets("stripped", 0);
}

static void test_not_elf(void **state)
{
	(void)state;
	char path[512];
	struct at_elf e;
	const char *why = NULL;

	path_of(path, sizeof(path), "pie.c");
	assert_int_equal(at_elf_open(&e, path, &why), -1);
	assert_string_equal(why, "not an ELF file");
	assert_int_equal(at_elf_open(&e, "/nonexistent/file", &why), -1);
	assert_string_equal(why, "No such file or directory");
}

static void test_choose_allocator(void **state)
{
	(void)state;
	char pie[512], plain[512], nomalloc[512], withmalloc[512], libc[4096], out[4096];
	char preload[8192];

	path_of(pie, sizeof(pie), "pie");
	path_of(plain, sizeof(plain), "plain");
	path_of(nomalloc, sizeof(nomalloc), "libnomalloc.so");
	path_of(withmalloc, sizeof(withmalloc), "libmalloc.so");
	assert_int_equal(at_find_library("libc.so.6", libc, sizeof(libc)), 0);

	/* the executable's own malloc wins over everything */
	snprintf(preload, sizeof(preload), "%s", withmalloc);
	assert_int_equal(at_choose_allocator(pie, preload, libc, out, sizeof(out)), 0);
	assert_string_equal(out, pie);
	/* else the first LD_PRELOAD entry with malloc (spaces or colons between) */
	snprintf(preload, sizeof(preload), "%s:%s %s", nomalloc, withmalloc, libc);
	assert_int_equal(at_choose_allocator(plain, preload, libc, out, sizeof(out)), 0);
	assert_string_equal(out, withmalloc);
	/* else the C library */
	snprintf(preload, sizeof(preload), "%s", nomalloc);
	assert_int_equal(at_choose_allocator(plain, preload, libc, out, sizeof(out)), 0);
	assert_string_equal(out, libc);
	assert_int_equal(at_choose_allocator(plain, NULL, libc, out, sizeof(out)), 0);
	assert_string_equal(out, libc);
	/* nobody defines malloc */
	assert_int_equal(at_choose_allocator(plain, preload, nomalloc, out, sizeof(out)), -1);
	assert_int_equal(at_choose_allocator(plain, NULL, NULL, out, sizeof(out)), -1);
}

static void test_discover_launch(void **state)
{
	(void)state;
	char plain[512], withmalloc[512], env[600], out[4096], why[256], libc[4096];

	path_of(plain, sizeof(plain), "plain");
	path_of(withmalloc, sizeof(withmalloc), "libmalloc.so");
	assert_int_equal(at_find_library("libc.so.6", libc, sizeof(libc)), 0);
	snprintf(env, sizeof(env), "LD_PRELOAD=%s", withmalloc);
	char *envp[] = { "PATH=/bin", env, NULL };
	assert_int_equal(at_discover_launch(plain, envp, out, sizeof(out), why, sizeof(why)), 0);
	assert_string_equal(out, withmalloc);
	char *no_preload[] = { "PATH=/bin", NULL };
	assert_int_equal(at_discover_launch(plain, no_preload, out, sizeof(out), why, sizeof(why)),
			 0);
	assert_string_equal(out, libc);
	/* a bare library name is searched like the dynamic linker would */
	char *bare[] = { "LD_PRELOAD=libc.so.6", NULL };
	assert_int_equal(at_discover_launch(plain, bare, out, sizeof(out), why, sizeof(why)), 0);
	assert_string_equal(out, libc);
}

/* Discovery on a live process: this test program uses the C library. */
static void test_discover_self(void **state)
{
	(void)state;
	char out[4096], why[256], prefix[64];

	assert_int_equal(at_discover_pid(getpid(), out, sizeof(out), why, sizeof(why)), 0);
	snprintf(prefix, sizeof(prefix), "/proc/%d/root/", (int)getpid());
	assert_memory_equal(out, prefix, strlen(prefix));
	assert_non_null(strstr(out, "libc.so.6"));
	assert_int_equal(at_discover_pid(999999999, out, sizeof(out), why, sizeof(why)), -1);
	assert_string_equal(why, "no process 999999999");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pie),
		cmocka_unit_test(test_non_pie),
		cmocka_unit_test(test_stripped_dynsym_only),
		cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_choose_allocator),
		cmocka_unit_test(test_discover_launch),
		cmocka_unit_test(test_discover_self),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
