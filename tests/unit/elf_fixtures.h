/* elf_fixtures.h: the small ELF files the daemon's symbol and discovery tests build with cc in
 * a temporary folder: PIE, non-PIE and stripped programs with their own malloc, a program
 * without one, shared libraries with and without malloc. A driver passes setup and teardown
 * to cmocka_run_group_tests and names a file with path_of. */
#ifndef ALLOCTAP_TESTS_ELF_FIXTURES_H
#define ALLOCTAP_TESTS_ELF_FIXTURES_H

#include <stdio.h>
#include <stdlib.h>

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

#endif
