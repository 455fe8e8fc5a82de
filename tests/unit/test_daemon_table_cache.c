/* test_daemon_table_cache.c: unit tests of daemon/stacks/table_cache.c over libc's real table,
 * in a temporary folder (never the machine's cache): a table written and read back is the
 * table built; the folder is created 0700 and refused when unsafe; forged files (every count
 * and index the BPF walk relies on, the header's fields, a torn file, the file's owner, mode,
 * kind) are refused and removed; the limit removes the least recently used files and dead
 * writers' temporary files; two writers of one key never leave a file a reader refuses. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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

#include "../../daemon/stacks/table_cache.h"

#define LIBC "/usr/lib/" AT_MULTIARCH "/libc.so.6"
#define NOBODY 65534

static struct at_unwind_table libc; /* built once */
static char root[64];               /* the test's temporary folder */

static int setup(void **state)
{
	const char *why;

	(void)state;
	snprintf(root, sizeof(root), "/tmp/at-table-cache-XXXXXX");
	if (!mkdtemp(root) || at_unwind_table_build(LIBC, &libc, &why) < 0)
		return -1;
	return libc.build_id_len ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	at_unwind_table_free(&libc);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	return system(cmd) == 0 ? 0 : -1;
}

/* A new folder under root for one test, its path in dir. */
static struct at_table_cache *fresh(char *dir, size_t size, const char *name, uint64_t limit)
{
	const char *why = NULL;

	snprintf(dir, size, "%s/%s", root, name);
	struct at_table_cache *c = at_table_cache_open(dir, limit, &why);
	assert_non_null(c);
	return c;
}

/* The path of key's file in dir. */
static void file_of(char *path, size_t size, const char *dir, const struct at_unwind_table *t)
{
	char name[64];

	assert_int_equal(at_table_cache_name(t->build_id, t->build_id_len, name, sizeof(name)), 0);
	snprintf(path, size, "%s/%s", dir, name);
}

static void assert_same_table(const struct at_unwind_table *a, const struct at_unwind_table *b)
{
	assert_memory_equal(a->build_id, b->build_id, sizeof(a->build_id));
	assert_int_equal(a->build_id_len, b->build_id_len);
	assert_int_equal(a->first_page, b->first_page);
	assert_int_equal(a->rule_count, b->rule_count);
	assert_int_equal(a->page_count, b->page_count);
	assert_int_equal(a->entry_count, b->entry_count);
	assert_int_equal(a->segment_count, b->segment_count);
	assert_memory_equal(a->segments, b->segments, sizeof(a->segments));
	assert_memory_equal(a->rules, b->rules, a->rule_count * sizeof(*a->rules));
	assert_memory_equal(a->pages, b->pages, a->page_count * sizeof(*a->pages));
	assert_memory_equal(a->entries, b->entries, a->entry_count * sizeof(*a->entries));
	assert_int_equal(a->stats.rows, b->stats.rows);
	assert_int_equal(a->stats.fdes, b->stats.fdes);
	assert_int_equal(a->stats.build_ns, b->stats.build_ns);
}

static void test_name(void **state)
{
	uint8_t key[AT_UNWIND_BUILD_ID_MAX] = { 0x00, 0xab, 0x7f };
	char name[64];

	(void)state;
	assert_int_equal(at_table_cache_name(key, 3, name, sizeof(name)), 0);
	assert_string_equal(name, "00ab7f.unw");
	assert_int_equal(at_table_cache_name(key, 0, name, sizeof(name)), -1);
	assert_int_equal(at_table_cache_name(key, 21, name, sizeof(name)), -1);
	assert_int_equal(at_table_cache_name(key, 3, name, 10), -1);
}

static void test_round_trip(void **state)
{
	char dir[128], path[256];
	struct at_unwind_table back;
	const char *why = NULL;
	struct stat st;
	size_t len;

	(void)state;
	uint8_t *buf = at_table_cache_encode(&libc, &len);
	assert_non_null(buf);
	assert_int_equal(len, AT_TABLE_CACHE_HEADER + at_unwind_table_bytes(&libc));
	assert_int_equal(at_table_cache_decode(buf, len, libc.build_id, libc.build_id_len, &back,
					       &why), 0);
	assert_same_table(&libc, &back);
	at_unwind_table_free(&back);
	free(buf);

	struct at_table_cache *c = fresh(dir, sizeof(dir), "round", AT_TABLE_CACHE_LIMIT);
	assert_int_equal(at_table_cache_load(c, libc.build_id, libc.build_id_len, &back, &why), 0);
	assert_int_equal(at_table_cache_store(c, &libc, &why), 0);
	file_of(path, sizeof(path), dir, &libc);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(st.st_size, (off_t)len);
	assert_int_equal(at_table_cache_load(c, libc.build_id, libc.build_id_len, &back, &why), 1);
	assert_same_table(&libc, &back);
	at_unwind_table_free(&back);
	/* a key without build-id (device and inode) is neither read nor written */
	struct at_unwind_table no_id = libc;
	no_id.build_id_len = 0;
	assert_int_equal(at_table_cache_load(c, no_id.build_id, 0, &back, &why), 0);
	assert_int_equal(at_table_cache_store(c, &no_id, &why), -1);
	assert_string_equal(why, "no build-id");
	at_table_cache_close(c);
}

