/* test_daemon_callsites.c: the scan for an allocator's direct calls to its own entry points
 * (daemon/probes/callsites.c), on a small shared library the test builds with cc, and the
 * program/library test it depends on (daemon/probes/elfsym.c). The architecture's scan of byte
 * strings has its own driver (test_daemon_x86_calls.c on x86-64). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../daemon/probes/callsites.h"
#include "../../daemon/probes/elfsym.h"

#define MAX_FOUND 16

struct found {
	struct at_direct_call c[MAX_FOUND];
	unsigned n;
};

static int collect(void *arg, const struct at_direct_call *c)
{
	struct found *f = arg;

	if (f->n < MAX_FOUND)
		f->c[f->n++] = *c;
	return 0;
}

static char dir[] = "/tmp/test_daemon_callsites.XXXXXX";

/* A library whose flush() calls its own free straight (through a local alias: no PLT), and
 * whose dup() calls malloc the way a program would (through the PLT). */
static const char lib_src[] =
	"#include <stddef.h>\n#include <string.h>\n"
	"static char arena[4096]; static size_t used;\n"
	"void *malloc(size_t n) { void *p = arena + used; used += n; return p; }\n"
	"__attribute__((noinline)) void free(void *p) { used -= p != NULL; }\n"
	"static void own_free(void *p) __attribute__((alias(\"free\")));\n"
	"__attribute__((noinline)) size_t flush(void *p) { own_free(p); return used; }\n"
	"void *dup(const char *s) { size_t n = strlen(s) + 1; return memcpy(malloc(n), s, n); }\n";

static const char prog_src[] = "int main(void) { return 0; }\n";

static char lib[600], pie[600], nopie[600];

static int build(char *out, const char *name, const char *src, const char *flags)
{
	char c_path[700], cmd[2048];
	FILE *f;

	snprintf(out, 600, "%s/%s", dir, name);
	snprintf(c_path, sizeof(c_path), "%s.c", out);
	f = fopen(c_path, "w");
	if (!f)
		return -1;
	fputs(src, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cc %s -o %s %s", flags, out, c_path);
	return system(cmd) == 0 ? 0 : -1;
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	if (build(lib, "liball.so", lib_src, "-O2 -shared -fPIC -fno-builtin") ||
	    build(pie, "pie", prog_src, "-fPIE -pie") ||
	    build(nopie, "nopie", prog_src, "-fno-pie -no-pie")) {
		fprintf(stderr, "cannot build the ELF fixtures with cc in %s\n", dir);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	char cmd[700];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_library(void **state)
{
	struct at_elf e;
	const char *why;
	uint64_t targets[2], flush;
	struct found f = { .n = 0 };

	(void)state;
	assert_int_equal(at_elf_open(&e, lib, &why), 0);
	assert_int_equal(at_elf_is_program(&e), 0);
	assert_int_equal(at_elf_find_function(&e, "malloc", &targets[0]), 1);
	assert_int_equal(at_elf_find_function(&e, "free", &targets[1]), 1);
	assert_int_equal(at_elf_find_function(&e, "flush", &flush), 1);
	assert_int_equal(at_elf_find_direct_calls(&e, targets, 2, collect, &f), 0);
	/* flush's call of free; dup's malloc goes through the PLT, which is not scanned */
	assert_int_equal(f.n, 1);
	assert_int_equal(f.c[0].target, targets[1]);
	assert_int_equal(f.c[0].is_call, 1);
	assert_true(f.c[0].site >= flush && f.c[0].site < flush + 16);
	at_elf_close(&e);
}

static void test_programs(void **state)
{
	struct at_elf e;
	const char *why;

	(void)state;
	assert_int_equal(at_elf_open(&e, pie, &why), 0);
	assert_int_equal(at_elf_is_program(&e), 1);
	at_elf_close(&e);
	assert_int_equal(at_elf_open(&e, nopie, &why), 0);
	assert_int_equal(at_elf_is_program(&e), 1);
	at_elf_close(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_library),
		cmocka_unit_test(test_programs),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
