/* table_cache.c: unwind tables on disk by build-id (table_cache.h). */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "table_cache.h"

#define CACHE_MAGIC "ATUNWTB\n"
/* Up with any change of the header, of the rows' layouts, or of what at_unwind_table_build
 * makes of an object (a fix of the builder): a file of another version is refused and its
 * table built again, so no table of an older builder outlives it. */
#define CACHE_VERSION 1u
#define CACHE_SUFFIX ".unw"
#define CACHE_TEMP ".tmp-"
#define TEMP_STALE_S 600 /* a temporary file this old is a dead writer's */

#if defined(__x86_64__)
#define CACHE_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define CACHE_MACHINE EM_AARCH64
#else
#define CACHE_MACHINE EM_NONE
#endif

struct at_table_cache {
	int dirfd;
	uint64_t limit;
};

/* The file's header, in the machine's byte order (the machine field says which). */
struct header {
	char magic[8];
	uint32_t version;
	uint16_t machine;
	uint8_t key_len;
	uint8_t page_shift;
	uint8_t key[AT_UNWIND_BUILD_ID_MAX];
	uint32_t rule_count, page_count, entry_count, segment_count;
	uint32_t reserved;  /* 0 */
	uint64_t first_page;
	struct at_unwind_segment segments[AT_UNWIND_MAX_SEGMENTS];
	uint32_t fdes, unreadable_fdes, rows, unsupported_rows;
	uint64_t fallback_bytes, plt_bytes, build_ns;
	uint64_t checksum;  /* of every other byte of the file (checksum()) */
};

_Static_assert(sizeof(struct header) == AT_TABLE_CACHE_HEADER, "the cache header's size");
_Static_assert(AT_UNWIND_MAX_SEGMENTS == 4, "the cache header holds four segments");

