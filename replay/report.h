/* report.h: everything alloctap-replay prints, without allocating.
 *
 * Messages are formatted with vsnprintf into a stack buffer and written to stderr with one
 * write(2), so printing statistics in the middle of a replay never calls the allocator
 * under test (stdio may allocate its buffers). They honour at_display_level (lib/display.h).
 *
 * Statistics at jemalloc_stats() (level 2, i.e. not with -q): one line on stderr,
 *   stats line=L ops=N objects=N slots=N requested=B arena=B mmap=B in_use=B free=B rss=B own=B [slop=B]
 * line: the input line of the jemalloc_stats() call (a binary trace: event=N, the call's
 * event number from 1); ops: allocation-family calls replayed so
 * far; objects: live blocks; slots: highest slot number used + 1; requested: live requested
 * bytes; arena, mmap, in_use, free: mallinfo2()'s arena, hblkhd, uordblks, fordblks (glibc's
 * own malloc: near zero when another allocator is preloaded); rss: Rss of
 * /proc/self/smaps_rollup minus own; own: resident bytes of the replayer's slot array and
 * input buffer (mincore); slop (-s only): malloc_usable_size - requested over live blocks.
 *
 * Summary (--summary, at the end, on stderr, whatever the level): "key: value" lines,
 *   allocator: NAME PATH                     (what /proc/self/maps says provides malloc)
 *   replayed pid: N
 *   lines of other pids: N
 *   operations: N                            (allocation-family calls)
 *   operations malloc: N    ... one line per function, jemalloc_stats included
 *   failed allocations: N                    (non-zero size, NULL result)
 *   overwritten live slots: N
 *   wall time ns: N
 *   ns per operation: X.X
 *   peak rss bytes: N                        (VmHWM, the replayer's own memory included)
 *   peak live requested bytes: N
 *   final live requested bytes: N
 *   final live objects: N
 *   final slop bytes: N                      (-s only) */
#ifndef ALLOCTAP_REPLAY_REPORT_H
#define ALLOCTAP_REPLAY_REPORT_H

#include <stdint.h>

#include "engine.h"

/* The jemalloc_stats() line of a text input. own_extra: resident bytes of the replayer's
 * buffers other than the slot array (the input buffer). */
void rp_report_stats(const struct rp_engine *e, uint64_t line, uint64_t own_extra);
/* The same with the place named by unit: "stats line=N ..." for text, "stats event=N ..."
 * (the call's event number from 1) for a binary trace. */
void rp_report_stats_at(const struct rp_engine *e, const char *unit, uint64_t where,
			uint64_t own_extra);

struct rp_run {
	const char *allocator;      /* short name */
	const char *allocator_path; /* library file */
	uint64_t wall_ns;
};

void rp_report_summary(const struct rp_engine *e, const struct rp_run *run);

struct rp_threads_run;
/* After the summary of a threaded replay (level 0): "threads: N", "thread waits: N" (ops that
 * waited for another thread), "thread wait time ns: N" (summed over the threads), then a line
 * per thread: "thread I: tid=T ops=N waits=N wait_ns=N". */
void rp_report_threads(const struct rp_threads_run *run);

#endif
