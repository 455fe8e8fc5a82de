/* test_daemon_table_builder.c: unit tests of daemon/stacks/table_builder.c with the real libdw: a table
 * asked for comes back through the descriptor with its key, the same as one built on this
 * thread; a path that does not exist comes back without a table, marked gone; one thread
 * gives the requests back in order; a pool builds several at once; stopping while big objects
 * build returns at once. With an on-disk cache (in a temporary folder): a table built is
 * stored and read back by the next builder, the same; a forged file is refused and the table
 * built again; another user's object, or one writable by others, is built but not stored. */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../daemon/stacks/table_builder.h"
#include "../../daemon/stacks/table_cache.h"

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
	struct at_table_builder *b = at_table_builder_start(NULL, 0);
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
	struct at_table_builder *b = at_table_builder_start(NULL, 1);
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
	struct at_table_builder *b = at_table_builder_start(NULL, 2);
	uint8_t key[AT_UNWIND_BUILD_ID_MAX] = { 2 };
	const char *big = access(BIG, R_OK) == 0 ? BIG : LIBC;

	(void)state;
	assert_non_null(b);
	assert_int_equal(at_table_builder_request(b, big, key, 1), 0);
	assert_int_equal(at_table_builder_request(b, big, key, 1), 0); /* both threads busy */
	assert_int_equal(at_table_builder_request(b, LIBM, key, 1), 0);
	usleep(50000); /* the build has begun */
	uint64_t t0 = now_ms();
	at_table_builder_stop(b);
	assert_true(now_ms() - t0 < 100);
}

/* A pool of 2 takes two requests at once: libm's, asked for after libc's, may come back first;
 * both come back, each with its own table. */
static void test_pool(void **state)
{
	struct at_table_builder *b = at_table_builder_start(NULL, 2);
	uint8_t k1[AT_UNWIND_BUILD_ID_MAX], k2[AT_UNWIND_BUILD_ID_MAX];
	uint8_t l1, l2;

	(void)state;
	assert_non_null(b);
	assert_true(at_table_builder_default_threads() >= 1 &&
		    at_table_builder_default_threads() <= AT_TABLE_BUILDER_MAX_THREADS);
	key_of(LIBC, k1, &l1);
	key_of(LIBM, k2, &l2);
	assert_int_equal(at_table_builder_request(b, LIBC, k1, l1), 0);
	assert_int_equal(at_table_builder_request(b, LIBM, k2, l2), 0);
	struct at_table_build *w = take(b, 2);
	int libc_first = strcmp(w->path, LIBC) == 0;
	struct at_table_build *c = libc_first ? w : w->next, *m = libc_first ? w->next : w;
	assert_string_equal(c->path, LIBC);
	assert_string_equal(m->path, LIBM);
	assert_memory_equal(c->table->build_id, k1, sizeof(k1));
	assert_memory_equal(m->table->build_id, k2, sizeof(k2));
	at_table_builds_free(w);
	at_table_builder_stop(b);
}

static char cache_root[64];

static struct at_table_cache *open_cache(void)
{
	const char *why;
	char dir[128];

	snprintf(dir, sizeof(dir), "%s/unwind", cache_root);
	struct at_table_cache *c = at_table_cache_open(dir, AT_TABLE_CACHE_LIMIT, &why);
	assert_non_null(c);
	return c;
}

/* The one build of path by a new builder over the cache in cache_root. */
static struct at_table_build *build_cached(const char *path)
{
	struct at_table_builder *b = at_table_builder_start(open_cache(), 1);
	uint8_t key[AT_UNWIND_BUILD_ID_MAX];
	uint8_t len;

	assert_non_null(b);
	key_of(path, key, &len);
	assert_int_equal(at_table_builder_request(b, path, key, len), 0);
	struct at_table_build *w = take(b, 1);
	at_table_builder_stop(b);
	assert_non_null(w->table);
	return w;
}

static void test_cache(void **state)
{
	char path[256], name[64];

	(void)state;
	snprintf(cache_root, sizeof(cache_root), "/tmp/at-builder-cache-XXXXXX");
	assert_non_null(mkdtemp(cache_root));
	struct at_table_build *built = build_cached(LIBC);
	assert_int_equal(built->cached, 0);
	assert_int_equal(built->stored, 1);
	assert_null(built->cache_why);
	struct at_table_build *read = build_cached(LIBC);
	assert_int_equal(read->cached, 1);
	assert_int_equal(read->stored, 0);
	assert_int_equal(read->table->entry_count, built->table->entry_count);
	assert_memory_equal(read->table->entries, built->table->entries,
			    built->table->entry_count * sizeof(*built->table->entries));
	assert_memory_equal(read->table->pages, built->table->pages,
			    built->table->page_count * sizeof(*built->table->pages));
	assert_memory_equal(read->table->rules, built->table->rules,
			    built->table->rule_count * sizeof(*built->table->rules));
	at_table_builds_free(read);

	/* a file whose rows were changed: refused, removed, built again and stored */
	assert_int_equal(at_table_cache_name(built->table->build_id, built->table->build_id_len,
					     name, sizeof(name)), 0);
	snprintf(path, sizeof(path), "%s/unwind/%s", cache_root, name);
	FILE *f = fopen(path, "r+");
	assert_non_null(f);
	fseek(f, AT_TABLE_CACHE_HEADER + 3, SEEK_SET);
	fputc(0x55, f);
	fclose(f);
	read = build_cached(LIBC);
	assert_int_equal(read->cached, 0);
	assert_int_equal(read->stored, 1);
	assert_string_equal(read->cache_why, "its checksum does not match");
	at_table_builds_free(read);
	at_table_builds_free(built);

	/* another user's object, then one others may write: built, not stored */
	char copy[128];
	snprintf(copy, sizeof(copy), "%s/libm.so.6", cache_root);
	snprintf(path, sizeof(path), "cp %s %s", LIBM, copy);
	assert_int_equal(system(path), 0);
	assert_int_equal(chown(copy, 65534, 65534), 0);
	read = build_cached(copy);
	assert_int_equal(read->stored, 0);
	assert_string_equal(read->cache_why, "another user may write the object: its table is "
			    "not cached");
	at_table_builds_free(read);
	assert_int_equal(chown(copy, 0, 0), 0);
	assert_int_equal(chmod(copy, 0666), 0);
	read = build_cached(copy);
	assert_int_equal(read->stored, 0);
	assert_int_equal(read->cached, 0);
	at_table_builds_free(read);
	snprintf(path, sizeof(path), "rm -rf %s", cache_root);
	assert_int_equal(system(path), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_built),
		cmocka_unit_test(test_gone_and_order),
		cmocka_unit_test(test_stop_during_build),
		cmocka_unit_test(test_pool),
		cmocka_unit_test(test_cache),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
