/* pprof.h: a finished pass (heap.h) as a pprof profile: profile.proto, gzip'd, which
 * `go tool pprof`, Pyroscope and Parca read.
 *
 * The profile is a Go heap profile's shape: four sample types, alloc_objects/count,
 * alloc_space/bytes, inuse_objects/count and inuse_space/bytes (the default), period 1 of
 * space/bytes (every allocation counted, none sampled). One sample per site and process, with
 * a numeric label "pid": its allocation calls and bytes asked, and the blocks and bytes live
 * at the end (or at the heap peak of its process). A sample's locations are its stack's, leaf
 * first: the allocation function (a location of its own, without an address), then the
 * locations of its first stack (report/frames.h): each a process's pc under a Mapping, with one
 * Line per frame (the functions inlined there first, then the function holding them; an
 * unnamed frame in a mapping has none, its address and Mapping say where it is; one in no
 * mapping is the function "[unknown]"), then "[truncated]" and
 * "[incomplete]" for a cut stack. A Function is a name, its source file and the line it is
 * declared at. The Mappings are the processes' mapping records that the locations are in
 * (start, limit, file offset, path, build-id), each saying whether its frames have functions,
 * files and lines.
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
