/* rss.h: the resident set of traced processes, as RSS records of a 2.1 binary trace.
 *
 * memlog's question is what the process holds in memory, not only what its heap holds: the
 * daemon samples each process it has seen every 100 ms, and when SIGUSR1 asks, from
 * /proc/PID/statm (resident pages times the page size), stamped with the events' clock
 * (CLOCK_MONOTONIC), so that a report can put RSS and heap side by side. */
#ifndef ALLOCTAP_RSS_H
#define ALLOCTAP_RSS_H

#include <stdint.h>
#include <sys/types.h>

#include "proctable.h"
#include "sink.h"

#define AT_RSS_PERIOD_MS 100

/* Resident bytes of pid from PROC/PID/statm (proc is normally "/proc"): 0 with *bytes, or
 * -1 with errno (the process is gone: ENOENT, or ESRCH when statm says 0 resident pages, as
 * it does for a process that has exited and is not reaped yet: its memory is released, and a
 * 0 would read as its RSS; a malformed file: EINVAL). */
int at_rss_read(const char *proc, pid_t pid, uint64_t pagesize, uint64_t *bytes);

/* One RSS record per process of the table with an event written (AT_PROC_WRITTEN) that is
 * still there, all with the time now. Returns the number of records written. */
unsigned at_rss_sample(const struct at_proctable *t, uint64_t pagesize, struct at_sink *sink);

#endif
