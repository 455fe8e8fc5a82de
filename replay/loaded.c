/* loaded.c: the replay of a trace loaded first (loaded.h). */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "display.h"
#include "emit.h"
#include "feed.h"
#include "loaded.h"
#include "oplist.h"
#include "report.h"
#include "threads.h"

/* Loads the trace, then replays it on threads or in order; keeps the pointers for --emit. */
int rp_replay_loaded(struct at_source *src, struct rp_engine *e,
		     const struct rp_loaded_options *o, struct rp_run *run)
{
	const char *unit = at_source_unit(src);
	struct rp_oplist ol;
	struct rp_results res = { 0 };
	struct rp_threads_run threads = { 0 };
	int rc = -1;

	if (rp_oplist_init(&ol, e->slots.limit) < 0) {
		at_error("cannot map the op list: %s", strerror(errno));
		return -1;
	}
	if (rp_feed(src, e, &ol) < 0)
		goto cleanup;
	rp_oplist_finish(&ol);
	if (o->emit && rp_results_init(&res, ol.n) < 0) {
		at_error("cannot map the results: %s", strerror(errno));
		goto cleanup;
	}
	at_verbose("%s: %" PRIu64 " calls of %" PRIu32 " threads loaded", src->name, ol.n,
		   ol.nthreads);
	if (!o->threads) {
		rp_replay_serial(&ol, e, unit, o->emit ? &res : NULL, &run->wall_ns);
	} else if (rp_replay_threads(&ol, e, unit, o->emit ? &res : NULL, &threads) < 0) {
		at_error("cannot start %" PRIu32 " replay threads: %s", ol.nthreads, strerror(errno));
		goto cleanup;
	} else {
		run->wall_ns = threads.wall_ns;
	}
	e->overwritten += ol.overwritten;
	if (o->summary) {
		rp_report_summary(e, run);
		if (o->threads)
			rp_report_threads(&threads);
	}
	rc = o->emit ? rp_emit(o->emit, &ol, &res) : 0;
cleanup:
	rp_threads_run_fini(&threads);
	rp_results_fini(&res);
	rp_oplist_fini(&ol);
	return rc;
}

