/* source.h: one event-pull API over every log format alloctap reads.
 *
 * The format is sniffed from the first bytes: an lz4 frame (04 22 4D 18) is a binary .atz
 * trace (raw or munged, as its header says); anything else is text, read line by line. Text is
 * raw or munged as decided by the first line with a pointer field: `#N` means munged, `0x..`
 * raw (lines before it hold no pointer and read the same either way). Every later line must
 * then be of that kind. */
#ifndef ALLOCTAP_SOURCE_H
#define ALLOCTAP_SOURCE_H

#include <stdint.h>

#include "atz.h"
#include "event.h"
#include "linereader.h"

enum at_source_kind {
	AT_SOURCE_TEXT = 0,
	AT_SOURCE_BINARY,
};

struct at_source {
	const char *name;          /* path, or "<stdin>" */
	int fd, own_fd;
	enum at_source_kind kind;
	int munged;                /* 1 munged, 0 raw, -1 text not yet decided */
	int fatal;                 /* the last error ends the input (binary errors, read errors) */
	uint64_t lineno;           /* text: the line of the last event or error */
	const char *why;           /* reason of the last text error */
	struct at_linereader lines;
	struct at_atz_reader *atz;
};

/* Opens path ("-" or NULL: stdin) and sniffs its format. 0, or -1 with errno set. */
int at_source_open(struct at_source *s, const char *path);
/* The same on an fd the caller has open (not closed by at_source_close). */
int at_source_open_fd(struct at_source *s, int fd, const char *name);
/* Next event: 1 (ev filled), 0 at the end, -1 on an error. After an error on one text line
 * (s->fatal == 0) the next call goes on with the following line; after a fatal error every
 * later call returns -1. */
int at_source_next(struct at_source *s, struct at_event *ev);
/* Stack and mapping records of a binary trace (2.x) met from now on go to fn (NULL: none),
 * before the event that follows them, as at_atz_reader_on_stack/on_mapping say; text input
 * never calls them. at_source_next gives time_ns and stack 0 for text and 1.x traces. */
void at_source_on_stack(struct at_source *s, at_atz_stack_fn fn, void *arg);
void at_source_on_mapping(struct at_source *s, at_atz_mapping_fn fn, void *arg);
/* RSS records (2.1) likewise. */
void at_source_on_rss(struct at_source *s, at_atz_rss_fn fn, void *arg);
/* Prints the last error: "PROGRAM: FILE:LINE: reason" for text, "PROGRAM: FILE: reason" for
 * binary input. */
void at_source_report(const struct at_source *s);
void at_source_close(struct at_source *s);

#endif
