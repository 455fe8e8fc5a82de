/* source.h: one event-pull API over every log format alloctap reads.
 *
 * The format is sniffed from the first bytes by source.c's table of readers (one per format
 * of lib/formats.h; the first whose detect takes the bytes reads the input): an lz4 frame
 * (04 22 4D 18) is a binary .atz trace (raw or munged, as its header says); anything else is
 * text, read line by line. Callers ask the source, never the format, how to speak of a place
 * (a line, an event) and of damage. Text is
 * raw or munged as decided by the first line with a pointer field: `#N` means munged, `0x..`
 * raw (lines before it hold no pointer and read the same either way). Every later line must
 * then be of that kind. */
#ifndef ALLOCTAP_SOURCE_H
#define ALLOCTAP_SOURCE_H

#include <stdint.h>

#include "atz.h"
#include "event.h"
#include "formats.h"
#include "linereader.h"

/* The read formats, by lib/formats.h's list. */
enum at_source_kind {
	AT_SOURCE_TEXT = AT_FORMAT_TEXT,
	AT_SOURCE_BINARY = AT_FORMAT_BINARY,
};

struct at_source;

/* A format's reader: a row of source.c's table. Functions not given (NULL) do nothing. */
struct at_source_reader {
	enum at_source_kind kind;  /* reader->kind */
	const struct at_source_reader *reader;
	int lines;                /* a line format: an error may be one line's (s->fatal 0), and a
				   * place is a line number; else a place is an event's number */
	const char *unit, *units; /* where an event sits: "line", "lines" or "event", "events" */
	/* Whether head[0..n) (the input's first bytes, n <= 4) starts this format. */
	int (*detect)(const uint8_t *head, size_t n);
	/* Opens s on s->fd, head[0..n) already read from it. 0, or -1 with errno. */
	int (*open)(struct at_source *s, const uint8_t *head, size_t n);
	/* at_source_next's contract, s->fatal not set yet. */
	int (*next)(struct at_source *s, struct at_event *ev);
	void (*on_stack)(struct at_source *s, at_atz_stack_fn fn, void *arg);
	void (*on_mapping)(struct at_source *s, at_atz_mapping_fn fn, void *arg);
	void (*on_names)(struct at_source *s, at_atz_names_fn fn, void *arg);
	void (*on_rss)(struct at_source *s, at_atz_rss_fn fn, void *arg);
	/* The trace's header (NULL: none, or not read). */
	const struct at_atz_header *(*header)(const struct at_source *s);
	/* Whether input that stopped at an error stopped at damage past a readable start (cut
	 * short, a corrupt block, a read error), so that what came before it can be used. */
	int (*readable_damage)(const struct at_source *s);
	/* The reader's own message for its last error (NULL: none: s->why says it). */
	const char *(*message)(const struct at_source *s);
	void (*close)(struct at_source *s);
};

struct at_source {
	const char *name;          /* path, or "<stdin>" */
	int fd, own_fd;
	enum at_source_kind kind;  /* reader->kind */
	const struct at_source_reader *reader;
	int munged;                /* 1 munged, 0 raw, -1 text not yet decided */
	int fatal;                 /* the last error ends the input (binary errors, read errors) */
	uint64_t lineno;           /* text: the line of the last event or error */
	const char *why;           /* reason of the last text error */
	struct at_linereader lines;
	struct at_atz_reader *atz;
	void *state;               /* a reader's own, for a format other than text and binary */
};

/* Opens path ("-" or NULL: stdin) and sniffs its format. 0, or -1 with errno set. */
int at_source_open(struct at_source *s, const char *path);
/* The same on an fd the caller has open (not closed by at_source_close). */
int at_source_open_fd(struct at_source *s, int fd, const char *name);
/* The same, following a binary trace still being written (at_atz_reader_open_follow): its
 * first bytes, and every later read that finds none yet, wait through wait(arg, fd). Only a
 * binary trace is followed: other input fails with ENOTSUP (nothing read past its first
 * bytes); input that ends (or that wait stops) before its first 4 bytes is taken as it is. 0,
 * or -1 with errno set. */
int at_source_open_follow(struct at_source *s, int fd, const char *name, at_atz_wait_fn wait,
			  void *arg);
/* Next event: 1 (ev filled), 0 at the end, -1 on an error. After an error on one text line
 * (s->fatal == 0) the next call goes on with the following line; after a fatal error every
 * later call returns -1. */
int at_source_next(struct at_source *s, struct at_event *ev);
/* Stack and mapping records of a binary trace (2.x) met from now on go to fn (NULL: none),
 * before the event that follows them, as at_atz_reader_on_stack/on_mapping say; text input
 * never calls them. at_source_next gives time_ns and stack 0 for text and 1.x traces. */
void at_source_on_stack(struct at_source *s, at_atz_stack_fn fn, void *arg);
void at_source_on_mapping(struct at_source *s, at_atz_mapping_fn fn, void *arg);
/* NAMES records (doc/FORMAT.md 5.10) likewise, as at_atz_reader_on_names says. */
void at_source_on_names(struct at_source *s, at_atz_names_fn fn, void *arg);
/* RSS records (2.1) likewise. */
void at_source_on_rss(struct at_source *s, at_atz_rss_fn fn, void *arg);
/* Prints the last error: "PROGRAM: FILE:LINE: reason" for text, "PROGRAM: FILE: reason" for
 * binary input. */
void at_source_report(const struct at_source *s);
void at_source_close(struct at_source *s);

/* The place of the last event or error: its line in a line format, else its number events
 * (from 1, the caller's count). */
uint64_t at_source_place(const struct at_source *s, uint64_t events);
/* Where an event sits, for messages: "line" or "event"; units: "lines" or "events". */
const char *at_source_unit(const struct at_source *s);
const char *at_source_units(const struct at_source *s);
/* Whether the source reads lines (an error may be one line's, s->fatal 0). */
int at_source_is_lines(const struct at_source *s);
/* Reports why at the last event's place: "PROGRAM: FILE:LINE: why" in a line format,
 * "PROGRAM: FILE: event N: why" (N = events) else. */
void at_source_report_at(const struct at_source *s, uint64_t events, const char *why);
/* Whether the last error is an empty (or all-blank) line: lines that readers may skip. */
int at_source_empty_line(const struct at_source *s);
/* The trace's header, NULL for a format without one (text). */
const struct at_atz_header *at_source_header(const struct at_source *s);
/* A tool that needs every call (doing: "munging", "replaying") refuses a trace whose header
 * says it holds a part of them (alloctapd --min-size, --sample-bytes): says so ("PROGRAM:
 * FILE: the trace holds ...: munging needs every call") and returns -1; 0 for any other
 * trace. */
int at_source_refuse_filtered(const struct at_source *s, const char *doing);
/* Whether input that stopped at a fatal error can be used up to there (readable_damage of
 * the reader), and the reader's message for that error (NULL: none). */
int at_source_readable_damage(const struct at_source *s);
const char *at_source_message(const struct at_source *s);

#endif
