/* test_daemon_stack_procs.c: unit tests of daemon/stacks/stack_procs.c on maps files written here
 * (the objects are then opened by their paths): only executable mappings are kept, each file
 * mapping with its table index and load bias, one without a file opaque; one table per object
 * however many processes map it; the mapping records' fields (build-id included); a rescan keeps
 * what was written and each mapping's serial; a mapping a rescan no longer sees is retired with
 * its serial, and comes back with it; a record written makes those it overlaps unwritten; a
 * process forgotten leaves the others and the tables; a
 * mapping of a file that is not ELF is opaque and counted; an unreadable maps file is an error
 * that still counts as a try. Deferred builds: a scan asks once per object, its mappings opaque
 * and pending meanwhile (their records carry the build-id already); the table built, a rescan
 * loads it under the same serial; a build that failed is not asked again, one whose path had
 * gone is. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../daemon/stacks/stack_procs.h"

#define LIBC "/usr/lib/" AT_MULTIARCH "/libc.so.6"

struct fixture {
	char dir[64];
	char maps[96];
	struct at_unwind_rule rules[1u << 15];
	struct at_unwind_page pages[1u << 10];
	struct at_unwind_entry entries[1u << 17];
	struct at_bpf_table tables[8];
	struct at_stack_tables tables_state;
	struct at_stack_procs procs;
	struct at_bpf_mappings out;
	unsigned loaded;
};

static void on_loaded(void *arg, const char *path, const struct at_unwind_table *t)
{
	struct fixture *f = arg;

	(void)path;
	(void)t;
	f->loaded++;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/alloctap-stack-procs.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->maps, sizeof(f->maps), "%s/maps", f->dir);
	if (at_stack_tables_init(&f->tables_state, f->rules, 1u << 15, f->pages, 1u << 10,
				 f->entries, 1u << 17, f->tables, 8) < 0)
		return -1;
	at_stack_procs_init(&f->procs, &f->tables_state, on_loaded, f);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	at_stack_procs_free(&f->procs);
	at_stack_tables_free(&f->tables_state);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

static void write_maps(struct fixture *f, const char *text)
{
	FILE *fp = fopen(f->maps, "w");

	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

/* libc as the loader maps it at 0x7f0000000000: its executable segment (file offset 0x26000,
 * address 0x26000) at 0x7f0000026000, so the bias is 0x7f0000000000. */
static const char libc_maps[] =
	"7f0000000000-7f0000026000 r--p 00000000 08:01 100 " LIBC "\n"
	"7f0000026000-7f000017c000 r-xp 00026000 08:01 100 " LIBC "\n"
	"7f000017c000-7f00001cf000 r--p 0017c000 08:01 100 " LIBC "\n"
	"7f00001d0000-7f00001e0000 rw-p 00000000 00:00 0 \n"
	"7ffff7fc1000-7ffff7fc3000 r-xp 00000000 00:00 0                          [vdso]\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n";

static void test_scan(void **state)
{
	struct fixture *f = *state;

	write_maps(f, libc_maps);
	assert_int_equal(at_stack_procs_scan(&f->procs, 42, f->maps, 1000, &f->out), 0);
	assert_int_equal(f->out.count, 2);
	assert_int_equal(f->out.m[0].start, 0x7f0000026000ull);
	assert_int_equal(f->out.m[0].end, 0x7f000017c000ull);
	assert_int_equal(f->out.m[0].bias, 0x7f0000000000ll);
	assert_int_equal(f->out.m[0].table, 0);
	assert_int_equal(f->out.m[0].serial, 1);
	/* the vdso: executable, no file: opaque, never a record; [vsyscall], above user space,
	 * left out */
	assert_int_equal(f->out.m[1].start, 0x7ffff7fc1000ull);
	assert_int_equal(f->out.m[1].table, AT_BPF_OPAQUE);
	assert_int_equal(f->out.m[1].serial, 2);
	assert_int_equal(f->procs.no_table, 0);
	assert_int_equal(f->loaded, 1);
	struct at_stack_proc *p = at_stack_procs_find(&f->procs, 42);
	assert_non_null(p);
	assert_int_equal(p->count, 2);
	assert_int_equal(p->maps[1].anonymous, 1);
	assert_int_equal(p->maps[0].anonymous, 0);
	assert_int_equal(at_stack_procs_serial_at(p, 0x7f0000030000ull), 1);
	assert_int_equal(at_stack_procs_serial_at(p, 0x7f000017c000ull), 0);
	assert_int_equal(p->scanned_ms, 1000);
	assert_int_equal(p->maps[0].m.pid, 42);
	assert_int_equal(p->maps[0].m.offset, 0x26000);
	assert_string_equal(p->maps[0].m.path, LIBC);
	assert_int_equal(p->maps[0].m.build_id_len, 20); /* Debian's libc has a GNU build-id */
	assert_non_null(p->maps[0].table);
	assert_int_equal(p->maps[0].written, 0);
	assert_null(at_stack_procs_find(&f->procs, 43));
}

