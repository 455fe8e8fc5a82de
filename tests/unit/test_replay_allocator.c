/* test_replay_allocator.c: unit tests of replay/allocator.c, the choice of the allocator a
 * replay runs against (--allocator): the library of each name, which allocator this process
 * uses, every refusal of rp_allocator_select with its message, the check a re-executed process
 * makes against its marker, and the re-execution itself (this program re-executed with the
 * library preloaded, reporting what it sees).
 *
 * Under AddressSanitizer malloc comes from the sanitizer's runtime, not from glibc, and a
 * preloaded allocator cannot come before that runtime (it refuses to start): the expectations
 * that depend on it say so, and the re-executions with a preloaded library are only in the
 * plain build. */
#include <dlfcn.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../replay/allocator.h"

#define LIBDIR "/usr/lib/" AT_MULTIARCH "/"
#define CHILD_ARG "--report-allocator"

#ifdef __SANITIZE_ADDRESS__
#define MALLOC_IS_GLIBC 0
#else
#define MALLOC_IS_GLIBC 1
#endif

static char **test_argv;

/* The file malloc comes from in this process, found with the dynamic linker (not /proc). */
static const char *malloc_library(void)
{
	static char path[PATH_MAX];
	Dl_info info;

	if (!path[0]) {
		assert_true(dladdr(dlsym(RTLD_DEFAULT, "malloc"), &info) != 0);
		assert_non_null(realpath(info.dli_fname, path));
	}
	return path;
}

/* Replaces "%H" in fmt by the path of malloc's library. */
static void expand(char *out, size_t cap, const char *fmt)
{
	const char *h = strstr(fmt, "%H");

	if (!h) {
		snprintf(out, cap, "%s", fmt);
		return;
	}
	snprintf(out, cap, "%.*s%s%s", (int)(h - fmt), fmt, malloc_library(), h + 2);
}

/* Runs rp_allocator_select(name, argv) with stderr captured; returns its result. */
static int select_captured(const char *name, char *out, size_t cap)
{
	int fds[2], saved = dup(2), rc;

	assert_int_equal(pipe(fds), 0);
	assert_int_equal(dup2(fds[1], 2), 2);
	rc = rp_allocator_select(name, test_argv);
	dup2(saved, 2);
	close(saved);
	close(fds[1]);
	ssize_t n = read(fds[0], out, cap - 1);
	close(fds[0]);
	out[n < 0 ? 0 : n] = 0;
	return rc;
}

/* Asserts that stderr holds exactly the message want ("" for nothing), after the program
 * name and ": " that every message starts with. */
static void assert_message(const char *what, const char *got, const char *want)
{
	const char *colon = strstr(got, ": ");

	if (!want[0]) {
		if (got[0])
			fail_msg("%s: stderr \"%s\", want nothing", what, got);
		return;
	}
	if (!colon || memchr(got, '\n', (size_t)(colon - got)) ||
	    strncmp(colon + 2, want, strlen(want)) != 0 ||
	    strcmp(colon + 2 + strlen(want), "\n") != 0)
		fail_msg("%s: stderr \"%s\", want \"PROGRAM: %s\\n\"", what, got, want);
}

/* The library each --allocator value names: a known name, glibc (no library), or anything
 * with a '/' taken as it is; everything else is unknown. */
static void test_library_of_name(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		int rc;
		const char *path; /* NULL: glibc; "=": the name itself */
	} cases[] = {
		{ "glibc", 0, NULL },
		{ "jemalloc", 0, LIBDIR "libjemalloc.so.2" },
		{ "tcmalloc", 0, LIBDIR "libtcmalloc_minimal.so.4" },
		{ "mimalloc", 0, LIBDIR "libmimalloc.so.2" },
		{ "/usr/lib/" AT_MULTIARCH "/libjemalloc.so.2", 0, "=" },
		{ "/nonexistent/libx.so", 0, "=" },
		{ "./libfoo.so", 0, "=" },
		{ "lib/libfoo.so", 0, "=" },
		{ "/", 0, "=" },
		{ "hoard", -1, "unchanged" },
		{ "", -1, "unchanged" },
		{ "JEMALLOC", -1, "unchanged" },
		{ "jemalloc ", -1, "unchanged" },
		{ "libjemalloc.so.2", -1, "unchanged" },
		{ "libc", -1, "unchanged" },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const char *path = "unchanged";
		int rc = rp_allocator_library(cases[c].name, &path);
		if (rc != cases[c].rc)
			fail_msg("'%s': %d, want %d", cases[c].name, rc, cases[c].rc);
		if (!cases[c].path) {
			if (path)
				fail_msg("'%s': path %s, want NULL", cases[c].name, path);
		} else if (strcmp(cases[c].path, "=") == 0) {
			if (path != cases[c].name)
				fail_msg("'%s': path %s, want the argument itself", cases[c].name,
					 path ? path : "NULL");
		} else if (!path || strcmp(path, cases[c].path) != 0) {
			fail_msg("'%s': path %s, want %s", cases[c].name, path ? path : "NULL",
				 cases[c].path);
		}
	}
}

