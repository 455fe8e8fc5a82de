/* emit.h: --emit, the replayed workload as a raw logalloc trace with the pointers the
 * allocator under test returned.
 *
 * One line per op of the loaded trace, with the munged log's pid and tid numbers: an
 * allocation's result is the pointer it returned (0x0 when it failed), free and realloc pass
 * the pointer the slot held (0x0 for an empty slot). A replay on one thread is written in the
 * log's order, and munging the output gives back the input whenever the input is what
 * alloctap-munge writes. A threaded replay is written in the order its calls happened
 * (threads.h numbers them as alloctapd numbers a program's calls), so the trace stays causal:
 * an allocator may hand a block one thread freed to another thread before the log's order
 * would, and then the log's order, with these pointers, would show one address live twice.
 * Each thread's calls keep their order; where the replay kept the log's interleaving, munging
 * gives back the input byte for byte. Written after the replay: it costs the timed replay
 * nothing. */
#ifndef ALLOCTAP_REPLAY_EMIT_H
#define ALLOCTAP_REPLAY_EMIT_H

#include "oplist.h"
#include "threads.h"

/* Writes the trace to path ("-": standard output; a file is created or emptied). 0, or -1
 * after reporting "PATH: reason". */
int rp_emit(const char *path, const struct rp_oplist *ol, const struct rp_results *res);

#endif