static void test_shared_table_and_rescan(void **state)
{
	struct fixture *f = *state;

	write_maps(f, libc_maps);
	assert_int_equal(at_stack_procs_scan(&f->procs, 42, f->maps, 1, &f->out), 0);
	at_stack_procs_find(&f->procs, 42)->maps[0].written = 1;
	assert_int_equal(at_stack_procs_scan(&f->procs, 43, f->maps, 2, &f->out), 0);
	assert_int_equal(f->out.m[0].table, 0); /* the same table */
	assert_int_equal(f->loaded, 1);
	assert_int_equal(f->tables_state.table_used, 1);
	/* a rescan: the same mapping stays written, a new one is not */
	char more[1024];
	snprintf(more, sizeof(more), "%s%s", libc_maps,
		 "7ffff0000000-7ffff0156000 r-xp 00026000 08:01 100 " LIBC "\n");
	write_maps(f, more);
	assert_int_equal(at_stack_procs_scan(&f->procs, 42, f->maps, 3, &f->out), 0);
	struct at_stack_proc *p = at_stack_procs_find(&f->procs, 42);
	assert_int_equal(p->count, 3);
	assert_int_equal(p->maps[0].written, 1);
	assert_int_equal(p->maps[2].written, 0);
	assert_int_equal(p->maps[0].serial, 1);
	assert_int_equal(f->out.count, 3);
	assert_int_equal(f->out.m[2].bias, 0x7ffff0000000ll - 0x26000); /* start - offset + vaddr */
}

/* One address range holds in turn two objects (a plugin closed, another opened there): each
 * keeps its serial, the one gone is retired, and writing either's record unwrites the other. */
static void test_retired(void **state)
{
	struct fixture *f = *state;
	const char *a = "7f0000026000-7f000017c000 r-xp 00026000 08:01 100 " LIBC "\n";
	char b[256];

	snprintf(b, sizeof(b), "7f0000026000-7f000017c000 r-xp 00026000 08:01 101 %s/copy\n",
		 f->dir);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "cp %s %s/copy", LIBC, f->dir);
	assert_int_equal(system(cmd), 0);
	write_maps(f, a);
	assert_int_equal(at_stack_procs_scan(&f->procs, 5, f->maps, 1, &f->out), 0);
	struct at_stack_proc *p = at_stack_procs_find(&f->procs, 5);
	assert_int_equal(p->maps[0].serial, 1);
	at_stack_procs_mark_written(p, &p->maps[0]);
	write_maps(f, b);
	assert_int_equal(at_stack_procs_scan(&f->procs, 5, f->maps, 2, &f->out), 0);
	assert_int_equal(f->out.m[0].serial, 2);
	assert_int_equal(p->maps[0].written, 0);
	assert_int_equal(p->retired_count, 1);
	struct at_stack_mapping *old = at_stack_procs_serial(p, 1);
	assert_non_null(old);
	assert_string_equal(old->m.path, LIBC);
	assert_int_equal(old->written, 1);
	at_stack_procs_mark_written(p, at_stack_procs_serial(p, 2));
	assert_int_equal(old->written, 0);
	assert_int_equal(at_stack_procs_serial(p, 2)->written, 1);
	/* the first object again: its serial back, no longer retired */
	write_maps(f, a);
	assert_int_equal(at_stack_procs_scan(&f->procs, 5, f->maps, 3, &f->out), 0);
	assert_int_equal(f->out.m[0].serial, 1);
	assert_int_equal(p->maps[0].written, 0);
	assert_null(at_stack_procs_serial(p, 0));
	assert_non_null(at_stack_procs_serial(p, 2));
	assert_string_equal(at_stack_procs_serial(p, 1)->m.path, LIBC);
}