/* Which allocator this process uses: glibc's malloc in libc.so.6 (plain build), or the
 * sanitizer runtime named by its file name. */
static void test_identify(void **state)
{
	(void)state;
	const char *name = NULL;
	char path[PATH_MAX];

	assert_int_equal(rp_allocator_identify(&name, path, sizeof(path)), 0);
	assert_string_equal(path, malloc_library());
#if MALLOC_IS_GLIBC
	assert_string_equal(name, "glibc");
	assert_string_equal(path, LIBDIR "libc.so.6");
#else
	assert_string_equal(name, strrchr(path, '/') + 1);
	assert_memory_equal(name, "libasan.so", 10);
#endif
}

/* A path buffer too small for the library's path: -1, "unknown" in both (cut to the buffer). */
static void test_identify_small_buffer(void **state)
{
	(void)state;
	const char *name = NULL;
	char path[PATH_MAX];
	size_t need = strlen(malloc_library()) + 1;

	assert_int_equal(rp_allocator_identify(&name, path, need), 0);
	assert_string_equal(path, malloc_library());
	assert_int_equal(rp_allocator_identify(&name, path, need - 1), -1);
	assert_string_equal(name, "unknown");
	assert_string_equal(path, "unknown");
	assert_int_equal(rp_allocator_identify(&name, path, 4), -1);
	assert_string_equal(name, "unknown");
	assert_string_equal(path, "unk");
}

/* Without the marker, select refuses an unknown name and a library it cannot read, with one
 * message, and changes no environment variable. */
static void test_select_refusals(void **state)
{
	(void)state;
	static const struct {
		const char *name, *message;
	} cases[] = {
		{ "hoard",
		  "unknown allocator 'hoard' (jemalloc, tcmalloc, mimalloc, glibc or a path)" },
		{ "", "unknown allocator '' (jemalloc, tcmalloc, mimalloc, glibc or a path)" },
		{ "Jemalloc",
		  "unknown allocator 'Jemalloc' (jemalloc, tcmalloc, mimalloc, glibc or a path)" },
		{ "/nonexistent/libx.so", "/nonexistent/libx.so: No such file or directory" },
		{ "./nonexistent-libx.so", "./nonexistent-libx.so: No such file or directory" },
		{ "/etc/hostname/x.so", "/etc/hostname/x.so: Not a directory" },
	};
	char err[4096];

	unsetenv(RP_ALLOCATOR_ENV);
	assert_int_equal(setenv("LD_PRELOAD", "", 1), 0);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		int rc = select_captured(cases[c].name, err, sizeof(err));
		if (rc != -1)
			fail_msg("'%s': %d, want -1", cases[c].name, rc);
		assert_message(cases[c].name, err, cases[c].message);
		assert_null(getenv(RP_ALLOCATOR_ENV));
		assert_string_equal(getenv("LD_PRELOAD"), "");
	}
	unsetenv("LD_PRELOAD");
}

/* With the marker set (a re-executed replayer), select does not re-execute: it checks that
 * malloc comes from the library the marker names ("glibc": glibc's; a symbolic link is the
 * file it leads to), whatever the name. %H in a message is the library malloc comes from. */