/* Mixes n bytes into h, eight at a time (n a multiple of 8 but at the end). */
static uint64_t mix(uint64_t h, const uint8_t *p, size_t n)
{
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w;

		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 32;
	}
	for (; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* The checksum of a file of len bytes (len >= the header): every byte but the field's. */
static uint64_t checksum(const uint8_t *buf, size_t len)
{
	size_t at = offsetof(struct header, checksum);
	uint64_t h = mix(0x243f6a8885a308d3ull ^ len, buf, at);

	return mix(h, buf + at + 8, len - at - 8);
}

int at_table_cache_name(const uint8_t key[AT_UNWIND_BUILD_ID_MAX], uint8_t key_len, char *name,
			size_t size)
{
	if (key_len == 0 || key_len > AT_UNWIND_BUILD_ID_MAX ||
	    size < 2u * key_len + sizeof(CACHE_SUFFIX))
		return -1;
	for (unsigned i = 0; i < key_len; i++)
		snprintf(name + 2 * i, 3, "%02x", key[i]);
	memcpy(name + 2 * key_len, CACHE_SUFFIX, sizeof(CACHE_SUFFIX));
	return 0;
}

/* --- the file's bytes --------------------------------------------------------------------- */

uint8_t *at_table_cache_encode(const struct at_unwind_table *t, size_t *len)
{
	size_t rules = (size_t)t->rule_count * sizeof(*t->rules);
	size_t pages = (size_t)t->page_count * sizeof(*t->pages);
	size_t entries = (size_t)t->entry_count * sizeof(*t->entries);
	struct header h = {
		.magic = CACHE_MAGIC, .version = CACHE_VERSION, .machine = CACHE_MACHINE,
		.key_len = t->build_id_len, .page_shift = AT_UNWIND_PAGE_SHIFT,
		.rule_count = t->rule_count, .page_count = t->page_count,
		.entry_count = t->entry_count, .segment_count = t->segment_count,
		.first_page = t->first_page, .fdes = t->stats.fdes,
		.unreadable_fdes = t->stats.unreadable_fdes, .rows = t->stats.rows,
		.unsupported_rows = t->stats.unsupported_rows,
		.fallback_bytes = t->stats.fallback_bytes, .plt_bytes = t->stats.plt_bytes,
		.build_ns = t->stats.build_ns,
	};
	memcpy(h.key, t->build_id, sizeof(h.key));
	memcpy(h.segments, t->segments, sizeof(h.segments));
	*len = sizeof(h) + rules + pages + entries;
	uint8_t *buf = malloc(*len);
	if (!buf)
		return NULL;
	memcpy(buf, &h, sizeof(h));
	if (rules)
		memcpy(buf + sizeof(h), t->rules, rules);
	if (pages)
		memcpy(buf + sizeof(h) + rules, t->pages, pages);
	if (entries)
		memcpy(buf + sizeof(h) + rules + pages, t->entries, entries);
	h.checksum = checksum(buf, *len);
	memcpy(buf + offsetof(struct header, checksum), &h.checksum, sizeof(h.checksum));
	return buf;
}

/* Whether the header is this daemon's, for that key, with counts that fit a table and a file
 * of len bytes. NULL, or why not. */
static const char *header_refused(const struct header *h, size_t len,
				  const uint8_t key[AT_UNWIND_BUILD_ID_MAX], uint8_t key_len)
{
	if (memcmp(h->magic, CACHE_MAGIC, sizeof(h->magic)) != 0)
		return "not an unwind table file (bad magic)";
	if (h->version != CACHE_VERSION || h->machine != CACHE_MACHINE ||
	    h->page_shift != AT_UNWIND_PAGE_SHIFT || h->reserved != 0)
		return "another format version or machine";
	if (h->key_len != key_len || memcmp(h->key, key, AT_UNWIND_BUILD_ID_MAX) != 0)
		return "the table of another object";
	if (h->rule_count == 0 || h->rule_count > 65536u || h->page_count == 0 ||
	    h->page_count > AT_UNWIND_MAX_PAGES || h->segment_count == 0 ||
	    h->segment_count > AT_UNWIND_MAX_SEGMENTS)
		return "counts out of bounds";
	uint64_t want = (uint64_t)sizeof(*h) + (uint64_t)h->rule_count * sizeof(struct at_unwind_rule) +
			(uint64_t)h->page_count * sizeof(struct at_unwind_page) +
			(uint64_t)h->entry_count * sizeof(struct at_unwind_entry);
	if (want != len)
		return "its size does not match its counts";
	return NULL; /* first_page and the segments take any value a build can give them */
}

/* Whether every rule is of a known kind, the first the empty rule. NULL, or why not. */
static const char *rules_refused(const struct at_unwind_rule *r, uint32_t count)
{
	if (r[0].kind != AT_UNWIND_NONE)
		return "its first rule is not the empty rule";
	for (uint32_t i = 0; i < count; i++)
		if (r[i].kind > AT_UNWIND_SIGNAL || r[i].fp > AT_UNWIND_FP_AT_SP)
			return "a rule of an unknown kind";
	return NULL;
}

/* Whether every page's run of entries lies in the entries, starts at offset 0, is sorted and
 * names rules of the table: the bounds the BPF walk's search relies on. NULL, or why not. */
static const char *pages_refused(const struct at_unwind_page *pages, uint32_t page_count,
				 const struct at_unwind_entry *e, uint32_t entry_count,
				 uint32_t rule_count)
{
	for (uint32_t p = 0; p < page_count; p++) {
		const struct at_unwind_page *pg = &pages[p];

		if (pg->count == 0)
			continue;
		if (pg->first >= entry_count || pg->count > entry_count - pg->first)
			return "a page's entries out of bounds";
		if (e[pg->first].offset != 0)
			return "a page's first entry not at its start";
		for (uint32_t i = pg->first; i < pg->first + pg->count; i++) {
			if (e[i].rule >= rule_count)
				return "an entry's rule out of bounds";
			if (i > pg->first && e[i].offset <= e[i - 1].offset)
				return "a page's entries out of order";
		}
	}
	return NULL;
}

/* Copies n bytes at src into a new array at *dst (n may be 0: an empty allocation). 0, or
 * -1 (ENOMEM). */
static int copy_out(void **dst, const uint8_t *src, size_t n)
{
	*dst = malloc(n ? n : 1);
	if (!*dst)
		return -1;
	if (n)
		memcpy(*dst, src, n);
	return 0;
}

/* Fills t from a checked header and the arrays after it. 0, or -1 (ENOMEM). */
static int fill_table(struct at_unwind_table *t, const struct header *h, const uint8_t *rows)
{
	size_t rules = (size_t)h->rule_count * sizeof(*t->rules);
	size_t pages = (size_t)h->page_count * sizeof(*t->pages);
	size_t entries = (size_t)h->entry_count * sizeof(*t->entries);

	memcpy(t->build_id, h->key, sizeof(t->build_id));
	t->build_id_len = h->key_len;
	t->first_page = h->first_page;
	t->segment_count = h->segment_count;
	memcpy(t->segments, h->segments, sizeof(h->segments));
	t->stats = (struct at_unwind_stats){
		.build_ns = h->build_ns, .fdes = h->fdes, .unreadable_fdes = h->unreadable_fdes,
		.rows = h->rows, .unsupported_rows = h->unsupported_rows,
		.fallback_bytes = h->fallback_bytes, .plt_bytes = h->plt_bytes,
	};
	if (copy_out((void **)&t->rules, rows, rules) < 0 ||
	    copy_out((void **)&t->pages, rows + rules, pages) < 0 ||
	    copy_out((void **)&t->entries, rows + rules + pages, entries) < 0) {
		at_unwind_table_free(t);
		return -1;
	}
	t->rule_count = h->rule_count;
	t->page_count = h->page_count;
	t->entry_count = h->entry_count;
	return 0;
}

int at_table_cache_decode(const uint8_t *buf, size_t len, const uint8_t key[AT_UNWIND_BUILD_ID_MAX],
			  uint8_t key_len, struct at_unwind_table *t, const char **why)
{
	struct header h;

	memset(t, 0, sizeof(*t));
	if (len < sizeof(h) || len > AT_TABLE_CACHE_MAX_FILE) {
		*why = "its size is not a table's";
		return -1;
	}
	memcpy(&h, buf, sizeof(h));
	if ((*why = header_refused(&h, len, key, key_len)))
		return -1;
	if (checksum(buf, len) != h.checksum) {
		*why = "its checksum does not match";
		return -1;
	}
	if (fill_table(t, &h, buf + sizeof(h)) < 0) {
		*why = strerror(ENOMEM);
		return -1;
	}
	if ((*why = rules_refused(t->rules, t->rule_count)) ||
	    (*why = pages_refused(t->pages, t->page_count, t->entries, t->entry_count,
				  t->rule_count))) {
		at_unwind_table_free(t);
		return -1;
	}
	return 0;
}

/* --- the folder --------------------------------------------------------------------------- */

/* Creates dir's missing parents (0755) and dir itself (0700). */
static void make_folder(const char *dir)
{
	char path[4096];

	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path))
		return;
	for (char *slash = strchr(path + 1, '/'); slash && slash[1]; slash = strchr(slash + 1, '/')) {
		*slash = '\0'; /* a parent: not the folder itself, with a slash after it */
		mkdir(path, 0755); /* EEXIST, or the final open says what is wrong */
		*slash = '/';
	}
	mkdir(path, 0700);
}