/* A process forgotten: its mappings go, the others' stay, the table stays loaded for them; a
 * pid scanned afresh after gets new serials (serials are never given twice); forgetting a pid
 * never scanned changes nothing. */
static void test_forget(void **state)
{
	struct fixture *f = *state;

	write_maps(f, libc_maps);
	for (pid_t pid = 41; pid <= 43; pid++)
		assert_int_equal(at_stack_procs_scan(&f->procs, pid, f->maps, 1, &f->out), 0);
	assert_int_equal(f->procs.count, 3);
	at_stack_procs_forget(&f->procs, 41);
	at_stack_procs_forget(&f->procs, 41);
	at_stack_procs_forget(&f->procs, 99);
	assert_int_equal(f->procs.count, 2);
	assert_null(at_stack_procs_find(&f->procs, 41));
	for (pid_t pid = 42; pid <= 43; pid++) {
		struct at_stack_proc *p = at_stack_procs_find(&f->procs, pid);
		assert_non_null(p);
		assert_int_equal(p->count, 2);
		assert_string_equal(p->maps[0].m.path, LIBC);
	}
	uint32_t last = f->procs.last_serial;
	assert_int_equal(at_stack_procs_scan(&f->procs, 41, f->maps, 2, &f->out), 0);
	assert_int_equal(f->out.m[0].serial, last + 1);
	assert_int_equal(f->out.m[0].table, 0); /* the same table, loaded once */
	assert_int_equal(f->loaded, 1);
}

static void test_no_table(void **state)
{
	struct fixture *f = *state;
	char text[512], junk[128];

	snprintf(junk, sizeof(junk), "%s/junk", f->dir);
	FILE *fp = fopen(junk, "w");
	assert_non_null(fp);
	fputs("not an ELF file\n", fp);
	fclose(fp);
	snprintf(text, sizeof(text), "400000-401000 r-xp 00000000 08:01 7 %s\n", junk);
	write_maps(f, text);
	assert_int_equal(at_stack_procs_scan(&f->procs, 7, f->maps, 1, &f->out), 0);
	assert_int_equal(f->out.count, 1);
	assert_int_equal(f->out.m[0].table, AT_BPF_OPAQUE);
	assert_int_equal(f->procs.no_table, 1);
	assert_null(at_stack_procs_find(&f->procs, 7)->maps[0].table);
}

static void test_unreadable(void **state)
{
	struct fixture *f = *state;
	char missing[128];

	snprintf(missing, sizeof(missing), "%s/none", f->dir);
	errno = 0;
	assert_int_equal(at_stack_procs_scan(&f->procs, 7, missing, 99, &f->out), -1);
	assert_int_equal(errno, ENOENT);
	/* the try is remembered, so that rescans of a process gone can be limited */
	struct at_stack_proc *p = at_stack_procs_find(&f->procs, 7);
	assert_non_null(p);
	assert_int_equal(p->scanned_ms, 99);
	assert_int_equal(p->count, 0);
}

/* What a deferred scan asked for. */
struct requests {
	unsigned count;
	char path[128];
	uint8_t key[AT_UNWIND_BUILD_ID_MAX];
	uint8_t key_len;
};