static void test_folder(void **state)
{
	char dir[128], link[160];
	const char *why = NULL;
	struct stat st;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/a/b/unwind", root);
	struct at_table_cache *c = at_table_cache_open(dir, 1 << 20, &why);
	assert_non_null(c);
	at_table_cache_close(c);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(st.st_uid, geteuid());

	/* writable by others, then another user's, then a link, then a file: refused */
	assert_int_equal(chmod(dir, 0777), 0);
	assert_null(at_table_cache_open(dir, 1 << 20, &why));
	assert_int_equal(errno, EPERM);
	assert_non_null(strstr(why, "writable by group or others"));
	assert_int_equal(chmod(dir, 0755), 0); /* readable by others is fine */
	c = at_table_cache_open(dir, 1 << 20, &why);
	assert_non_null(c);
	at_table_cache_close(c);
	assert_int_equal(chown(dir, NOBODY, NOBODY), 0);
	assert_null(at_table_cache_open(dir, 1 << 20, &why));
	assert_int_equal(errno, EPERM);
	assert_non_null(strstr(why, "owned by another user"));
	snprintf(link, sizeof(link), "%s/a/link", root);
	assert_int_equal(chown(dir, 0, 0), 0);
	assert_int_equal(symlink(dir, link), 0);
	assert_null(at_table_cache_open(link, 1 << 20, &why));
	assert_int_equal(errno, EPERM);
	assert_non_null(strstr(why, "symbolic link"));
	snprintf(link, sizeof(link), "%s/a/file", root);
	fclose(fopen(link, "w"));
	assert_null(at_table_cache_open(link, 1 << 20, &why));
	assert_int_equal(errno, EPERM);
}

/* A forgery of a table whose file keeps a valid checksum: what the decoder must refuse. */
struct forgery {
	const char *name;
	void (*forge)(struct at_unwind_table *t);
	const char *why;
};

static void entry_rule_out(struct at_unwind_table *t)
{
	t->entries[t->entry_count - 1].rule = (uint16_t)t->rule_count;
}

static void page_first_out(struct at_unwind_table *t)
{
	t->pages[0].first = t->entry_count;
}

static void page_count_out(struct at_unwind_table *t)
{
	t->pages[0].count = t->entry_count + 1 - t->pages[0].first;
}

static void page_count_wraps(struct at_unwind_table *t)
{
	t->pages[0].count = 0xffffffffu;
}

static void entry_not_at_start(struct at_unwind_table *t)
{
	t->entries[t->pages[0].first].offset = 1;
}

static void entries_unsorted(struct at_unwind_table *t)
{
	t->entries[t->pages[0].first + 1].offset = 0;
}

static void rule_kind_unknown(struct at_unwind_table *t)
{
	t->rules[1].kind = AT_UNWIND_SIGNAL + 1;
}

static void rule_fp_unknown(struct at_unwind_table *t)
{
	t->rules[1].fp = AT_UNWIND_FP_AT_SP + 1;
}

static void first_rule_not_none(struct at_unwind_table *t)
{
	t->rules[0].kind = AT_UNWIND_CFA_SP;
}

static void no_pages(struct at_unwind_table *t)
{
	t->page_count = 0;
}

static void no_rules(struct at_unwind_table *t)
{
	t->rule_count = 0;
}

static void too_many_segments(struct at_unwind_table *t)
{
	t->segment_count = AT_UNWIND_MAX_SEGMENTS + 1;
}

static void no_segments(struct at_unwind_table *t)
{
	t->segment_count = 0;
}

static void other_key(struct at_unwind_table *t)
{
	t->build_id[0] ^= 1;
}

static void shorter_key(struct at_unwind_table *t)
{
	t->build_id_len--;
}


