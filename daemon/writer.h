/* writer.h: where events go once in order. The one seam for output formats: a writer takes
 * struct at_event; text (logalloc raw lines) today, --format binary plugs in here. */
#ifndef ALLOCTAP_WRITER_H
#define ALLOCTAP_WRITER_H

#include <stddef.h> /* lib/event.h needs size_t */
#include <stdint.h>

#include "event.h"
#include "output.h"

struct at_writer {
	struct at_output out;
	void (*write)(struct at_writer *w, const struct at_event *e);
	uint64_t events; /* events written */
};

/* Sets up a writer of logalloc raw text lines on an opened output. */
void at_writer_init_text(struct at_writer *w);

static inline void at_writer_put(struct at_writer *w, const struct at_event *e)
{
	w->write(w, e);
	w->events++;
}

#endif
