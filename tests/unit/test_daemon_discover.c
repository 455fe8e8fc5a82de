/* test_daemon_discover.c: unit tests of daemon/procs/discover.c, which object provides a target's
 * malloc, on the ELF files of elf_fixtures.h and on this process. */
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../daemon/procs/discover.h"
#include "elf_fixtures.h"
#include "functions.h"
#include "procmaps.h"

/* The C family's first function, the symbol the daemon discovers its allocators by (malloc). */
#define C_FIRST at_family_symbol(AT_FAMILY_C)

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
	assert_int_equal(at_choose_allocator(pie, preload, libc, C_FIRST, out, sizeof(out)), 0);
	assert_string_equal(out, pie);
	/* else the first LD_PRELOAD entry with malloc (spaces or colons between) */
	snprintf(preload, sizeof(preload), "%s:%s %s", nomalloc, withmalloc, libc);
	assert_int_equal(at_choose_allocator(plain, preload, libc, C_FIRST, out, sizeof(out)), 0);
	assert_string_equal(out, withmalloc);
	/* else the C library */
	snprintf(preload, sizeof(preload), "%s", nomalloc);
	assert_int_equal(at_choose_allocator(plain, preload, libc, C_FIRST, out, sizeof(out)), 0);
	assert_string_equal(out, libc);
	assert_int_equal(at_choose_allocator(plain, NULL, libc, C_FIRST, out, sizeof(out)), 0);
	assert_string_equal(out, libc);
	/* nobody defines malloc */
	assert_int_equal(at_choose_allocator(plain, preload, nomalloc, C_FIRST,
					     out, sizeof(out)), -1);
	assert_int_equal(at_choose_allocator(plain, NULL, NULL, C_FIRST, out, sizeof(out)), -1);
}

/* Copies file from into to (replacing to by a new file, as a rename does). */
static void replace_with(const char *from, const char *to)
{
	char tmp[600], buf[65536];
	ssize_t n;
	int in = open(from, O_RDONLY), out;

	snprintf(tmp, sizeof(tmp), "%s.new", to);
	out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	close(in);
	close(out);
	assert_int_equal(rename(tmp, to), 0);
}

/* A remembered answer is found by a look at the path and the file is not opened again: a child
 * that may not read the file (mode 0, its capabilities to pass over permissions dropped) is
 * still told what the file defines, from the answer its parent read. */
static void test_defines_remembered_unopened(void **state)
{
	(void)state;
	char pie[512], at[512];

	path_of(pie, sizeof(pie), "pie");
	path_of(at, sizeof(at), "unreadable");
	replace_with(pie, at);
	assert_int_equal(chmod(at, 0), 0);
	assert_int_equal(at_discover_defines(at, C_FIRST), 1); /* read: root passes over mode 0 */
	pid_t child = fork();

	assert_true(child >= 0);
	if (child == 0) {
		struct __user_cap_header_struct head = { _LINUX_CAPABILITY_VERSION_3, 0 };
		struct __user_cap_data_struct none[2] = { { 0, 0, 0 }, { 0, 0, 0 } };

		if (syscall(SYS_capset, &head, none) != 0)
			_exit(2);
		int fd = open(at, O_RDONLY);
		if (fd >= 0)
			_exit(3); /* the file can still be opened: the test proves nothing */
		_exit(at_discover_defines(at, C_FIRST) == 1 ? 0 : 1);
	}
	int status;

	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(unlink(at), 0);
}

/* What a file defines is remembered by the file the path names when it is opened: the same
 * path replaced by another file (a new inode) is asked again, each way, and a FIFO there is
 * refused without blocking. */
static void test_defines_per_file(void **state)
{
	(void)state;
	char pie[512], plain[512], at[512];

	path_of(pie, sizeof(pie), "pie");
	path_of(plain, sizeof(plain), "plain");
	path_of(at, sizeof(at), "replaced");
	for (int round = 0; round < 2; round++) {
		replace_with(pie, at);
		assert_int_equal(at_discover_defines(at, C_FIRST), 1);
		assert_int_equal(at_discover_defines(at, C_FIRST), 1); /* remembered */
		replace_with(plain, at);
		assert_int_equal(at_discover_defines(at, C_FIRST), 0);
	}
	assert_int_equal(unlink(at), 0);
	assert_int_equal(mkfifo(at, 0600), 0);
	assert_int_equal(at_discover_defines(at, C_FIRST), 0);
	assert_int_equal(unlink(at), 0);
}

