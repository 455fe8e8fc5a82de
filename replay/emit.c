/* emit.c: the replayed workload with the allocator's pointers, as raw logalloc text. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "display.h"
#include "emit.h"
#include "sink.h"

int rp_emit(const char *path, const struct rp_oplist *ol, const struct rp_results *res)
{
	struct at_sink sink;
	struct at_sink_options opt = { .format = AT_SINK_TEXT, .munged = 0 };

	if (at_sink_open(&sink, path, AT_SINK_TRUNCATE) < 0) {
		at_error("%s: %s", path, at_sink_open_why(&sink));
		return -1;
	}
	if (at_sink_start(&sink, &opt) < 0)
		goto failed;
	for (uint64_t i = 0; i < ol->n; i++) {
		struct at_event ev = ol->ev[i];

		if (ev.func == AT_JEMALLOC_STATS)
			ev.result = 0;
		if (at_func_takes_pointer(ev.func))
			ev.arg[0] = (uintptr_t)res->taken[i];
		if (at_func_returns_pointer(ev.func))
			ev.result = (uintptr_t)res->result[i];
		at_sink_put(&sink, &ev);
	}
	if (at_sink_close(&sink) == 0)
		return 0;
	at_error("%s: %s", path, strerror(at_sink_error(&sink)));
	return -1;
failed:
	at_error("%s: %s", path, strerror(at_sink_error(&sink) ? at_sink_error(&sink) : errno));
	at_sink_close(&sink);
	return -1;
}