static const struct forgery forgeries[] = {
	{ "entry rule out", entry_rule_out, "an entry's rule out of bounds" },
	{ "page first out", page_first_out, "a page's entries out of bounds" },
	{ "page count out", page_count_out, "a page's entries out of bounds" },
	{ "page count wraps", page_count_wraps, "a page's entries out of bounds" },
	{ "entry not at 0", entry_not_at_start, "a page's first entry not at its start" },
	{ "entries unsorted", entries_unsorted, "a page's entries out of order" },
	{ "rule kind", rule_kind_unknown, "a rule of an unknown kind" },
	{ "rule fp", rule_fp_unknown, "a rule of an unknown kind" },
	{ "rule 0", first_rule_not_none, "its first rule is not the empty rule" },
	{ "no pages", no_pages, "counts out of bounds" },
	{ "no rules", no_rules, "counts out of bounds" },
	{ "5 segments", too_many_segments, "counts out of bounds" },
	{ "0 segments", no_segments, "counts out of bounds" },
	{ "other key", other_key, "the table of another object" },
	{ "shorter key", shorter_key, "the table of another object" },
};

/* A copy of libc's table with arrays of its own, the counts kept for the encoding. */
static void copy_libc(struct at_unwind_table *t)
{
	*t = libc;
	t->rules = malloc(libc.rule_count * sizeof(*t->rules));
	t->pages = malloc(libc.page_count * sizeof(*t->pages));
	t->entries = malloc(libc.entry_count * sizeof(*t->entries));
	assert_true(t->rules && t->pages && t->entries);
	memcpy(t->rules, libc.rules, libc.rule_count * sizeof(*t->rules));
	memcpy(t->pages, libc.pages, libc.page_count * sizeof(*t->pages));
	memcpy(t->entries, libc.entries, libc.entry_count * sizeof(*t->entries));
}

static void test_forged_tables(void **state)
{
	(void)state;
	assert_true(libc.pages[0].count >= 2); /* the forgeries need two entries on page 0 */
	for (size_t i = 0; i < sizeof(forgeries) / sizeof(forgeries[0]); i++) {
		struct at_unwind_table t, back;
		const char *why = NULL;
		size_t len;

		copy_libc(&t);
		forgeries[i].forge(&t); /* no count goes up: the encoding reads the arrays */
		uint8_t *buf = at_table_cache_encode(&t, &len);
		assert_non_null(buf);
		int rc = at_table_cache_decode(buf, len, libc.build_id, libc.build_id_len, &back, &why);
		if (rc == 0 || !why || strcmp(why, forgeries[i].why) != 0)
			fail_msg("%s: got %d, %s; want %s", forgeries[i].name, rc, why ? why : "(null)",
				 forgeries[i].why);
		assert_null(back.rules);
		free(buf);
		at_unwind_table_free(&t);
	}
}

/* A torn, corrupt or foreign file: its bytes changed, the checksum not made again. */
static void test_corrupt_bytes(void **state)
{
	struct at_unwind_table back;
	const char *why = NULL;
	size_t len;
	static const struct {
		size_t at;
		const char *why;
	} flips[] = {
		{ 0, "not an unwind table file (bad magic)" },
		{ 8, "another format version or machine" },     /* version */
		{ 12, "another format version or machine" },    /* machine */
		{ 15, "another format version or machine" },    /* page shift */
		{ 52, "another format version or machine" },    /* reserved */
		{ 36, "its size does not match its counts" },   /* rule count */
		{ 44, "its size does not match its counts" },   /* entry count */
		{ 180, "its checksum does not match" },         /* a statistic */
		{ AT_TABLE_CACHE_HEADER + 9, "its checksum does not match" },
	};

	(void)state;
	uint8_t *buf = at_table_cache_encode(&libc, &len);
	assert_non_null(buf);
	for (size_t i = 0; i < sizeof(flips) / sizeof(flips[0]); i++) {
		buf[flips[i].at] ^= 0x10;
		assert_int_equal(at_table_cache_decode(buf, len, libc.build_id, libc.build_id_len,
						       &back, &why), -1);
		assert_string_equal(why, flips[i].why);
		buf[flips[i].at] ^= 0x10;
	}
	/* counts past the bounds, whatever the size */
	static const struct {
		size_t at;
		uint32_t value;
	} counts[] = { { 36, 65537 }, { 40, AT_UNWIND_MAX_PAGES + 1 }, { 48, 5 } };
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		uint32_t was;

		memcpy(&was, buf + counts[i].at, 4);
		memcpy(buf + counts[i].at, &counts[i].value, 4);
		assert_int_equal(at_table_cache_decode(buf, len, libc.build_id, libc.build_id_len,
						       &back, &why), -1);
		assert_string_equal(why, "counts out of bounds");
		memcpy(buf + counts[i].at, &was, 4);
	}
	/* torn: any length but the whole */
	size_t lens[] = { 0, 100, AT_TABLE_CACHE_HEADER - 1, AT_TABLE_CACHE_HEADER, len - 4, len - 1 };
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		assert_int_equal(at_table_cache_decode(buf, lens[i], libc.build_id,
						       libc.build_id_len, &back, &why), -1);
	assert_int_equal(at_table_cache_decode(buf, len, libc.build_id, libc.build_id_len, &back,
					       &why), 0);
	at_unwind_table_free(&back);
	free(buf);
}

