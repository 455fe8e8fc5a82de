/* display.c: leveled messages on stderr. */
#include <stdarg.h>
#include <stdio.h>

#include "display.h"

int at_display_level = 2;
const char *at_program_name = "alloctap";

void at_error(const char *fmt, ...)
{
	va_list ap;

	if (at_display_level < 1)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "%s: ", at_program_name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void at_error_at(const char *file, unsigned long long line, const char *fmt, ...)
{
	va_list ap;

	if (at_display_level < 1)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "%s: %s:%llu: ", at_program_name, file, line);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}
