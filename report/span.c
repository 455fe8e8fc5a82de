/* span.c: the times a trace can answer (span.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "span.h"

int rep_time_asks_add(struct rep_time_asks *asks, const struct rep_time_ask *a)
{
	if (asks->n == REP_TIME_ASKS)
		return -1;
	asks->ask[asks->n++] = *a;
	return 0;
}

char *rep_seconds_text(uint64_t ns, char *buf)
{
	uint64_t frac = ns % 1000000000u;
	int digits = 9;

	if (!frac) {
		snprintf(buf, 32, "%" PRIu64, ns / 1000000000u);
		return buf;
	}
	for (; frac % 10 == 0; frac /= 10)
		digits--;
	snprintf(buf, 32, "%" PRIu64 ".%0*" PRIu64, ns / 1000000000u, digits, frac);
	return buf;
}

/* Why a trace without times (times) has none, and how to get a trace that has them. */
static const char *why_none(enum rep_times times)
{
	switch (times) {
	case REP_TIMES_NONE_TEXT:
		return "a text log never has them; record a binary trace (alloctapd -f binary)";
	case REP_TIMES_NONE_BINARY:
		return "it was written without them (by an older alloctapd without --stacks, or "
		       "converted from a text log); record it again with alloctapd -f binary, which "
		       "writes them into every binary trace";
	case REP_TIMES_NONE_EMPTY:
	case REP_TIMES_PRESENT:
		break;
	}
	return "it holds no event";
}

/* Whether time k of a lies outside 0..span_ns. */
static int outside(const struct rep_time_ask *a, int k, uint64_t span_ns)
{
	return a->given[k] && (a->negative[k] || a->ns[k] > span_ns);
}

/* The refusal of a, if the trace cannot answer it, into msg: 1, else 0. */
static int refuse(const struct rep_time_ask *a, enum rep_times times, uint64_t span_ns, char *msg,
		  size_t n)
{
	char span[32];

	if (times != REP_TIMES_PRESENT) {
		snprintf(msg, n, "--%s %s needs event times, and this trace has none: %s%s", a->option,
			 a->arg, why_none(times),
			 a->times == 0 ? "; or use timeline --churn BYTES, which needs none" : "");
		return 1;
	}
	for (int k = 0; k < a->times && k < 2; k++)
		if (outside(a, k, span_ns)) {
			snprintf(msg, n, "--%s %s is outside the trace, which spans 0 to %s s "
				 "(seconds from its first event)", a->option, a->arg,
				 rep_seconds_text(span_ns, span));
			return 1;
		}
	return 0;
}

int rep_time_check(const struct rep_time_asks *asks, enum rep_times times, uint64_t span_ns,
		   char *msg, size_t n)
{
	for (size_t i = 0; i < asks->n; i++)
		if (refuse(&asks->ask[i], times, span_ns, msg, n))
			return REP_EXIT_UNANSWERABLE;
	if (n)
		msg[0] = '\0';
	return 0;
}
