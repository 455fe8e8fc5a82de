/* pylinetable.c: CPython's location table, read entry by entry. */
#include "pylinetable.h"

/* A cursor over a table. */
struct cursor {
	const uint8_t *p, *end;
	int bad;       /* a read past the end or a continuation byte where an entry begins */
};

/* The next byte, or 0 with c->bad set at the end. */
static unsigned next_byte(struct cursor *c)
{
	if (c->p >= c->end) {
		c->bad = 1;
		return 0;
	}
	return *c->p++;
}

/* An unsigned varint: 6 bits a byte, least significant first, bit 6 set while more follow. */
static uint32_t varint(struct cursor *c)
{
	unsigned b = next_byte(c);
	uint32_t v = b & 63;
	unsigned shift = 0;

	while ((b & 64) && !c->bad) {
		b = next_byte(c);
		shift += 6;
		if (shift < 32)
			v |= (uint32_t)(b & 63) << shift;
	}
	return v;
}

/* A signed varint: the sign in the low bit of an unsigned one. */
static int32_t signed_varint(struct cursor *c)
{
	uint32_t u = varint(c);

	return (u & 1) ? -(int32_t)(u >> 1) : (int32_t)(u >> 1);
}

/* Reads one entry's fields after its first byte (code is its 4-bit code) and moves *line by
 * its line delta. Returns whether the entry has a location. */
static int entry(struct cursor *c, unsigned code, int64_t *line)
{
	switch (code) {
	case 15:                        /* no location */
		return 0;
	case 14:                        /* long form: line, end line, column, end column */
		*line += signed_varint(c);
		varint(c);
		varint(c);
		varint(c);
		return 1;
	case 13:                        /* no column */
		*line += signed_varint(c);
		return 1;
	case 10: case 11: case 12:      /* one-line form: line + code - 10, two column bytes */
		*line += code - 10;
		next_byte(c);
		next_byte(c);
		return 1;
	default:                        /* short form: same line, one column byte */
		next_byte(c);
		return 1;
	}
}

int at_py_line(const uint8_t *table, size_t len, int firstlineno, uint32_t offset)
{
	struct cursor c = { table, table + len, 0 };
	int64_t line = firstlineno;
	uint64_t addr = 0;

	while (c.p < c.end) {
		unsigned first = *c.p++;
		unsigned code = (first >> 3) & 15;
		uint64_t units = (first & 7) + 1;
		int has;

		if (!(first & 128))
			return -1;
		has = entry(&c, code, &line);
		if (c.bad)
			return -1;
		if (offset < addr + units)
			return has && line >= 0 && line <= INT32_MAX ? (int)line : -1;
		addr += units;
	}
	return -1;
}
