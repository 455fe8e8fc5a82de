/* annotate.h: a trace written back line by line with a note after some lines, as Compact
 * Memory Traces' lifetimes.py and overhead.py annotate theirs: the note starts at column 50
 * (after at least one space) with "# ". */
#ifndef ALLOCTAP_REPORT_ANNOTATE_H
#define ALLOCTAP_REPORT_ANNOTATE_H

#include <stdio.h>

#include "event.h"

#define REP_NOTE_COLUMN 50

/* Writes ev as the trace writes it (raw, or munged with slots), then the note when it is not
 * empty, then a newline. */
void rep_put_annotated(FILE *out, const struct at_event *ev, int munged, const char *note);

#endif
