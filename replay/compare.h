/* compare.h: --compare, the same trace replayed against several allocators, each in a process
 * of its own, in one table.
 *
 * For each allocator of the list the replayer runs itself (/proc/self/exe) as
 *   alloctap-replay --summary --allocator NAME [OPTIONS] FILE
 * and reads the summary it prints on stderr ("key: value" lines, report.h; latency lines with
 * --latency). The table, on standard output, has a row per figure and a column per allocator:
 * the allocator's library, operations, wall time, ns per operation, peak RSS, peak and final
 * live requested bytes, final live objects; the threads' waits with --threads; per function,
 * the mean, p50, p90, p99, p99.9 and max ns of a call with --latency.
 *
 * --repeat N runs each allocator N times, interleaved (run 1 of every allocator, then run 2...,
 * so a drift of the machine, its other load or its clock, falls on every allocator alike). The
 * table then starts with a row "runs", gives each figure's median (for an even N, the mean of
 * the middle two) and, after each measured figure (every one but the counts and bytes the trace
 * decides: library, operations, live bytes and objects, failed allocations, threads), a row
 * "FIGURE min-max": the spread is the whole range, since with a handful of runs quartiles are
 * just the second and the next-to-last values and would hide the outliers one wants to see. */
#ifndef ALLOCTAP_REPLAY_COMPARE_H
#define ALLOCTAP_REPLAY_COMPARE_H

#include <stddef.h>

#define RP_COMPARE_MAX 16 /* allocators in one comparison */
#define RP_REPEAT_MAX 100 /* runs of each allocator (--repeat) */
#define RP_REPEAT_DEFAULT 5

/* Splits a comma-separated list in place into at most RP_COMPARE_MAX names, each one that
 * --allocator takes. Returns the count, or -1 with *bad set to the offending name (an empty
 * one, an unknown one, or the one past the limit). */
int rp_compare_parse(char *list, const char *names[RP_COMPARE_MAX], const char **bad);

/* Whether the figure of the summary named name is one the trace decides, the same in every
 * run: library, operations, peak and final live requested bytes, final live objects, failed
 * allocations, threads. Every other figure is measured. */
int rp_compare_exact(const char *name);

/* The median of the n (1 to RP_REPEAT_MAX) values runs into median (msize bytes; for an even
 * n the mean of the middle two, with one decimal more when it needs one: 1.5 for 1 and 2), and
 * "MIN-MAX" into spread (ssize bytes), each with decimals decimals. Returns 1 when the values
 * differ, else 0. */
int rp_compare_figure(const double *runs, int n, int decimals, char *median, size_t msize,
		      char *spread, size_t ssize);

/* Runs the replays, repeat (1 to RP_REPEAT_MAX) of each allocator, and prints the table.
 * options: the replay options to pass on (NULL-ended). Returns 0, or 1 after showing the
 * messages of a replay that failed (and its status), or after a failed write of the table
 * (at_write_error). */
int rp_compare_run(const char *const names[], int count, int repeat, const char *input,
		   const char *const options[]);

#endif
