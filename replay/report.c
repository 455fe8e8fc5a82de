/* report.c: the statistics and summary lines, through lib/display (no stdio, no allocation). */
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <unistd.h>

#include "display.h"
#include "procinfo.h"
#include "report.h"
#include "threads.h"

void rp_report_stats(const struct rp_engine *e, uint64_t line, uint64_t own_extra)
{
	rp_report_stats_at(e, "line", line, own_extra);
}

void rp_report_stats_at(const struct rp_engine *e, const char *unit, uint64_t where,
			uint64_t own_extra)
{
	struct at_message m = { .len = 0 };
	struct mallinfo2 mi = mallinfo2();
	uint64_t own = rp_slots_resident(&e->slots) + own_extra;
	int64_t rss = rp_proc_rss();
	uint64_t rss_net = rss < 0 ? 0 : (uint64_t)rss > own ? (uint64_t)rss - own : 0;

	if (at_display_level < 2)
		return;
	at_message_append(&m,
	       "stats %s=%" PRIu64 " ops=%" PRIu64 " objects=%" PRIu64 " slots=%" PRIu64
	       " requested=%" PRIu64 " arena=%zu mmap=%zu in_use=%zu free=%zu rss=%" PRIu64
	       " own=%" PRIu64,
	       unit, where, e->ops, e->live_objects, e->slots.used, e->live_bytes, mi.arena, mi.hblkhd,
	       mi.uordblks, mi.fordblks, rss_net, own);
	if (e->flags & RP_SLOP)
		at_message_append(&m, " slop=%" PRIu64, e->slop_bytes);
	at_message_append(&m, "\n");
	at_message_emit(2, &m);
}

void rp_report_summary(const struct rp_engine *e, const struct rp_run *run)
{
	struct at_message m = { .len = 0 };
	int64_t hwm = rp_proc_peak_rss();

	at_message_append(&m, "allocator: %s %s\n", run->allocator, run->allocator_path);
	at_message_append(&m, "replayed pid: %" PRIu32 "\n", e->pid);
	at_message_append(&m, "lines of other pids: %" PRIu64 "\n", e->other_pid_events);
	at_message_append(&m, "operations: %" PRIu64 "\n", e->ops);
	for (unsigned f = 0; f < AT_FUNC_COUNT; f++)
		at_message_append(&m, "operations %s: %" PRIu64 "\n", at_func_name[f], e->calls[f]);
	at_message_append(&m, "failed allocations: %" PRIu64 "\n", e->failed);
	at_message_append(&m, "overwritten live slots: %" PRIu64 "\n", e->overwritten);
	at_message_append(&m, "wall time ns: %" PRIu64 "\n", run->wall_ns);
	at_message_append(&m, "ns per operation: %.1f\n",
	       e->ops ? (double)run->wall_ns / (double)e->ops : 0.0);
	at_message_append(&m, "peak rss bytes: %" PRId64 "\n", hwm);
	at_message_append(&m, "peak live requested bytes: %" PRIu64 "\n", e->peak_live_bytes);
	at_message_append(&m, "final live requested bytes: %" PRIu64 "\n", e->live_bytes);
	at_message_append(&m, "final live objects: %" PRIu64, e->live_objects);
	if (e->flags & RP_SLOP)
		at_message_append(&m, "\nfinal slop bytes: %" PRIu64, e->slop_bytes);
	at_message_append(&m, "\n");
	at_message_emit(0, &m); /* asked for with --summary: printed whatever the level */
}

void rp_report_threads(const struct rp_threads_run *run)
{
	struct at_message m = { .len = 0 };
	uint64_t waits = 0, wait_ns = 0;

	for (uint32_t t = 0; t < run->nthreads; t++) {
		waits += run->thread[t].waits;
		wait_ns += run->thread[t].wait_ns;
	}
	at_message_append(&m, "threads: %" PRIu32 "\nthread waits: %" PRIu64
			  "\nthread wait time ns: %" PRIu64 "\n", run->nthreads, waits, wait_ns);
	at_message_emit(0, &m);
	for (uint32_t t = 0; t < run->nthreads; t++) {
		const struct rp_thread_figures *f = &run->thread[t];
		m.len = 0;
		at_message_append(&m, "thread %" PRIu32 ": tid=%" PRIu32 " ops=%" PRIu64
				  " waits=%" PRIu64 " wait_ns=%" PRIu64 "\n", t, f->tid, f->ops,
				  f->waits, f->wait_ns);
		at_message_emit(0, &m);
	}
}