/* Whether the open folder fd is safe to keep tables in: a folder of this user's that group
 * and others cannot write. 0, or -1 with errno EPERM and *why. */
static int folder_safe(int fd, const char **why)
{
	struct stat st;

	if (fstat(fd, &st) < 0) {
		*why = strerror(errno);
		return -1;
	}
	errno = EPERM;
	if (st.st_uid != geteuid())
		*why = "owned by another user: not used, for tables in it could forge stacks";
	else if (st.st_mode & 022)
		*why = "writable by group or others: not used, for tables in it could forge "
		       "stacks";
	else
		return 0;
	return -1;
}

struct at_table_cache *at_table_cache_open(const char *dir, uint64_t limit, const char **why)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT) {
		make_folder(dir);
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0) {
		int err = errno;
		*why = err == ELOOP || err == ENOTDIR ? "a symbolic link or not a folder: not used"
						       : strerror(err);
		errno = err == ELOOP || err == ENOTDIR ? EPERM : err;
		return NULL;
	}
	if (folder_safe(fd, why) < 0) {
		close(fd);
		errno = EPERM;
		return NULL;
	}
	struct at_table_cache *c = malloc(sizeof(*c));
	if (!c) {
		close(fd);
		*why = strerror(ENOMEM);
		errno = ENOMEM;
		return NULL;
	}
	c->dirfd = fd;
	c->limit = limit;
	return c;
}