/* Writes libc's file, then changes it with change; a load must refuse it, with why, and
 * remove it. */
static void refused_file(const char *dir, struct at_table_cache *c, void (*change)(const char *),
			 const char *want)
{
	char path[256];
	struct at_unwind_table back;
	const char *why = NULL;

	file_of(path, sizeof(path), dir, &libc);
	unlink(path);
	assert_int_equal(at_table_cache_store(c, &libc, &why), 0);
	change(path);
	assert_int_equal(at_table_cache_load(c, libc.build_id, libc.build_id_len, &back, &why), -1);
	assert_string_equal(why, want);
	assert_null(back.rules);
	assert_int_equal(access(path, F_OK), -1);
	/* stored again, it is read */
	assert_int_equal(at_table_cache_store(c, &libc, &why), 0);
	assert_int_equal(at_table_cache_load(c, libc.build_id, libc.build_id_len, &back, &why), 1);
	at_unwind_table_free(&back);
}

static void to_nobody(const char *path)
{
	assert_int_equal(chown(path, NOBODY, NOBODY), 0);
}

static void to_0622(const char *path)
{
	assert_int_equal(chmod(path, 0622), 0);
}

static void to_truncated(const char *path)
{
	assert_int_equal(truncate(path, 300), 0);
}

static void to_symlink(const char *path)
{
	char real[300];

	snprintf(real, sizeof(real), "%s.real", path);
	assert_int_equal(rename(path, real), 0);
	assert_int_equal(symlink(real, path), 0);
}
static void to_fifo(const char *path)
{
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkfifo(path, 0600), 0);
}

static void test_refused_files(void **state)
{
	char dir[128];

	(void)state;
	struct at_table_cache *c = fresh(dir, sizeof(dir), "refused", AT_TABLE_CACHE_LIMIT);
	refused_file(dir, c, to_nobody, "owned by another user");
	refused_file(dir, c, to_0622, "writable by group or others");
	refused_file(dir, c, to_truncated, "its size does not match its counts");
	refused_file(dir, c, to_symlink, "a symbolic link");
	refused_file(dir, c, to_fifo, "not a regular file"); /* and the open did not block */
	char path[256];
	file_of(path, sizeof(path), dir, &libc);
	unlink(path);
	assert_int_equal(mkdir(path, 0700), 0); /* refused; a folder is left where it is */
	struct at_unwind_table back;
	const char *why = NULL;
	assert_int_equal(at_table_cache_load(c, libc.build_id, libc.build_id_len, &back, &why), -1);
	assert_string_equal(why, "not a regular file");
	rmdir(path);
	at_table_cache_close(c);
}

/* Stores a copy of libc's table under key byte k; sets its file's time to sec. The file's
 * size. */
static off_t store_as(struct at_table_cache *c, const char *dir, uint8_t k, time_t sec)
{
	struct at_unwind_table t = libc;
	char path[256];
	const char *why = NULL;
	struct stat st;

	t.build_id[0] = k;
	assert_int_equal(at_table_cache_store(c, &t, &why), 0);
	file_of(path, sizeof(path), dir, &t);
	struct timespec ts[2] = { { sec, 0 }, { sec, 0 } };
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
	assert_int_equal(stat(path, &st), 0);
	return st.st_size;
}

static int exists_as(const char *dir, uint8_t k)
{
	struct at_unwind_table t = libc;
	char path[256];

	t.build_id[0] = k;
	file_of(path, sizeof(path), dir, &t);
	return access(path, F_OK) == 0;
}

