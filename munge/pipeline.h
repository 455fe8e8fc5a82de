/* pipeline.h: runs the munge over a whole input, optionally on two threads.
 *
 * With two threads, a reader thread reads lines and parses them (at_munge_parse, which needs
 * no state) into batches while the calling thread munges and writes them (at_munge_apply), in
 * input order. With one, the calling thread does both. Either way the output is the same. */
#ifndef ALLOCTAP_MUNGE_PIPELINE_H
#define ALLOCTAP_MUNGE_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "linereader.h"
#include "munge.h"
#include "output.h"

/* Called for every line, in order, after it was munged: result is an enum at_munge_result,
 * why its reason when ignored, line and len the raw line. Returns 0 to go on, non-zero to
 * stop the run. */
typedef int (*at_munge_outcome_fn)(void *ctx, uint64_t lineno, const char *line, size_t len,
				   int result, const char *why);

enum {
	AT_PIPELINE_DONE = 0,     /* end of input, or out->err set (the caller reports it) */
	AT_PIPELINE_STOPPED = 1,  /* the outcome function asked to stop */
	AT_PIPELINE_READ_ERROR = -1,
	AT_PIPELINE_NOMEM = -2,
};

/* Munges every line of r into out, calling outcome for each. threads is 1 or 2 (2 falls back
 * to 1 if a thread cannot be started). Returns an AT_PIPELINE_* code; for a read error,
 * *read_errno is its errno. */
int at_munge_run(struct at_munge *m, struct at_linereader *r, struct at_output *out,
		 int threads, at_munge_outcome_fn outcome, void *ctx, int *read_errno);

#endif
