/* signals.c: the daemon's signals, as flags its loop polls. */
#include <string.h>
#include <time.h>

#include "signals.h"

volatile sig_atomic_t at_sig_stop;
volatile sig_atomic_t at_sig_reopen;
volatile sig_atomic_t at_sig_stats;
volatile sig_atomic_t at_sig_child;
volatile uint64_t at_sig_stats_time;

static void on_signal(int sig)
{
	switch (sig) {
	case SIGINT:
	case SIGTERM:
		at_sig_stop = 1;
		break;
	case SIGHUP:
		at_sig_reopen = 1;
		break;
	case SIGUSR1:
		if (!at_sig_stats) {
			struct timespec ts; /* clock_gettime is async-signal-safe */

			clock_gettime(CLOCK_MONOTONIC, &ts);
			at_sig_stats_time = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		}
		at_sig_stats = 1;
		break;
	case SIGCHLD:
		at_sig_child = 1;
		break;
	}
}

int at_signals_install(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGCHLD };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], &sa, NULL) < 0)
			return -1;
	sa.sa_handler = SIG_IGN;
	return sigaction(SIGPIPE, &sa, NULL);
}