static void test_limit(void **state)
{
	char dir[128], temp[256];
	struct at_unwind_table back;
	const char *why = NULL;

	(void)state;
	struct at_table_cache *c = fresh(dir, sizeof(dir), "limit", AT_TABLE_CACHE_LIMIT);
	off_t size = store_as(c, dir, 1, 1000);
	store_as(c, dir, 2, 2000);
	store_as(c, dir, 3, 3000);
	/* reading 1 makes it the most recently used: 2 is the least */
	struct at_unwind_table t = libc;
	t.build_id[0] = 1;
	assert_int_equal(at_table_cache_load(c, t.build_id, t.build_id_len, &back, &why), 1);
	at_unwind_table_free(&back);
	/* a dead writer's temporary file goes; a live one's stays; other names stay */
	snprintf(temp, sizeof(temp), "%s/.tmp-dead", dir);
	fclose(fopen(temp, "w"));
	struct timespec old[2] = { { 1000, 0 }, { 1000, 0 } };
	assert_int_equal(utimensat(AT_FDCWD, temp, old, 0), 0);
	snprintf(temp, sizeof(temp), "%s/.tmp-live", dir);
	fclose(fopen(temp, "w"));
	snprintf(temp, sizeof(temp), "%s/README", dir);
	fclose(fopen(temp, "w"));

	assert_int_equal(at_table_cache_trim(c, 3 * (uint64_t)size), 1); /* the dead temp */
	assert_true(exists_as(dir, 1) && exists_as(dir, 2) && exists_as(dir, 3));
	assert_int_equal(at_table_cache_trim(c, 2 * (uint64_t)size + 10), 1);
	assert_true(exists_as(dir, 1) && !exists_as(dir, 2) && exists_as(dir, 3));
	assert_int_equal(at_table_cache_trim(c, 0), 2);
	assert_true(!exists_as(dir, 1) && !exists_as(dir, 3));
	assert_int_equal(access(temp, F_OK), 0);
	snprintf(temp, sizeof(temp), "%s/.tmp-live", dir);
	assert_int_equal(access(temp, F_OK), 0);
	at_table_cache_close(c);

	/* a store keeps the limit: the third file of two files' room removes the oldest */
	c = fresh(dir, sizeof(dir), "limit2", 2 * (uint64_t)size + 10);
	store_as(c, dir, 1, 1000);
	store_as(c, dir, 2, 2000);
	store_as(c, dir, 3, 3000);
	assert_true(!exists_as(dir, 1) && exists_as(dir, 2) && exists_as(dir, 3));
	at_table_cache_close(c);

	/* a table larger than the limit is not written */
	c = fresh(dir, sizeof(dir), "limit3", (uint64_t)size - 1);
	assert_int_equal(at_table_cache_store(c, &libc, &why), -1);
	assert_string_equal(why, "larger than the cache's limit");
	assert_false(exists_as(dir, libc.build_id[0]));
	at_table_cache_close(c);
}

struct race {
	struct at_table_cache *c;
	int loads, refused;
};

static void *writer(void *arg)
{
	struct race *r = arg;
	const char *why;

	for (int i = 0; i < 100; i++)
		assert_int_equal(at_table_cache_store(r->c, &libc, &why), 0);
	return NULL;
}

static void test_writers_race(void **state)
{
	char dir[128];
	pthread_t w[2];
	struct race r = { 0 };

	(void)state;
	r.c = fresh(dir, sizeof(dir), "race", AT_TABLE_CACHE_LIMIT);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&w[i], NULL, writer, &r), 0);
	for (int i = 0; i < 300; i++) {
		struct at_unwind_table back;
		const char *why = NULL;
		int rc = at_table_cache_load(r.c, libc.build_id, libc.build_id_len, &back, &why);

		if (rc < 0)
			fail_msg("a reader refused a file two writers made: %s", why);
		if (rc == 1) {
			r.loads++;
			assert_int_equal(back.entry_count, libc.entry_count);
			at_unwind_table_free(&back);
		}
	}
	for (int i = 0; i < 2; i++)
		pthread_join(w[i], NULL);
	struct at_unwind_table back;
	const char *why = NULL;
	assert_int_equal(at_table_cache_load(r.c, libc.build_id, libc.build_id_len, &back, &why), 1);
	assert_same_table(&libc, &back);
	at_unwind_table_free(&back);
	at_table_cache_close(r.c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_folder),
		cmocka_unit_test(test_forged_tables),
		cmocka_unit_test(test_corrupt_bytes),
		cmocka_unit_test(test_refused_files),
		cmocka_unit_test(test_limit),
		cmocka_unit_test(test_writers_race),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
