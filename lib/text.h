/* text.h: the logalloc text formats (LOGALLOC.md sections 1 and 2).
 *
 * Formatting is printf-free and writes at most AT_LINE_MAX bytes, newline included.
 * Parsing never allocates: it points into the caller's line. */
#ifndef ALLOCTAP_TEXT_H
#define ALLOCTAP_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"

#define AT_LINE_MAX 128

/* "PID TID func(args)[=0xRESULT]\n" with pointers in lowercase hex, 0x0 for NULL. */
size_t at_format_raw(char *dst, const struct at_event *e);
/* "PID TID func(args)[=#RESULT]\n" with pointers as #SLOT. */
size_t at_format_munged(char *dst, const struct at_event *e);

/* Decimal digits of v at dst; returns the count (1 to 20). */
size_t at_put_dec(char *dst, uint64_t v);
/* Lowercase hex digits of v without leading zeros ("0" for 0); returns the count. */
size_t at_put_hex(char *dst, uint64_t v);

/* A raw line split the way the reference munge splits it (LOGALLOC.md section 2, step 1).
 * Spans point into the line. */
struct at_span {
	const char *p;
	size_t n;
};

struct at_raw_line {
	struct at_span pid;
	struct at_span tid;    /* equals pid for the old format without a tid */
	struct at_span func;
	struct at_span args;   /* everything between '(' and ')' */
	struct at_span arg0;   /* the first argument (up to the first ',') */
	unsigned nargs;        /* 0 when args is empty, else commas + 1 */
	struct at_span result; /* after '=', may be empty */
};

/* Strips ASCII whitespace (" \t\n\r\v\f") at both ends, as Python's str.strip(). */
struct at_span at_strip(const char *p, size_t n);

/* Splits a stripped line. Returns 0, or -1 with *why = "Malformed input" when the reference
 * would reject its shape. */
int at_split_raw(const char *p, size_t n, struct at_raw_line *out, const char **why);

/* Parses an integer the way Python's int(s, base) does for base 10 and 16: surrounding
 * whitespace, an optional sign, for base 16 an optional 0x/0X prefix, then at least one digit
 * (Python 2's rules: no underscores; the reference script only runs under Python 2). The
 * magnitude must fit 64 bits.
 * Returns 0 with *neg and *mag set, or -1. */
int at_parse_pyint(const char *p, size_t n, int base, int *neg, uint64_t *mag);

/* Parses a munged line strictly: "PID TID func(args)[=#SLOT]" with decimal numbers and #SLOT
 * for the pointer argument of free and realloc. Trailing whitespace (CR) is ignored.
 * Returns 0, or -1 with *why set to a reason for a message. */
int at_parse_munged(const char *p, size_t n, struct at_event *ev, const char **why);

#endif
