/* tables.h: the text, JSON and CSV outputs of alloctap-report's commands, from a finished pass
 * (heap.h). Each writes to out and returns 0, or -1 with errno when a write fails.
 *
 * A trace of several processes is reported process by process, each under a heading
 * "== process PID"; one process gets no heading. Sites are printed leaf first, each frame
 * with its file and line where known, the root frames every listed site shares said once
 * after the list (report/sitetext.h). Times are seconds from the first event
 * (six decimals); a trace without times (text) says "unknown". Byte figures of the text are
 * in units, or exact with --bytes (units.h); JSON and CSV's are exact. */
#ifndef ALLOCTAP_REPORT_TABLES_H
#define ALLOCTAP_REPORT_TABLES_H

#include <stdio.h>

#include "csv.h"
#include "heap.h"
#include "json.h"

/* The indexes of the sites of process proc (SIZE_MAX: every process) whose value is not 0,
 * most first, then by text, then by pid; *n of them. The caller frees the list. NULL with
 * errno when out of memory (*n 0: an empty list, not NULL). Not for use from two threads. */
uint32_t *rep_sorted_sites(const struct rep_heap *h, size_t proc,
			   uint64_t (*value)(const struct rep_site *), size_t *n);

/* summary: events, duration, calls per function, peak live bytes and when, peak RSS (unknown:
 * traces hold no RSS records), final live bytes and blocks, temporary and failed allocations,
 * frees of blocks not live. */
int rep_write_summary(FILE *out, const struct rep_heap *h);
/* summary --json: one object; the keys of the whole selection, then "per_process", a list of
 * one object per process with the same keys and "pid". */
int rep_write_summary_json(FILE *out, const struct rep_heap *h);
/* The label of a log2 bucket (heap.h): "0", "1-1", "2-3", ... */
void rep_bucket_label(unsigned k, char *buf, size_t size);
/* The least and the most size of log2 bucket k. */
uint64_t rep_bucket_min(unsigned k);
uint64_t rep_bucket_max(unsigned k);
/* sizes: per log2 bucket of the bytes asked, calls, bytes, and the site of most bytes. */
int rep_write_sizes(FILE *out, const struct rep_heap *h);
/* sizes --json: {"buckets": [{"min", "max" (the bucket's sizes), "calls", "bytes", "top_site":
 * {"pid", "stack": [{"function"}, ...] leaf first}}]}, buckets with calls only, smallest
 * first. */
int rep_write_sizes_json(FILE *out, const struct rep_heap *h);
/* sizes --csv: "min,max,calls,bytes,top_site_pid,top_site_stack", a record per bucket as
 * above, the stack leaf first, frames separated by ';'. */
int rep_write_sizes_csv(FILE *out, const struct rep_heap *h);

/* timeline: snapshots every every_ns of trace time (one for a run of periods without an
 * event), or each time the live bytes have moved by
 * churn_bytes (moves up and down added up: bytes allocated and freed, a realloc by its
 * change), each with the live bytes and the top sites by live bytes (their allocations and frees since
 * the last snapshot and in all), then the series of live bytes. Set up before the pass with
 * rep_timeline_start (it registers a per-event callback), ended with rep_timeline_end, which
 * also writes the last snapshot (the end) and closes series whether it succeeds or not. */
struct rep_timeline {
	FILE *out;
	enum rep_format format; /* text, or JSON or CSV (below) */
	struct rep_json json;
	struct rep_csv csv;
	uint64_t every_ns, churn_bytes;
	size_t top;
	uint64_t next_ns;       /* the next snapshot's time, from the first event */
	uint64_t churn;         /* bytes allocated and freed since the last snapshot */
	uint64_t last_live;     /* live bytes at the last event seen, for churn */
	uint64_t last_ns;       /* the latest event's time from the first */
	uint64_t snapshots;
	FILE *series;           /* "TIME LIVE_BYTES" lines, printed at the end */
	int flush;              /* each snapshot flushed as it is written (a followed trace) */
	int failed;
};
/* With format JSON: one document, {"every_ns": SECONDS in ns or null, "churn_bytes": BYTES or
 * null, "snapshots": [{"snapshot": K (from 1), "time_ns": its time (every; null with churn),
 * "events": the events applied, "live_bytes", "live_blocks", "rss_bytes" (null: none),
 * "sites": [{"pid", "live_bytes", "live_blocks", "allocs", "frees" (since the snapshot
 * before), "allocs_all", "frees_all", "stack": [{"function"}, ...] leaf first}]}]}; the series
 * is the snapshots' figures. With CSV: a header, "snapshot,time_ns,events,live_bytes,
 * live_blocks,rss_bytes,pid,site_live_bytes,site_live_blocks,allocs,frees,allocs_all,
 * frees_all,stack", and a record per site of each snapshot (one with the site's fields empty
 * for a snapshot without sites); time_ns and rss_bytes empty where JSON has null. */
int rep_timeline_start(struct rep_timeline *t, struct rep_heap *h);
int rep_timeline_end(struct rep_timeline *t, struct rep_heap *h);

#endif
