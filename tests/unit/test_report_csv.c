/* test_report_csv.c: unit tests of report/csv.c: RFC 4180 fields (quoted only when they hold
 * a comma, a double quote, a CR or an LF; quotes doubled), records ended by CRLF, exact
 * integers and differences, a folded stack as one field, leaf first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../report/csv.h"

static FILE *open_sink(char **buf, size_t *len)
{
	FILE *f = open_memstream(buf, len);

	assert_non_null(f);
	return f;
}

static void test_fields(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "", "" },
		{ "malloc", "malloc" },
		{ "a,b", "\"a,b\"" },
		{ "say \"hi\"", "\"say \"\"hi\"\"\"" },
		{ "\"", "\"\"\"\"" },
		{ "two\nlines", "\"two\nlines\"" },
		{ "cr\r", "\"cr\r\"" },
		{ " spaced ", " spaced " },
		{ "a;b", "a;b" },
		{ "caf\xc3\xa9\x80", "caf\xc3\xa9\x80" }, /* bytes as they are */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *buf;
		size_t len;
		struct rep_csv c;

		print_message("case %zu\n", i);
		rep_csv_init(&c, open_sink(&buf, &len));
		rep_csv_cstring(&c, cases[i].in);
		assert_int_equal(fclose(c.out), 0);
		assert_string_equal(buf, cases[i].out);
		free(buf);
	}
}

static void test_records(void **state)
{
	static const char *const header[] = { "bytes", "change", "pid", "stack", NULL };
	char *buf;
	size_t len;
	struct rep_csv c;

	(void)state;
	rep_csv_init(&c, open_sink(&buf, &len));
	rep_csv_header(&c, header);
	rep_csv_u64(&c, UINT64_MAX);
	rep_csv_change(&c, UINT64_MAX, 0);
	rep_csv_empty(&c);
	rep_csv_stack(&c, "_start;main;malloc", 18);
	rep_csv_end(&c);
	rep_csv_i64(&c, -3);
	rep_csv_change(&c, 2, 9);
	rep_csv_u64(&c, 0);
	rep_csv_stack(&c, "main;f(a, \"b\");operator new", 27);
	rep_csv_end(&c);
	rep_csv_stack(&c, "", 0);
	rep_csv_end(&c);
	assert_int_equal(fclose(c.out), 0);
	assert_string_equal(buf, "bytes,change,pid,stack\r\n"
				 "18446744073709551615,-18446744073709551615,,malloc;main;_start\r\n"
				 "-3,7,0,\"operator new;f(a, \"\"b\"\");main\"\r\n"
				 "\r\n");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_records),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
