/* signals.h: the daemon's signals, as flags its loop polls. */
#ifndef ALLOCTAP_SIGNALS_H
#define ALLOCTAP_SIGNALS_H

#include <signal.h>
#include <stdint.h>

extern volatile sig_atomic_t at_sig_stop;   /* SIGINT, SIGTERM */
extern volatile sig_atomic_t at_sig_reopen; /* SIGHUP */
extern volatile sig_atomic_t at_sig_stats;  /* SIGUSR1 */
extern volatile sig_atomic_t at_sig_child;  /* SIGCHLD */

/* SIGUSR1 reads the records' clock (CLOCK_MONOTONIC) into at_sig_stats_time at the moment the
 * signal arrives, so its mark goes after exactly the events recorded before it. The first
 * SIGUSR1 not yet taken keeps its value. */
extern volatile uint64_t at_sig_stats_time;

/* Installs the handlers (without SA_RESTART, so a blocking poll returns) and ignores SIGPIPE
 * (a closed output then shows as EPIPE from write). 0, or -1 with errno. */
int at_signals_install(void);

#endif
