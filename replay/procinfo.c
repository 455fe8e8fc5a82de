/* procinfo.c: figures of /proc/self files, read line by line into stack buffers. */
#include <stdint.h>
#include <string.h>

#include "linereader.h"
#include "procinfo.h"
#include "procmaps.h"

/* "Key:   1234 kB" -> bytes, or -1 when the line is not key's. */
static int64_t kb_line(const char *line, size_t len, const char *key, size_t keylen)
{
	int64_t kb = 0;
	size_t i;

	if (len <= keylen || memcmp(line, key, keylen) != 0)
		return -1;
	for (i = keylen; i < len && (line[i] == ' ' || line[i] == '\t'); i++)
		;
	if (i == len || line[i] < '0' || line[i] > '9')
		return -1;
	for (; i < len && line[i] >= '0' && line[i] <= '9'; i++)
		kb = kb * 10 + (line[i] - '0');
	return kb * 1024;
}

/* The first "key N kB" figure of the file at path in bytes, -1 if there is none. */
static int64_t kb_field(const char *path, const char *key)
{
	char buf[4096];
	struct at_linereader r;
	const char *line;
	size_t len, keylen = strlen(key);
	int64_t bytes = -1;

	if (at_linereader_open_buffer(&r, path, buf, sizeof(buf)) < 0)
		return -1;
	while (bytes < 0 && at_linereader_next(&r, &line, &len) == 1)
		if (!r.cut_len)
			bytes = kb_line(line, len, key, keylen);
	at_linereader_close(&r);
	return bytes;
}

int64_t rp_proc_rss(void)
{
	return kb_field("/proc/self/smaps_rollup", "Rss:");
}

int64_t rp_proc_peak_rss(void)
{
	return kb_field("/proc/self/status", "VmHWM:");
}

int rp_proc_mapping_path(const void *addr, char *path, size_t cap)
{
	char buf[AT_PROCMAPS_BUF];
	struct at_linereader r;
	struct at_procmaps_entry e;
	uintptr_t a = (uintptr_t)addr;
	int rc;

	if (at_linereader_open_buffer(&r, "/proc/self/maps", buf, sizeof(buf)) < 0)
		return -1;
	while ((rc = at_procmaps_next(&r, &e)) == 1)
		if (a >= e.start && a < e.end)
			break;
	at_linereader_close(&r);
	if (rc != 1 || e.path[0] != '/' || e.path_truncated || e.path_len >= cap)
		return -1;
	memcpy(path, e.path, e.path_len + 1);
	return 0;
}
