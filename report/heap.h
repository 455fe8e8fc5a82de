/* heap.h: one pass over a trace's events, keeping what is live and where it was allocated.
 *
 * A site is a (process, site key) pair: the site key of report/sites.h (the callers' located
 * text of the event's stack, then the allocation function; the function alone without a
 * stack), which tells apart calls from two lines of one function.
 * Blocks are kept by (pid, address) while they live, so memory grows with the live blocks and
 * the sites, never with the events. Per process and per site the engine counts allocations,
 * bytes asked, frees, what is live, what was live at the process's heap peak (the most
 * requested bytes live at once) and at one chosen moment, and temporary allocations
 * (as heaptrack documents them: a block freed, or released by a realloc, by the very next
 * event of the thread that allocated it), and those heaptrack_print counts (heaptrack_temps:
 * a block freed, or released by a realloc, when the process's last allocation, with no
 * release of a live block since, was of the same site and size, whichever block that was;
 * calls that allocate or release nothing are passed over, as heaptrack records none).
 *
 * Semantics: an allocation's block belongs to its site until freed; realloc releases the old
 * block (from its own site) and makes a new one at the realloc's site; realloc(NULL, n) only
 * allocates; a realloc to 0 bytes that returns NULL frees and is a call of its site that
 * allocated nothing (not a failure); a failed realloc leaves its block as it was. A failed allocation (result 0)
 * is counted as a call and allocates nothing. A free of an address that is not live (not seen
 * allocated, or freed already) is counted per process and changes nothing. An allocation at
 * an address still live (a missed free) replaces the old block, which is counted as freed.
 * Munged traces work the same, their slots standing for addresses.
 *
 * Values at a moment are kept without copying every site: a site's value is saved when it
 * first changes after the moment (and at the end for the sites that never changed), which is
 * O(1) per event whatever the number of sites. */
#ifndef ALLOCTAP_REPORT_HEAP_H
#define ALLOCTAP_REPORT_HEAP_H

#include <stdint.h>

#include "atz.h"
#include "event.h"
#include "sites.h"
#include "weight.h"

/* Byte figures saturate: a sum that does not fit 64 bits is written as UINT64_MAX
 * (18446744073709551615), which reads "that many bytes or more" (only a hostile or corrupt
 * trace asks that much). Live bytes are kept exact inside (128 bits), so a figure that is not
 * saturated is exact, a peak is found by the exact sums and a saturated figure comes back to
 * exact as its blocks are freed. */
__extension__ typedef unsigned __int128 rep_u128;

