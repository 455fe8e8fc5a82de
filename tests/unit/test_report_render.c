/* test_report_render.c: unit tests of report/render.c: the extension of an output, dot's list
 * of formats, and what peak --dot -o FILE writes (the DOT text, a format dot renders, or a
 * refusal), with and without Graphviz's dot on PATH. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../report/render.h"

static void test_extension(void **state)
{
	static const struct {
		const char *path;
		int rc;
		const char *ext;
	} cases[] = {
		{ "p.png", 0, "png" },
		{ "out/p.PNG", 0, "png" },
		{ "p.tar.gz", 0, "gz" },
		{ "p", 0, "" },
		{ "p.", 0, "" },
		{ ".png", 0, "" },          /* a hidden file, no extension */
		{ "dir.svg/p", 0, "" },     /* a folder's dot is not the file's */
		{ "a/b.c/.dot", 0, "" },
		{ "p.dot", 0, "dot" },
		{ "p.0123456789abcdef0123456789abcdef", -1, "" }, /* longer than a format name */
		{ "p.0123456789abcdef0123456789abcde", 0, "0123456789abcdef0123456789abcde" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char ext[REP_RENDER_FORMAT_MAX] = "junk";

		print_message("case %zu: %s\n", i, cases[i].path);
		assert_int_equal(rep_render_extension(cases[i].path, ext, sizeof(ext)), cases[i].rc);
		assert_string_equal(ext, cases[i].ext);
	}
}

static void test_listed(void **state)
{
	static const char list[] = "Format: \"?\" not recognized. Use one of: canon cmap dot gv "
				   "jpg png svg svgz xdot1.2\n";
	static const struct {
		const char *list, *format;
		int listed;
	} cases[] = {
		{ list, "png", 1 },  { list, "svgz", 1 }, { list, "svg", 1 },
		{ list, "canon", 1 }, { list, "xdot1.2", 1 }, /* the last word, before the newline */
		{ list, "pn", 0 },   { list, "pngx", 0 }, { list, "Format:", 0 }, /* before the list */
		{ list, "one", 0 },  { list, "", 0 },     { list, "pdf", 0 },
		{ "dot: cannot load plugins", "png", 0 }, /* no list at all */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		print_message("case %zu: %s\n", i, cases[i].format);
		assert_int_equal(rep_render_listed(cases[i].list, cases[i].format), cases[i].listed);
	}
}

/* Without dot on PATH: a format to render is refused as NO_DOT (ENOENT); the DOT text needs
 * no dot. */
static void test_without_dot(void **state)
{
	char format[REP_RENDER_FORMAT_MAX], *path = getenv("PATH");
	char *saved = path ? strdup(path) : NULL;

	(void)state;
	assert_int_equal(setenv("PATH", "/nonexistent", 1), 0);
	errno = 0;
	assert_int_equal(rep_render_of("p.png", format), REP_RENDER_NO_DOT);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(rep_render_of("p.dot", format), REP_RENDER_TEXT);
	assert_int_equal(rep_render_of("p.GV", format), REP_RENDER_TEXT);
	assert_int_equal(rep_render_of("p", format), REP_RENDER_TEXT);
	if (saved)
		setenv("PATH", saved, 1);
	free(saved);
}

/* With Graphviz installed (make deps): dot's own list decides. */
static void test_with_dot(void **state)
{
	char format[REP_RENDER_FORMAT_MAX], list[4096];

	(void)state;
	if (rep_render_formats(list, sizeof(list)) < 0)
		skip(); /* no dot: the integration tests say so */
	assert_non_null(strstr(list, "Use one of:"));
	assert_int_equal(rep_render_of("out/p.png", format), REP_RENDER_DOT);
	assert_string_equal(format, "png");
	assert_int_equal(rep_render_of("p.SVG", format), REP_RENDER_DOT);
	assert_string_equal(format, "svg");
	assert_int_equal(rep_render_of("p.pdf", format), REP_RENDER_DOT);
	assert_int_equal(rep_render_of("p.xyz", format), REP_RENDER_UNKNOWN);
	assert_int_equal(rep_render_of("p.tar.gz", format), REP_RENDER_UNKNOWN);
	assert_int_equal(rep_render_of("p.0123456789abcdef0123456789abcdef", format),
			 REP_RENDER_UNKNOWN);
	assert_int_equal(rep_render_of("p.gv", format), REP_RENDER_TEXT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_extension),
		cmocka_unit_test(test_listed),
		cmocka_unit_test(test_without_dot),
		cmocka_unit_test(test_with_dot),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
