/* dest.h: the -o DEST argument (MALLOC_LOG's rule) and the output it names. */
#ifndef ALLOCTAP_DEST_H
#define ALLOCTAP_DEST_H

#include "sink.h"

/* A DEST is a file descriptor when it is a decimal number below 10000, "-" for stdout, else a
 * path opened for append. */
struct at_dest {
	int fd;           /* -1 for a path */
	const char *path; /* NULL for a descriptor */
};

/* Parses s. 0, or -1 for an empty string. */
int at_dest_parse(const char *s, struct at_dest *d);

/* Checks that a descriptor DEST is open for writing; a path is checked when opened. To be
 * called before the daemon opens anything, so that the descriptor is the caller's and not one
 * of the daemon's own. 0, or -1 after a message ("cannot write to fd N: it is not open"). */
int at_dest_check(const struct at_dest *d);

/* Opens the sink on d and starts it with opt. A path is opened by the guarded rule (lib/
 * output.h: no symbolic link, no file with other hard links, no other user's file in a sticky
 * folder, never waiting on a FIFO; a new file is created 0600) and appended to (text), or
 * emptied if it is a regular file (a binary trace starts a new lz4 frame); a descriptor must
 * be open for writing. 0, or -1 after a message. */
int at_dest_open(const struct at_dest *d, struct at_sink *s, const struct at_sink_options *opt);

/* SIGHUP: when the path names another file than the one being written (the log was rotated),
 * the new one is opened for append and the trace goes on there, counters kept; when it still
 * names the same file, or for a descriptor, the output is only flushed (a binary trace stays
 * one lz4 frame). When the path cannot be opened (its folder moved away, a link planted), the
 * trace goes on in the old file after a message. 1 when the events go on in a new file (a new
 * trace, whose stack records start over), 0 when they go on where they went, -1 after a
 * message when the output has failed (the old file's last write, or the new trace's start). */
int at_dest_reopen(const struct at_dest *d, struct at_sink *s);

/* Says the sink's error as every program says a failed write (lib/display.h's
 * at_write_error): "NAME: write error: ERROR", or nothing for a reader that went away (a
 * closed pipe: the daemon detaches as at the end of a trace, then ends killed by SIGPIPE). */
void at_dest_report(const struct at_sink *s);

#endif
