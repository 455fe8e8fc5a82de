/* text.h: the logalloc text formats (doc/LOGALLOC.md: the raw log and the munged log).
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

/* "00" to "99": the two digits of each number below 100. */
extern const char at_digit_pairs[201];

/* Decimal digits of v at dst, written in place (two at a time); returns the count (1 to 20).
 * Inline: the munge writes two of them per line. */
static inline size_t at_put_dec(char *dst, uint64_t v)
{
	size_t n = 1;

	for (uint64_t t = v; t >= 10; t /= 10)
		n++;
	char *p = dst + n;
	while (v >= 100) {
		unsigned k = (unsigned)(v % 100) * 2;
		v /= 100;
		*--p = at_digit_pairs[k + 1];
		*--p = at_digit_pairs[k];
	}
	if (v >= 10) {
		*--p = at_digit_pairs[v * 2 + 1];
		*--p = at_digit_pairs[v * 2];
	} else {
		*--p = (char)('0' + v);
	}
	return n;
}

/* "0123456789abcdef". */
extern const char at_hex_digits[17];
/* Lowercase hex digits of v without leading zeros ("0" for 0); returns the count. */
size_t at_put_hex(char *dst, uint64_t v);

/* A raw line split the way the reference munge splits it (doc/LOGALLOC.md, the munge).
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

/* The integer parsing of Python 2's int(text, base) for base 10 or 16 (the reference script
 * only runs under Python 2): C-locale whitespace around, a sign that whitespace may follow,
 * for base 16 an optional 0x/0X before at least one hex digit, then digits; no underscores,
 * no NUL byte. Returns AT_PYINT_OK with *neg and *mag set (-0 is 0: *neg is 0),
 * AT_PYINT_INVALID, or AT_PYINT_TOO_BIG (Python accepts it, but the magnitude needs more than
 * 64 bits). Both failures are negative. */
enum { AT_PYINT_OK = 0, AT_PYINT_INVALID = -1, AT_PYINT_TOO_BIG = -2 };
int at_parse_pyint(const char *p, size_t n, int base, int *neg, uint64_t *mag);

/* Scanners of [*pp, end): each takes what it names at *pp and moves *pp past it, or returns
 * -1 and leaves *pp. at_take_dec: decimal digits, at_take_hex: hex digits without 0x; at
 * least one digit, a value that fits 64 bits. at_take_char: the character c. */
int at_take_dec(const char **pp, const char *end, uint64_t *v);
int at_take_hex(const char **pp, const char *end, uint64_t *v);
int at_take_char(const char **pp, const char *end, char c);

/* The value + 1 of each hex digit ('0'-'9', 'a'-'f', 'A'-'F'), 0 for every other byte. */
extern const uint8_t at_hex_plus1[256];

/* Slot numbers of a munged log a replay accepts: #0 to #2^28-1 (doc/LOGALLOC.md, section 3);
 * alloctap-replay maps that many slots. */
#define AT_SLOT_LIMIT (UINT64_C(1) << 28)

/* Parses a munged line strictly: "PID TID func(args)[=#SLOT]" with decimal numbers and #SLOT
 * for the pointer argument of free and realloc. Trailing whitespace (CR) is ignored.
 * Returns 0, or -1 with *why set to a reason for a message. */
int at_parse_munged(const char *p, size_t n, struct at_event *ev, const char **why);

#endif
