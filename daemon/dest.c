/* dest.c: the -o DEST argument. */
#include <string.h>

#include "dest.h"

int at_dest_parse(const char *s, struct at_dest *d)
{
	d->fd = -1;
	d->path = NULL;
	if (!s || !*s)
		return -1;
	if (strcmp(s, "-") == 0) {
		d->fd = 1;
		return 0;
	}
	size_t n = strspn(s, "0123456789");
	if (s[n] == '\0' && n <= 5) {
		long v = 0;
		for (size_t i = 0; i < n; i++)
			v = v * 10 + (s[i] - '0');
		if (v < 10000) {
			d->fd = (int)v;
			return 0;
		}
	}
	d->path = s;
	return 0;
}
