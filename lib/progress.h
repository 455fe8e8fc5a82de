/* progress.h: a progress line on stderr for long offline work (munge, replay of a large file).
 *
 * Shown only when stderr is a terminal and messages are not turned down (level 2 or more),
 * rewritten in place about twice a second ("\rPROGRAM: NAME: 12.3 M lines, 4.1 s") and erased at
 * the end, so logs and pipes never see it. Costs a compare per item: the clock is read every
 * AT_PROGRESS_EVERY items. No allocation (lib/display). */
#ifndef ALLOCTAP_PROGRESS_H
#define ALLOCTAP_PROGRESS_H

#include <stdint.h>

#define AT_PROGRESS_EVERY 65536
#define AT_PROGRESS_INTERVAL_NS 500000000ull

struct at_progress {
	int on;
	int shown;             /* a line is on the terminal */
	const char *name;      /* the input, for the line */
	const char *unit;      /* "lines", "events" */
	uint64_t next_check;   /* item count at which to look at the clock */
	uint64_t start_ns, last_ns;
};

/* Starts counting; the line is shown only if stderr is a terminal and the level is 2 or more. */
void at_progress_start(struct at_progress *p, const char *name, const char *unit);
void at_progress_show(struct at_progress *p, uint64_t count);

static inline void at_progress_tick(struct at_progress *p, uint64_t count)
{
	if (count >= p->next_check && p->on)
		at_progress_show(p, count);
}

/* Erases the line, if one was shown. */
void at_progress_end(struct at_progress *p);

#endif
