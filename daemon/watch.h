/* watch.h: --watch, the trace shown live while it is taken, in one command.
 *
 * alloctapd splits in three before it opens anything: the process the shell started stays as a
 * supervisor (it only waits), its first child goes on as the daemon, and once the daemon is
 * attached a second child becomes `alloctap-report top --follow`, reading the binary trace from
 * a pipe (or following the -o file). The viewer cannot be the daemon's own child: the daemon
 * reaps every child of its own while it follows a tree. The supervisor waits for both, so that
 * the shell's prompt comes back after the daemon's summary, and ends the trace (SIGINT to the
 * daemon) when the viewer ends first (q). */
#ifndef ALLOCTAP_WATCH_H
#define ALLOCTAP_WATCH_H

#include "session.h"

/* Splits the process (see above). Returns in the daemon's process only: 0, with o->dest the
 * pipe to the viewer when o->dest named no path; -1 after a message when nothing could be
 * started (no pipe, no process). In the supervisor it never returns: it exits with the
 * daemon's status (its own when it failed before it was attached), or the viewer's when the
 * viewer failed; 0 when the viewer was quit and the trace ended by it. */
int at_watch_split(struct at_session_options *o);

/* The daemon is attached: the viewer may start. Called in the daemon's process once; nothing
 * when --watch was not given. */
void at_watch_ready(void);

/* The supervisor's exit status from the daemon's (d) and the viewer's (v) wait statuses
 * (waitpid's), the viewer having ended while the daemon still ran or not: a daemon ended by
 * SIGPIPE after the view was quit gives the view's status; else the daemon's failure (or its
 * command's status); else the view's failure (its exit status, or 128+N for a signal N other
 * than SIGINT and SIGTERM); else the daemon's status. */
int at_watch_status(int d, int v, int viewer_first);

#endif
