/* test_report_frames.c: unit tests of report/frames.c: a frame's words, locations interned by
 * process, mapping and value, mappings interned by what they map, a replaced mapping making
 * new locations, and frames shared by locations. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../report/frames.h"

static const struct {
	struct rep_frame f;
	const char *folded, *located;
} words[] = {
	{ { .function = "f", .file = "/src/dir/x.c", .line = 12 }, "f", "f (x.c:12)" },
	{ { .function = "f", .file = "x.c", .line = 12 }, "f", "f (x.c:12)" },
	{ { .function = "f", .file = "/src/x.c", .line = 0 }, "f", "f" },
	{ { .function = "f", .file = NULL, .line = 3 }, "f", "f" },
	{ { .function = "g(int)", .file = "/a/b/", .line = 1 }, "g(int)", "g(int) (:1)" },
	{ { .object = "libc.so.6", .object_address = 0x2a }, "libc.so.6+0x2a", "libc.so.6+0x2a" },
	{ { .object = "a.out", .file = "/src/x.c", .line = 9, .object_address = 0 }, "a.out+0x0",
	  "a.out+0x0" },
	{ { 0 }, "[unknown]", "[unknown]" },
};

/* Each frame's folded and located words, and a word cut at the buffer's end. */
static void test_words(void **state)
{
	char buf[64];

	(void)state;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		assert_int_equal(rep_frame_word(&words[i].f, 0, buf, sizeof(buf)),
				 strlen(words[i].folded));
		assert_string_equal(buf, words[i].folded);
		assert_int_equal(rep_frame_word(&words[i].f, 1, buf, sizeof(buf)),
				 strlen(words[i].located));
		assert_string_equal(buf, words[i].located);
	}
	assert_int_equal(rep_frame_word(&words[0].f, 1, buf, 4), 10);
	assert_string_equal(buf, "f (");
	assert_string_equal(rep_base_name("/a/b/c.c"), "c.c");
	assert_string_equal(rep_base_name("c.c"), "c.c");
}

static void ignore_problem(void *arg, const char *path, const char *why)
{
	(void)arg, (void)path, (void)why;
}

/* Native locations: in a mapping (its object unreadable: named by object and offset) or in
 * none; one per (process, mapping, value); a replacing mapping is another mapping, and its
 * values other locations. */
static void test_native(void **state)
{
	struct at_mapping a = { .pid = 1, .start = 0x1000, .end = 0x3000, .offset = 0x4000,
				.path = "/nonexistent/a.so" };
	struct at_mapping b = { .pid = 1, .start = 0x1000, .end = 0x3000, .offset = 0,
				.path = "/nonexistent/b.so" };
	struct at_symbolizer *z = at_symbolizer_new("/nonexistent", ignore_problem, NULL);
	struct rep_frames t;

	(void)state;
	assert_non_null(z);
	assert_int_equal(rep_frames_init(&t), 0);
	assert_int_equal(at_symbolizer_add_mapping(z, &a), 0);
	assert_int_equal(rep_frames_locate(&t, z, 1, AT_FRAME_NATIVE, 0x1010, 1), 0);
	assert_int_equal(rep_frames_locate(&t, z, 1, AT_FRAME_NATIVE, 0x1020, 1), 1);
	assert_int_equal(rep_frames_locate(&t, z, 1, AT_FRAME_NATIVE, 0x1010, 1), 0);
	assert_int_equal(rep_frames_locate(&t, z, 2, AT_FRAME_NATIVE, 0x1010, 1), 2); /* no map */
	assert_int_equal(t.nmappings, 1);
	assert_int_equal(t.mappings[0].start, 0x1000);
	assert_int_equal(t.mappings[0].offset, 0x4000);
	assert_string_equal(t.mappings[0].path, "/nonexistent/a.so");

	const struct rep_location *l = rep_frames_location(&t, 0);
	assert_int_equal(l->mapping, 1);
	assert_int_equal(l->pid, 1);
	assert_int_equal(l->value, 0x1010);
	assert_int_equal(l->count, 1);
	const struct rep_frame *f = rep_frames_line(&t, l, 0);
	assert_null(f->function);
	assert_string_equal(f->object, "a.so");
	assert_int_equal(f->object_address, 0x4010); /* the file offset */
	l = rep_frames_location(&t, 2);
	assert_int_equal(l->mapping, 0);
	assert_null(rep_frames_line(&t, l, 0)->object);

	assert_int_equal(at_symbolizer_add_mapping(z, &b), 0); /* replaces a from here on */
	assert_int_equal(rep_frames_locate(&t, z, 1, AT_FRAME_NATIVE, 0x1010, 1), 3);
	assert_int_equal(t.nmappings, 2);
	l = rep_frames_location(&t, 3);
	assert_int_equal(l->mapping, 2);
	assert_string_equal(rep_frames_line(&t, l, 0)->object, "b.so");
	assert_int_equal(t.nlocations, 4);
	assert_int_equal(t.nframes, 4); /* four places: a.so+0x4010, +0x4020, none, b.so+0x10 */
	rep_frames_free(&t);
	at_symbolizer_free(z);
}

