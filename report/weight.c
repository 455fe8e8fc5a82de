/* weight.c: the weight of an event, by count or by bytes asked. */
#include <string.h>

#include "weight.h"

int rep_weight_parse(const char *name, enum rep_weight *w)
{
	if (strcmp(name, "alloc-count") == 0)
		*w = REP_WEIGHT_ALLOC_COUNT;
	else if (strcmp(name, "alloc-bytes") == 0)
		*w = REP_WEIGHT_ALLOC_BYTES;
	else if (strcmp(name, "peak-bytes") == 0)
		*w = REP_WEIGHT_PEAK_BYTES;
	else if (strcmp(name, "leak-bytes") == 0)
		*w = REP_WEIGHT_LEAK_BYTES;
	else if (strcmp(name, "temp-count") == 0)
		*w = REP_WEIGHT_TEMP_COUNT;
	else if (strcmp(name, "heaptrack-temp-count") == 0)
		*w = REP_WEIGHT_HEAPTRACK_TEMP_COUNT;
	else if (strcmp(name, "churn") == 0)
		*w = REP_WEIGHT_CHURN;
	else if (strcmp(name, "live-bytes") == 0)
		*w = REP_WEIGHT_LIVE_BYTES;
	else
		return -1;
	return 0;
}

int rep_is_allocation(const struct at_event *ev)
{
	return at_func_allocates(ev->func);
}

uint64_t rep_event_weight(const struct at_event *ev, enum rep_weight w)
{
	uint64_t n, m;

	if (!rep_is_allocation(ev))
		return 0;
	if (w == REP_WEIGHT_ALLOC_COUNT)
		return 1;
	if (w != REP_WEIGHT_ALLOC_BYTES)
		return 0;
	switch (ev->func) {
	case AT_CALLOC:
		n = ev->arg[0];
		m = ev->arg[1];
		return m && n > UINT64_MAX / m ? UINT64_MAX : n * m;
	case AT_REALLOC:
	case AT_MEMALIGN:
	case AT_POSIX_MEMALIGN:
	case AT_ALIGNED_ALLOC:
		return ev->arg[1];
	default: /* malloc, valloc */
		return ev->arg[0];
	}
}