/* Each rule looks for the symbol it is given, a family's first function, and for no other:
 * asked for another symbol than malloc, the same objects give another choice. Objects: 0 pie
 * (malloc, free, calloc, realloc, target_fn), 1 plain (none of them), 2 libnomalloc.so (lib_fn),
 * 3 libmalloc.so (malloc, free), 4 the C library; -1: none chosen. */
static const struct family_case {
	const char *first;
	int exe, preload[2], libc, chosen;
} family_cases[] = {
	{ "lib_fn", 1, { 2, 3 }, 4, 2 },    /* malloc's rule would take libmalloc.so */
	{ "lib_fn", 1, { 3, 2 }, 4, 2 },    /* the first entry that defines it, not the first */
	{ "free", 1, { 2, 3 }, 4, 3 },
	{ "calloc", 1, { 3, -1 }, 4, 4 },   /* libmalloc.so has no calloc: the C library */
	{ "target_fn", 0, { 3, -1 }, 4, 0 }, /* the executable first */
	{ "lib_fn", 1, { 3, -1 }, 4, -1 },  /* nobody defines it */
	{ "malloc", 1, { 2, -1 }, 2, -1 },
};

static void test_choose_for_a_family(void **state)
{
	(void)state;
	char paths[5][4096], preload[8300], out[4096];

	path_of(paths[0], sizeof(paths[0]), "pie");
	path_of(paths[1], sizeof(paths[1]), "plain");
	path_of(paths[2], sizeof(paths[2]), "libnomalloc.so");
	path_of(paths[3], sizeof(paths[3]), "libmalloc.so");
	assert_int_equal(at_find_library("libc.so.6", paths[4], sizeof(paths[4])), 0);
	for (size_t i = 0; i < sizeof(family_cases) / sizeof(family_cases[0]); i++) {
		const struct family_case *c = &family_cases[i];

		snprintf(preload, sizeof(preload), "%s:%s", paths[c->preload[0]],
			 c->preload[1] < 0 ? "" : paths[c->preload[1]]);
		out[0] = '\0';
		int rc = at_choose_allocator(paths[c->exe], preload, paths[c->libc], c->first, out,
					     sizeof(out));
		assert_int_equal(rc, c->chosen < 0 ? -1 : 0);
		if (c->chosen >= 0)
			assert_string_equal(out, paths[c->chosen]);
	}
}

/* The family's symbol reaches every rule: before launch (and what it says when nothing
 * defines it), and on a live process by its loader's link_map list (cmocka's own entry point,
 * which only libcmocka defines); the C family's symbol is malloc. */
