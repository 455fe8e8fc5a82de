/* feed.h: the events of a munged source into the replay engine. */
#ifndef ALLOCTAP_REPLAY_FEED_H
#define ALLOCTAP_REPLAY_FEED_H

#include "engine.h"
#include "oplist.h"
#include "source.h"

/* Opens the input (NULL or "-": stdin) and sniffs its format (text or .atz). The fd is the
 * caller's to close. Returns 0, or -1 after reporting: "FILE: reason" when it cannot be
 * opened, "FILE:1: read error: reason" when its first bytes cannot be read (a directory). */
int rp_open_input(struct at_source *s, const char *path, int *fd);

/* Replays every event of s through e or, with ol (NULL: none), admits them through e and
 * loads them into ol (oplist.h) to be replayed later. Returns 0, or -1 after reporting the
 * error with its place (FILE:LINE for text, FILE: event N or the reader's message for binary
 * input): a malformed line, a raw trace, a slot beyond the engine's limit, a damaged binary
 * trace, more threads than a threaded replay runs. */
int rp_feed(struct at_source *s, struct rp_engine *e, struct rp_oplist *ol);

/* "FILE: this is a raw trace; munge it first: ..." (raw traces hold addresses, not slots). */
void rp_report_raw_trace(const struct at_source *s);

#endif
