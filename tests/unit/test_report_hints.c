/* test_report_hints.c: unit tests of report/hints.c: dpkg-query -S's output read for the one
 * package owning a path, and the warning told of an object whose frames stayed unnamed or
 * whose debug file could not be fetched. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../report/hints.h"

/* The one owner of a path, or none, from dpkg-query -S's lines. */
static void test_dpkg_owner_parse(void **state)
{
	static const char path[] = "/usr/bin/python3.11";
	const struct {
		const char *what, *out;
		const char *pkg; /* NULL: none */
	} cases[] = {
		{ "one package", "python3.11-minimal: /usr/bin/python3.11\n", "python3.11-minimal" },
		{ "its architecture dropped", "libc6:amd64: /usr/bin/python3.11\n", "libc6" },
		{ "no newline at the end", "python3.11-minimal: /usr/bin/python3.11",
		  "python3.11-minimal" },
		{ "diversion lines passed over",
		  "diversion by dash from: /usr/bin/python3.11\n"
		  "diversion by dash to: /usr/bin/python3.11.real\n"
		  "python3.11-minimal: /usr/bin/python3.11\n", "python3.11-minimal" },
		{ "another path's line (a pattern's match) passed over",
		  "foo: /usr/bin/python3.11-config\nbar: /usr/bin/python3.11\n", "bar" },
		{ "several packages", "a, b: /usr/bin/python3.11\n", NULL },
		{ "a name that is not Debian's", "Foo: /usr/bin/python3.11\n", NULL },
		{ "a name with a slash", "a/b: /usr/bin/python3.11\n", NULL },
		{ "an empty name", ": /usr/bin/python3.11\n", NULL },
		{ "nothing", "", NULL },
		{ "the path alone", "/usr/bin/python3.11\n", NULL },
		{ "a longer path ending the same", "x: /a/usr/bin/python3.11\n", NULL },
	};

	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		char pkg[REP_PACKAGE_MAX] = "unset";
		int found = rep_dpkg_owner_parse(cases[k].out, strlen(cases[k].out), path, pkg);

		print_message("%s\n", cases[k].what);
		assert_int_equal(found, cases[k].pkg != NULL);
		if (cases[k].pkg)
			assert_string_equal(pkg, cases[k].pkg);
	}
	/* an empty path: no line can name it (a line ending in ": " is no owner) */
	char pkg0[REP_PACKAGE_MAX];
	assert_int_equal(rep_dpkg_owner_parse("ib2: ", 5, "", pkg0), 0);
	/* a name as long as the limit is refused, one shorter taken */
	char out[2 * REP_PACKAGE_MAX + 64], pkg[REP_PACKAGE_MAX];
	memset(out, 'a', REP_PACKAGE_MAX);
	snprintf(out + REP_PACKAGE_MAX, sizeof(out) - REP_PACKAGE_MAX, ": %s\n", path);
	assert_int_equal(rep_dpkg_owner_parse(out, strlen(out), path, pkg), 0);
	snprintf(out + REP_PACKAGE_MAX - 1, sizeof(out) - REP_PACKAGE_MAX, ": %s\n", path);
	assert_int_equal(rep_dpkg_owner_parse(out, strlen(out), path, pkg), 1);
	assert_int_equal(strlen(pkg), REP_PACKAGE_MAX - 1);
}

/* apt-cache policy's output read for a package apt knows: its "NAME:" line, then a
 * candidate that is not "(none)". */
static void test_apt_policy_knows(void **state)
{
	static const char out[] =
		"python3.11-dbg:\n"
		"  Installed: (none)\n"
		"  Candidate: 3.11.2-6+deb12u9\n"
		"  Version table:\n"
		"     3.11.2-6+deb12u9 500\n"
		"        500 http://deb.debian.org/debian bookworm/main amd64 Packages\n"
		"libc6-dbgsym:\n"
		"  Installed: (none)\n"
		"  Candidate: (none)\n"
		"  Version table:\n"
		"libc6-dbg:\n"
		"  Installed: 2.36-9+deb12u14\n"
		"  Candidate: 2.36-9+deb12u14";
	const struct {
		const char *name;
		int known;
	} cases[] = {
		{ "python3.11-dbg", 1 },
		{ "libc6-dbgsym", 0 },  /* a name without a candidate (a virtual package) */
		{ "libc6-dbg", 1 },     /* the output's last line, without its newline */
		{ "python3.11", 0 },    /* a prefix of a name */
		{ "python3.11-dbgx", 0 },
		{ "", 0 },
		{ "Installed", 0 },     /* an indented line's word */
	};

	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		print_message("%s\n", cases[k].name);
		assert_int_equal(rep_apt_policy_knows(out, strlen(out), cases[k].name), cases[k].known);
	}
	assert_int_equal(rep_apt_policy_knows("", 0, "a"), 0);
	assert_int_equal(rep_apt_policy_knows("a:", 2, "a"), 0); /* no candidate line */
}

static const uint8_t build_id[] = { 0xab, 0xcd, 0xef, 0x01 };

/* A package whose debug package apt knows, and one whose it does not. */
static const struct rep_package known = { "python3.11-minimal",
	"python3.11-minimal-dbgsym, python3.11-dbg, python3.11-minimal-dbg", "python3.11-dbg" };
static const struct rep_package unknown = { "fix-bin", "fix-bin-dbgsym, fix-bin-dbg", "" };

