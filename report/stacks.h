/* stacks.h: the stacks of a trace as locations (report/frames.h) and as folded-format text,
 * symbolized as their records come.
 *
 * A stack is symbolized once, when its record is read: the mappings it needs come before it
 * in the trace, and a later mapping that replaces one concerns only the stacks after it. What
 * is kept per stack is its callers (pcs[1] to the outermost frame), root first, as locations;
 * its two texts are made from them on demand, frames separated by ';', each function inlined
 * at a pc a frame of its own (the caller before the inlined function): the folded text names
 * each frame by its function, the located text by its function and line (rep_frame_word). A truncated
 * stack's texts start with the frame "[truncated]", an incomplete one's with "[incomplete]"
 * (both, in that order, when both flags are set). pcs[0], the allocation function's entry, is
 * not part of it: the report names the leaf after the event. */
#ifndef ALLOCTAP_REPORT_STACKS_H
#define ALLOCTAP_REPORT_STACKS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "frames.h"
#include "stack.h"
#include "symbolize.h"

/* Ids above the highest one seen by more than this are refused (ids are given in order). */
#define REP_STACKS_MAX_GAP 65536

struct rep_stacks;

struct rep_stacks *rep_stacks_new(void);
void rep_stacks_free(struct rep_stacks *st);

/* Symbolizes s with z, its locations interned in t, and keeps its callers under s->id (a
 * record with an id already seen replaces it). 0, or -1 with errno set: EINVAL for id 0, a
 * count of 0 or above AT_STACK_MAX_FRAMES, or an id more than REP_STACKS_MAX_GAP above the
 * highest seen; ENOMEM. */
int rep_stacks_add(struct rep_stacks *st, struct rep_frames *t, struct at_symbolizer *z,
		   const struct at_stack *s);

/* The callers' folded text (located 0) or located text (1) of stack id, built from its
 * locations' texts into buf[0..size) (cut there; not NUL-terminated): its length (possibly
 * 0), or -1 when no record of that id has come. */
ssize_t rep_stacks_text(const struct rep_stacks *st, const struct rep_frames *t, uint32_t id,
			int located, char *buf, size_t size);

/* The callers' locations of stack id, root first (*n of them, possibly 0), and its flags
 * (enum at_stack_flags); NULL when no record of that id has come. Valid as rep_stacks_text. */
const uint32_t *rep_stacks_locations(const struct rep_stacks *st, uint32_t id, size_t *n,
				     unsigned *flags);

/* Appends one frame's text to buf[*len..size) with ';', newlines and other control bytes
 * replaced by '_' (they would break a folded line); the text is cut at the end of buf. */
void rep_append_frame(char *buf, size_t size, size_t *len, const char *text);

#endif
