/* span.h: the times a trace can answer, and the check of a request's time options against
 * them. A trace has event times or not: a text log never has them (logalloc's format has no
 * field for them), nor a binary trace of format 1.x or one written with the NO_TIMES flag (by
 * an alloctapd of before times in every binary trace, without --stacks, or converted from
 * text); alloctapd writes them into every binary trace. A trace with times covers the time
 * from its first event or record (0) to its last: its span. A time option (--at SECONDS,
 * --window T0:T1, --every SECONDS) on a trace without times, or naming a time outside the
 * span, is a question the trace cannot answer: it is refused with REP_EXIT_UNANSWERABLE,
 * never answered from another moment. */
#ifndef ALLOCTAP_REPORT_SPAN_H
#define ALLOCTAP_REPORT_SPAN_H

#include <stddef.h>
#include <stdint.h>

/* The exit status of a question the trace cannot answer: a time on a trace without times, a
 * time outside the trace, a moment it holds nothing for (--at rss-peak without RSS records). */
#define REP_EXIT_UNANSWERABLE 4

/* What a trace read holds of times. */
enum rep_times {
	REP_TIMES_PRESENT = 0, /* its events have times */
	REP_TIMES_NONE_TEXT,   /* a text log */
	REP_TIMES_NONE_BINARY, /* a binary trace without times (1.x, or the NO_TIMES flag) */
	REP_TIMES_NONE_EMPTY,  /* no event at all */
};

/* One time option of a request, as given on the command line. */
struct rep_time_ask {
	const char *option; /* its name: "at", "window", "every" */
	const char *arg;    /* its argument as given: the messages quote it */
	int times;          /* the times it names: 0 (--every: an interval, only needs times),
			     * 1 (--at SECONDS), 2 (--window: from, to) */
	int given[2];       /* each named time was given (--window may leave either out) */
	int negative[2];    /* each was before the trace's first event (a leading '-') */
	uint64_t ns[2];     /* each, in ns from the trace's first event */
};

#define REP_TIME_ASKS 4 /* more than the time options of any command together */

/* A request's time options, in the order given. */
struct rep_time_asks {
	struct rep_time_ask ask[REP_TIME_ASKS];
	size_t n;
};

/* Appends a copy of a to asks. 0, or -1 when asks is full (never with the options that
 * exist). */
int rep_time_asks_add(struct rep_time_asks *asks, const struct rep_time_ask *a);

/* Checks each ask of asks against a trace that holds times, or not (times), spanning 0 to
 * span_ns ns after its first event when it has them. 0 when the trace answers them all; else
 * REP_EXIT_UNANSWERABLE, with the first refusal's reason in msg (at most n bytes,
 * NUL-terminated; the caller puts the trace's name before it). */
int rep_time_check(const struct rep_time_asks *asks, enum rep_times times, uint64_t span_ns,
		   char *msg, size_t n);

/* ns as decimal seconds, exact, without trailing zeros ("8", "0.0005", "1.25") into buf (at
 * least 32 bytes). Returns buf. */
char *rep_seconds_text(uint64_t ns, char *buf);

#endif
