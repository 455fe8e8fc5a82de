/* record.c: ring records to logalloc events. */
#include "record.h"

void at_record_to_event(const struct at_record *rec, uint64_t pagesize, int times,
			struct at_event *ev)
{
	ev->pid = rec->pid;
	ev->tid = rec->tid;
	ev->arg[0] = rec->arg[0];
	ev->arg[1] = rec->arg[1];
	ev->result = rec->result;
	ev->has_result = !at_probe_frees(rec->func);
	ev->time_ns = times ? rec->time : 0;
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
	default: /* a function of the format: the same code (lib/functions.h) */
		ev->func = (uint8_t)rec->func;
		break;
	}
}