static void test_select_marked(void **state)
{
	(void)state;
	char alias[] = "/tmp/test_replay_allocator.XXXXXX";
	const struct {
		const char *name, *marker;
		int rc;
		const char *message;
	} cases[] = {
		{ "glibc", "glibc", MALLOC_IS_GLIBC ? 0 : -1,
		  MALLOC_IS_GLIBC ? "" : "asked for glibc's malloc but malloc comes from %H" },
		{ "hoard", "glibc", MALLOC_IS_GLIBC ? 0 : -1,
		  MALLOC_IS_GLIBC ? "" : "asked for glibc's malloc but malloc comes from %H" },
		{ "jemalloc", LIBDIR "libjemalloc.so.2", -1,
		  LIBDIR "libjemalloc.so.2 was preloaded but malloc comes from %H (not a malloc "
			 "library?)" },
		{ "/etc/hostname", "/etc/hostname", -1,
		  "/etc/hostname was preloaded but malloc comes from %H (not a malloc library?)" },
		{ "/nonexistent/x.so", "/nonexistent/x.so", -1,
		  "/nonexistent/x.so: No such file or directory" },
		{ "x", malloc_library(), 0, "" },
		{ "x", alias, 0, "" },
	};
	char err[4096], want[PATH_MAX + 200];

	int fd = mkstemp(alias);

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(unlink(alias), 0);
	assert_int_equal(symlink(malloc_library(), alias), 0);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		char what[PATH_MAX + 64];
		snprintf(what, sizeof(what), "name '%s', marker %s", cases[c].name,
			 cases[c].marker);
		assert_int_equal(setenv(RP_ALLOCATOR_ENV, cases[c].marker, 1), 0);
		int rc = select_captured(cases[c].name, err, sizeof(err));
		if (rc != cases[c].rc)
			fail_msg("%s: %d, want %d", what, rc, cases[c].rc);
		expand(want, sizeof(want), cases[c].message);
		assert_message(what, err, want);
		assert_string_equal(getenv(RP_ALLOCATOR_ENV), cases[c].marker);
	}
	unsetenv(RP_ALLOCATOR_ENV);
	unlink(alias);
}

/* What a re-executed copy of this program reports: select's result (the check against the
 * marker), what identify says, the marker, LD_PRELOAD and its arguments. */
struct child_report {
	char out[8192];
	char err[8192];
	int status;
};

