/* test_daemon_unwind_walk.c: the BPF stack walk compiled for user space
 * (daemon/stacks/unwind_walk.c) on a hand-made table and stack, one case per way a walk ends,
 * and the mapping search. Real stacks are the business of test_daemon_unwind.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../daemon/stacks/unwind_walk.h"

/* One page of object addresses 0x100000..0x10ffff, mapped at 0x400000 (bias 0x300000):
 * a function per 0x100 bytes, each with its own rule. */
enum { R_NONE, R_RSP8, R_RSP16_RBP, R_RBP16, R_END, R_UNSUPPORTED, R_PLT, R_FP, R_SIGNAL };

static struct at_unwind_rule rules[] = {
	[R_NONE] = { .kind = AT_UNWIND_NONE },
	[R_RSP8] = { .kind = AT_UNWIND_CFA_SP, .cfa_offset = 8 },
	[R_RSP16_RBP] = { .kind = AT_UNWIND_CFA_SP, .cfa_offset = 16,
			  .fp = AT_UNWIND_FP_AT_CFA, .fp_offset = -16 },
	[R_RBP16] = { .kind = AT_UNWIND_CFA_FP, .cfa_offset = 16, .fp = AT_UNWIND_FP_AT_CFA,
		      .fp_offset = -16 },
	[R_END] = { .kind = AT_UNWIND_END },
	[R_UNSUPPORTED] = { .kind = AT_UNWIND_UNSUPPORTED },
	[R_PLT] = { .kind = AT_UNWIND_PLT, .cfa_offset = 11 },
	[R_FP] = { .kind = AT_UNWIND_FRAME_POINTER, .cfa_offset = 16, .fp = AT_UNWIND_FP_AT_CFA,
		   .fp_offset = -16 },
	/* glibc's __restore_rt: the ucontext at rsp, rsp at +160, rip at +168, rbp at +120 */
	[R_SIGNAL] = { .kind = AT_UNWIND_SIGNAL, .cfa_offset = 160, .fp = AT_UNWIND_FP_AT_SP,
		       .fp_offset = 120 },
};

static struct at_unwind_entry entries[] = {
	{ 0x000, R_RSP8 },   { 0x100, R_RSP16_RBP }, { 0x200, R_RBP16 }, { 0x300, R_END },
	{ 0x400, R_UNSUPPORTED }, { 0x500, R_PLT },  { 0x600, R_FP },    { 0x700, R_NONE },
	{ 0x800, R_SIGNAL },      { 0x900, R_NONE },
};

static struct at_unwind_page pages[] = { { 0, sizeof(entries) / sizeof(entries[0]) } };

static struct at_unwind_table table = {
	.first_page = 0x10,
	.page_count = 1,
	.entry_count = sizeof(entries) / sizeof(entries[0]),
	.rule_count = sizeof(rules) / sizeof(rules[0]),
	.pages = pages,
	.entries = entries,
	.rules = rules,
};

#define FN(n) (0x400000u + 0x100u * (n)) /* the process address of function n */
#define BASE 0x7ff000u                    /* the stack copy's address */

static struct at_bpf_mappings maps;
static struct at_stack_tables tables; /* the table as the BPF program's arrays hold it */
static struct at_unwind_rule table_rules[16];
static struct at_unwind_page table_pages[4];
static struct at_unwind_entry table_entries[16];
static struct at_bpf_table table_dir[1];
static uint64_t stack_words[512];
static struct at_unwind_stack stack = { BASE, sizeof(stack_words), (const uint8_t *)stack_words };
static struct at_unwind_result result;

static int setup(void **state)
{
	(void)state;
	memset(&maps, 0, sizeof(maps));
	maps.count = 2;
	maps.m[0] = (struct at_bpf_mapping){ .start = 0x200000, .end = 0x201000,
					     .table = AT_BPF_NO_TABLE };
	maps.m[1] = (struct at_bpf_mapping){ .start = 0x400000, .end = 0x410000, .bias = 0x300000 };
	at_stack_tables_free(&tables);
	if (at_stack_tables_init(&tables, table_rules, 16, table_pages, 4, table_entries, 16,
				 table_dir, 1) < 0 ||
	    at_stack_tables_add(&tables, &table, &maps.m[1].table) < 0)
		return -1;
	memset(stack_words, 0, sizeof(stack_words));
	stack.len = sizeof(stack_words);
	return 0;
}

static void walk(uint64_t rip, uint64_t rsp, uint64_t rbp)
{
	struct at_unwind_regs regs = { rip, rsp, rbp };

	at_unwind_walk(&maps, &tables, &regs, &stack, &result);
}

/* Returns to function n from a call that ends its first 0x10 bytes. */
#define RET(n) (FN(n) + 0x10)

