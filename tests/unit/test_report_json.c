/* test_report_json.c: unit tests of report/json.c: strings escaped (quotes, backslashes,
 * every control byte, valid UTF-8 copied, each invalid byte as U+FFFD), the writer's commas
 * through nested objects and arrays, exact integers and differences, a folded stack as frames
 * leaf first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../report/json.h"

/* A memory stream and what was written to it. */
struct sink {
	FILE *f;
	char *buf;
	size_t len;
};

static void sink_open(struct sink *s)
{
	s->buf = NULL;
	s->len = 0;
	s->f = open_memstream(&s->buf, &s->len);
	assert_non_null(s->f);
}

/* Closes the stream; the text (the caller frees s->buf). */
static const char *sink_close(struct sink *s)
{
	assert_int_equal(fclose(s->f), 0);
	return s->buf;
}

static void test_strings(void **state)
{
	static const struct {
		const char *in;
		size_t len;
		const char *out;
	} cases[] = {
		{ "", 0, "\"\"" },
		{ "malloc", 6, "\"malloc\"" },
		{ "a\"b", 3, "\"a\\\"b\"" },
		{ "a\\b", 3, "\"a\\\\b\"" },
		{ "\n\t\r", 3, "\"\\u000a\\u0009\\u000d\"" },
		{ "\0x", 2, "\"\\u0000x\"" },
		{ "\x01\x1f\x20\x7e\x7f", 5, "\"\\u0001\\u001f ~\\u007f\"" },
		{ "operator new(unsigned long)", 27, "\"operator new(unsigned long)\"" },
		{ "caf\xc3\xa9", 5, "\"caf\xc3\xa9\"" },                 /* U+00E9 copied */
		{ "\xe2\x82\xac", 3, "\"\xe2\x82\xac\"" },               /* U+20AC */
		{ "\xf0\x9f\x98\x80", 4, "\"\xf0\x9f\x98\x80\"" },       /* U+1F600 */
		{ "\xf4\x8f\xbf\xbf", 4, "\"\xf4\x8f\xbf\xbf\"" },       /* U+10FFFF, the last */
		{ "\xed\x9f\xbf", 3, "\"\xed\x9f\xbf\"" },               /* U+D7FF, below surrogates */
		{ "\x80", 1, "\"\\ufffd\"" },                            /* a stray continuation */
		{ "a\xbf" "b", 3, "\"a\\ufffdb\"" },
		{ "\xc3", 1, "\"\\ufffd\"" },                            /* cut short at the end */
		{ "\xc3x", 2, "\"\\ufffdx\"" },                          /* cut short by ASCII */
		{ "\xe2\x82", 2, "\"\\ufffd\\ufffd\"" },                 /* each byte its own */
		{ "\xc0\xaf", 2, "\"\\ufffd\\ufffd\"" },                 /* overlong '/' */
		{ "\xc1\xbf", 2, "\"\\ufffd\\ufffd\"" },                 /* overlong */
		{ "\xe0\x80\xaf", 3, "\"\\ufffd\\ufffd\\ufffd\"" },      /* overlong, 3 bytes */
		{ "\xf0\x80\x80\xaf", 4, "\"\\ufffd\\ufffd\\ufffd\\ufffd\"" }, /* overlong, 4 */
		{ "\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\"" },      /* the surrogate U+D800 */
		{ "\xf4\x90\x80\x80", 4, "\"\\ufffd\\ufffd\\ufffd\\ufffd\"" }, /* above U+10FFFF */
		{ "\xf5\x80", 2, "\"\\ufffd\\ufffd\"" },
		{ "\xff\xfe", 2, "\"\\ufffd\\ufffd\"" },
		{ "\xc3\xa9\xc3", 3, "\"\xc3\xa9\\ufffd\"" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sink s;

		print_message("case %zu\n", i);
		sink_open(&s);
		rep_json_put_string(s.f, cases[i].in, cases[i].len);
		assert_string_equal(sink_close(&s), cases[i].out);
		free(s.buf);
	}
}

/* Every control byte alone: \u00XX with two lower-case hex digits. */
static void test_every_control_byte(void **state)
{
	(void)state;
	for (unsigned c = 0; c < 0x20; c++) {
		struct sink s;
		char in = (char)c, want[16];

		sink_open(&s);
		rep_json_put_string(s.f, &in, 1);
		snprintf(want, sizeof(want), "\"\\u%04x\"", c);
		assert_string_equal(sink_close(&s), want);
		free(s.buf);
	}
}

static void test_commas(void **state)
{
	struct sink s;
	struct rep_json j;

	(void)state;
	sink_open(&s);
	rep_json_init(&j, s.f);
	rep_json_object(&j);
	rep_json_key_u64(&j, "a", 0);
	rep_json_key(&j, "empty");
	rep_json_array(&j);
	rep_json_array_end(&j);
	rep_json_key(&j, "list");
	rep_json_array(&j);
	rep_json_u64(&j, UINT64_MAX);
	rep_json_i64(&j, INT64_MIN);
	rep_json_null(&j);
	rep_json_object(&j);
	rep_json_object_end(&j);
	rep_json_object(&j);
	rep_json_key_cstring(&j, "k", "v");
	rep_json_key(&j, "n");
	rep_json_array(&j);
	rep_json_array(&j);
	rep_json_array_end(&j);
	rep_json_array(&j);
	rep_json_string(&j, "x", 1);
	rep_json_array_end(&j);
	rep_json_array_end(&j);
	rep_json_object_end(&j);
	rep_json_array_end(&j);
	rep_json_key(&j, "q\"");
	rep_json_cstring(&j, "");
	rep_json_object_end(&j);
	rep_json_done(&j);
	assert_string_equal(sink_close(&s),
			    "{\"a\":0,\"empty\":[],\"list\":[18446744073709551615,"
			    "-9223372036854775808,null,{},{\"k\":\"v\",\"n\":[[],[\"x\"]]}],"
			    "\"q\\\"\":\"\"}\n");
	free(s.buf);
}

static void test_change(void **state)
{
	static const struct {
		uint64_t a, b;
		const char *out;
	} cases[] = {
		{ 0, 0, "0" },
		{ 5, 7, "2" },
		{ 7, 5, "-2" },
		{ 0, UINT64_MAX, "18446744073709551615" },
		{ UINT64_MAX, 0, "-18446744073709551615" }, /* beyond int64: still exact */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sink s;
		struct rep_json j;

		sink_open(&s);
		rep_json_init(&j, s.f);
		rep_json_change(&j, cases[i].a, cases[i].b);
		assert_string_equal(sink_close(&s), cases[i].out);
		free(s.buf);
	}
}

static void test_stack(void **state)
{
	static const struct {
		const char *folded, *out;
	} cases[] = {
		{ "_start;main;parse;malloc",
		  "[{\"function\":\"malloc\"},{\"function\":\"parse\"},{\"function\":\"main\"},"
		  "{\"function\":\"_start\"}]" },
		{ "malloc", "[{\"function\":\"malloc\"}]" },
		{ "", "[{\"function\":\"\"}]" },
		{ "a;;b", "[{\"function\":\"b\"},{\"function\":\"\"},{\"function\":\"a\"}]" },
		{ "main;work(int) [clone .cold];operator new(unsigned long)",
		  "[{\"function\":\"operator new(unsigned long)\"},"
		  "{\"function\":\"work(int) [clone .cold]\"},{\"function\":\"main\"}]" },
		{ "m\"x;f\x80", "[{\"function\":\"f\\ufffd\"},{\"function\":\"m\\\"x\"}]" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sink s;
		struct rep_json j;

		print_message("case %zu\n", i);
		sink_open(&s);
		rep_json_init(&j, s.f);
		rep_json_stack(&j, cases[i].folded, strlen(cases[i].folded));
		assert_string_equal(sink_close(&s), cases[i].out);
		free(s.buf);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_every_control_byte),
		cmocka_unit_test(test_commas),
		cmocka_unit_test(test_change),
		cmocka_unit_test(test_stack),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
