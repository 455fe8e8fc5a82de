/* compare.h: --compare, the same trace replayed against several allocators, each in a process
 * of its own, in one table.
 *
 * For each allocator of the list the replayer runs itself (/proc/self/exe) as
 *   alloctap-replay --summary --allocator NAME [OPTIONS] FILE
 * and reads the summary it prints on stderr ("key: value" lines, report.h; latency lines with
 * --latency). The table, on standard output, has a row per figure and a column per allocator:
 * the allocator's library, operations, wall time, ns per operation, peak RSS, peak and final
 * live requested bytes, final live objects; the threads' waits with --threads; per function,
 * the mean, p50, p90, p99, p99.9 and max ns of a call with --latency. */
#ifndef ALLOCTAP_REPLAY_COMPARE_H
#define ALLOCTAP_REPLAY_COMPARE_H

#define RP_COMPARE_MAX 16 /* allocators in one comparison */

/* Splits a comma-separated list in place into at most RP_COMPARE_MAX names, each one that
 * --allocator takes. Returns the count, or -1 with *bad set to the offending name (an empty
 * one, an unknown one, or the one past the limit). */
int rp_compare_parse(char *list, const char *names[RP_COMPARE_MAX], const char **bad);

/* Runs the replays and prints the table. options: the replay options to pass on (NULL-ended).
 * Returns 0, or 1 after showing the messages of a replay that failed (and its status). */
int rp_compare_run(const char *const names[], int count, const char *input,
		   const char *const options[]);

#endif
