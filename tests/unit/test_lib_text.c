/* test_lib_text.c: unit tests of lib/text.c (formatting and parsing of logalloc lines). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "text.h"

static void test_format_raw(void **state)
{
	(void)state;
	static const struct {
		struct at_event ev;
		const char *line;
	} cases[] = {
		{ { 18545, 18545, AT_MALLOC, 1, { 32, 0 }, 0x7f90495120e0, 0, 0 },
		  "18545 18545 malloc(32)=0x7f90495120e0\n" },
		{ { 1, 2, AT_CALLOC, 1, { 1, 148 }, 0x10, 0, 0 }, "1 2 calloc(1,148)=0x10\n" },
		{ { 1, 2, AT_REALLOC, 1, { 0, 64 }, 0xabc, 0, 0 }, "1 2 realloc(0x0,64)=0xabc\n" },
		{ { 1, 2, AT_FREE, 0, { 0xdeadbeef, 0 }, 0, 0, 0 }, "1 2 free(0xdeadbeef)\n" },
		{ { 1, 2, AT_FREE, 0, { 0, 0 }, 0, 0, 0 }, "1 2 free(0x0)\n" },
		{ { 1, 2, AT_MALLOC, 1, { UINT64_MAX, 0 }, 0, 0, 0 },
		  "1 2 malloc(18446744073709551615)=0x0\n" },
		{ { 4294967295u, 4294967295u, AT_POSIX_MEMALIGN, 1, { 256, 240 }, UINT64_MAX, 0, 0 },
		  "4294967295 4294967295 posix_memalign(256,240)=0xffffffffffffffff\n" },
		{ { 7, 7, AT_JEMALLOC_STATS, 0, { 0, 0 }, 0, 0, 0 }, "7 7 jemalloc_stats()\n" },
		{ { 7, 8, AT_VALLOC, 1, { 4096, 0 }, 0x1000, 0, 0 }, "7 8 valloc(4096)=0x1000\n" },
		{ { 7, 8, AT_ALIGNED_ALLOC, 1, { 64, 128 }, 0x40, 0, 0 },
		  "7 8 aligned_alloc(64,128)=0x40\n" },
		{ { 7, 8, AT_MEMALIGN, 1, { 16, 9 }, 0x7f0000000010, 0, 0 },
		  "7 8 memalign(16,9)=0x7f0000000010\n" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[AT_LINE_MAX];
		size_t n = at_format_raw(buf, &cases[i].ev);
		assert_true(n <= AT_LINE_MAX);
		buf[n] = 0;
		assert_string_equal(buf, cases[i].line);
	}
}

static void test_format_munged(void **state)
{
	(void)state;
	char buf[AT_LINE_MAX];
	struct at_event e = { 1, 1, AT_REALLOC, 1, { 1, 64 }, 1, 0, 0 };
	buf[at_format_munged(buf, &e)] = 0;
	assert_string_equal(buf, "1 1 realloc(#1,64)=#1\n");
	e = (struct at_event){ 2, 3, AT_FREE, 0, { 12, 0 }, 0, 0, 0 };
	buf[at_format_munged(buf, &e)] = 0;
	assert_string_equal(buf, "2 3 free(#12)\n");
}

static void test_split_raw(void **state)
{
	(void)state;
	static const struct {
		const char *line;
		int ok;
		const char *pid, *tid, *func, *args, *arg0, *result;
		unsigned nargs;
	} cases[] = {
		{ "1 2 malloc(32)=0x10", 1, "1", "2", "malloc", "32", "32", "0x10", 1 },
		{ "1 malloc(32)=0x10", 1, "1", "1", "malloc", "32", "32", "0x10", 1 },
		{ "1 2 free(0x10)", 1, "1", "2", "free", "0x10", "0x10", "", 1 },
		{ "1 2 free(0x10)=", 1, "1", "2", "free", "0x10", "0x10", "", 1 },
		{ "1 2 jemalloc_stats()", 1, "1", "2", "jemalloc_stats", "", "", "", 0 },
		{ "1 2 calloc(1,2,3)=0x1", 1, "1", "2", "calloc", "1,2,3", "1", "0x1", 3 },
		{ "1 2 3 malloc(1)=0x1", 1, "1", "2", "3 malloc", "1", "1", "0x1", 1 },
		{ "1 2 calloc(,)=0x1", 1, "1", "2", "calloc", ",", "", "0x1", 2 },
		{ "1 2 malloc(32)x0x10", 0, 0, 0, 0, 0, 0, 0, 0 },
		{ "1 2 malloc(32))=0x10", 0, 0, 0, 0, 0, 0, 0, 0 },
		{ "1 2 malloc((32)=0x10", 0, 0, 0, 0, 0, 0, 0, 0 },
		{ "1 2 malloc32)=0x10", 0, 0, 0, 0, 0, 0, 0, 0 },
		{ "1 2 malloc(32=0x10", 0, 0, 0, 0, 0, 0, 0, 0 },
		{ "1", 0, 0, 0, 0, 0, 0, 0, 0 },
		{ "", 0, 0, 0, 0, 0, 0, 0, 0 },
		{ "1 2 malloc(32)=(0x10", 1, "1", "2", "malloc", "32", "32", "(0x10", 1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct at_raw_line r;
		const char *why = NULL;
		int rc = at_split_raw(cases[i].line, strlen(cases[i].line), &r, &why);
		if (!cases[i].ok) {
			assert_int_equal(rc, -1);
			assert_string_equal(why, "Malformed input");
			continue;
		}
		assert_int_equal(rc, 0);
#define SPAN_EQ(s, want)                                                                       \
	do {                                                                                   \
		assert_int_equal((s).n, strlen(want));                                         \
		assert_memory_equal((s).p, want, (s).n);                                       \
	} while (0)
		SPAN_EQ(r.pid, cases[i].pid);
		SPAN_EQ(r.tid, cases[i].tid);
		SPAN_EQ(r.func, cases[i].func);
		SPAN_EQ(r.args, cases[i].args);
		SPAN_EQ(r.arg0, cases[i].arg0);
		SPAN_EQ(r.result, cases[i].result);
		assert_int_equal(r.nargs, cases[i].nargs);
	}
}

static void test_parse_pyint(void **state)
{
	(void)state;
	enum { OK = AT_PYINT_OK, BAD = AT_PYINT_INVALID, BIG = AT_PYINT_TOO_BIG };
	static const struct {
		const char *s;
		int base, st, neg;
		uint64_t v;
	} cases[] = {
		{ "0x10", 16, OK, 0, 16 },      { "10", 16, OK, 0, 16 },
		{ "0X1f", 16, OK, 0, 31 },      { " 0x10\t", 16, OK, 0, 16 },
		{ "-0x10", 16, OK, 1, 16 },     { "+ff", 16, OK, 0, 255 },
		{ "0x", 16, BAD, 0, 0 },        { "", 16, BAD, 0, 0 },
		{ "0x1g", 16, BAD, 0, 0 },      { "1_0", 16, BAD, 0, 0 },
		{ "#1", 16, BAD, 0, 0 },        { "0xffffffffffffffff", 16, OK, 0, UINT64_MAX },
		{ "0x10000000000000000", 16, BIG, 0, 0 },
		{ "123", 10, OK, 0, 123 },      { "0x10", 10, BAD, 0, 0 },
		{ "007", 10, OK, 0, 7 },        { "-3", 10, OK, 1, 3 },
		{ "1 2", 10, BAD, 0, 0 },       { "18446744073709551616", 10, BIG, 0, 0 },
		{ "a", 10, BAD, 0, 0 },         { "-", 10, BAD, 0, 0 },
		{ "- 5", 10, OK, 1, 5 },        { "+\t0x5", 16, OK, 0, 5 },
		{ "- ", 10, BAD, 0, 0 },        { "5 -", 10, BAD, 0, 0 },
		/* -0 is 0, with no sign */
		{ "-0", 10, OK, 0, 0 },         { "- 0x0", 16, OK, 0, 0 },
		{ "-000", 10, OK, 0, 0 },       { "+0", 10, OK, 0, 0 },
		/* too big is told apart from invalid, whatever the sign and the padding */
		{ "-18446744073709551616", 10, BIG, 0, 0 },
		{ " 99999999999999999999999 ", 10, BIG, 0, 0 },
		{ "0x00000000000000000000000001", 16, OK, 0, 1 },
		{ "18446744073709551616x", 10, BAD, 0, 0 },
		{ "0x1ffffffffffffffffg", 16, BAD, 0, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int neg = -1;
		uint64_t v = 0;
		int rc = at_parse_pyint(cases[i].s, strlen(cases[i].s), cases[i].base, &neg, &v);
		if (rc != cases[i].st)
			fail_msg("\"%s\" base %d: status %d", cases[i].s, cases[i].base, rc);
		if (rc == AT_PYINT_OK) {
			assert_int_equal(neg, cases[i].neg);
			assert_true(v == cases[i].v);
		}
	}
}

