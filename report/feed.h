/* feed.h: a trace, text or binary, raw or munged, into the folded export. */
#ifndef ALLOCTAP_REPORT_FEED_H
#define ALLOCTAP_REPORT_FEED_H

#include "export.h"
#include "source.h"

/* Opens the input (NULL or "-": stdin) and sniffs its format. The fd is the caller's to close.
 * Returns 0, or -1 after reporting "FILE: reason" (cannot be opened) or "FILE:1: read error:
 * reason" (its first bytes cannot be read: a directory). */
int rep_open_input(struct at_source *s, const char *path, int *fd);

/* Feeds every mapping, stack and event of s to x. Returns 0, or -1 after reporting the error
 * with its place: "FILE:LINE: reason" for a malformed text line, "FILE: event N: reason" for
 * an event of a binary trace (a stack never defined), the reader's message for a damaged
 * binary trace. Empty text lines are skipped. */
int rep_feed(struct at_source *s, struct rep_export *x);

/* The same, each event going to fn (which returns 0, or -1 with errno: ENOENT for a stack
 * never defined) instead of the folded export; stack and mapping records still go to x. */
typedef int (*rep_event_fn)(void *arg, const struct at_event *ev);
int rep_feed_events(struct at_source *s, struct rep_export *x, rep_event_fn fn, void *arg);

#endif