void at_table_cache_close(struct at_table_cache *c)
{
	if (!c)
		return;
	close(c->dirfd);
	free(c);
}

/* Whether an open cache file may be read: a regular file of the folder's owner that group
 * and others cannot write, of a size a table can have. NULL, or why not. */
static const char *file_refused(const struct stat *st)
{
	if (!S_ISREG(st->st_mode))
		return "not a regular file";
	if (st->st_uid != geteuid())
		return "owned by another user";
	if (st->st_mode & 022)
		return "writable by group or others";
	if (st->st_size < (off_t)AT_TABLE_CACHE_HEADER || st->st_size > (off_t)AT_TABLE_CACHE_MAX_FILE)
		return "its size is not a table's";
	return NULL;
}

/* Reads the whole file fd of len bytes into a new buffer. The buffer, or NULL. */
static uint8_t *read_whole(int fd, size_t len)
{
	uint8_t *buf = malloc(len);

	for (size_t off = 0; buf && off < len;) {
		ssize_t n = read(fd, buf + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(buf);
			return NULL;
		}
		off += (size_t)n;
	}
	return buf;
}

/* Reads the open file fd into t. 0, or -1 with *why. */
static int load_file(int fd, const uint8_t key[AT_UNWIND_BUILD_ID_MAX], uint8_t key_len,
		     struct at_unwind_table *t, const char **why)
{
	struct stat st;

	if (fstat(fd, &st) < 0) {
		*why = strerror(errno);
		return -1;
	}
	if ((*why = file_refused(&st)))
		return -1;
	uint8_t *buf = read_whole(fd, (size_t)st.st_size);
	if (!buf) {
		*why = "cannot be read whole";
		return -1;
	}
	int rc = at_table_cache_decode(buf, (size_t)st.st_size, key, key_len, t, why);
	free(buf);
	return rc;
}

int at_table_cache_load(struct at_table_cache *c, const uint8_t key[AT_UNWIND_BUILD_ID_MAX],
			uint8_t key_len, struct at_unwind_table *t, const char **why)
{
	char name[2 * AT_UNWIND_BUILD_ID_MAX + sizeof(CACHE_SUFFIX)];

	memset(t, 0, sizeof(*t));
	if (at_table_cache_name(key, key_len, name, sizeof(name)) < 0)
		return 0;
	int fd = openat(c->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 && errno == ENOENT)
		return 0;
	int rc = -1;
	if (fd < 0)
		*why = errno == ELOOP ? "a symbolic link" : strerror(errno);
	else
		rc = load_file(fd, key, key_len, t, why);
	if (rc == 0)
		futimens(fd, NULL); /* used now: the last to be removed by a trim */
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		unlinkat(c->dirfd, name, 0); /* built again and stored anew */
	return rc < 0 ? -1 : 1;
}

