/* test_daemon_x86_abi.c: x86-64's calling convention and address space
 * (daemon/arch/x86_64/x86_abi.c, behind arch.h): the argument registers by their ModRM numbers,
 * their masks, the names messages give registers, the top of user space. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../daemon/arch/arch.h"

static void test_arg_regs(void **state)
{
	(void)state;
	assert_int_equal(AT_ARCH_ARGS, 3);
	assert_int_equal(at_arch_arg_regs[0], 7); /* rdi */
	assert_int_equal(at_arch_arg_regs[1], 6); /* rsi */
	assert_int_equal(at_arch_arg_regs[2], 2); /* rdx */
}

static void test_arg_mask(void **state)
{
	static const struct {
		unsigned n;
		uint16_t mask;
	} cases[] = {
		{ 0, 0 }, { 1, 0x80 }, { 2, 0xc0 }, { 3, 0xc4 }, { 4, 0xc4 }, { 100, 0xc4 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(at_arch_arg_mask(cases[i].n), cases[i].mask);
}

static void test_reg_names(void **state)
{
	static const char *const want[] = { "rax", "rcx", "rdx", "rbx", "rsp", "rbp",
					    "rsi", "rdi", "r8",  "r9",  "r10", "r11",
					    "r12", "r13", "r14", "r15" };

	(void)state;
	for (unsigned r = 0; r < 16; r++)
		assert_string_equal(at_arch_reg_name(r), want[r]);
	assert_string_equal(at_arch_reg_name(16), "?");
	assert_string_equal(at_arch_reg_name(~0u), "?");
	assert_string_equal(at_arch_reg_name(at_arch_arg_regs[0]), "rdi");
	assert_string_equal(at_arch_reg_name(at_arch_arg_regs[1]), "rsi");
	assert_string_equal(at_arch_reg_name(at_arch_arg_regs[2]), "rdx");
}

static void test_user_top(void **state)
{
	(void)state;
	assert_int_equal(at_arch_user_top, UINT64_C(0x800000000000));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arg_regs),
		cmocka_unit_test(test_arg_mask),
		cmocka_unit_test(test_reg_names),
		cmocka_unit_test(test_user_top),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