static void test_discover_a_family(void **state)
{
	(void)state;
	char plain[512], nomalloc[512], withmalloc[512], env[1100], out[4096], why[4608];
	char expected[4608], libc[4096];

	path_of(plain, sizeof(plain), "plain");
	path_of(nomalloc, sizeof(nomalloc), "libnomalloc.so");
	path_of(withmalloc, sizeof(withmalloc), "libmalloc.so");
	assert_int_equal(at_find_library("libc.so.6", libc, sizeof(libc)), 0);
	assert_string_equal(at_family_symbol(AT_FAMILY_C), "malloc");
	assert_null(at_family_symbol(AT_FAMILY_COUNT));
	snprintf(env, sizeof(env), "LD_PRELOAD=%s:%s", withmalloc, nomalloc);
	char *envp[] = { env, NULL };
	assert_int_equal(at_discover_launch(plain, envp, "lib_fn", out, sizeof(out), why,
					    sizeof(why)), 0);
	assert_string_equal(out, nomalloc);
	assert_int_equal(at_discover_launch(plain, envp, "calloc", out, sizeof(out), why,
					    sizeof(why)), 0);
	assert_string_equal(out, libc);
	assert_int_equal(at_discover_launch(plain, envp, "no_such_function", out, sizeof(out),
					    why, sizeof(why)), -1);
	snprintf(expected, sizeof(expected),
		 "no no_such_function in %s, in LD_PRELOAD or in the C library", plain);
	assert_string_equal(why, expected);
	assert_int_equal(at_discover_pid(getpid(), "_cmocka_run_group_tests", out, sizeof(out),
					 why, sizeof(why)), 0);
	assert_non_null(strstr(out, "libcmocka"));
	assert_int_equal(at_discover_defines(out, "_cmocka_run_group_tests"), 1);
	assert_int_equal(at_discover_defines(out, "no_such_function"), 0);
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
	assert_int_equal(at_discover_launch(plain, envp, C_FIRST,
					    out, sizeof(out), why, sizeof(why)), 0);
	assert_string_equal(out, withmalloc);
	char *no_preload[] = { "PATH=/bin", NULL };
	assert_int_equal(at_discover_launch(plain, no_preload, C_FIRST,
					    out, sizeof(out), why, sizeof(why)),
			 0);
	assert_string_equal(out, libc);
	/* a bare library name is searched like the dynamic linker would */
	char *bare[] = { "LD_PRELOAD=libc.so.6", NULL };
	assert_int_equal(at_discover_launch(plain, bare, C_FIRST,
					    out, sizeof(out), why, sizeof(why)), 0);
	assert_string_equal(out, libc);
}

/* An LD_PRELOAD of any length is read whole: many entries that name no file, then the one that
 * defines malloc, past 8 KiB (once cut there, which left the C library). */
static void test_discover_launch_long_preload(void **state)
{
	(void)state;
	char plain[512], withmalloc[512], out[4096], why[256];
	size_t len = 20000;
	char *env = malloc(len + 600);

	assert_non_null(env);
	path_of(plain, sizeof(plain), "plain");
	path_of(withmalloc, sizeof(withmalloc), "libmalloc.so");
	strcpy(env, "LD_PRELOAD=");
	while (strlen(env) < len)
		strcat(env, "/nonexistent/libnothing-at-all-here.so:");
	strcat(env, withmalloc);
	char *envp[] = { env, NULL };
	assert_int_equal(at_discover_launch(plain, envp, C_FIRST,
					    out, sizeof(out), why, sizeof(why)), 0);
	assert_string_equal(out, withmalloc);
	free(env);
}

/* Discovery on a live process: this test program uses the C library, or, built with
 * -fsanitize=address, ASan's runtime, which it links before the C library and which defines
 * malloc (the loader's rule). */
#if defined(__SANITIZE_ADDRESS__)
#define SELF_ALLOCATOR "libasan.so"
#else
#define SELF_ALLOCATOR "libc.so.6"
#endif
static void test_discover_self(void **state)
{
	(void)state;
	char out[4096], why[256], rooted[4200];
	struct stat here, there;

	/* the maps path names the mapped file in our namespace too: that path, no detour */
	assert_int_equal(at_discover_pid(getpid(), C_FIRST, out, sizeof(out), why, sizeof(why)), 0);
	assert_int_equal(strncmp(out, "/proc/", 6) != 0, 1);
	assert_non_null(strstr(out, SELF_ALLOCATOR));
	snprintf(rooted, sizeof(rooted), "/proc/%d/root%s", (int)getpid(), out);
	assert_int_equal(stat(out, &here), 0);
	assert_int_equal(stat(rooted, &there), 0);
	assert_true(here.st_dev == there.st_dev && here.st_ino == there.st_ino);
	assert_int_equal(at_discover_pid(999999999, C_FIRST,
					 out, sizeof(out), why, sizeof(why)), -1);
	assert_string_equal(why, "no process 999999999");
}

/* A buffer shorter than the resolved path is refused, and nothing is written past it (the
 * ASan build would see it). */
static void test_find_library_short_buffer(void **state)
{
	(void)state;
	char full[PATH_MAX], exact[PATH_MAX], small[16];

	assert_int_equal(at_find_library("libc.so.6", full, sizeof(full)), 0);
	size_t n = strlen(full);
	assert_true(n >= sizeof(small));
	assert_int_equal(at_find_library("libc.so.6", exact, n + 1), 0);
	assert_string_equal(exact, full);
	assert_int_equal(at_find_library("libc.so.6", exact, n), -1);
	assert_int_equal(at_find_library("libc.so.6", small, sizeof(small)), -1);
	assert_int_equal(at_find_library("no-such-library.so.0", full, sizeof(full)), -1);
}


