/* progress.c: the progress line of long offline work. */
#include <unistd.h>

#include "display.h"
#include "prim.h"
#include "progress.h"

void at_progress_start(struct at_progress *p, const char *name, const char *unit)
{
	p->on = isatty(STDERR_FILENO) && at_display_level >= 2;
	p->shown = 0;
	p->name = name;
	p->unit = unit;
	p->next_check = p->on ? AT_PROGRESS_EVERY : UINT64_MAX;
	p->start_ns = p->last_ns = at_now_ns();
}

void at_progress_show(struct at_progress *p, uint64_t count)
{
	uint64_t now = at_now_ns();

	p->next_check = count + AT_PROGRESS_EVERY;
	if (now - p->last_ns < AT_PROGRESS_INTERVAL_NS)
		return;
	p->last_ns = now;
	p->shown = 1;
	at_display_progress("%s: %s: %.1f M %s, %.1f s ", at_program_name, p->name,
			    (double)count / 1e6, p->unit, (double)(now - p->start_ns) / 1e9);
}

void at_progress_end(struct at_progress *p)
{
	if (p->shown && at_display_line_open)
		at_display(0, "%s", ""); /* an empty message: it erases the line */
	p->shown = 0;
	p->on = 0;
}
