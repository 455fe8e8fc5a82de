/* test_daemon_x86_unwind.c: x86-64's side of the unwind tables (daemon/arch/x86_64/x86_unwind.c,
 * behind arch.h): the frame-pointer rule, the PLT sections and their synthetic rules, the bytes
 * of alignment padding. The reduction of CFI rows to rules (at_arch_rule_of_frame) needs libdw's
 * frame state and is tested through the tables of real objects (test_daemon_unwind_table.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../bpf/alloctap.h"
#include "../../daemon/arch/arch.h"

static void assert_rule(const struct at_unwind_rule *r, int kind, int32_t cfa_offset, int fp,
			int16_t fp_offset)
{
	assert_int_equal(r->kind, kind);
	assert_int_equal(r->cfa_offset, cfa_offset);
	assert_int_equal(r->fp, fp);
	assert_int_equal(r->fp_offset, fp_offset);
}

/* Code without CFI: CFA = rbp + 16, the caller's rbp saved at CFA - 16. */
static void test_frame_pointer_rule(void **state)
{
	(void)state;
	assert_rule(&at_arch_frame_pointer_rule, AT_UNWIND_FRAME_POINTER, 16, AT_UNWIND_FP_AT_CFA,
		    -16);
}

static void test_plt_sections(void **state)
{
	(void)state;
	assert_string_equal(at_arch_plt_sections[0], ".plt");
	assert_string_equal(at_arch_plt_sections[1], ".plt.sec");
	assert_string_equal(at_arch_plt_sections[2], ".plt.got");
	assert_null(at_arch_plt_sections[3]);
}

/* A lazy .plt (PLT0 starts with push GOT[1], ff 35): PLT0 before and after its push, then the
 * entries' rule (their push 11 bytes in). */
static void test_plt_lazy(void **state)
{
	static const uint8_t plt0[] = { 0xff, 0x35, 0x02, 0x30, 0x00, 0x00, 0xff, 0x25 };
	struct at_arch_plt_part parts[AT_ARCH_PLT_PARTS];

	(void)state;
	assert_int_equal(at_arch_plt_parts(".plt", plt0, sizeof(plt0), parts), 3);
	assert_int_equal(parts[0].from, 0);
	assert_rule(parts[0].rule, AT_UNWIND_CFA_SP, 16, AT_UNWIND_FP_SAME, 0);
	assert_int_equal(parts[1].from, 6);
	assert_rule(parts[1].rule, AT_UNWIND_CFA_SP, 24, AT_UNWIND_FP_SAME, 0);
	assert_int_equal(parts[2].from, 16);
	assert_rule(parts[2].rule, AT_UNWIND_PLT, 11, AT_UNWIND_FP_SAME, 0);
}

/* Sections that only jump: CFA = rsp + 8 throughout. */
static void test_plt_jumps(void **state)
{
	static const struct {
		const char *name;
		uint8_t code[2];
		size_t len;
	} cases[] = {
		{ ".plt", { 0xf3, 0x0f }, 2 },     /* a .plt that does not start with a PLT0 */
		{ ".plt", { 0xff, 0x35 }, 1 },     /* too short to tell: not lazy */
		{ ".plt.sec", { 0xff, 0x35 }, 2 }, /* only .plt has a PLT0 */
		{ ".plt.got", { 0xff, 0x25 }, 2 },
	};
	struct at_arch_plt_part parts[AT_ARCH_PLT_PARTS];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(parts, 0, sizeof(parts));
		assert_int_equal(at_arch_plt_parts(cases[i].name, cases[i].code, cases[i].len, parts),
				 1);
		assert_int_equal(parts[0].from, 0);
		assert_rule(parts[0].rule, AT_UNWIND_CFA_SP, 8, AT_UNWIND_FP_SAME, 0);
	}
}

static void test_padding(void **state)
{
	static const struct {
		const char *what;
		uint8_t code[12];
		size_t len;
		int padding;
	} cases[] = {
		{ "nothing", { 0 }, 0, 1 },
		{ "nop, int3", { 0x90, 0xcc, 0xcc }, 3, 1 },
		{ "nopl 0(%rax,%rax)", { 0x0f, 0x1f, 0x44, 0x00, 0x00 }, 5, 1 },
		{ "cs nopw 0(%rax,%rax)",
		  { 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00 }, 10, 1 },
		{ "nopl 0(%rax)", { 0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00 }, 7, 1 },
		{ "nopl (%rax)", { 0x0f, 0x1f, 0x40, 0x00 }, 4, 1 },
		{ "ret", { 0xc3 }, 1, 0 },
		{ "nop, push %rbp", { 0x90, 0x55 }, 2, 0 },
		{ "endbr64", { 0xf3, 0x0f, 0x1e, 0xfa }, 4, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (at_arch_is_padding(cases[i].code, cases[i].len) != cases[i].padding)
			fail_msg("%s: padding %d, not %d", cases[i].what, !cases[i].padding,
				 cases[i].padding);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frame_pointer_rule), cmocka_unit_test(test_plt_sections),
		cmocka_unit_test(test_plt_lazy),           cmocka_unit_test(test_plt_jumps),
		cmocka_unit_test(test_padding),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