/* rsp + 8 (return address at [rsp]) -> rsp + 16 with rbp saved -> rbp + 16 -> _start. */
static void build_complete_stack(void)
{
	stack_words[0] = RET(1);           /* frame 0 (fn 0): CFA = BASE + 8 */
	stack_words[1] = BASE + 0x100;     /* fn 1 saved rbp at CFA - 16 */
	stack_words[2] = RET(2);           /* fn 1: CFA = BASE + 24 */
	stack_words[0x100 / 8] = BASE + 0x200; /* fn 2: rbp at BASE + 0x100: CFA = BASE + 0x110 */
	stack_words[0x108 / 8] = RET(3);
}

static void test_complete(void **state)
{
	(void)state;
	build_complete_stack();
	walk(FN(0), BASE, 0x1234);
	assert_int_equal(result.end, AT_UNWIND_END_OF_STACK);
	assert_int_equal(result.count, 4);
	assert_int_equal(result.pcs[0], FN(0));
	assert_int_equal(result.pcs[1], RET(1));
	assert_int_equal(result.pcs[2], RET(2));
	assert_int_equal(result.pcs[3], RET(3));
	assert_int_equal(result.fallback_frames, 0);
	assert_int_equal(result.stack_used, 0x110);
	assert_string_equal(at_unwind_end_name(result.end), "end of stack");
}

static void test_stack_short(void **state)
{
	(void)state;
	build_complete_stack();
	stack.len = 0x108; /* fn 2's return address is just past the copy */
	walk(FN(0), BASE, 0);
	assert_int_equal(result.end, AT_UNWIND_STACK_SHORT);
	assert_int_equal(result.count, 3);
}

static void test_no_table(void **state)
{
	(void)state;
	stack_words[0] = 0x200010; /* a mapping without a table yet */
	walk(FN(0), BASE, 0);
	assert_int_equal(result.end, AT_UNWIND_NO_TABLE);
	assert_int_equal(result.count, 2);
	assert_int_equal(result.pcs[1], 0x200010);
	stack_words[0] = 0x300000; /* no mapping */
	walk(FN(0), BASE, 0);
	assert_int_equal(result.end, AT_UNWIND_NO_TABLE);
	stack_words[0] = RET(7); /* a mapping whose table has no code there */
	walk(FN(0), BASE, 0);
	assert_int_equal(result.end, AT_UNWIND_NO_TABLE);
	assert_int_equal(result.count, 2);
}

static void test_unsupported(void **state)
{
	(void)state;
	stack_words[0] = RET(4);
	walk(FN(0), BASE, 0);
	assert_int_equal(result.end, AT_UNWIND_UNSUPPORTED_RULE);
	assert_int_equal(result.count, 2);
	assert_string_equal(at_unwind_end_name(result.end), "unsupported rule");
}

static void test_bad_frame(void **state)
{
	(void)state;
	/* fn 2's CFA is rbp + 16: an rbp below rsp cannot be a caller's frame */
	walk(FN(2), BASE + 0x100, BASE);
	assert_int_equal(result.end, AT_UNWIND_BAD_FRAME);
	assert_int_equal(result.count, 1);
	/* a stack copy that starts above rsp */
	walk(FN(0), BASE - 0x100, 0);
	assert_int_equal(result.end, AT_UNWIND_BAD_FRAME);
	assert_int_equal(result.count, 1);
}

static void test_truncated(void **state)
{
	(void)state;
	/* fn 0 calling itself forever: each frame takes 8 bytes */
	for (size_t i = 0; i < sizeof(stack_words) / 8; i++)
		stack_words[i] = RET(0);
	walk(FN(0), BASE, 0);
	assert_int_equal(result.end, AT_UNWIND_TRUNCATED);
	assert_int_equal(result.count, AT_BPF_MAX_FRAMES);
	assert_int_equal(result.pcs[AT_BPF_MAX_FRAMES - 1], RET(0));
	/* exactly AT_BPF_MAX_FRAMES frames ending at _start is complete */
	stack_words[AT_BPF_MAX_FRAMES - 2] = RET(3);
	walk(FN(0), BASE, 0);
	assert_int_equal(result.end, AT_UNWIND_END_OF_STACK);
	assert_int_equal(result.count, AT_BPF_MAX_FRAMES);
}

static void test_plt_and_frame_pointer(void **state)
{
	(void)state;
	/* a PLT entry before its push (CFA = rsp + 8) and after it (rsp + 16) */
	stack_words[0] = RET(3);
	stack_words[1] = RET(3);
	walk(FN(5) + 0x10 + 6, BASE, 0);
	assert_int_equal(result.end, AT_UNWIND_END_OF_STACK);
	assert_int_equal(result.count, 2);
	stack_words[0] = 0;
	walk(FN(5) + 0x10 + 11, BASE, 0);
	assert_int_equal(result.end, AT_UNWIND_END_OF_STACK);
	assert_int_equal(result.count, 2);
	/* code without CFI: rbp chains */
	stack_words[4] = BASE + 0x40; /* saved rbp */
	stack_words[5] = RET(6);
	stack_words[8] = 0;
	stack_words[9] = RET(3);
	walk(FN(6), BASE, BASE + 0x20);
	assert_int_equal(result.end, AT_UNWIND_END_OF_STACK);
	assert_int_equal(result.count, 3);
	assert_int_equal(result.fallback_frames, 2);
}

