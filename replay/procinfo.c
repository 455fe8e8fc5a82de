/* procinfo.c: line scans of /proc/self files with stack buffers. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procinfo.h"

/* Calls fn on each line of path (without its '\n') until fn returns non-zero, which is then
 * returned; 0 when every line was seen, -1 if the file cannot be opened. A line longer than
 * the buffer is cut. */
static int scan_lines(const char *path, int (*fn)(const char *line, size_t len, void *ctx),
		      void *ctx)
{
	char buf[8192];
	size_t have = 0;
	int eof = 0, rc = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while (!rc && (have || !eof)) {
		if (!eof && have < sizeof(buf)) {
			ssize_t n = read(fd, buf + have, sizeof(buf) - have);
			if (n <= 0)
				eof = 1;
			else
				have += (size_t)n;
		}
		char *nl = memchr(buf, '\n', have);
		size_t len = nl ? (size_t)(nl - buf) : have;
		if (!nl && !eof && have < sizeof(buf))
			continue;
		rc = fn(buf, len, ctx);
		size_t used = nl ? len + 1 : have;
		memmove(buf, buf + used, have - used);
		have -= used;
	}
	close(fd);
	return rc;
}

struct kb_field {
	const char *key;
	size_t keylen;
	int64_t bytes;
};

/* "Key:   1234 kB" -> bytes. */
static int take_kb_field(const char *line, size_t len, void *ctx)
{
	struct kb_field *f = ctx;
	int64_t kb = 0;
	size_t i;

	if (len <= f->keylen || memcmp(line, f->key, f->keylen) != 0)
		return 0;
	for (i = f->keylen; i < len && (line[i] == ' ' || line[i] == '\t'); i++)
		;
	if (i == len || line[i] < '0' || line[i] > '9')
		return 0;
	for (; i < len && line[i] >= '0' && line[i] <= '9'; i++)
		kb = kb * 10 + (line[i] - '0');
	f->bytes = kb * 1024;
	return 1;
}

static int64_t kb_field(const char *path, const char *key)
{
	struct kb_field f = { key, strlen(key), -1 };

	scan_lines(path, take_kb_field, &f);
	return f.bytes;
}

int64_t rp_proc_rss(void)
{
	return kb_field("/proc/self/smaps_rollup", "Rss:");
}

int64_t rp_proc_peak_rss(void)
{
	return kb_field("/proc/self/status", "VmHWM:");
}

struct mapping_query {
	uintptr_t addr;
	char *path;
	size_t cap;
};

static uint64_t hex_prefix(const char **p, const char *end)
{
	uint64_t v = 0;

	for (; *p < end; (*p)++) {
		char c = **p;
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (d < 0)
			break;
		v = v * 16 + (uint64_t)d;
	}
	return v;
}

/* A maps line: "START-END PERMS OFFSET DEV INODE   PATH". */
static int take_mapping(const char *line, size_t len, void *ctx)
{
	struct mapping_query *q = ctx;
	const char *p = line, *end = line + len;
	uint64_t start = hex_prefix(&p, end);

	if (p == end || *p++ != '-')
		return 0;
	uint64_t stop = hex_prefix(&p, end);
	if (q->addr < start || q->addr >= stop)
		return 0;
	for (int field = 0; field < 4; field++) { /* perms, offset, dev, inode */
		while (p < end && *p == ' ')
			p++;
		while (p < end && *p != ' ')
			p++;
	}
	while (p < end && *p == ' ')
		p++;
	size_t n = (size_t)(end - p);
	if (n == 0 || *p != '/' || n >= q->cap)
		return -1;
	memcpy(q->path, p, n);
	q->path[n] = 0;
	return 1;
}

int rp_proc_mapping_path(const void *addr, char *path, size_t cap)
{
	struct mapping_query q = { (uintptr_t)addr, path, cap };

	return scan_lines("/proc/self/maps", take_mapping, &q) == 1 ? 0 : -1;
}
