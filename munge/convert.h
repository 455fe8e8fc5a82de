/* convert.h: the event path of alloctap-munge. The events of a source (a binary trace, or a
 * text log parsed into events) are munged, or kept as they are with --keep-pointers, and
 * written through a sink as text or as an .atz trace. Raw text to munged text takes the
 * reference-compatible line path instead (pipeline.h). */
#ifndef ALLOCTAP_MUNGE_CONVERT_H
#define ALLOCTAP_MUNGE_CONVERT_H

#include <stdint.h>

#include "munge.h"
#include "sink.h"
#include "source.h"

/* What a run did, for the summary line. */
struct at_munge_counts {
	uint64_t read, written, ignored, filtered;
	uint64_t unreplayable; /* written, but a replay cannot read them (the reference's way) */
	uint64_t lost_total; /* events a binary input's recorder lost */
	uint64_t unseen;     /* of ignored: frees and reallocs of a pointer never allocated in the
			      * trace (at_munge_unseen_pointer), each said only at -v */
};

struct at_convert_options {
	int binary; /* write an .atz trace (else text) */
	int strict; /* a dropped or skipped event is an error */
};

/* Reads every event of src, munges it with m (NULL: keeps the events as they are, raw or
 * munged as src is) and writes it to sink, which is open but not started: the run starts it
 * once it knows whether the output holds slots or addresses, a binary output with the
 * input's host and start time; a failed write stops it. Counts go to *c. Returns the exit code (0 or 1); every error
 * is reported except a failed write, which stays in the sink for the caller to report when it
 * closes it. */
int at_convert_run(struct at_source *src, struct at_munge *m, struct at_sink *sink,
		   const struct at_convert_options *opt, struct at_munge_counts *c);

#endif
