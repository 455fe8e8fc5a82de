/* alloctap.h: the record layout shared by the BPF program and alloctapd.
 *
 * Fixed-width fields only, so the same bytes mean the same thing on both sides. Bump
 * AT_RECORD_VERSION whenever a field changes. */
#ifndef ALLOCTAP_BPF_H
#define ALLOCTAP_BPF_H

#define AT_RECORD_VERSION 1

/* The probed functions. The first eight match enum at_func's order in lib/event.h; the daemon
 * rewrites the last two as calls the logalloc format has (LOGALLOC.md section 1). */
enum at_probe_func {
	AT_PROBE_MALLOC = 0,
	AT_PROBE_CALLOC,
	AT_PROBE_REALLOC,
	AT_PROBE_FREE,
	AT_PROBE_MEMALIGN,
	AT_PROBE_POSIX_MEMALIGN,
	AT_PROBE_ALIGNED_ALLOC,
	AT_PROBE_VALLOC,
	AT_PROBE_PVALLOC,       /* written as valloc(roundup(n, pagesize)) */
	AT_PROBE_REALLOCARRAY,  /* written as realloc(p, n*m) */
	AT_PROBE_FUNC_COUNT
};

/* Flags of a record. */
#define AT_REC_OVERFLOW 1u /* reallocarray: n*m overflowed; arg[1] is the saturated product */

/* One event in the ring buffer: 56 bytes (64 with the ring's header).
 * seq is the event's number from the one global counter. A realloc (and reallocarray) takes
 * seq_entry at its entry and seq at its return, so it owns two numbers; every other event has
 * seq_entry == seq. Frees are numbered at entry, allocations at return. */
struct at_record {
	__u64 seq;
	__u64 seq_entry;
	__u32 pid;      /* tgid */
	__u32 tid;
	__u64 arg[2];   /* as the format prints them; for reallocarray arg[1] = n*m */
	__u64 result;   /* returned pointer; posix_memalign: *memptr, or 0 on error */
	__u32 func;     /* enum at_probe_func */
	__u32 flags;
};

/* Indices of the per-CPU "lost" array. */
enum at_lost_counter {
	AT_LOST_RECORDS = 0,  /* ring reservations that failed (one event each) */
	AT_LOST_REALLOCS,     /* of those, realloc returns (two numbers, one event) */
	AT_LOST_NO_STATE,     /* entries with no room for per-thread state */
	AT_LOST_COUNT
};

#endif