static int on_request(void *arg, const char *path, const uint8_t key[AT_UNWIND_BUILD_ID_MAX],
		      uint8_t key_len)
{
	struct requests *r = arg;

	r->count++;
	snprintf(r->path, sizeof(r->path), "%s", path);
	memcpy(r->key, key, AT_UNWIND_BUILD_ID_MAX);
	r->key_len = key_len;
	return 0;
}

/* libc's table, built here as the builder thread would. */
static struct at_unwind_table *libc_table(void)
{
	struct at_unwind_table *t = malloc(sizeof(*t));
	const char *why;

	assert_non_null(t);
	assert_int_equal(at_unwind_table_build(LIBC, t, &why), 0);
	return t;
}

static void test_deferred(void **state)
{
	struct fixture *f = *state;
	struct requests r = { 0 };

	at_stack_procs_defer(&f->procs, on_request, &r);
	write_maps(f, libc_maps);
	assert_int_equal(at_stack_procs_scan(&f->procs, 42, f->maps, 1000, &f->out), 0);
	assert_int_equal(at_stack_procs_scan(&f->procs, 43, f->maps, 1000, &f->out), 0);
	assert_int_equal(r.count, 1); /* one object, two processes: asked once */
	assert_string_equal(r.path, LIBC);
	assert_true(r.key_len > 0);
	assert_int_equal(f->out.m[0].table, AT_BPF_OPAQUE);
	assert_int_equal(f->procs.no_table, 0);
	assert_int_equal(f->loaded, 0);
	struct at_stack_proc *p = at_stack_procs_find(&f->procs, 42);
	assert_int_equal(p->pending, 1);
	assert_int_equal(p->maps[0].pending, 1);
	assert_int_equal(p->maps[0].m.build_id_len, r.key_len);
	assert_memory_equal(p->maps[0].m.build_id, r.key, r.key_len);
	uint32_t serial = p->maps[0].serial;
	assert_true(at_stack_procs_waits_for(p, r.key, r.key_len));

	assert_int_equal(at_stack_procs_built(&f->procs, r.key, r.key_len, libc_table(), 0), 0);
	assert_int_equal(at_stack_procs_scan(&f->procs, 42, f->maps, 1100, &f->out), 0);
	assert_int_equal(r.count, 1);
	assert_int_equal(f->out.m[0].table, 0);
	assert_int_equal(f->out.m[0].bias, 0x7f0000000000ll);
	assert_int_equal(f->out.m[0].serial, serial); /* the same mapping, now with its table */
	p = at_stack_procs_find(&f->procs, 42);
	assert_int_equal(p->pending, 0);
	assert_false(at_stack_procs_waits_for(p, r.key, r.key_len));
	assert_int_equal(f->loaded, 1);
}

static void test_deferred_failures(void **state)
{
	struct fixture *f = *state;
	struct requests r = { 0 };

	at_stack_procs_defer(&f->procs, on_request, &r);
	write_maps(f, libc_maps);
	assert_int_equal(at_stack_procs_scan(&f->procs, 42, f->maps, 1000, &f->out), 0);
	assert_int_equal(r.count, 1);
	/* the path had gone: asked again at the next scan */
	assert_int_equal(at_stack_procs_built(&f->procs, r.key, r.key_len, NULL, 1), 0);
	assert_int_equal(at_stack_procs_scan(&f->procs, 42, f->maps, 1100, &f->out), 0);
	assert_int_equal(r.count, 2);
	assert_int_equal(at_stack_procs_find(&f->procs, 42)->pending, 1);
	/* the object cannot be built: never asked again, opaque and counted */
	assert_int_equal(at_stack_procs_built(&f->procs, r.key, r.key_len, NULL, 0), 0);
	assert_int_equal(at_stack_procs_scan(&f->procs, 42, f->maps, 1200, &f->out), 0);
	assert_int_equal(r.count, 2);
	assert_int_equal(f->out.m[0].table, AT_BPF_OPAQUE);
	assert_int_equal(at_stack_procs_find(&f->procs, 42)->pending, 0);
	assert_int_equal(f->procs.no_table, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_scan, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shared_table_and_rescan, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retired, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forget, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unreadable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deferred, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deferred_failures, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
