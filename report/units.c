/* units.c: byte figures as people read them, or exact (units.h). */
#include <inttypes.h>
#include <stdio.h>

#include "units.h"

/* Figures exact (--bytes), or in units. */
static int exact_figures;

void rep_human_bytes(uint64_t bytes, int exact, char *buf, size_t size)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	unsigned u = 0;
	uint64_t scale = 1024;

	if (exact || bytes < 1024) {
		snprintf(buf, size, exact ? "%" PRIu64 : "%" PRIu64 " B", bytes);
		return;
	}
	while (u + 1 < sizeof(units) / sizeof(units[0]) && bytes / scale >= 1024) {
		scale *= 1024;
		u++;
	}
	uint64_t whole = bytes / scale, tenths = bytes % scale * 10 / scale;
	snprintf(buf, size, "%" PRIu64 ".%" PRIu64 " %s", whole, tenths, units[u]);
}

void rep_human_bytes_signed(int64_t change, int exact, char *buf, size_t size)
{
	/* the magnitude of INT64_MIN is 2^63, which a uint64_t holds */
	uint64_t m = change < 0 ? (uint64_t)0 - (uint64_t)change : (uint64_t)change;

	if (size < 2) {
		if (size)
			buf[0] = '\0';
		return;
	}
	buf[0] = change < 0 ? '-' : '+';
	rep_human_bytes(m, exact, buf + 1, size - 1);
}

void rep_units_set_exact(int exact)
{
	exact_figures = exact != 0;
}

int rep_units_exact(void)
{
	return exact_figures;
}

const char *rep_bytes(uint64_t bytes, char *buf)
{
	rep_human_bytes(bytes, exact_figures, buf, REP_BYTES_SIZE);
	return buf;
}

const char *rep_bytes_said(uint64_t bytes, char *buf)
{
	if (exact_figures)
		snprintf(buf, REP_BYTES_SIZE, "%" PRIu64 " bytes", bytes);
	else
		rep_human_bytes(bytes, 0, buf, REP_BYTES_SIZE);
	return buf;
}

const char *rep_bytes_change(int64_t change, char *buf)
{
	rep_human_bytes_signed(change, exact_figures, buf, REP_BYTES_SIZE);
	return buf;
}
