/* test_daemon_elfsym.c: symbol lookup on small ELF files the test builds with cc (see
 * elf_fixtures.h): PIE, non-PIE, stripped (only .dynsym); and the dynamic loader's data object
 * _r_debug.
 * The truth for a file offset is the program itself: it finds its own functions in
 * /proc/self/maps and prints their file offsets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../daemon/probes/elfsym.h"
#include "../../daemon/probes/probe_site.h"
#include "elf_fixtures.h"

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
	uint64_t want_target, want_malloc;

	self_offsets(name, &want_target, &want_malloc);
	path_of(path, sizeof(path), name);
	assert_int_equal(at_elf_open(&e, path, &why), 0);
	assert_int_equal(e.has_symtab, want_symtab);
	/* without placement the site is the first instruction */
	struct at_probe_choice choice;
	at_probe_placement = 0;
	assert_int_equal(at_probe_site(&e, "target_fn", 0, 1, &choice), 1);
	assert_int_equal(choice.function_offset, want_target);
	assert_int_equal(choice.site_offset, want_target);
	assert_int_equal(at_probe_site(&e, "malloc", 0, 1, &choice), 1);
	assert_int_equal(choice.function_offset, want_malloc);
	assert_int_equal(choice.site_offset, want_malloc);
	at_probe_placement = 1;
	assert_int_equal(at_probe_site(&e, "malloc", 0, 1, &choice), 1);
	assert_int_equal(choice.function_offset, want_malloc);
	assert_true(choice.site_offset - want_malloc < 64);
	assert_int_equal(at_probe_site(&e, "no_such_function", 0, 1, &choice), 0);
	/* an undefined reference is not a definition */
	assert_int_equal(at_probe_site(&e, "fopen", 0, 1, &choice), 0);
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

/* Data objects and functions are told apart: the dynamic loader's _r_debug is an object and
 * _dl_debug_state a function (alloctapd reads the loader's state from one at the other). */
static void test_find_object(void **state)
{
	(void)state;
	struct at_elf e;
	const char *why = NULL;
	uint64_t object = 0, function = 0;

	assert_int_equal(at_elf_open(&e, "/lib64/ld-linux-x86-64.so.2", &why), 0);
	assert_int_equal(at_elf_find_object(&e, "_r_debug", &object), 1);
	assert_int_equal(at_elf_find_function(&e, "_dl_debug_state", &function), 1);
	assert_true(object != 0 && function != 0 && object != function);
	assert_int_equal(at_elf_find_object(&e, "_dl_debug_state", &object), 0);
	assert_int_equal(at_elf_find_function(&e, "_r_debug", &function), 0);
	assert_int_equal(at_elf_find_object(&e, "no_such_object", &object), 0);
	at_elf_close(&e);
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

/* What is not a regular file is refused at once, with what it is: a FIFO nobody writes (a
 * plain open would wait forever), a directory, a device. */
static void test_not_regular(void **state)
{
	(void)state;
	char dir[] = "/tmp/test_daemon_elfsym.XXXXXX", fifo[64];
	struct at_elf e;
	const char *why = NULL;

	assert_non_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	alarm(5);
	assert_int_equal(at_elf_open(&e, fifo, &why), -1);
	alarm(0);
	assert_string_equal(why, "a FIFO, not a regular file");
	assert_int_equal(e.fd, -1);
	assert_int_equal(at_elf_defines_malloc(fifo), 0);
	assert_int_equal(at_elf_open(&e, dir, &why), -1);
	assert_string_equal(why, "a directory, not a regular file");
	assert_int_equal(at_elf_open(&e, "/dev/zero", &why), -1);
	assert_string_equal(why, "a character device, not a regular file");
	unlink(fifo);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pie),
		cmocka_unit_test(test_non_pie),
		cmocka_unit_test(test_stripped_dynsym_only),
		cmocka_unit_test(test_find_object),
		cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_not_regular),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
