/* growth.h: what leaks needs beyond the end state, gathered during the pass: how each site's
 * live bytes grew, and how old its live blocks are, to tell a leak from a cache.
 *
 * The clock is the trace's time from its first event when it has times, else the number of
 * events applied. Every site's live bytes are sampled at each power of two of the clock (the
 * state before the first event at or past it; a run of powers passed at once gives one sample,
 * labelled with the last of them), and the last two samples are kept. At the end the growth of
 * a site is its live bytes then less those of the latest sample at or before half the trace (T:
 * between a quarter and a half of the way, or the start when none is), and the age of its live
 * blocks is the end's clock less the mean clock of their allocations. A site is
 *   young    when that mean age is under a tenth of the trace (in flight, or a cache of recent
 *            blocks),
 *   growing  else when more than a quarter of its live bytes came since T (what keeps being
 *            allocated and stays: a leak),
 *   steady   else (what was allocated and is held: retained).
 * leaks lists growing sites first (most growth first), then steady, then young ones (most bytes
 * first). */
#ifndef ALLOCTAP_REPORT_GROWTH_H
#define ALLOCTAP_REPORT_GROWTH_H

#include <stdint.h>
#include <stdio.h>

#include "heap.h"

/* The watcher's state: zeroed, then rep_growth_start before the pass. */
struct rep_growth {
	uint64_t next;                 /* the next power of two of the clock to sample at */
	uint64_t clock[2];             /* the two samples' clocks, [1] the latest */
	int samples;                   /* samples taken (0, 1, 2 or more) */
	uint64_t *live[2];             /* per site, its live bytes at each sample */
	size_t cap[2];                 /* sites each of live[] has room for */
	rep_u128 *alloc_sum;           /* per site, the sum of its live blocks' allocation clocks */
	size_t sum_cap;
	int times;                     /* the trace has times: the clock is theirs */
	uint64_t first_time_ns;        /* the engine's origin of times (0: none yet) */
	uint64_t end;                  /* the clock at the end */
	int failed;                    /* out of memory during the pass (errno ENOMEM at the end) */
};

/* Registers the watcher with the engine (its event and block hooks). */
void rep_growth_start(struct rep_growth *g, struct rep_heap *h);
/* Takes the end's clock after the pass. 0, or -1 with errno ENOMEM when a sample failed. */
int rep_growth_end(struct rep_growth *g, struct rep_heap *h);
void rep_growth_free(struct rep_growth *g);

/* leaks: per process, "live at the end: B in K blocks, N sites; growth since T, of E"
 * (T and E as times, "S.SSSSSS s", or as event counts, "N events"), then BYTES BLOCKS GROWTH
 * AGE KIND SITE per site, in the order above; byte figures in units, or exact with --bytes
 * (units.h: "B bytes", a growth "+N"). 0, or -1 with errno. */
int rep_write_leaks_growth(FILE *out, const struct rep_heap *h, const struct rep_growth *g);
/* leaks --json: {"clock": "ns" or "events" (the unit of the clock's figures), "since": T,
 * "end": E, "processes": [{"pid", "live_bytes", "live_blocks", "sites": [{"bytes", "blocks",
 * "growth" (bytes since T, exact, negative when fewer), "mean_age" (on the clock), "kind"
 * ("growing", "steady" or "young"), "stack": [{"function"}, ...] leaf first}]}]}, sites in the
 * order of the text. 0, or -1 with errno. */
int rep_write_leaks_json(FILE *out, const struct rep_heap *h, const struct rep_growth *g);
/* leaks --csv: a header "pid,bytes,blocks,growth,mean_age_ns,kind,stack" (mean_age_events on a
 * trace without times), then one record per site, processes in turn, in the order of the
 * text; the stack leaf first, frames separated by ';'. 0, or -1 with errno. */
int rep_write_leaks_csv(FILE *out, const struct rep_heap *h, const struct rep_growth *g);

#endif