static void test_parse_munged(void **state)
{
	(void)state;
	static const struct {
		const char *line;
		int ok;
		struct at_event ev;
	} cases[] = {
		{ "1 1 malloc(32)=#1", 1, { 1, 1, AT_MALLOC, 1, { 32, 0 }, 1, 0, 0 } },
		{ "1 1 malloc(32)=#1\r", 1, { 1, 1, AT_MALLOC, 1, { 32, 0 }, 1, 0, 0 } },
		{ "1 2 calloc(1,148)=#2", 1, { 1, 2, AT_CALLOC, 1, { 1, 148 }, 2, 0, 0 } },
		{ "1 1 realloc(#1,64)=#1", 1, { 1, 1, AT_REALLOC, 1, { 1, 64 }, 1, 0, 0 } },
		{ "3 1 posix_memalign(256,240)=#3", 1,
		  { 3, 1, AT_POSIX_MEMALIGN, 1, { 256, 240 }, 3, 0, 0 } },
		{ "1 1 jemalloc_stats()", 1, { 1, 1, AT_JEMALLOC_STATS, 0, { 0, 0 }, 0, 0, 0 } },
		{ "1 1 free(#1)", 1, { 1, 1, AT_FREE, 0, { 1, 0 }, 0, 0, 0 } },
		{ "1 1 malloc(32)", 1, { 1, 1, AT_MALLOC, 0, { 32, 0 }, 0, 0, 0 } },
		{ "1 1 free(#1)=#2", 0, { 0 } },
		{ "1 1 free(1)", 0, { 0 } },
		{ "1 1 free(0x10)", 0, { 0 } },
		{ "1 1 malloc(32)=0x10", 0, { 0 } },
		{ "1 1 malloc(32)=#", 0, { 0 } },
		{ "1 1 malloc(32)=#1x", 0, { 0 } },
		{ "1 1 malloc(32,1)=#1", 0, { 0 } },
		{ "1 1 calloc(32)=#1", 0, { 0 } },
		{ "1 1 mallocx(32)=#1", 0, { 0 } },
		{ "1 malloc(32)=#1", 0, { 0 } },
		{ "x 1 malloc(32)=#1", 0, { 0 } },
		{ "1 1 malloc(-32)=#1", 0, { 0 } },
		{ "1 1 malloc(99999999999999999999)=#1", 0, { 0 } },
		{ "4294967296 1 malloc(1)=#1", 0, { 0 } },
		{ "", 0, { 0 } },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct at_event ev;
		const char *why = NULL;
		int rc = at_parse_munged(cases[i].line, strlen(cases[i].line), &ev, &why);
		if (!cases[i].ok) {
			assert_int_equal(rc, -1);
			assert_non_null(why);
			continue;
		}
		assert_int_equal(rc, 0);
		assert_int_equal(ev.pid, cases[i].ev.pid);
		assert_int_equal(ev.tid, cases[i].ev.tid);
		assert_int_equal(ev.func, cases[i].ev.func);
		assert_int_equal(ev.has_result, cases[i].ev.has_result);
		assert_true(ev.arg[0] == cases[i].ev.arg[0]);
		assert_true(ev.arg[1] == cases[i].ev.arg[1]);
		assert_true(ev.result == cases[i].ev.result);
	}
}

