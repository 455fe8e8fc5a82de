/* units.h: byte figures as people read them (binary units, one decimal, rounded down:
 * "512 B", "1.5 KiB", "24.5 MiB", "15.9 EiB"), or exact integers on request, for every text
 * output of alloctap-report (JSON and CSV stay exact and do not use these).
 *
 * Whether figures are exact is one setting of the process (rep_units_set_exact): a command's
 * --bytes sets it before its output is written (report/command.c). The writers call
 * rep_bytes, rep_bytes_said and rep_bytes_change, which read it. Not for use from two
 * threads. */
#ifndef ALLOCTAP_REPORT_UNITS_H
#define ALLOCTAP_REPORT_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* Room for any figure these write, its sign and unit included, and the NUL. */
#define REP_BYTES_SIZE 32

/* The size in bytes as people read it: under 1024 "N B", else the largest binary unit (KiB
 * ... EiB) that leaves a whole part of at least 1 (under 1024 but for EiB), with one decimal,
 * rounded down ("1535" is "1.4 KiB"); exact: the integer alone ("1535"). Writes at most
 * size bytes, NUL-terminated, into buf (which the caller owns; REP_BYTES_SIZE is enough). */
void rep_human_bytes(uint64_t bytes, int exact, char *buf, size_t size);

/* A change of a size, signed: "+1.2 MiB", "-512 B", "+0 B" (the magnitude as
 * rep_human_bytes writes it, a sign always); exact: "+1258291", "-512", "+0". */
void rep_human_bytes_signed(int64_t change, int exact, char *buf, size_t size);

/* Sets whether the figures below are exact integers (nonzero) or in units (0, the default). */
void rep_units_set_exact(int exact);
/* The setting: nonzero when figures are exact. */
int rep_units_exact(void);

/* A figure for a column headed "bytes": rep_human_bytes of the setting, written into buf
 * (REP_BYTES_SIZE bytes, the caller's). Returns buf. */
const char *rep_bytes(uint64_t bytes, char *buf);
/* A figure in a sentence: in units as rep_bytes writes them, or exact with its unit: "1014096
 * bytes". Returns buf (REP_BYTES_SIZE bytes, the caller's). */
const char *rep_bytes_said(uint64_t bytes, char *buf);
/* A change for a column: rep_human_bytes_signed of the setting. Returns buf
 * (REP_BYTES_SIZE bytes, the caller's). */
const char *rep_bytes_change(int64_t change, char *buf);

#endif
