/* writer.c: logalloc raw text lines. */
#include "text.h"
#include "writer.h"

static void write_text(struct at_writer *w, const struct at_event *e)
{
	char *dst = at_output_reserve(&w->out, AT_LINE_MAX);

	at_output_commit(&w->out, at_format_raw(dst, e));
}

void at_writer_init_text(struct at_writer *w)
{
	w->write = write_text;
	w->events = 0;
}
