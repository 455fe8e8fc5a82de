/* lines.h: the text path of alloctap-munge: raw text munged to text line by line, byte for byte
 * as the reference script does (pipeline.h), each dropped line counted and reported. */
#ifndef ALLOCTAP_MUNGE_LINES_H
#define ALLOCTAP_MUNGE_LINES_H

#include "convert.h"
#include "linereader.h"
#include "munge.h"
#include "output.h"

/* Bytes of a dropped line echoed in its message; longer lines end with "...". */
#define AT_MUNGE_ECHO_MAX 200

/* Munges every line of r into out on threads threads (1 or 2), reporting each dropped line as
 * "FILE:LINE: Ignored "LINE": REASON" (at level 2, or as an error that stops the run with
 * strict) and each line written that a replay cannot read as "FILE:LINE: Written, but not
 * replayable "LINE": REASON" (level 2; with strict the munge drops those, m's
 * replayable_only). Counts go to *c. Returns the exit code (0 or 1); a failed write stays in
 * out for the caller to report. */
int at_munge_lines(struct at_munge *m, struct at_linereader *r, struct at_output *out,
		   int threads, int strict, struct at_munge_counts *c);

#endif
