/* writer.h: where events go once in order. The one seam for output formats: a writer takes
 * struct at_event. Text writes logalloc raw lines through a 1 MiB buffer; binary writes an
 * .atz trace (lib/atz.h: one lz4 frame) to the same descriptor, with lost-event records at
 * the point where the loss was noticed. */
#ifndef ALLOCTAP_WRITER_H
#define ALLOCTAP_WRITER_H

#include <stddef.h> /* lib/event.h needs size_t */
#include <stdint.h>

#include "event.h"
#include "output.h"

enum at_format {
	AT_FORMAT_TEXT = 0,
	AT_FORMAT_BINARY,
};

struct at_atz_writer;

struct at_writer {
	struct at_output out;      /* the descriptor, its name and first error; text: the buffer */
	struct at_atz_writer *atz; /* binary only */
	void (*write)(struct at_writer *w, const struct at_event *e);
	uint64_t events;           /* events written */
};

/* Sets up a writer of format f on an opened output. 0, or -1 with errno. */
int at_writer_init(struct at_writer *w, enum at_format f);

static inline void at_writer_put(struct at_writer *w, const struct at_event *e)
{
	w->write(w, e);
	w->events++;
}

/* Records that n events were lost here (binary: a lost record; text has no such line). */
void at_writer_lost(struct at_writer *w, uint64_t n);
/* Writes out what is buffered. 0, or -1 (w->out.err set). */
int at_writer_flush(struct at_writer *w);
/* Ends the output (binary: the frame) and closes what the output owns. 0, or -1 (err set). */
int at_writer_close(struct at_writer *w);

#endif
