/* feed.h: a trace, text or binary, raw or munged, into the folded export. */
#ifndef ALLOCTAP_REPORT_FEED_H
#define ALLOCTAP_REPORT_FEED_H

#include "export.h"
#include "source.h"

/* Opens the input (NULL or "-": stdin) and sniffs its format. The fd is the caller's to close.
 * Returns 0, or -1 after reporting "FILE: reason" (cannot be opened) or "FILE:1: read error:
 * reason" (its first bytes cannot be read: a directory). */
int rep_open_input(struct at_source *s, const char *path, int *fd);

/* How a feed takes a damaged input (in), and the damage it met (out). */
struct rep_damage {
	int strict;             /* in: a malformed line or a damaged trace is an error */
	uint64_t skipped_lines; /* out: malformed text lines skipped (reported, the first few
				 * one by one, then their count) */
	int stopped;            /* out: the input stopped at damage: a binary trace truncated or
				 * corrupt, a read error; what came before it was fed */
};

/* Whether the feed met damage and went on: the report then covers what could be read. */
static inline int rep_damaged(const struct rep_damage *d)
{
	return d->skipped_lines || d->stopped;
}

/* Feeds every mapping, stack and event of s to x. Damage is reported with its place and,
 * without d->strict, read past: a malformed text line ("FILE:LINE: reason; line skipped") is
 * skipped, and a binary trace that stops (truncated, a corrupt block, a read error: the
 * reader's message, then how many events came before) ends the feed as its end would; d says
 * what was met. Returns 0, or -1 after reporting the error with its place: with d->strict the
 * first damage; "FILE: event N: reason" for an event of a binary trace (a stack never
 * defined); a trace that cannot be read at all (not a trace, a newer version, its header cut).
 * Empty text lines are skipped. */
int rep_feed(struct at_source *s, struct rep_sites *x, struct rep_damage *d);

/* The same, each event going to fn (which returns 0, or -1 with errno: ENOENT for a stack
 * never defined; ECANCELED when fn refused the event and said why itself) instead of the
 * folded export; stack and mapping records still go to x. */
typedef int (*rep_event_fn)(void *arg, const struct at_event *ev);
int rep_feed_events(struct at_source *s, struct rep_sites *x, rep_event_fn fn, void *arg,
		    struct rep_damage *d);

#endif
