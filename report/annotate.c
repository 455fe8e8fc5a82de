/* annotate.c: trace lines with notes (annotate.h). */
#include "annotate.h"
#include "text.h"

void rep_watch_start(struct rep_watch *w, struct rep_heap *h, FILE *out, int annotate,
		     const int *munged, rep_heap_block_fn fn, void *arg)
{
	*w = (struct rep_watch){ out, annotate, munged, h, NULL };
	rep_heap_on_block(h, fn, arg);
}

int rep_watch_event(struct rep_watch *w, const struct at_event *ev, int *selected)
{
	uint64_t before = rep_heap_events(w->h);

	w->ev = ev;
	int rc = rep_heap_event(w->h, ev);
	w->ev = NULL;
	*selected = rep_heap_events(w->h) != before;
	return rc;
}

void rep_put_annotated(FILE *out, const struct at_event *ev, int munged, const char *note)
{
	char line[AT_LINE_MAX];
	size_t n = munged ? at_format_munged(line, ev) : at_format_raw(line, ev);

	if (n && line[n - 1] == '\n')
		n--;
	fwrite(line, 1, n, out);
	if (note && note[0]) {
		size_t pad = n < REP_NOTE_COLUMN - 1 ? REP_NOTE_COLUMN - n : 1;
		fprintf(out, "%*s# %s", (int)pad, "", note);
	}
	fputc('\n', out);
}