static void read_all(int fd, char *buf, size_t cap)
{
	size_t len = 0;
	ssize_t n;

	while (len < cap - 1 && (n = read(fd, buf + len, cap - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = 0;
}

/* Forks; the child sets LD_PRELOAD to preload (unless NULL) and calls select(name), which
 * re-executes this program (see main). */
static void run_select_in_child(const char *name, const char *preload, struct child_report *r)
{
	int out[2], err[2];

	assert_int_equal(pipe(out), 0);
	assert_int_equal(pipe(err), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *argv[] = { test_argv[0], CHILD_ARG, "one more argument", NULL };
		dup2(out[1], 1);
		dup2(err[1], 2);
		close(out[0]);
		close(out[1]);
		close(err[0]);
		close(err[1]);
		unsetenv(RP_ALLOCATOR_ENV);
		if (preload)
			setenv("LD_PRELOAD", preload, 1);
		int rc = rp_allocator_select(name, argv);
		dprintf(1, "select returned %d in the first process\n", rc);
		_exit(3);
	}
	close(out[1]);
	close(err[1]);
	read_all(out[0], r->out, sizeof(r->out));
	read_all(err[0], r->err, sizeof(r->err));
	close(out[0]);
	close(err[0]);
	assert_int_equal(waitpid(pid, &r->status, 0), pid);
}

/* The re-executed program's side: the report run_select_in_child reads. */
static int report_allocator(int argc, char **argv)
{
	const char *name, *marker, *preload;
	char path[PATH_MAX];
	int rc = rp_allocator_select("unused: the marker decides", argv);

	rp_allocator_identify(&name, path, sizeof(path));
	marker = getenv(RP_ALLOCATOR_ENV);
	preload = getenv("LD_PRELOAD");
	dprintf(1, "select %d\nallocator %s %s\nmarker %s\nLD_PRELOAD %s\nargs %d %s\n", rc, name,
		path, marker ? marker : "(unset)", preload ? preload : "(unset)", argc,
		argc > 2 ? argv[2] : "");
	return 0;
}

/* The report a re-executed process must give, and its one message (after what the dynamic
 * loader says about LD_PRELOAD, lines starting "ERROR: ld.so: "); "" for none. */
static void expect_report(const char *what, const struct child_report *r, int rc,
			  const char *allocator, const char *path, const char *marker,
			  const char *preload, const char *message)
{
	char want[PATH_MAX * 4], msg[PATH_MAX + 200];
	const char *err = r->err;

	snprintf(want, sizeof(want),
		 "select %d\nallocator %s %s\nmarker %s\nLD_PRELOAD %s\nargs 3 one more argument\n",
		 rc, allocator, path, marker, preload ? preload : "(unset)");
	if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) != 0)
		fail_msg("%s: status 0x%x; stdout \"%s\"; stderr \"%s\"", what, r->status, r->out,
			 r->err);
	if (strcmp(r->out, want) != 0)
		fail_msg("%s: the re-executed process says\n%s\nwant\n%s\nstderr: %s", what, r->out,
			 want, r->err);
	while (strncmp(err, "ERROR: ld.so: ", 14) == 0 && strchr(err, '\n'))
		err = strchr(err, '\n') + 1;
	expand(msg, sizeof(msg), message);
	assert_message(what, err, msg);
}

/* --allocator glibc: re-executed without LD_PRELOAD (an inherited one is dropped), marked
 * "glibc"; there the check passes when malloc is glibc's. */
static void test_reexec_glibc(void **state)
{
	(void)state;
	struct child_report r;

	const char *have = malloc_library();

	run_select_in_child("glibc", LIBDIR "libjemalloc.so.2", &r);
	if (MALLOC_IS_GLIBC)
		expect_report("glibc", &r, 0, "glibc", have, "glibc", NULL, "");
	else
		expect_report("glibc", &r, -1, strrchr(have, '/') + 1, have, "glibc", NULL,
			      "asked for glibc's malloc but malloc comes from %H");
}

#if MALLOC_IS_GLIBC
/* --allocator NAME or PATH: re-executed with the library preloaded and the marker set to it;
 * malloc then comes from the library (its real path, symbolic links resolved). */
static void test_reexec_preloaded(void **state)
{
	(void)state;
	static const struct {
		const char *arg, *library, *allocator, *real;
	} cases[] = {
		{ "jemalloc", LIBDIR "libjemalloc.so.2", "jemalloc", LIBDIR "libjemalloc.so.2" },
		{ "tcmalloc", LIBDIR "libtcmalloc_minimal.so.4", "tcmalloc",
		  LIBDIR "libtcmalloc_minimal.so.4.5.10" },
		{ "mimalloc", LIBDIR "libmimalloc.so.2", "mimalloc", LIBDIR "libmimalloc.so.2.0" },
		{ LIBDIR "libmimalloc.so.2", LIBDIR "libmimalloc.so.2", "mimalloc",
		  LIBDIR "libmimalloc.so.2.0" },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct child_report r;
		char real[PATH_MAX];

		assert_non_null(realpath(cases[c].library, real));
		assert_string_equal(real, cases[c].real);
		run_select_in_child(cases[c].arg, NULL, &r);
		expect_report(cases[c].arg, &r, 0, cases[c].allocator, cases[c].real,
			      cases[c].library, cases[c].library, "");
	}
}

/* --allocator with a file that is no allocator: the loader ignores it, and the check in the
 * re-executed process fails: malloc is still glibc's. */
static void test_reexec_not_an_allocator(void **state)
{
	(void)state;
	struct child_report r;

	run_select_in_child("/etc/hostname", NULL, &r);
	expect_report("/etc/hostname", &r, -1, "glibc", LIBDIR "libc.so.6", "/etc/hostname",
		      "/etc/hostname",
		      "/etc/hostname was preloaded but malloc comes from %H (not a malloc "
		      "library?)");
}
#endif

/* The library each name stands for (the first table this module was tested with). */
static void test_allocator_library(void **state)
{
	(void)state;
	const char *path = "x";

	assert_int_equal(rp_allocator_library("glibc", &path), 0);
	assert_null(path);
	assert_int_equal(rp_allocator_library("jemalloc", &path), 0);
	assert_string_equal(path, "/usr/lib/" AT_MULTIARCH "/libjemalloc.so.2");
	assert_int_equal(rp_allocator_library("tcmalloc", &path), 0);
	assert_string_equal(path, "/usr/lib/" AT_MULTIARCH "/libtcmalloc_minimal.so.4");
	assert_int_equal(rp_allocator_library("mimalloc", &path), 0);
	assert_string_equal(path, "/usr/lib/" AT_MULTIARCH "/libmimalloc.so.2");
	assert_int_equal(rp_allocator_library("./libfoo.so", &path), 0);
	assert_string_equal(path, "./libfoo.so");
	assert_int_equal(rp_allocator_library("hoard", &path), -1);
	assert_int_equal(rp_allocator_library("", &path), -1);
}

int main(int argc, char **argv)
{
	test_argv = argv;
	if (argc > 1 && strcmp(argv[1], CHILD_ARG) == 0)
		return report_allocator(argc, argv);

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_library_of_name),
		cmocka_unit_test(test_allocator_library),
		cmocka_unit_test(test_identify),
		cmocka_unit_test(test_identify_small_buffer),
		cmocka_unit_test(test_select_refusals),
		cmocka_unit_test(test_select_marked),
		cmocka_unit_test(test_reexec_glibc),
#if MALLOC_IS_GLIBC
		cmocka_unit_test(test_reexec_preloaded),
		cmocka_unit_test(test_reexec_not_an_allocator),
#endif
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
