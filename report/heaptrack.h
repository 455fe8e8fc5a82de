/* heaptrack.h: `export --heaptrack`: one process of a trace as heaptrack's own data file, the
 * file heaptrack_interpret writes and heaptrack_print and heaptrack_gui read (file format
 * version 3, heaptrack 1.4: sized strings), so that a trace alloctap took by attaching opens
 * in heaptrack's tools.
 *
 * The file is line based, one record a line, its numbers lower-case hex:
 *   v 10400 3           heaptrack's version and the file format's
 *   X TEXT              the debuggee: here the trace and the pid
 *   I PAGESIZE PAGES    the page size RSS lines count in (4096; PAGES, the machine's memory,
 *                       is not in the trace: 0)
 *   s LEN TEXT          a string; strings are numbered from 1 as written (0: none)
 *   i IP MODULE [FUNCTION FILE LINE]...  an instruction pointer, numbered from 1
 *   t IP PARENT         a trace node, numbered from 1 (parent 0: a root)
 *   a SIZE TRACE        an allocation info, numbered from 0
 *   + INFO, - INFO      a block of that info allocated, released
 *   c MS                the time since the first event, in milliseconds
 *   R PAGES             the process's resident set
 *   # strings: N, # ips: M   the totals heaptrack_interpret writes at the end (decimal)
 * A string, ip, trace node or info is written the first time a line uses it, as
 * heaptrack_interpret writes them.
 *
 * The mapping from alloctap's records (report/frames.h, report/heap.h):
 *   - an ip is a location of the frames table: its value (a native frame's pc), its mapping's
 *     path as the module, and its frames, the innermost first as heaptrack has them (the
 *     location's function, or the function inlined there, then each function it is inlined
 *     into as heaptrack's inlined frames), each its function, file (the path as DWARF names
 *     it) and line; an unnamed frame gives the ip no function (heaptrack_print then names its
 *     module). A frame of a process without a stack record (a trace taken without --stacks,
 *     a text log) has an ip of its own for each allocation function (value 0, no module: the
 *     function's name), and a cut stack the root "[truncated]" or "[incomplete]".
 *   - a site (its first stack: the callers' locations, root first) is a path of trace nodes
 *     from a root, the allocation's caller its last; a site without a stack is the one node
 *     of its allocation function. heaptrack's traces start at the caller, as here.
 *   - an allocation info is (size, trace) for each (site, size) that allocated, written just
 *     before its first `+` (heaptrack_gui needs infos first allocated in their order): so
 *     heaptrack_print's temporaries (a release of the info of the process's last allocation,
 *     no release since) are alloctap's heaptrack-temp-count (heap.h), but for heaptrack's own
 *     quirk, which its reader has on every file: a release of info 0 just after a release
 *     counts too (its "last allocation" starts at, and returns to, index 0).
 *   - the engine's blocks (rep_heap_on_block) in trace order: each block allocated a `+` of
 *     its info, each released (a free, a realloc's old block, a block replaced at its
 *     address) a `-`; failed calls, frees of blocks not live and free(NULL) write nothing,
 *     as heaptrack records none. A `c` line goes before the first block of each later
 *     millisecond of the trace's clock (none on a trace without times), and one 10 ms (the
 *     tick of heaptrack's timer) after the last c line when the next is later than that;
 *     each RSS record of the process (after its `c`) is an `R` of its bytes in 4096-byte
 *     pages, rounded up.
 * heaptrack_print on the file then gives, per site, alloctap's calls (successful ones), bytes
 * at the heap peak, bytes leaked and heaptrack's temporaries.
 *
 * One process: a file holds one, so a trace of several needs --pid; the first event of a
 * second process without it is refused (said, with both pids). Memory grows with the
 * distinct strings, locations, trace nodes and (site, size) pairs, never with the events:
 * every line is written as its event comes. -o FILE ending in .gz writes it gzip'd (which
 * heaptrack_print and heaptrack_gui read by that name); else plain text. */
#ifndef ALLOCTAP_REPORT_HEAPTRACK_H
#define ALLOCTAP_REPORT_HEAPTRACK_H

#include <stdint.h>
#include <stdio.h>
#include <zlib.h>

#include "event.h"
#include "heap.h"
#include "u64map.h"

/* The heaptrack version and file format the file says it is. */
#define REP_HEAPTRACK_VERSION 0x010400
#define REP_HEAPTRACK_FILE_VERSION 3
/* heaptrack's timer: a c line every 10 ms. */
#define REP_HEAPTRACK_TICK_MS 10
/* The page size of R lines. */
#define REP_HEAPTRACK_PAGE 4096

struct rep_heaptrack {
	FILE *out;
	int gz;                       /* 1: out gets a gzip stream */
	z_stream z;
	int err;                      /* the first failure's errno; nothing written after it */
	struct rep_heap *h;
	struct rep_sites *x;
	const char *trace;
	int have_pid;                 /* the process: --pid's, or the first event's */
	uint32_t pid;
	int pid_given;                /* 1: chosen by --pid */
	int named;                    /* 1: its X line is written */
	const struct at_event *cur;   /* the event being applied; NULL: none */
	struct rep_folded *strings;   /* entry i: string i + 1 */
	struct rep_folded *infos;     /* entry i: (site, size) of info i + 1 */
	uint32_t *ip_of;              /* by location id: its ip, 0 not yet written */
	size_t ip_cap;
	uint32_t extra_ip[AT_FUNC_COUNT + 2]; /* the allocation functions', the markers' */
	uint32_t nips;
	struct rep_u64map nodes;      /* parent << 32 | ip: its trace node */
	uint32_t ntraces;
	uint32_t *trace_of;           /* by site index: its last trace node, 0 not yet */
	size_t trace_cap;
	uint64_t ms;                  /* the last c line's time (ms), valid when timed */
	int timed;
	unsigned char zbuf[65536];
};

/* Starts the file into out (gzip'd when gz) for the pass of h, whose sites x names, of the
 * trace named trace; only process pid when have_pid. Registers its block watcher on h.
 * 0, or -1 with errno (ENOMEM). */
int rep_heaptrack_start(struct rep_heaptrack *t, FILE *out, int gz, struct rep_heap *h,
			struct rep_sites *x, const char *trace, int have_pid, uint32_t pid);

/* One event of the trace, in order: applied to the engine, its blocks written. 0, or -1 with
 * errno: ECANCELED when it is of a second process and no pid was chosen (said), else the
 * engine's errors, or a write error. */
int rep_heaptrack_event(struct rep_heaptrack *t, const struct at_event *ev);

/* An RSS record, after the engine took it: an R line when of the process. */
void rep_heaptrack_rss(struct rep_heaptrack *t, const struct at_rss *m);

/* Ends the file: the totals, the gzip stream ended, out flushed. 0, or -1 with errno. */
int rep_heaptrack_end(struct rep_heaptrack *t);

/* Frees what t holds (after end, or after an error). */
void rep_heaptrack_free(struct rep_heaptrack *t);

#endif
