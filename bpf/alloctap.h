/* alloctap.h: the interface between the BPF program and alloctapd.
 *
 * Fixed-width fields only, so the same bytes mean the same thing on both sides. This header is
 * compiled by clang for BPF and by cc for the daemon; it must stay valid for both.
 *
 * The BPF object is built into alloctapd as a skeleton (build/alloctap.skel.h), so both sides
 * always come from the same tree and the layout needs no version number; the assertions below
 * and in daemon/convert.c stop a build whose two sides disagree.
 *
 * Besides the record, the daemon relies on these names in the object (the skeleton's fields):
 *   rodata  trace_all, self_tgid, floor_only, wakeup_bytes: set before load
 *   bss     next_seq: the one global event counter (__u64). Every event takes its number with
 *           an atomic fetch-and-add on it. After detaching every probe the daemon reads it once:
 *           every number below it was handed out, so a number the reorder window has not seen
 *           by then belongs to a lost event (at_reorder_finish).
 *   maps    events (the ring buffer, resized before load), targets (traced tgids, when
 *           trace_all is 0), lost (per-CPU counters, enum at_lost_counter)
 *   progs   one entry program per function, alloc_return, thread_exit */
#ifndef ALLOCTAP_BPF_H
#define ALLOCTAP_BPF_H

#include <linux/types.h>

/* The probed functions. The first eight match enum at_func's order in lib/event.h (checked in
 * daemon/convert.c); the daemon rewrites the last two as calls the logalloc format has (see
 * doc/LOGALLOC.md). */
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

_Static_assert(sizeof(struct at_record) == 56, "struct at_record is 56 bytes on both sides");

/* Indices of the per-CPU "lost" array. */
enum at_lost_counter {
	AT_LOST_RECORDS = 0,  /* ring reservations that failed (one event each) */
	AT_LOST_REALLOCS,     /* of those, realloc returns (two numbers, one event) */
	AT_LOST_NO_STATE,     /* entries with no room for per-thread state */
	AT_LOST_COUNT
};

/* The calls in flight, summed over the per-CPU "inflight" array: a recorded call counts from its
 * outermost entry to its return, a free while its record is written. A realloc (or
 * reallocarray) adds AT_INFLIGHT_REALLOC, every other call AT_INFLIGHT_CALL, so the sum says
 * both how many calls and how many of them are reallocs (each per-CPU slot alone may wrap). */
#define AT_INFLIGHT_CALL 1ull
#define AT_INFLIGHT_REALLOC ((1ull << 32) | 1ull)

/* A probe's bpf_cookie: the object's number (1 to AT_MAX_OBJECTS; 0: the object has no
 * internal call sites) in the top 16 bits, the probe site's virtual address in the object
 * below. Keys of the internal_calls map: the same number, and the return address of a direct
 * call the object makes to one of its own entry points, relative to the object. */
#define AT_COOKIE_OBJECT_SHIFT 48
#define AT_COOKIE_ADDR_MASK ((1ull << AT_COOKIE_OBJECT_SHIFT) - 1)
#define AT_MAX_OBJECTS 0xff
#define AT_MAX_INTERNAL_CALLS 16384

/* Per object number, the span [lo, hi) of those return addresses: a return address outside
 * it needs no map lookup (the BPF program's internal_ranges, set by the daemon). */
struct at_call_range {
	__u64 lo, hi;
};

#endif