/* A handler (fn 0) returns into the signal trampoline (fn 8, whose rule starts a byte before
 * its code, as glibc's does); the context the kernel saved holds the interrupted rsp, rip and
 * rbp. The interrupted pc is fn 2's first byte: its own rule (CFA = rbp + 16) applies, not that
 * of the byte before it (fn 1's), and rbp is the saved one. */
static void test_signal_frame(void **state)
{
	(void)state;
	uint64_t frame = BASE + 8; /* the trampoline's rsp: the ucontext */

	stack_words[0] = FN(8) + 1;
	stack_words[(frame + 160 - BASE) / 8] = BASE + 0x200; /* interrupted rsp */
	stack_words[(frame + 168 - BASE) / 8] = FN(2);        /* interrupted rip */
	stack_words[(frame + 120 - BASE) / 8] = BASE + 0x300; /* interrupted rbp */
	stack_words[0x308 / 8] = RET(3);
	walk(FN(0), BASE, 0);
	assert_int_equal(result.end, AT_UNWIND_END_OF_STACK);
	assert_int_equal(result.count, 4);
	assert_int_equal(result.pcs[1], FN(8) + 1);
	assert_int_equal(result.pcs[2], FN(2));
	assert_int_equal(result.pcs[3], RET(3));
	assert_int_equal(result.stack_used, 0x310);

	/* after the interrupted frame, return addresses again: RET(3) - 1 is in fn 3 */
	stack_words[(frame + 168 - BASE) / 8] = FN(2) + 0x20;
	walk(FN(0), BASE, 0);
	assert_int_equal(result.end, AT_UNWIND_END_OF_STACK);
	assert_int_equal(result.count, 4);

	/* a saved rsp not above the trampoline's: a bad frame, not a loop */
	stack_words[(frame + 160 - BASE) / 8] = frame;
	walk(FN(0), BASE, 0);
	assert_int_equal(result.end, AT_UNWIND_BAD_FRAME);
	assert_int_equal(result.count, 2);

	/* the saved context past the copy */
	stack_words[(frame + 160 - BASE) / 8] = BASE + 0x200;
	stack.len = 160;
	walk(FN(0), BASE, 0);
	assert_int_equal(result.end, AT_UNWIND_STACK_SHORT);
	assert_int_equal(result.count, 2);
}

static void test_find_mapping(void **state)
{
	(void)state;
	assert_null(at_unwind_find_mapping(&maps, 0x1fffff));
	assert_ptr_equal(at_unwind_find_mapping(&maps, 0x200000), &maps.m[0]);
	assert_ptr_equal(at_unwind_find_mapping(&maps, 0x200fff), &maps.m[0]);
	assert_null(at_unwind_find_mapping(&maps, 0x201000));
	assert_ptr_equal(at_unwind_find_mapping(&maps, 0x40ffff), &maps.m[1]);
	assert_null(at_unwind_find_mapping(&maps, 0x410000));
	/* a full table of mappings */
	maps.count = AT_BPF_MAX_MAPPINGS;
	for (uint32_t i = 0; i < AT_BPF_MAX_MAPPINGS; i++)
		maps.m[i] = (struct at_bpf_mapping){ .start = 0x10000u * (i + 1),
						     .end = 0x10000u * (i + 1) + 0x8000,
						     .table = AT_BPF_NO_TABLE };
	for (uint32_t i = 0; i < AT_BPF_MAX_MAPPINGS; i++) {
		assert_ptr_equal(at_unwind_find_mapping(&maps, 0x10000u * (i + 1)), &maps.m[i]);
		assert_ptr_equal(at_unwind_find_mapping(&maps, 0x10000u * (i + 1) + 0x7fff),
				 &maps.m[i]);
		assert_null(at_unwind_find_mapping(&maps, 0x10000u * (i + 1) + 0x8000));
	}
	maps.count = 0;
	assert_null(at_unwind_find_mapping(&maps, 0x10000));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_complete, setup),
		cmocka_unit_test_setup(test_stack_short, setup),
		cmocka_unit_test_setup(test_no_table, setup),
		cmocka_unit_test_setup(test_unsupported, setup),
		cmocka_unit_test_setup(test_bad_frame, setup),
		cmocka_unit_test_setup(test_truncated, setup),
		cmocka_unit_test_setup(test_plt_and_frame_pointer, setup),
		cmocka_unit_test_setup(test_signal_frame, setup),
		cmocka_unit_test_setup(test_find_mapping, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
