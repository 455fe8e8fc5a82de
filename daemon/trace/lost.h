/* lost.h: the count of events lost between the probes and the output, and the part of it
 * already recorded in the output. */
#ifndef ALLOCTAP_LOST_H
#define ALLOCTAP_LOST_H

#include <linux/types.h>
#include <stdint.h>

#include "alloctap.h"
#include "reorder.h"
#include "sink.h"

struct at_lost {
	uint64_t bpf[AT_LOST_COUNT]; /* the BPF program's counters, summed over CPUs, last read */
	uint64_t reported;           /* lost events already recorded in the output */
};

struct at_bpf;

/* Reads the BPF program's lost counters (summed over CPUs) into l->bpf; a counter that cannot
 * be read counts 0. */
void at_lost_read(struct at_lost *l, struct at_bpf *bpf);

/* Events lost by the last read: the records the rings had no room for, the reallocs whose
 * return the merge gave up waiting for (less those whose return found no room: counted once),
 * the calls that found no room for per-thread state, and in a filtered trace the recorded
 * blocks the program's map of them had no room for (AT_LOST_BLOCKS). A record that is no event (a thread's
 * end, a realloc's entry) is no lost event. */
uint64_t at_lost_events(const struct at_lost *l, const struct at_reorder *r);

/* Records in the sink the events lost since the last call, total being the events lost so far
 * (a binary trace then says where the loss was noticed; text counts them only). */
void at_lost_note(struct at_lost *l, uint64_t total, struct at_sink *s);

#endif