/* a + b, or UINT64_MAX when the sum does not fit. */
static inline uint64_t rep_sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* v, or UINT64_MAX when it does not fit 64 bits. */
static inline uint64_t rep_sat_u64(rep_u128 v)
{
	return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

#define REP_SIZE_BUCKETS 65 /* 0 bytes, then [2^k, 2^(k+1)) for k = 0..63 */

struct rep_site {
	uint32_t pid;
	uint32_t proc;            /* index into the engine's processes */
	int64_t entry;            /* its line in the sites' folded table (sites.h) */
	int64_t key;              /* its site key: its line in the sites' located table */
	uint32_t stack;           /* the stack of its first event (0: none): its locations */
	uint64_t allocs, alloc_bytes, frees, temps;
	uint64_t heaptrack_temps;             /* temporaries by heaptrack_print's rule */
	uint64_t churn_bytes;                 /* bytes of its blocks released (rep_site_weight) */
	uint64_t live_bytes, live_blocks;
	uint64_t peak_bytes, peak_blocks;     /* at its process's heap peak */
	uint64_t moment_bytes, moment_blocks; /* at the chosen moment */
	uint64_t since_allocs, since_frees;   /* since the last timeline snapshot */
	uint64_t changed;                     /* the event number of its last change */
	rep_u128 live_exact;                  /* live_bytes before saturation */
};

struct rep_proc {
	uint32_t pid;
	uint64_t events, calls[AT_FUNC_COUNT], failed;
	uint64_t live_bytes, live_blocks;
	uint64_t peak_bytes, peak_blocks, peak_seq;
	uint64_t peak_time_ns;                /* from the trace's first event */
	uint64_t temps, unknown_frees;
	uint64_t heaptrack_temps;             /* temporaries by heaptrack_print's rule */
	int ht_last;                          /* the rule's state: 1 when an allocation was the */
	uint32_t ht_last_site;                /* last, with no release since: its site, size */
	uint64_t ht_last_size;
	uint64_t first_time_ns, last_time_ns; /* 1 + ns from the trace's first event; 0: no times */
	uint64_t rss_samples, rss_bytes;      /* RSS records, the last one's bytes */
	uint64_t rss_peak_bytes, rss_peak_time_ns;
	uint64_t rss_peak_events;             /* events of the trace read before that record */
	rep_u128 live_exact, peak_exact;      /* live_bytes and peak_bytes before saturation */
};

/* The moment --at names. */
enum rep_moment_kind {
	REP_AT_PEAK = 0, /* each process's heap peak (the peak figures) */
	REP_AT_END,      /* the end of the trace (what is live then) */
	REP_AT_TIME,     /* a time from the first event */
	REP_AT_RSS_PEAK, /* when the RSS of the selected processes together was at its most */
};

struct rep_heap_options {
	int have_pid;
	uint32_t pid;              /* only this process's events */
	int have_window;
	uint64_t window_from_ns, window_to_ns; /* from the first event's time */
	enum rep_moment_kind moment;
	uint64_t moment_ns;        /* REP_AT_TIME */
	int sizes;                 /* keep the size histogram and its biggest site per bucket */
};

/* The log2 bucket of a value: 0 for 0, k for 2^(k-1) to 2^k - 1 (k = 1..64). */
unsigned rep_bucket_of(uint64_t v);

struct rep_size_bucket {
	uint64_t count, bytes;
	uint32_t top_site;  /* the site of most bytes in this bucket (valid when count > 0) */
	uint64_t top_bytes;
};

struct rep_heap;

/* A new engine naming its sites through x (kept). NULL with errno. */
struct rep_heap *rep_heap_new(struct rep_sites *x, const struct rep_heap_options *o);
void rep_heap_free(struct rep_heap *h);

/* One event of the trace, in order. 0, or -1 with errno: ENOENT for a stack never defined,
 * ENOMEM. Events of other processes, or outside the window, are passed over. */
int rep_heap_event(struct rep_heap *h, const struct at_event *ev);

/* An RSS record of the trace (2.1), in stream order: the process's resident bytes at its
 * time. Records of other processes, or outside the window, are passed over. With the moment
 * REP_AT_RSS_PEAK, a record that raises the RSS of the selected processes together (the
 * sum of each one's last record) moves the moment to it: the values before the first event
 * stamped after the record. 0, or -1 on ENOMEM. */
int rep_heap_rss(struct rep_heap *h, const struct at_rss *m);
/* RSS records are placed by their position in the stream: for traces whose events have no
 * times (a binary trace taken without --stacks), where the records' times would be on no
 * clock the events share. The peak's time is then unknown (0), its place rss_peak_events. */
void rep_heap_rss_by_position(struct rep_heap *h);
/* Whether RSS records are placed by position. */
int rep_heap_rss_positional(const struct rep_heap *h);
/* The RSS peak of the selected processes together: bytes (0: no RSS records), ns from the
 * first event. */
void rep_heap_rss_peak(const struct rep_heap *h, uint64_t *bytes, uint64_t *time_ns);
/* The RSS of the selected processes together now: the sum of each one's last record; 0: no
 * record yet. */
uint64_t rep_heap_rss_now(const struct rep_heap *h);

/* Before the first event: the trace is a sample, one allocation per sample_bytes bytes on
 * average (alloctapd --sample-bytes; 0: every call). Every allocation then counts for the
 * allocations and bytes it stands for (report/sample.h): every figure the engine keeps is an
 * estimate of the whole, the sizes' buckets still by the size asked. */
void rep_heap_sampled(struct rep_heap *h, uint64_t sample_bytes);
/* The trace's sampling, as set: 0 for a trace of every call. */
uint64_t rep_heap_sample_bytes(const struct rep_heap *h);

/* Ends the pass: values at the peak and the moment are completed. Call once. */
void rep_heap_finish(struct rep_heap *h);

/* The sites' namer the engine was made with (rep_heap_new's x). */
struct rep_sites *rep_heap_namer(const struct rep_heap *h);

/* What the pass saw. */
size_t rep_heap_sites(const struct rep_heap *h, const struct rep_site **sites);
size_t rep_heap_procs(const struct rep_heap *h, const struct rep_proc **procs);
const struct rep_size_bucket *rep_heap_size_buckets(const struct rep_heap *h);
/* Events selected (of the process chosen, inside the window); events read in all; whether any
 * event read had a time. */
uint64_t rep_heap_events(const struct rep_heap *h);
uint64_t rep_heap_events_read(const struct rep_heap *h);
int rep_heap_has_times(const struct rep_heap *h);
/* The time from the trace's first event or record to its last, of any process (0 without
 * times): every time in it is one the trace can answer for. */
uint64_t rep_heap_span(const struct rep_heap *h);

/* What the site weighs for w, over the whole pass: its allocation calls, bytes asked, bytes
 * live at its process's heap peak, bytes live at the end, temporary allocations (either rule),
 * churn, or bytes live at the chosen moment (moment_bytes: at REP_AT_PEAK, the end's; the
 * heap peak's figure is peak_bytes, as each process has its own). Churn is the bytes of the site's
 * blocks released within the pass: freed, released by a realloc (the old block's size, to
 * the site that allocated it), or replaced by a new block at their address; so allocated
 * and given back again, whatever their lifetime (a temporary counts blocks released at
 * once, by the next call). A block allocated before the pass (or the window) is not the
 * site's, and a block still live at the end is not churn. */
uint64_t rep_site_weight(const struct rep_site *s, enum rep_weight w);

/* The site's text: its located line (callers root first, each "function (file:line)" where
 * the line is known, ';', the allocation function). */
const char *rep_heap_site_text(const struct rep_heap *h, const struct rep_site *s, size_t *len);
/* The site's folded line: the same frames by function only (report/sites.h). Valid until the
 * folded export writes its table. */
const char *rep_heap_site_folded(const struct rep_heap *h, const struct rep_site *s,
				 size_t *len);

/* A block as it is allocated or released. */
struct rep_block {
	uint32_t pid, site;
	uint64_t addr, size;
	uint64_t seq;     /* the number of the event that allocated it (rep_heap_seq then) */
	uint64_t time_ns; /* that event's time (trace clock), 0: none */
	uint64_t count;   /* the blocks it stands for: 1, or in a sampled trace the estimate
			   * (report/sample.h), size then being the bytes it stands for */
};

/* Block watchers: called inside rep_heap_event as each block is allocated (released 0) or
 * released (released 1: by a free, a realloc, or a new block at its address, which is
 * released first). A realloc releases its old block before it allocates the new one. */
typedef void (*rep_heap_block_fn)(void *arg, const struct rep_block *b, int released);
void rep_heap_on_block(struct rep_heap *h, rep_heap_block_fn fn, void *arg);
/* The number of the event being applied (or last applied), from 1, among the events read. */
uint64_t rep_heap_seq(const struct rep_heap *h);

/* Timeline snapshots: called for each event before it is applied (NULL: none). A callback
 * that prints site figures resets since_allocs and since_frees with rep_heap_reset_since. */
typedef void (*rep_heap_tick_fn)(void *arg, struct rep_heap *h, const struct at_event *ev);
void rep_heap_on_event(struct rep_heap *h, rep_heap_tick_fn fn, void *arg);
void rep_heap_reset_since(struct rep_heap *h);
/* The peak of every selected process together: bytes, blocks, ns from the first event. */
void rep_heap_peak(const struct rep_heap *h, uint64_t *bytes, uint64_t *blocks, uint64_t *time_ns);
/* An event's time from the trace's first event (of any process): 0 for an event stamped
 * before it (another CPU's clock) and for events without times. */
uint64_t rep_heap_time_of(const struct rep_heap *h, const struct at_event *ev);
/* Live requested bytes and blocks of every selected process together, now. */
void rep_heap_live(const struct rep_heap *h, uint64_t *bytes, uint64_t *blocks);

#endif
