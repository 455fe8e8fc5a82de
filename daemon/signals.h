/* signals.h: the daemon's signals, as flags its loop polls. */
#ifndef ALLOCTAP_SIGNALS_H
#define ALLOCTAP_SIGNALS_H

#include <signal.h>

extern volatile sig_atomic_t at_sig_stop;   /* SIGINT, SIGTERM */
extern volatile sig_atomic_t at_sig_reopen; /* SIGHUP */
extern volatile sig_atomic_t at_sig_stats;  /* SIGUSR1 */
extern volatile sig_atomic_t at_sig_child;  /* SIGCHLD */

/* Installs the handlers (without SA_RESTART, so a blocking poll returns) and ignores SIGPIPE
 * (a closed output then shows as EPIPE from write). 0, or -1 with errno. */
int at_signals_install(void);

#endif
