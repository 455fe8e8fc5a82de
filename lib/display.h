/* display.h: leveled messages on stderr, shared by every alloctap program.
 *
 * Level 0 is silent, 1 errors only, 2 (the default) adds warnings and summaries, 3 adds
 * progress (-v), 4 adds debugging detail (-vv). */
#ifndef ALLOCTAP_DISPLAY_H
#define ALLOCTAP_DISPLAY_H

#include <stdio.h>

extern int at_display_level;
extern const char *at_program_name;

#define DISPLAY(...) fprintf(stderr, __VA_ARGS__)
#define DISPLAYLEVEL(l, ...)                                                                   \
	do {                                                                                   \
		if (at_display_level >= (l))                                                   \
			fprintf(stderr, __VA_ARGS__);                                          \
	} while (0)

/* Prints "PROGRAM: MESSAGE\n" at level 1. */
void at_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "PROGRAM: FILE:LINE: MESSAGE\n" at level 1. */
void at_error_at(const char *file, unsigned long long line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