static void test_func_lookup(void **state)
{
	(void)state;
	for (int f = 0; f < AT_FUNC_COUNT; f++)
		assert_int_equal(at_func_lookup(at_func_name[f], strlen(at_func_name[f])), f);
	assert_int_equal(at_func_lookup("mallo", 5), -1);
	assert_int_equal(at_func_lookup("pvalloc", 7), -1);
	assert_int_equal(at_func_lookup("", 0), -1);
	assert_int_equal(at_func_lookup("mallocx", 7), -1);
	assert_int_equal(at_func_lookup("Malloc", 6), -1);
}

static void test_take_numbers(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		int hex, rc;
		uint64_t v;
		size_t used;
	} cases[] = {
		{ "0", 0, 0, 0, 1 },
		{ "123 x", 0, 0, 123, 3 },
		{ "18446744073709551615", 0, 0, UINT64_MAX, 20 },
		{ "18446744073709551616", 0, -1, 0, 0 },
		{ "-1", 0, -1, 0, 0 },
		{ "", 0, -1, 0, 0 },
		{ "ff:", 1, 0, 255, 2 },
		{ "7f2D1c028000-", 1, 0, 0x7f2d1c028000, 12 },
		{ "ffffffffffffffff", 1, 0, UINT64_MAX, 16 },
		{ "10000000000000000", 1, -1, 0, 0 },
		{ "0x10", 1, 0, 0, 1 },
		{ "g", 1, -1, 0, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *p = cases[i].s, *end = p + strlen(p);
		uint64_t v = 42;
		int rc = cases[i].hex ? at_take_hex(&p, end, &v) : at_take_dec(&p, end, &v);
		if (rc != cases[i].rc)
			fail_msg("\"%s\": rc %d", cases[i].s, rc);
		assert_int_equal(p - cases[i].s, cases[i].used);
		if (rc == 0)
			assert_true(v == cases[i].v);
	}
	const char *p = "ab", *end = p + 2;
	assert_int_equal(at_take_char(&p, end, 'b'), -1);
	assert_int_equal(at_take_char(&p, end, 'a'), 0);
	assert_int_equal(at_take_char(&p, end, 'b'), 0);
	assert_int_equal(at_take_char(&p, end, 'b'), -1);
	assert_ptr_equal(p, end);
}