/* Frames named by NAMES records: two values of one name are two locations of one frame; a
 * value without a name is a frame of no function. */
static void test_named(void **state)
{
	static const struct at_frame_name names[] = {
		{ .pid = 5, .kind = AT_FRAME_TEST, .value = 1, .function = "run", .file = "/m.py",
		  .line = 4 },
		{ .pid = 5, .kind = AT_FRAME_TEST, .value = 2, .function = "run", .file = "/m.py",
		  .line = 4 },
	};
	struct at_symbolizer *z = at_symbolizer_new("/nonexistent", ignore_problem, NULL);
	struct rep_frames t;

	(void)state;
	assert_non_null(z);
	assert_int_equal(rep_frames_init(&t), 0);
	for (size_t i = 0; i < 2; i++)
		assert_int_equal(at_symbolizer_add_name(z, &names[i]), 0);
	assert_int_equal(rep_frames_locate(&t, z, 5, AT_FRAME_TEST, 1, 1), 0);
	assert_int_equal(rep_frames_locate(&t, z, 5, AT_FRAME_TEST, 2, 1), 1);
	assert_int_equal(rep_frames_locate(&t, z, 5, AT_FRAME_TEST, 3, 1), 2);
	assert_int_equal(t.nmappings, 0);
	assert_int_equal(t.nframes, 2);
	const struct rep_location *l0 = rep_frames_location(&t, 0);
	const struct rep_location *l1 = rep_frames_location(&t, 1);
	assert_int_equal(rep_frames_line_id(&t, l0, 0), rep_frames_line_id(&t, l1, 0));
	const struct rep_frame *f = rep_frames_line(&t, l0, 0);
	assert_string_equal(f->function, "run");
	assert_string_equal(f->file, "/m.py");
	assert_int_equal(f->line, 4);
	assert_int_equal(f->kind, AT_FRAME_TEST);
	assert_null(rep_frames_line(&t, rep_frames_location(&t, 2), 0)->function);

	/* a later NAMES record names value 1 anew (another code object at its address): the
	 * frames located after it have the new name, those before keep theirs */
	struct at_frame_name again = { .pid = 5, .kind = AT_FRAME_TEST, .value = 1,
				       .function = "made", .file = "/n.py", .line = 9 };
	assert_int_equal(at_symbolizer_add_name(z, &again), 0);
	assert_int_equal(rep_frames_locate(&t, z, 5, AT_FRAME_TEST, 1, 1), 3);
	assert_int_equal(rep_frames_locate(&t, z, 5, AT_FRAME_TEST, 1, 1), 3);
	f = rep_frames_line(&t, rep_frames_location(&t, 3), 0);
	assert_string_equal(f->function, "made");
	assert_string_equal(f->file, "/n.py");
	assert_int_equal(f->line, 9);
	assert_string_equal(rep_frames_line(&t, rep_frames_location(&t, 0), 0)->function, "run");
	rep_frames_free(&t);
	at_symbolizer_free(z);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_words),
		cmocka_unit_test(test_native),
		cmocka_unit_test(test_named),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