/* Writes len bytes of buf to fd. 0, or -1. */
static int write_whole(int fd, const uint8_t *buf, size_t len)
{
	for (size_t off = 0; off < len;) {
		ssize_t n = write(fd, buf + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		off += (size_t)n;
	}
	return 0;
}

int at_table_cache_store(struct at_table_cache *c, const struct at_unwind_table *t,
			 const char **why)
{
	char name[2 * AT_UNWIND_BUILD_ID_MAX + sizeof(CACHE_SUFFIX)], temp[128];
	size_t len;

	if (at_table_cache_name(t->build_id, t->build_id_len, name, sizeof(name)) < 0) {
		*why = "no build-id";
		return -1;
	}
	uint8_t *buf = at_table_cache_encode(t, &len);
	if (!buf) {
		*why = strerror(ENOMEM);
		return -1;
	}
	if (len > c->limit || len > AT_TABLE_CACHE_MAX_FILE) {
		free(buf);
		*why = "larger than the cache's limit";
		return -1;
	}
	/* a name of this writer's own: two daemons storing one key each rename a whole file */
	snprintf(temp, sizeof(temp), CACHE_TEMP "%s.%ld.%ld", name, (long)getpid(),
		 (long)syscall(SYS_gettid));
	int fd = openat(c->dirfd, temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int rc = fd < 0 ? -1 : write_whole(fd, buf, len);
	if (rc < 0)
		*why = strerror(errno);
	free(buf);
	if (fd >= 0 && close(fd) < 0 && rc == 0) {
		*why = strerror(errno);
		rc = -1;
	}
	if (rc == 0 && renameat(c->dirfd, temp, c->dirfd, name) < 0) {
		*why = strerror(errno);
		rc = -1;
	}
	if (rc < 0 && fd >= 0)
		unlinkat(c->dirfd, temp, 0);
	if (rc == 0)
		at_table_cache_trim(c, c->limit);
	return rc;
}

/* --- the limit ---------------------------------------------------------------------------- */

struct cached_file {
	char name[64];
	struct timespec used;
	uint64_t size;
};

/* Least recently used first; by name between equals, for a stable order. */
static int by_use(const void *a, const void *b)
{
	const struct cached_file *x = a, *y = b;

	if (x->used.tv_sec != y->used.tv_sec)
		return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
	if (x->used.tv_nsec != y->used.tv_nsec)
		return x->used.tv_nsec < y->used.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Whether name is a table's (hex, then the suffix). */
static int table_name(const char *name)
{
	size_t n = strlen(name), s = strlen(CACHE_SUFFIX);

	if (n <= s || n >= sizeof(((struct cached_file *)0)->name) || strcmp(name + n - s, CACHE_SUFFIX))
		return 0;
	return strspn(name, "0123456789abcdef") == n - s;
}

/* The folder's table files into *v (a new array of *count); dead writers' temporary files
 * removed on the way (counted in *removed). Their bytes. */
static uint64_t list_files(struct at_table_cache *c, DIR *d, struct cached_file **v,
			   size_t *count, unsigned *removed)
{
	size_t cap = 0;
	uint64_t total = 0;
	time_t now = time(NULL);

	for (struct dirent *e; (e = readdir(d));) {
		struct stat st;
		int temp = strncmp(e->d_name, CACHE_TEMP, strlen(CACHE_TEMP)) == 0;

		if ((!temp && !table_name(e->d_name)) ||
		    fstatat(c->dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (temp) {
			if (now - st.st_mtim.tv_sec > TEMP_STALE_S && unlinkat(c->dirfd, e->d_name, 0) == 0)
				(*removed)++;
			continue;
		}
		if (*count == cap) {
			cap = cap ? 2 * cap : 64;
			struct cached_file *w = realloc(*v, cap * sizeof(**v));
			if (!w)
				break;
			*v = w;
		}
		struct cached_file *f = &(*v)[(*count)++];
		snprintf(f->name, sizeof(f->name), "%s", e->d_name);
		f->used = st.st_mtim;
		f->size = (uint64_t)st.st_size;
		total += f->size;
	}
	return total;
}

unsigned at_table_cache_trim(struct at_table_cache *c, uint64_t limit)
{
	/* a descriptor of its own: a DIR's position is its descriptor's, and trims may run at
	 * once on several threads */
	int fd = openat(c->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct cached_file *v = NULL;
	size_t count = 0;
	unsigned removed = 0;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	uint64_t total = list_files(c, d, &v, &count, &removed);
	closedir(d);
	if (total > limit)
		qsort(v, count, sizeof(*v), by_use);
	for (size_t i = 0; i < count && total > limit; i++) {
		if (unlinkat(c->dirfd, v[i].name, 0) == 0)
			removed++;
		total -= v[i].size; /* gone either way: another daemon's trim took it */
	}
	free(v);
	return removed;
}
