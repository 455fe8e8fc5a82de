/* options.h: what the command line asks of one run of the daemon (main.c fills it, the session
 * and the targets read it). */
#ifndef ALLOCTAP_OPTIONS_H
#define ALLOCTAP_OPTIONS_H

#include <stdint.h>
#include <sys/types.h>

#include "dest.h"
#include "sink.h"

#define AT_MAX_TARGETS 256

/* What the command line asks for. */
struct at_session_options {
	struct at_dest dest;
	const char *lib;            /* --lib: the object to probe, else found per target */
	pid_t pids[AT_MAX_TARGETS]; /* --pid */
	unsigned npids;
	int all;                    /* --all */
	int shared_probes;          /* --shared-probes: a followed tree's files probed once for
				     * every process */
	char **command;             /* -- COMMAND [ARG...] */
	double duration;            /* seconds, 0 for no limit */
	unsigned long ringbuf_size;
	int nice;                   /* --nice: the priority of the loop and the writing thread */
	int nice_given;             /* --nice was on the command line */
	enum at_sink_format format;
	int floor;                  /* --floor: probes that record nothing (benchmark floor) */
	int discard;                /* --discard: records given back unread (benchmark: the
				     * programs' and rings' cost without the daemon's) */
	int stacks;                 /* --stacks: allocations carry their call stacks */
	int no_python;              /* --no-python: no Python frames in them */
	int follow;                 /* follow new processes: a command's unless --no-follow,
				     * --pid's with --follow */
	int watch;                  /* --watch: the trace shown by alloctap-report top --follow
				     * (watch.h) */
	const char *cache_dir;      /* --stacks' on-disk cache of unwind tables (--cache-dir, by
				     * default table_cache.h's AT_TABLE_CACHE_DIR); NULL with
				     * --no-cache */
	unsigned long long cache_size; /* --cache-size: its files' bytes at most */
	uint64_t min_size;          /* --min-size: only allocations of at least this many bytes
				     * (and the releases of their blocks); 0: every one */
	uint64_t sample_bytes;      /* --sample-bytes: a sample of the allocations, one per this
				     * many bytes on average; 0: every one */
	uint32_t block_map;         /* --block-map: recorded blocks alive the BPF program can
				     * follow with either of the two */
};

#endif
