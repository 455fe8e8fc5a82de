/* top.h: alloctap-report top: the sites ranked by one weight, the allocation function first
 * and then its callers, with the callers every listed stack shares said once. */
#ifndef ALLOCTAP_REPORT_TOP_H
#define ALLOCTAP_REPORT_TOP_H

#include <stddef.h>
#include <stdio.h>

#include "heap.h"
#include "weight.h"

struct rep_top_options {
	enum rep_weight by; /* what ranks the sites */
	size_t limit;       /* the most sites listed per process */
	int exact;          /* bytes as integers, not in KiB, MiB, GiB */
	int json;           /* one JSON object instead of the table */
	enum rep_moment_kind at; /* by REP_WEIGHT_LIVE_BYTES: the moment h's pass was made for */
	uint64_t at_ns;          /* its time (REP_AT_TIME) */
};

/* Writes the ranking of h's sites, process by process (a heading "== process PID" when there
 * are several): a line saying what ranks them (by live-bytes: and at which moment, "the end",
 * "the heap peak", "the RSS peak" or "S s") and how many are shown, the rows (value, share
 * of the process's total of that weight, the site leaf first: "malloc < caller < ..."), and
 * the callers at the root end that every row shares, once. Sites of weight 0 are left out.
 * With json: {"by": W, "processes": [{"pid": P, "total": T, "sites": [{"value": V,
 * "stack": [leaf, ..., root]}]}]}, each frame {"function": F} with "file" and "line" where
 * known and "inlined": true for a function inlined into the next frame (sitetext.h); by
 * live-bytes also "at" ("heap-peak", "rss-peak", "end" or "time") and "time_ns" (the time, or
 * null) after "by". 0, or -1 with errno when a write fails or memory runs out. */
int rep_write_top(FILE *out, const struct rep_heap *h, const struct rep_top_options *o);

/* What site s weighs in o's ranking: rep_site_weight of o->by, live-bytes at the heap peak
 * being each process's peak-bytes. */
uint64_t rep_top_weight(const struct rep_site *s, const struct rep_top_options *o);

#endif