/* The tables generated from AT_FUNCTIONS: the format's names, lengths and argument counts. */
static void test_func_tables(void **state)
{
	(void)state;
	static const struct {
		int f;
		const char *name;
		unsigned nargs;
	} cases[] = {
		{ AT_MALLOC, "malloc", 1 },           { AT_CALLOC, "calloc", 2 },
		{ AT_REALLOC, "realloc", 2 },         { AT_FREE, "free", 1 },
		{ AT_MEMALIGN, "memalign", 2 },       { AT_POSIX_MEMALIGN, "posix_memalign", 2 },
		{ AT_ALIGNED_ALLOC, "aligned_alloc", 2 }, { AT_VALLOC, "valloc", 1 },
		{ AT_JEMALLOC_STATS, "jemalloc_stats", 0 },
	};
	assert_int_equal(AT_FUNC_COUNT, sizeof(cases) / sizeof(cases[0]));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int f = cases[i].f;
		assert_int_equal(f, (int)i);
		assert_string_equal(at_func_name[f], cases[i].name);
		assert_int_equal(at_func_name_len[f], strlen(cases[i].name));
		assert_int_equal(at_func_nargs[f], cases[i].nargs);
		for (size_t k = at_func_name_len[f]; k < AT_FUNC_NAME_SIZE; k++)
			assert_int_equal(at_func_name[f][k], '\0');
	}
}

