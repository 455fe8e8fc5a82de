/* maps.c: reading /proc/PID/maps. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "maps.h"

/* Parses hex digits at *p up to a non-hex character; 0, or -1 if there are none. */
static int parse_hex(char **p, uint64_t *v)
{
	char *s = *p, *end;

	if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') || (*s >= 'A' && *s <= 'F')))
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 16);
	if (errno)
		return -1;
	*p = end;
	return 0;
}

static int parse_dec(char **p, uint64_t *v)
{
	char *s = *p, *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	*p = end;
	return 0;
}

static int expect(char **p, char c)
{
	if (**p != c)
		return -1;
	(*p)++;
	return 0;
}

int at_maps_parse_line(char *line, struct at_map_entry *e)
{
	char *p = line;
	uint64_t major, minor;

	memset(e, 0, sizeof(*e));
	if (parse_hex(&p, &e->start) || expect(&p, '-') || parse_hex(&p, &e->end) ||
	    expect(&p, ' '))
		return -1;
	for (int i = 0; i < 4; i++, p++) {
		if (!*p || *p == ' ')
			return -1;
		e->perms[i] = *p;
	}
	if (expect(&p, ' ') || parse_hex(&p, &e->offset) || expect(&p, ' ') ||
	    parse_hex(&p, &major) || expect(&p, ':') || parse_hex(&p, &minor) ||
	    expect(&p, ' ') || parse_dec(&p, &e->inode))
		return -1;
	e->dev_major = (unsigned)major;
	e->dev_minor = (unsigned)minor;
	while (*p == ' ' || *p == '\t')
		p++;
	size_t n = strcspn(p, "\n");
	if (p[n] == '\n' && p[n + 1])
		return -1; /* two lines */
	p[n] = '\0';
	e->path = p;
	if (e->end < e->start)
		return -1;
	return 0;
}

int at_maps_for_each(const char *path, int (*fn)(const struct at_map_entry *e, void *arg),
		     void *arg, unsigned long *bad_line)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	unsigned long lineno = 0;
	int rc = 0;

	if (!f)
		return -1;
	while (getline(&line, &cap, f) > 0) {
		struct at_map_entry e;

		lineno++;
		if (at_maps_parse_line(line, &e) < 0) {
			if (bad_line)
				*bad_line = lineno;
			rc = -2;
			goto cleanup;
		}
		if (e.path[0] != '/' || e.inode == 0)
			continue;
		rc = fn(&e, arg);
		if (rc)
			goto cleanup;
	}
cleanup:
	free(line);
	fclose(f);
	return rc;
}

int at_is_libc_path(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (strncmp(base, "libc.so", 7) == 0 || strncmp(base, "ld-musl-", 8) == 0 ||
	    strncmp(base, "libc.musl-", 10) == 0)
		return 1;
	return strncmp(base, "libc-", 5) == 0 && strstr(base, ".so") != NULL;
}
