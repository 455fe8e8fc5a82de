/* test_daemon_record.c: unit tests of daemon/trace/record.c, ring records to logalloc
 * lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <linux/types.h>

#include "../../daemon/trace/record.h"
#include "text.h"

/* Records become the logalloc line that reproduces them. */
static void test_record_to_event(void **state)
{
	(void)state;
	static const struct {
		struct at_record rec;
		const char *line;
	} cases[] = {
		{ { 5, 5, 10, 11, { 32, 0 }, 0x7f00, 0, AT_PROBE_MALLOC, 0, 0, 0 }, "10 11 malloc(32)=0x7f00\n" },
		{ { 5, 5, 10, 11, { 0x7f00, 0 }, 0, 0, AT_PROBE_FREE, 0, 0, 0 }, "10 11 free(0x7f00)\n" },
		{ { 5, 5, 10, 11, { 0, 0 }, 0, 0, AT_PROBE_FREE, 0, 0, 0 }, "10 11 free(0x0)\n" },
		{ { 5, 3, 10, 11, { 0x10, 64 }, 0x20, 0, AT_PROBE_REALLOC, 0, 0, 0 },
		  "10 11 realloc(0x10,64)=0x20\n" },
		{ { 5, 5, 10, 11, { 5000, 0 }, 0x3000, 0, AT_PROBE_PVALLOC, 0, 0, 0 },
		  "10 11 valloc(8192)=0x3000\n" },
		{ { 5, 5, 10, 11, { 0, 0 }, 0x3000, 0, AT_PROBE_PVALLOC, 0, 0, 0 },
		  "10 11 valloc(0)=0x3000\n" },
		{ { 5, 5, 10, 11, { UINT64_MAX - 5, 0 }, 0, 0, AT_PROBE_PVALLOC, 0, 0, 0 },
		  "10 11 valloc(18446744073709551610)=0x0\n" },
		{ { 5, 4, 10, 11, { 0x10, 80 }, 0x40, 0, AT_PROBE_REALLOCARRAY, 0, 0, 0 },
		  "10 11 realloc(0x10,80)=0x40\n" },
		{ { 5, 4, 10, 11, { 0x10, UINT64_MAX }, 0, 0, AT_PROBE_REALLOCARRAY, AT_REC_OVERFLOW, 0, 0 },
		  "10 11 realloc(0x10,18446744073709551615)=0x0\n" },
		{ { 5, 5, 10, 11, { 64, 100 }, 0, 0, AT_PROBE_POSIX_MEMALIGN, 0, 0, 0 },
		  "10 11 posix_memalign(64,100)=0x0\n" },
		{ { 5, 5, 10, 11, { 256, 512 }, 0x100, 0, AT_PROBE_ALIGNED_ALLOC, 0, 0, 0 },
		  "10 11 aligned_alloc(256,512)=0x100\n" },
		{ { 5, 5, 10, 11, { 3, 4 }, 0x100, 0, AT_PROBE_CALLOC, 0, 0, 0 },
		  "10 11 calloc(3,4)=0x100\n" },
		{ { 5, 5, 10, 11, { 16, 4 }, 0x100, 0, AT_PROBE_MEMALIGN, 0, 0, 0 },
		  "10 11 memalign(16,4)=0x100\n" },
		{ { 5, 5, 10, 11, { 16, 0 }, 0x1000, 0, AT_PROBE_VALLOC, 0, 0, 0 },
		  "10 11 valloc(16)=0x1000\n" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct at_event ev;
		char buf[AT_LINE_MAX + 1];

		at_record_to_event(&cases[i].rec, 4096, 0, &ev);
		buf[at_format_raw(buf, &ev)] = '\0';
		assert_string_equal(buf, cases[i].line);
	}
}

/* An event has its record's time when the trace carries times, else 0; its stack and the
 * record's commit word do not pass into it. */
static void test_record_time(void **state)
{
	(void)state;
	const struct at_record rec = { .time = 123456789, .time_entry = 123, .pid = 10, .tid = 11,
				       .arg = { 32, 0 }, .result = 0x7f00, .stack = 99,
				       .func = AT_PROBE_MALLOC, .state = AT_RECORD_WRITTEN,
				       .number = 7 };

	for (int times = 0; times <= 1; times++) {
		struct at_event ev;

		at_record_to_event(&rec, 4096, times, &ev);
		assert_int_equal(ev.time_ns, times ? 123456789 : 0);
		assert_int_equal(ev.stack, 0);
		assert_int_equal(ev.func, AT_MALLOC);
		assert_int_equal(ev.result, 0x7f00);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_to_event),
		cmocka_unit_test(test_record_time),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