/* The kinds generated from AT_FUNCTIONS (lib/functions.h), for both code spaces, and the
 * questions the tools ask of them; a code out of range is no function. */
static void test_func_kinds(void **state)
{
	(void)state;
	static const struct {
		unsigned f;
		enum at_func_kind kind;
		int frees, reallocates, allocates, takes, returns;
	} format[] = {
		{ AT_MALLOC, AT_KIND_ALLOC, 0, 0, 1, 0, 1 },
		{ AT_CALLOC, AT_KIND_ALLOC, 0, 0, 1, 0, 1 },
		{ AT_REALLOC, AT_KIND_REALLOC, 0, 1, 1, 1, 1 },
		{ AT_FREE, AT_KIND_FREE, 1, 0, 0, 1, 0 },
		{ AT_MEMALIGN, AT_KIND_ALLOC, 0, 0, 1, 0, 1 },
		{ AT_POSIX_MEMALIGN, AT_KIND_OUT_PARAM, 0, 0, 1, 0, 1 },
		{ AT_ALIGNED_ALLOC, AT_KIND_ALLOC, 0, 0, 1, 0, 1 },
		{ AT_VALLOC, AT_KIND_ALLOC, 0, 0, 1, 0, 1 },
		{ AT_JEMALLOC_STATS, AT_KIND_MARKER, 0, 0, 0, 0, 0 },
		{ AT_FUNC_COUNT, AT_KIND_NONE, 0, 0, 0, 0, 1 },
		{ 255, AT_KIND_NONE, 0, 0, 0, 0, 1 },
	};
	static const struct {
		unsigned code;
		enum at_func_kind kind;
		int frees, reallocates;
	} probed[] = {
		{ AT_PROBE_MALLOC, AT_KIND_ALLOC, 0, 0 },
		{ AT_PROBE_REALLOC, AT_KIND_REALLOC, 0, 1 },
		{ AT_PROBE_FREE, AT_KIND_FREE, 1, 0 },
		{ AT_PROBE_POSIX_MEMALIGN, AT_KIND_OUT_PARAM, 0, 0 },
		{ AT_PROBE_VALLOC, AT_KIND_ALLOC, 0, 0 },
		{ AT_PROBE_PVALLOC, AT_KIND_ALLOC, 0, 0 },
		{ AT_PROBE_REALLOCARRAY, AT_KIND_REALLOC, 0, 1 },
		{ AT_PROBE_FUNC_COUNT, AT_KIND_NONE, 0, 0 },
	};
	assert_int_equal(AT_PROBE_PVALLOC, 8);
	assert_int_equal(AT_PROBE_REALLOCARRAY, 9);
	assert_int_equal(AT_PROBE_FUNC_COUNT, 10);
	for (size_t i = 0; i < sizeof(format) / sizeof(format[0]); i++) {
		unsigned f = format[i].f;
		assert_int_equal(at_func_kind(f), format[i].kind);
		assert_int_equal(at_func_frees(f), format[i].frees);
		assert_int_equal(at_func_reallocates(f), format[i].reallocates);
		assert_int_equal(at_func_allocates(f), format[i].allocates);
		assert_int_equal(at_func_takes_pointer(f), format[i].takes);
		assert_int_equal(at_func_returns_pointer(f), format[i].returns);
	}
	for (size_t i = 0; i < sizeof(probed) / sizeof(probed[0]); i++) {
		unsigned c = probed[i].code;
		assert_int_equal(at_probe_kind(c), probed[i].kind);
		assert_int_equal(at_probe_frees(c), probed[i].frees);
		assert_int_equal(at_probe_reallocates(c), probed[i].reallocates);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_raw),   cmocka_unit_test(test_format_munged),
		cmocka_unit_test(test_split_raw),    cmocka_unit_test(test_parse_pyint),
		cmocka_unit_test(test_parse_munged), cmocka_unit_test(test_func_lookup),
		cmocka_unit_test(test_func_tables),  cmocka_unit_test(test_take_numbers),
		cmocka_unit_test(test_func_kinds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
