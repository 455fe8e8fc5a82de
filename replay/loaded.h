/* loaded.h: --load, --threads and --emit: the trace read whole into an op list (oplist.h),
 * then replayed on a thread per recorded thread or in log order on this one (threads.h), then
 * the summary and the emitted trace. The time is the calls' alone, the reading not counted. */
#ifndef ALLOCTAP_REPLAY_LOADED_H
#define ALLOCTAP_REPLAY_LOADED_H

#include "engine.h"
#include "report.h"
#include "source.h"

struct rp_loaded_options {
	int threads;      /* a thread per recorded thread */
	int summary;      /* print the summary (and the threads' waits) */
	const char *emit; /* write the replay with its pointers there, or NULL */
};

/* Loads src through e's checks, replays it, prints what o asks. 0, or -1 after reporting. */
int rp_replay_loaded(struct at_source *src, struct rp_engine *e,
		     const struct rp_loaded_options *o, struct rp_run *run);

#endif
