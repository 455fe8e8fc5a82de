/* test_daemon_x86_calls.c: x86-64's scan for direct calls and tail jumps by rel32
 * (daemon/arch/x86_64/x86_calls.c, at_arch_find_direct_calls of arch.h), on byte strings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../daemon/arch/arch.h"

#define MAX_FOUND 16

struct found {
	struct at_direct_call c[MAX_FOUND];
	unsigned n;
};

static int collect(void *arg, const struct at_direct_call *c)
{
	struct found *f = arg;

	if (f->n < MAX_FOUND)
		f->c[f->n++] = *c;
	return 0;
}

static int stop_at_first(void *arg, const struct at_direct_call *c)
{
	(void)arg;
	(void)c;
	return 7;
}

/* At 0x1000: call +0x100 (to 0x1105), jmp back to 0x1000, a call to a non-target, and a call
 * cut by the end of the code. */
static const uint8_t code[] = {
	0xe8, 0x00, 0x01, 0x00, 0x00,       /* 0x1000: call 0x1105 */
	0x90,                               /* 0x1005: nop */
	0xe9, 0xf5, 0xff, 0xff, 0xff,       /* 0x1006: jmp 0x1000 */
	0xe8, 0x10, 0x00, 0x00, 0x00,       /* 0x100b: call 0x1020 (not a target) */
	0x48, 0x89, 0xe8,                   /* 0x1010: mov %rbp,%rax (an e8 byte, no call) */
	0xe8, 0xf0, 0x00, 0x00,             /* 0x1013: call cut short */
};

static void test_bytes(void **state)
{
	const uint64_t targets[] = { 0x1105, 0x1000 };
	struct found f = { .n = 0 };

	(void)state;
	assert_int_equal(
		at_arch_find_direct_calls(code, sizeof(code), 0x1000, targets, 2, collect, &f), 0);
	assert_int_equal(f.n, 2);
	assert_int_equal(f.c[0].site, 0x1000);
	assert_int_equal(f.c[0].target, 0x1105);
	assert_int_equal(f.c[0].is_call, 1);
	assert_int_equal(f.c[1].site, 0x1006);
	assert_int_equal(f.c[1].target, 0x1000);
	assert_int_equal(f.c[1].is_call, 0);
	assert_int_equal(at_arch_find_direct_calls(code, sizeof(code), 0x1000, targets, 2,
						   stop_at_first, NULL), 7);
	f.n = 0;
	assert_int_equal(at_arch_find_direct_calls(code, 4, 0x1000, targets, 2, collect, &f), 0);
	assert_int_equal(f.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
