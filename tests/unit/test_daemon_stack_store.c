/* test_daemon_stack_store.c: unit tests of daemon/stacks/stack_store.c: stacks kept by session id and
 * given back whole; file ids 1, 2, ... in order of first use in a file, handed out once; a new
 * file numbers them over in its own order of use and gives every stack back again; ids whose
 * stack could not be read (gaps) have none; refused additions; each frame's mapping serial
 * comes back with its pc. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../daemon/stacks/stack_store.h"

/* A stack of pid with count frames, pcs base, base+1, ... */
static struct at_stack make(uint32_t pid, uint16_t count, uint16_t flags, uint64_t base)
{
	struct at_stack s = { .id = 99, .pid = pid, .count = count, .flags = flags };

	for (unsigned i = 0; i < count; i++)
		s.pcs[i] = base + i;
	return s;
}

/* The serials a test gives the frames of s: one from each pc. */
static void serials_of(const struct at_stack *s, uint32_t *serials)
{
	for (unsigned i = 0; i < s->count && i < AT_STACK_MAX_FRAMES; i++)
		serials[i] = (uint32_t)(s->pcs[i] * 7 + 1);
}

/* at_stack_store_add with the serials of serials_of. */
static int add(struct at_stack_store *st, uint32_t sid, const struct at_stack *s)
{
	uint32_t serials[AT_STACK_MAX_FRAMES];

	serials_of(s, serials);
	return at_stack_store_add(st, sid, s, serials);
}

/* Asks for sid's file id: want_id, new or not as want_new; a new one gives back the stack. */
static void expect(struct at_stack_store *st, uint32_t sid, uint32_t want_id, int want_new,
		   const struct at_stack *want)
{
	struct at_stack out;
	uint32_t serials[AT_STACK_MAX_FRAMES], want_serials[AT_STACK_MAX_FRAMES];
	int is_new = -1;

	memset(&out, 0xAB, sizeof(out));
	assert_int_equal(at_stack_store_file_id(st, sid, &out, serials, &is_new), want_id);
	assert_int_equal(is_new, want_new);
	if (want_new) {
		assert_int_equal(out.id, want_id);
		assert_int_equal(out.pid, want->pid);
		assert_int_equal(out.count, want->count);
		assert_int_equal(out.flags, want->flags);
		assert_memory_equal(out.pcs, want->pcs, want->count * sizeof(out.pcs[0]));
		serials_of(want, want_serials);
		assert_memory_equal(serials, want_serials, want->count * sizeof(serials[0]));
	}
}

static void test_files(void **state)
{
	(void)state;
	struct at_stack_store st;
	struct at_stack a = make(10, 1, 0, 0x1000), b = make(11, AT_STACK_MAX_FRAMES,
							       AT_STACK_TRUNCATED, 0x2000),
			c = make(10, 3, AT_STACK_INCOMPLETE, 0x3000);

	at_stack_store_init(&st);
	assert_int_equal(add(&st, 1, &a), 0);
	assert_int_equal(add(&st, 2, &b), 0);
	/* the first file: used in the order 2, 1, 2 */
	expect(&st, 2, 1, 1, &b);
	expect(&st, 1, 2, 1, &a);
	expect(&st, 2, 1, 0, NULL);
	/* 3 could not be read: 4 comes after a gap */
	assert_int_equal(add(&st, 4, &c), 0);
	expect(&st, 3, 0, 0, NULL);
	expect(&st, 4, 3, 1, &c);
	expect(&st, 5, 0, 0, NULL);
	expect(&st, 0, 0, 0, NULL);

	/* a new file: ids start over in its own order of use, each stack given back again */
	at_stack_store_new_file(&st);
	expect(&st, 4, 1, 1, &c);
	expect(&st, 1, 2, 1, &a);
	expect(&st, 4, 1, 0, NULL);
	expect(&st, 2, 3, 1, &b);
	expect(&st, 3, 0, 0, NULL);
	at_stack_store_free(&st);
}

static void test_refused(void **state)
{
	(void)state;
	struct at_stack_store st;
	struct at_stack a = make(1, 2, 0, 0x10), empty = make(1, 0, 0, 0);

	at_stack_store_init(&st);
	assert_int_equal(add(&st, 2, &a), 0);
	errno = 0;
	assert_int_equal(add(&st, 2, &a), -1); /* not above the last */
	assert_int_equal(errno, EINVAL);
	assert_int_equal(add(&st, 1, &a), -1);
	assert_int_equal(add(&st, 3, &empty), -1); /* no frame */
	struct at_stack big = make(1, 1, 0, 0);
	big.count = AT_STACK_MAX_FRAMES + 1;
	assert_int_equal(add(&st, 3, &big), -1);
	expect(&st, 1, 0, 0, NULL);
	expect(&st, 2, 1, 1, &a);
	expect(&st, 3, 0, 0, NULL);
	at_stack_store_free(&st);
}

/* Many stacks: the pool and the table grow, every stack comes back whole. */
static void test_growth(void **state)
{
	(void)state;
	struct at_stack_store st;
	const uint32_t n = 5000;

	at_stack_store_init(&st);
	for (uint32_t i = 1; i <= n; i++) {
		struct at_stack s = make(i, (uint16_t)(1 + i % AT_STACK_MAX_FRAMES), 0, i * 1000ull);
		assert_int_equal(add(&st, i, &s), 0);
	}
	for (uint32_t i = n; i >= 1; i--) {
		struct at_stack s = make(i, (uint16_t)(1 + i % AT_STACK_MAX_FRAMES), 0, i * 1000ull);
		expect(&st, i, n - i + 1, 1, &s);
	}
	at_stack_store_free(&st);
}

/* Each frame's kind is kept with its pc, and given back with the stack in every file: a stack
 * with a frame that is not native (the test kind of lib/frames.h) keeps its flags and kinds. */
static void test_kinds(void **state)
{
	(void)state;
	struct at_stack_store st;
	struct at_stack a = make(10, 3, AT_STACK_KINDS, 0x1000), b = make(10, 2, 0, 0x2000), out;
	uint32_t serials[AT_STACK_MAX_FRAMES];
	int is_new;

	a.kinds[1] = AT_FRAME_TEST;
	at_stack_store_init(&st);
	assert_int_equal(add(&st, 1, &a), 0);
	assert_int_equal(add(&st, 2, &b), 0);
	for (int file = 0; file < 2; file++) {
		memset(&out, 0xAB, sizeof(out));
		assert_int_equal(at_stack_store_file_id(&st, 1, &out, serials, &is_new), 1);
		assert_int_equal(out.flags, AT_STACK_KINDS);
		assert_int_equal(out.kinds[0], AT_FRAME_NATIVE);
		assert_int_equal(out.kinds[1], AT_FRAME_TEST);
		assert_int_equal(out.kinds[2], AT_FRAME_NATIVE);
		memset(&out, 0xAB, sizeof(out));
		assert_int_equal(at_stack_store_file_id(&st, 2, &out, serials, &is_new), 2);
		assert_int_equal(out.flags, 0);
		assert_int_equal(out.kinds[0], AT_FRAME_NATIVE);
		assert_int_equal(out.kinds[1], AT_FRAME_NATIVE);
		at_stack_store_new_file(&st);
	}
	at_stack_store_free(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_growth),
		cmocka_unit_test(test_kinds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
