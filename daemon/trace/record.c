/* record.c: ring-buffer records to logalloc events. */
#include "record.h"

/* Records of the first eight functions carry their enum at_func value unchanged. */
#define SAME_CODE(probe, func) ((int)(probe) == (int)(func))
_Static_assert(SAME_CODE(AT_PROBE_MALLOC, AT_MALLOC) && SAME_CODE(AT_PROBE_CALLOC, AT_CALLOC) &&
		       SAME_CODE(AT_PROBE_REALLOC, AT_REALLOC) && SAME_CODE(AT_PROBE_FREE, AT_FREE) &&
		       SAME_CODE(AT_PROBE_MEMALIGN, AT_MEMALIGN) &&
		       SAME_CODE(AT_PROBE_POSIX_MEMALIGN, AT_POSIX_MEMALIGN) &&
		       SAME_CODE(AT_PROBE_ALIGNED_ALLOC, AT_ALIGNED_ALLOC) &&
		       SAME_CODE(AT_PROBE_VALLOC, AT_VALLOC),
	       "the first eight enum at_probe_func values are those of enum at_func");

void at_record_to_event(const struct at_record *rec, uint64_t pagesize, struct at_event *ev)
{
	ev->pid = rec->pid;
	ev->tid = rec->tid;
	ev->arg[0] = rec->arg[0];
	ev->arg[1] = rec->arg[1];
	ev->result = rec->result;
	ev->has_result = rec->func != AT_PROBE_FREE;
	ev->time_ns = rec->time_ns;
	ev->stack = 0; /* the trace's id for rec->stack is the session's (daemon/stacks/stacks.c) */
	switch (rec->func) {
	case AT_PROBE_PVALLOC: {
		uint64_t n = rec->arg[0], up = (n + pagesize - 1) & ~(pagesize - 1);

		ev->func = AT_VALLOC;
		ev->arg[0] = up >= n ? up : n;
		break;
	}
	case AT_PROBE_REALLOCARRAY:
		ev->func = AT_REALLOC;
		break;
	default:
		ev->func = (uint8_t)rec->func;
		break;
	}
}
