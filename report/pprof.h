/* pprof.h: a finished pass (heap.h) as a pprof profile: profile.proto, gzip'd, which
 * `go tool pprof`, Pyroscope and Parca read.
 *
 * The profile is a Go heap profile's shape: four sample types, alloc_objects/count,
 * alloc_space/bytes, inuse_objects/count and inuse_space/bytes (the default), period 1 of
 * space/bytes (every allocation counted, none sampled). One sample per site and process, with
 * a numeric label "pid": its allocation calls and bytes asked, and the blocks and bytes live
 * at the end (or at the heap peak of its process). A sample's locations are its frames, leaf
 * first: the allocation function, then its callers; one location and one function per distinct
 * frame name (a function inlined at a return address is a frame of its own, as in the folded
 * lines). The mappings are the objects the trace's mapping records name, one per path and
 * build-id.
 *
 * The protobuf wire format is written directly (varints, length-delimited fields and packed
 * repeated varints are all a profile needs), so alloctap depends on no protobuf library; the
 * gzip stream comes from zlib. */
#ifndef ALLOCTAP_REPORT_PPROF_H
#define ALLOCTAP_REPORT_PPROF_H

#include <stdio.h>

#include "heap.h"

/* Writes the profile of h, whose sites x names, to out; in use at REP_AT_END or REP_AT_PEAK.
 * 0, or -1 with errno (ENOMEM, a write error). */
int rep_write_pprof(FILE *out, const struct rep_heap *h, struct rep_sites *x,
		    enum rep_moment_kind at);

#endif
