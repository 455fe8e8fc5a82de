/* writer.c: logalloc raw text lines, or an .atz binary trace. */
#include <errno.h>

#include "atz.h"
#include "text.h"
#include "writer.h"

static void write_text(struct at_writer *w, const struct at_event *e)
{
	char *dst = at_output_reserve(&w->out, AT_LINE_MAX);

	at_output_commit(&w->out, at_format_raw(dst, e));
}

static void write_binary(struct at_writer *w, const struct at_event *e)
{
	if (!w->out.err && at_atz_append(w->atz, e) < 0)
		w->out.err = errno ? errno : EIO;
}

int at_writer_init(struct at_writer *w, enum at_format f)
{
	w->events = 0;
	w->atz = NULL;
	w->write = write_text;
	if (f == AT_FORMAT_TEXT)
		return 0;
	w->atz = at_atz_writer_open(w->out.fd, w->out.name, NULL);
	if (!w->atz)
		return -1;
	w->write = write_binary;
	return 0;
}

void at_writer_lost(struct at_writer *w, uint64_t n)
{
	if (w->atz && n && !w->out.err && at_atz_append_lost(w->atz, n) < 0)
		w->out.err = errno ? errno : EIO;
}

int at_writer_flush(struct at_writer *w)
{
	if (w->atz && !w->out.err && at_atz_flush(w->atz) < 0)
		w->out.err = errno ? errno : EIO;
	return at_output_flush(&w->out);
}

int at_writer_close(struct at_writer *w)
{
	if (w->atz) {
		if (at_atz_writer_close(w->atz) < 0 && !w->out.err)
			w->out.err = errno ? errno : EIO;
		w->atz = NULL;
	}
	int err = w->out.err;
	int rc = at_output_close(&w->out);
	if (err && !w->out.err)
		w->out.err = err;
	return rc < 0 || w->out.err ? -1 : 0;
}
