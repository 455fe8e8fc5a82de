/* procmaps.c: /proc/PID/maps lines and files, C library names. */
#include <errno.h>
#include <string.h>

#include "procmaps.h"
#include "text.h"

/* ---- /proc/PID/maps --------------------------------------------------------------------- */

int at_procmaps_parse_line(char *line, struct at_procmaps_entry *e)
{
	const char *p = line, *end = line + strlen(line);
	uint64_t major, minor;

	memset(e, 0, sizeof(*e));
	if (at_take_hex(&p, end, &e->start) || at_take_char(&p, end, '-') ||
	    at_take_hex(&p, end, &e->end) || at_take_char(&p, end, ' '))
		return -1;
	for (int i = 0; i < 4; i++, p++) {
		if (p == end || *p == ' ' || *p == '\n')
			return -1;
		e->perms[i] = *p;
	}
	if (at_take_char(&p, end, ' ') || at_take_hex(&p, end, &e->offset) ||
	    at_take_char(&p, end, ' ') || at_take_hex(&p, end, &major) ||
	    at_take_char(&p, end, ':') || at_take_hex(&p, end, &minor) ||
	    at_take_char(&p, end, ' ') || at_take_dec(&p, end, &e->inode))
		return -1;
	if (p < end && *p != ' ' && *p != '\t' && *p != '\n')
		return -1;
	if (e->end < e->start || major > 0xffffffffu || minor > 0xffffffffu)
		return -1;
	e->dev_major = (unsigned)major;
	e->dev_minor = (unsigned)minor;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	char *path = line + (p - line);
	char *nl = memchr(path, '\n', (size_t)(end - p));
	if (nl && nl + 1 != end)
		return -1; /* two lines */
	if (nl)
		*nl = '\0';
	e->path = path;
	e->path_len = nl ? (size_t)(nl - path) : (size_t)(end - p);
	return 0;
}

int at_procmaps_next(struct at_linereader *r, struct at_procmaps_entry *e)
{
	const char *line;
	size_t len;
	int rc = at_linereader_next(r, &line, &len);

	if (rc <= 0)
		return rc;
	/* the line is NUL-terminated in the caller's (writable) buffer */
	if (at_procmaps_parse_line((char *)line, e) < 0)
		return -2;
	if (r->cut_len) {
		e->path_truncated = 1;
		e->path_len = r->cut_len - (size_t)(e->path - line);
	}
	return 1;
}

int at_procmaps_for_each_file(const char *path,
			      int (*fn)(const struct at_procmaps_entry *e, void *arg), void *arg,
			      unsigned long *bad_line)
{
	char buf[AT_PROCMAPS_BUF];
	struct at_linereader r;
	struct at_procmaps_entry e;
	int rc;

	if (at_linereader_open_buffer(&r, path, buf, sizeof(buf)) < 0)
		return -1;
	while ((rc = at_procmaps_next(&r, &e)) == 1) {
		if (e.path[0] != '/' || e.inode == 0)
			continue;
		int stop = fn(&e, arg);
		if (stop) {
			at_linereader_close(&r);
			return stop;
		}
	}
	if (rc == -2 && bad_line)
		*bad_line = (unsigned long)r.lineno;
	int err = errno;
	at_linereader_close(&r);
	errno = err;
	return rc;
}

/* ---- C library names ------------------------------------------------------------------ */

enum at_libc at_libc_of_path(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (strncmp(base, "ld-musl-", 8) == 0 || strncmp(base, "libc.musl-", 10) == 0)
		return AT_LIBC_MUSL;
	if (strncmp(base, "libc.so", 7) == 0 ||
	    (strncmp(base, "libc-", 5) == 0 && strstr(base, ".so") != NULL))
		return AT_LIBC_GLIBC;
	return AT_LIBC_NONE;
}
