/* atz_relay.h: passes the stack, mapping, names and RSS records of a source on to a sink, in
 * stream order.
 *
 * A program that converts a trace (munge, atz_tool encode) reads events from a source and puts
 * them into a sink; the relay forwards the stack, mapping and names records met in between,
 * before the event that follows them, so the output keeps them where the input had them. Stack ids
 * start over at 1 in each lz4 frame of the input (doc/FORMAT.md 2.1); the output is one frame,
 * so the relay numbers them on: at_stack_relay_id() gives an input event's id in the output.
 * A text sink, or a binary sink writing 1.x, gets no records (neither format holds them); the
 * ids it is given then never reach its file. */
#ifndef ALLOCTAP_ATZ_RELAY_H
#define ALLOCTAP_ATZ_RELAY_H

#include <stdint.h>

#include "sink.h"
#include "source.h"

struct at_stack_relay {
	struct at_sink *sink;
	uint32_t offset;  /* output id - input id in the current input frame */
	uint32_t stacks;  /* stack records put into the sink */
	uint64_t mappings;
	uint64_t names;   /* NAMES records put (doc/FORMAT.md 5.10) */
	uint64_t rss;
	int no_rss;       /* set by the caller: RSS records are dropped (a munge that numbers
			   * processes anew, so the records' pids would name no process) */
	int failed;       /* a put failed: the sink holds the error (or ready's) */
	/* Called before each record is put (NULL: none), so a program that starts its sink at
	 * the first event can start it earlier; non-zero marks the relay failed. */
	int (*ready)(void *arg);
	void *ready_arg;
	struct at_stack copy;
};

/* Relays src's stack and mapping records into sink from now on (the sink must be started
 * before the first record comes). */
void at_stack_relay_attach(struct at_stack_relay *r, struct at_source *src,
			   struct at_sink *sink);

/* Stops relaying src's records (before r goes away while src is still read). */
void at_stack_relay_detach(struct at_source *src);

/* The AT_ATZ_FLAG_NO_TIMES and AT_ATZ_FLAG_NO_STACKS flags an output of src's events takes:
 * both for text and 1.x traces (they have neither), a 2.x trace's own otherwise. */
unsigned at_stack_relay_flags(const struct at_source *src);
/* The minor version a 2.x output of src's records takes: 2.3, which holds every record of any
 * input and codes the events in the fewest bytes; 2.5 for a 2.5 input (its stacks may hold
 * Python frames). */
unsigned at_stack_relay_minor(const struct at_source *src);

/* The output id of an input event's stack id (0 stays 0). */
static inline uint32_t at_stack_relay_id(const struct at_stack_relay *r, uint32_t id)
{
	return id ? id + r->offset : 0;
}

#endif