/* Starts DIR/pauser (built on first use) with LD_PRELOAD=DIR/libmalloc.so placed after more
 * than 64 KiB of environment, and waits until the library is mapped. Returns its pid. */
static pid_t start_preloaded_pauser(void)
{
	static int built;
	char pauser[512], lib[512], maps[64], line[1024];
	static char big[70 * 1024 + 8], preload[600];

	if (!built) {
		assert_int_equal(build("pauser", "#include <unistd.h>\nint main(void) { pause(); "
				       "return 0; }\n", "", NULL), 0);
		built = 1;
	}
	path_of(pauser, sizeof(pauser), "pauser");
	path_of(lib, sizeof(lib), "libmalloc.so");
	memcpy(big, "BIG=", 4);
	memset(big + 4, 'x', sizeof(big) - 5);
	big[sizeof(big) - 1] = '\0';
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", lib);
	char *envp[] = { big, preload, NULL };
	char *argv[] = { pauser, NULL };
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execve(pauser, argv, envp);
		_exit(127);
	}
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	for (int tries = 0; tries < 200; tries++) {
		FILE *f = fopen(maps, "r");
		int mapped = 0;
		while (f && fgets(line, sizeof(line), f))
			mapped |= strstr(line, "libmalloc.so") != NULL;
		if (f)
			fclose(f);
		if (mapped)
			return pid;
		usleep(10000);
	}
	fail_msg("the pauser never mapped its LD_PRELOAD library");
	return -1;
}

/* LD_PRELOAD after 64 KiB of environment is found, by the maps rule and the exec rule. */
static void test_preload_past_64k(void **state)
{
	(void)state;
	char lib[512], out[4096], why[256];
	pid_t pid = start_preloaded_pauser();

	path_of(lib, sizeof(lib), "libmalloc.so");
	int rc = at_discover_pid(pid, C_FIRST, out, sizeof(out), why, sizeof(why));
	int rc2 = -1;
	char out2[4096];
	if (rc == 0)
		rc2 = at_discover_exec(pid, C_FIRST, out2, sizeof(out2), why, sizeof(why));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	assert_int_equal(rc, 0);
	assert_true(strlen(out) >= strlen(lib));
	assert_string_equal(out + strlen(out) - strlen(lib), lib);
	assert_int_equal(rc2, 0);
	assert_string_equal(out2, lib);
}

/* The exec rule on this process: no LD_PRELOAD with malloc, so the C library. */
static void test_discover_exec_self(void **state)
{
	(void)state;
	char out[4096], why[256], libc[4096];

	assert_int_equal(at_find_library("libc.so.6", libc, sizeof(libc)), 0);
	unsetenv("LD_PRELOAD");
	assert_int_equal(at_discover_exec(getpid(), C_FIRST,
					  out, sizeof(out), why, sizeof(why)), 0);
	assert_string_equal(out, libc);
	assert_int_equal(at_discover_exec(999999999, C_FIRST,
					  out, sizeof(out), why, sizeof(why)), -1);
	assert_string_equal(why, "no process 999999999");
}

/* Maps paths of a chrooted process name files from the reader's root; those of a container's
 * process from the container's root: the file whose device and inode match is chosen. */
