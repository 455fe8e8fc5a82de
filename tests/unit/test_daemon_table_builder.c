/* test_daemon_table_builder.c: unit tests of daemon/stacks/table_builder.c with the real libdw: a table
 * asked for comes back through the descriptor with its key, the same as one built on this
 * thread; a path that does not exist comes back without a table, marked gone; several requests
 * come back in order; stopping while a big object builds returns at once. */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../daemon/stacks/table_builder.h"

#define LIBC "/usr/lib/" AT_MULTIARCH "/libc.so.6"
#define LIBM "/usr/lib/" AT_MULTIARCH "/libm.so.6"
#define BIG "/usr/lib/" AT_MULTIARCH "/libLLVM-14.so.1"

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Waits up to 20 s for count builds; the list of them, in order. */
static struct at_table_build *take(struct at_table_builder *b, unsigned count)
{
	struct at_table_build *list = NULL, **tail = &list;
	unsigned got = 0;
	uint64_t until = now_ms() + 20000;

	while (got < count && now_ms() < until) {
		struct pollfd p = { at_table_builder_fd(b), POLLIN, 0 };

		if (poll(&p, 1, 100) <= 0)
			continue;
		for (*tail = at_table_builder_take(b); *tail; tail = &(*tail)->next)
			got++;
	}
	assert_int_equal(got, count);
	return list;
}

static void key_of(const char *path, uint8_t key[AT_UNWIND_BUILD_ID_MAX], uint8_t *len)
{
	const char *why;

	assert_int_equal(at_unwind_object_key(path, key, len, &why), 0);
}

static void test_built(void **state)
{
	struct at_table_builder *b = at_table_builder_start();
	uint8_t key[AT_UNWIND_BUILD_ID_MAX];
	uint8_t len;
	struct at_unwind_table here;
	const char *why;

	(void)state;
	assert_non_null(b);
	key_of(LIBC, key, &len);
	assert_int_equal(at_table_builder_request(b, LIBC, key, len), 0);
	assert_int_equal(at_table_builder_waiting(b), 1);
	struct at_table_build *w = take(b, 1);
	assert_int_equal(at_table_builder_waiting(b), 0);
	assert_string_equal(w->path, LIBC);
	assert_int_equal(w->key_len, len);
	assert_memory_equal(w->key, key, sizeof(key));
	assert_non_null(w->table);
	assert_int_equal(at_unwind_table_build(LIBC, &here, &why), 0);
	assert_int_equal(w->table->rule_count, here.rule_count);
	assert_int_equal(w->table->entry_count, here.entry_count);
	assert_int_equal(w->table->page_count, here.page_count);
	assert_memory_equal(w->table->entries, here.entries,
			    here.entry_count * sizeof(*here.entries));
	at_unwind_table_free(&here);
	at_table_builds_free(w);
	at_table_builder_stop(b);
}

static void test_gone_and_order(void **state)
{
	struct at_table_builder *b = at_table_builder_start();
	uint8_t key[AT_UNWIND_BUILD_ID_MAX] = { 1 };
	uint8_t len;

	(void)state;
	assert_non_null(b);
	assert_int_equal(at_table_builder_request(b, "/nonexistent/libgone.so", key, 1), 0);
	key_of(LIBM, key, &len);
	assert_int_equal(at_table_builder_request(b, LIBM, key, len), 0);
	struct at_table_build *w = take(b, 2);
	assert_string_equal(w->path, "/nonexistent/libgone.so");
	assert_null(w->table);
	assert_int_equal(w->gone, 1);
	assert_non_null(w->why);
	assert_string_equal(w->next->path, LIBM);
	assert_non_null(w->next->table);
	at_table_builds_free(w);
	at_table_builder_stop(b);
}

static void test_stop_during_build(void **state)
{
	struct at_table_builder *b = at_table_builder_start();
	uint8_t key[AT_UNWIND_BUILD_ID_MAX] = { 2 };
	const char *big = access(BIG, R_OK) == 0 ? BIG : LIBC;

	(void)state;
	assert_non_null(b);
	assert_int_equal(at_table_builder_request(b, big, key, 1), 0);
	assert_int_equal(at_table_builder_request(b, LIBM, key, 1), 0);
	usleep(50000); /* the build has begun */
	uint64_t t0 = now_ms();
	at_table_builder_stop(b);
	assert_true(now_ms() - t0 < 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_built),
		cmocka_unit_test(test_gone_and_order),
		cmocka_unit_test(test_stop_during_build),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
