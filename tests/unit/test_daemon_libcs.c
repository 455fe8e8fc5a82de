/* test_daemon_libcs.c: unit tests of daemon/procs/libcs.c (--all's scan for C libraries): this
 * machine's /proc, and a /proc built by hand: one library shared by processes, a second copy
 * of it, a "libc" without malloc, processes without a C library, entries that are no
 * processes. */
#include <errno.h>
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

#include "../../daemon/procs/libcs.h"
#include "procmaps.h"

static char root[] = "/tmp/test_daemon_libcs.XXXXXX";
static char libc[512]; /* the C library this test runs on */

static int find_libc(const struct at_procmaps_entry *e, void *arg)
{
	(void)arg;
	if (!at_is_libc_path(e->path))
		return 0;
	snprintf(libc, sizeof(libc), "%s", e->path);
	return 1;
}

static int setup(void **state)
{
	(void)state;
	if (at_procmaps_for_each_file("/proc/self/maps", find_libc, NULL, NULL) != 1)
		return -1;
	return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	return system(cmd);
}

/* A process under root/proc: its maps lines (already formatted) and root linked to "/". */
static void fake_process(const char *name, const char *maps)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/proc/%s", root, name);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/proc/%s/root", root, name);
	assert_int_equal(symlink("/", path), 0);
	snprintf(path, sizeof(path), "%s/proc/%s/maps", root, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(maps, f);
	fclose(f);
}

static void test_this_machine(void **state)
{
	(void)state;
	static struct at_libcs l;

	assert_int_equal(at_libcs_scan("/proc", &l), 0);
	assert_true(l.n >= 1); /* this test's own C library at least */
	for (unsigned i = 0; i < l.n; i++) {
		/* the maps path itself when it names the mapped file here, else under the
		 * process's root: either way that very file */
		struct stat st;
		assert_int_equal(l.objs[i].path[0], '/');
		assert_true(at_is_libc_path(l.objs[i].path));
		assert_int_equal(access(l.objs[i].path, R_OK), 0);
		assert_int_equal(stat(l.objs[i].path, &st), 0);
		assert_int_equal(st.st_ino, l.objs[i].inode);
		for (unsigned j = 0; j < i; j++)
			assert_false(l.objs[i].dev == l.objs[j].dev &&
				     l.objs[i].inode == l.objs[j].inode);
	}
}

static void test_fake_proc(void **state)
{
	(void)state;
	static struct at_libcs l;
	char proc[256], maps[2048], fakelibc[256];

	snprintf(proc, sizeof(proc), "%s/proc", root);
	assert_int_equal(mkdir(proc, 0755), 0);
	/* a file named like a C library that defines no malloc */
	snprintf(fakelibc, sizeof(fakelibc), "%s/libc.so.6", root);
	FILE *f = fopen(fakelibc, "w");
	fputs("not an ELF file\n", f);
	fclose(f);

	snprintf(maps, sizeof(maps),
		 "55d0c2a5e000-55d0c2a7f000 rw-p 00000000 00:00 0    [heap]\n"
		 "7f00000000-7f00010000 r--p 00000000 fe:01 111   %s\n"
		 "7f00010000-7f00020000 r-xp 00010000 fe:01 111   %s\n", libc, libc);
	fake_process("100", maps);
	fake_process("200", maps); /* the same file: once */
	snprintf(maps, sizeof(maps),
		 "7f00000000-7f00010000 r--p 00000000 fe:02 111   %s\n", libc);
	fake_process("300", maps); /* another device: another file */
	snprintf(maps, sizeof(maps), "7f00000000-7f00010000 r--p 00000000 fe:01 222   %s\n",
		 fakelibc);
	fake_process("400", maps); /* no malloc in it */
	fake_process("500", "7f00000000-7f00010000 r-xp 00000000 fe:01 333   /bin/true\n");
	fake_process("600", ""); /* a kernel thread: no maps */
	assert_int_equal(mkdir(strcat(proc, "/sys"), 0755), 0); /* not a process */

	snprintf(proc, sizeof(proc), "%s/proc", root);
	assert_int_equal(at_libcs_scan(proc, &l), 0);
	assert_int_equal(l.n, 2);
	unsigned inodes = 0;
	for (unsigned i = 0; i < l.n; i++) {
		char want[1024];
		assert_int_equal(l.objs[i].inode, 111);
		inodes |= 1u << (l.objs[i].dev & 0xf);
		const char *pid = l.objs[i].dev == (0xfeull << 32 | 2) ? "300" : NULL;
		if (pid) {
			snprintf(want, sizeof(want), "%s/%s/root%s", proc, pid, libc);
			assert_string_equal(l.objs[i].path, want);
		}
	}
	assert_int_equal(inodes, 1u << 1 | 1u << 2);
}

static void test_no_proc(void **state)
{
	(void)state;
	static struct at_libcs l;

	assert_int_equal(at_libcs_scan("/nonexistent/proc", &l), -1);
	assert_int_equal(errno, ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_this_machine),
		cmocka_unit_test(test_fake_proc),
		cmocka_unit_test(test_no_proc),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