/* The warning of each kind of object, word for word. */
static void test_hint_text(void **state)
{
	const struct {
		const char *what;
		struct at_object_outcome o;
		const struct rep_package *package;
		const char *urls;
		const char *text; /* "": nothing said */
	} cases[] = {
		{ "all named", { "/b/fix", build_id, 4, 0, 0, 0, 0 }, NULL, NULL, "" },
		{ "unnamed, but its debug file read", { "/b/fix", build_id, 4, 3, 1, 0, 0 }, NULL,
		  NULL, "" },
		{ "unnamed, no debuginfod",
		  { "/b/fix", build_id, 4, 1, 0, 0, 0 }, NULL, NULL,
		  "/b/fix: 1 frame left unnamed (fix+0xOFFSET): its debug file by build-id, "
		  "/d/.build-id/ab/cdef01.debug, would name them; or set DEBUGINFOD_URLS to fetch "
		  "it from a debuginfod server" },
		{ "unnamed, its package known, apt knowing its debug package",
		  { "/usr/bin/fix", build_id, 4, 12, 0, 0, 0 }, &known, "",
		  "/usr/bin/fix: 12 frames left unnamed (fix+0xOFFSET): its debug file by build-id, "
		  "/d/.build-id/ab/cdef01.debug, would name them (Debian package python3.11-minimal "
		  "installed the object, by dpkg -S; of its debug packages by Debian's names, "
		  "python3.11-minimal-dbgsym, python3.11-dbg, python3.11-minimal-dbg, apt knows "
		  "python3.11-dbg); or set DEBUGINFOD_URLS to fetch it from a debuginfod server" },
		{ "unnamed, its package known, apt knowing none of its debug packages",
		  { "/usr/bin/fix", build_id, 4, 1, 0, 0, 0 }, &unknown, NULL,
		  "/usr/bin/fix: 1 frame left unnamed (fix+0xOFFSET): its debug file by build-id, "
		  "/d/.build-id/ab/cdef01.debug, would name them (Debian package fix-bin installed "
		  "the object, by dpkg -S; of its debug packages by Debian's names, fix-bin-dbgsym, "
		  "fix-bin-dbg, apt knows none: fix-bin-dbgsym would be in the debian-debug "
		  "archive); or set DEBUGINFOD_URLS to fetch it from a debuginfod server" },
		{ "unnamed, debuginfod has none",
		  { "/b/fix", build_id, 4, 2, 0, -1, ENOENT }, NULL, "http://127.0.0.1:9",
		  "/b/fix: 2 frames left unnamed (fix+0xOFFSET): its debug file by build-id, "
		  "/d/.build-id/ab/cdef01.debug, would name them; no debug file from debuginfod for "
		  "build-id abcdef01 (DEBUGINFOD_URLS=http://127.0.0.1:9): the servers have none" },
		{ "unnamed, no build-id", { "/b/fix", build_id, 0, 2, 0, 0, 0 }, NULL, NULL,
		  "/b/fix: 2 frames left unnamed (fix+0xOFFSET): it has no build-id, so no debug file "
		  "can be found for it (link it with -Wl,--build-id, or keep its symbols)" },
		{ "all named, the fetch refused",
		  { "/b/fix", build_id, 4, 0, 0, -1, ECONNREFUSED }, NULL, "http://127.0.0.1:9",
		  "/b/fix: no debug file from debuginfod for build-id abcdef01 "
		  "(DEBUGINFOD_URLS=http://127.0.0.1:9): Connection refused" },
		{ "the fetch cut",
		  { "/b/fix", build_id, 4, 0, 1, -1, ECANCELED }, NULL, "http://s",
		  "/b/fix: no debug file from debuginfod for build-id abcdef01 "
		  "(DEBUGINFOD_URLS=http://s): cut after 60 s" },
		{ "a file of another build-id served",
		  { "/b/fix", build_id, 4, 0, 0, -1, EBADMSG }, NULL, "http://s",
		  "/b/fix: no debug file from debuginfod for build-id abcdef01 "
		  "(DEBUGINFOD_URLS=http://s): the file served has another build-id, and is not "
		  "used" },
		{ "libdebuginfod missing",
		  { "/b/fix", build_id, 4, 0, 0, -1, ELIBACC }, NULL, "http://s",
		  "/b/fix: no debug file from debuginfod for build-id abcdef01 "
		  "(DEBUGINFOD_URLS=http://s): libdebuginfod.so.1 cannot be loaded (apt-get install "
		  "libdebuginfod1)" },
		{ "not asked after an earlier failure",
		  { "/b/fix", build_id, 4, 0, 0, -2, ECONNREFUSED }, NULL, "http://s",
		  "/b/fix: debuginfod not asked for build-id abcdef01 (DEBUGINFOD_URLS=http://s): "
		  "an earlier fetch failed: Connection refused" },
	};

	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		char buf[1024];
		size_t n = rep_hint_text(&cases[k].o, "/d", cases[k].package, cases[k].urls, buf,
					 sizeof(buf));

		print_message("%s\n", cases[k].what);
		assert_string_equal(buf, cases[k].text);
		assert_int_equal(n, strlen(cases[k].text));
	}
	/* cut to the buffer */
	char small[16];
	assert_int_equal(rep_hint_text(&cases[2].o, "/d", NULL, NULL, small, sizeof(small)), 15);
	assert_string_equal(small, "/b/fix: 1 frame");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dpkg_owner_parse),
		cmocka_unit_test(test_apt_policy_knows),
		cmocka_unit_test(test_hint_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
