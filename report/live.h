/* live.h: alloctap-report top --follow: the live view of a trace still being written.
 *
 * The pass reads the trace as alloctapd writes it (lib/source.h's at_source_open_follow):
 * every interval of the wall clock, the engine's current state becomes a snapshot: the sites
 * by live bytes, each with its growth since the snapshot before and since the first snapshot,
 * and its allocations per second over the last interval (of trace time; of the wall clock on
 * a trace without times). Not on a terminal, each snapshot is printed and flushed, headed by
 * its trace time ("== at 3.0 s: 1.2 MiB live in 340 blocks"), as bcc's memleak prints its
 * own. On a terminal the screen is redrawn (ANSI clear and home) and keys are read from it in
 * non-canonical mode: q quits (status 0), l orders by live bytes, g by growth, a by
 * allocations per second; the terminal's mode is restored at the end, at q, and on SIGINT or
 * SIGTERM (which then end the process as they would have). At the trace's end the final table
 * is written. */
#ifndef ALLOCTAP_REPORT_LIVE_H
#define ALLOCTAP_REPORT_LIVE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "event.h"
#include "heap.h"

/* What a row is ranked by (the keys l, g and a). */
enum rep_live_order { REP_LIVE_BY_LIVE, REP_LIVE_BY_GROWTH, REP_LIVE_BY_RATE };

/* One site's figures at the last snapshot. */
struct rep_live_site {
	uint64_t first_live;   /* its live bytes at the first snapshot (0: not yet a site then) */
	uint64_t prev_live;    /* at the snapshot before */
	uint64_t prev_allocs;  /* its allocations then */
	int64_t growth, since_first; /* live bytes since the snapshot before, since the first */
	double rate;           /* allocations per second over the last interval */
};

struct rep_live {
	FILE *out;
	struct rep_heap *h;
	uint64_t interval_ns;  /* of the wall clock */
	size_t limit;          /* the most rows */
	int exact;             /* bytes exact (--bytes) */
	const char *trace;     /* its name, for the terminal's heading */
	enum rep_live_order order;
	int tty;               /* out is a terminal: full-screen redraws */
	int keys;              /* the terminal keys are read from, or -1 */
	uint64_t next_ns, last_wall_ns, last_span_ns, snapshots;
	uint64_t events;       /* events since the clock was last looked at */
	double interval_s;     /* the last interval, in seconds, that the rates are over */
	struct rep_live_site *sites;
	size_t n, cap;
	int failed;            /* a write or an allocation failed: errno */
};

/* Starts the view on h, writing to out (a terminal: full-screen, keys from /dev/tty). 0, or
 * -1 with errno. */
int rep_live_start(struct rep_live *l, struct rep_heap *h, FILE *out);
/* An event of the trace: to the engine; a snapshot when one is due. rep_event_fn's contract. */
int rep_live_event(void *arg, const struct at_event *ev);
/* The reader found no input yet (at_atz_wait_fn, fd the trace's, or -1 for a file not
 * created yet): a snapshot when one is due, keys read, then waits until the next snapshot or
 * input (a tenth of a second at most on a regular file or for a file to come). Returns 0
 * (read again). */
int rep_live_wait(void *arg, int fd);
/* Takes the engine's state as a snapshot now (now_ns: at_now_ns's clock) and writes it, as
 * each interval does. 0, or -1 with errno. */
int rep_live_snapshot(struct rep_live *l, uint64_t now_ns);
/* The trace ended: the final table. 0, or -1 with errno when a write failed. */
int rep_live_end(struct rep_live *l);
/* Restores the terminal and frees what l holds. */
void rep_live_free(struct rep_live *l);

#endif