static void test_mapped_path(void **state)
{
	(void)state;
	char proc[600], chroot_dir[600], file[700], link[700], line[2048], out[4096];
	struct at_procmaps_entry e;
	struct stat st;

	path_of(proc, sizeof(proc), "proc");
	path_of(chroot_dir, sizeof(chroot_dir), "chroot");
	snprintf(file, sizeof(file), "%s/lib", chroot_dir);
	assert_int_equal(mkdir(proc, 0755), 0);
	assert_int_equal(mkdir(chroot_dir, 0755), 0);
	assert_int_equal(mkdir(file, 0755), 0);
	snprintf(file, sizeof(file), "%s/lib/libx.so", chroot_dir);
	FILE *f = fopen(file, "w");
	assert_non_null(f);
	fputs("x", f);
	fclose(f);
	assert_int_equal(stat(file, &st), 0);
	snprintf(link, sizeof(link), "%s/42", proc);
	assert_int_equal(mkdir(link, 0755), 0);
	snprintf(link, sizeof(link), "%s/42/root", proc);
	assert_int_equal(symlink(chroot_dir, link), 0);

	/* chrooted, in our namespace: the path is the reader's, not to be put under root */
	snprintf(line, sizeof(line), "7f0000-7f1000 r-xp 00000000 %x:%x %llu    %s", major(st.st_dev),
		 minor(st.st_dev), (unsigned long long)st.st_ino, file);
	assert_int_equal(at_procmaps_parse_line(line, &e), 0);
	assert_int_equal(at_mapped_path(proc, 42, &e, out, sizeof(out)), 0);
	assert_string_equal(out, file);
	/* a container: the path is the container's, found under its root */
	snprintf(line, sizeof(line), "7f0000-7f1000 r-xp 00000000 %x:%x %llu    /lib/libx.so",
		 major(st.st_dev), minor(st.st_dev), (unsigned long long)st.st_ino);
	assert_int_equal(at_procmaps_parse_line(line, &e), 0);
	assert_int_equal(at_mapped_path(proc, 42, &e, out, sizeof(out)), 0);
	char want[1400];
	snprintf(want, sizeof(want), "%s/42/root/lib/libx.so", proc);
	assert_string_equal(out, want);
	/* a path that names another file here (a bind mount over the C library in the process's
	 * own mount namespace): the file under its root, the one it maps */
	char shadow[1400];
	snprintf(shadow, sizeof(shadow), "%s/etc", chroot_dir);
	assert_int_equal(mkdir(shadow, 0755), 0);
	snprintf(shadow, sizeof(shadow), "%s/etc/passwd", chroot_dir);
	f = fopen(shadow, "w");
	assert_non_null(f);
	fputs("y", f);
	fclose(f);
	struct stat sh;
	assert_int_equal(stat(shadow, &sh), 0);
	snprintf(line, sizeof(line), "7f0000-7f1000 r-xp 00000000 %x:%x %llu    /etc/passwd",
		 major(sh.st_dev), minor(sh.st_dev), (unsigned long long)sh.st_ino);
	assert_int_equal(at_procmaps_parse_line(line, &e), 0);
	assert_int_equal(at_mapped_path(proc, 42, &e, out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "%s/42/root/etc/passwd", proc);
	assert_string_equal(out, want);
	snprintf(want, sizeof(want), "%s/42/root/lib/libx.so", proc);
	/* numbers that match nothing (an overlay): under root when it exists there */
	snprintf(line, sizeof(line), "7f0000-7f1000 r-xp 00000000 00:01 1    /lib/libx.so");
	assert_int_equal(at_procmaps_parse_line(line, &e), 0);
	assert_int_equal(at_mapped_path(proc, 42, &e, out, sizeof(out)), 0);
	assert_string_equal(out, want);
	snprintf(line, sizeof(line), "7f0000-7f1000 r-xp 00000000 00:01 1    /lib/nothere.so");
	assert_int_equal(at_procmaps_parse_line(line, &e), 0);
	assert_int_equal(at_mapped_path(proc, 42, &e, out, sizeof(out)), 0);
	assert_string_equal(out, "/lib/nothere.so");
	assert_int_equal(at_mapped_path(proc, 42, &e, out, 8), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_choose_allocator),
		cmocka_unit_test(test_defines_per_file),
		cmocka_unit_test(test_defines_remembered_unopened),
		cmocka_unit_test(test_choose_for_a_family),
		cmocka_unit_test(test_discover_a_family),
		cmocka_unit_test(test_discover_launch),
		cmocka_unit_test(test_discover_launch_long_preload),
		cmocka_unit_test(test_discover_self),
		cmocka_unit_test(test_find_library_short_buffer),
		cmocka_unit_test(test_preload_past_64k),
		cmocka_unit_test(test_discover_exec_self),
		cmocka_unit_test(test_mapped_path),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
