/* report.c: messages, statistics and summary through stack buffers and write(2). */
#include <inttypes.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "display.h"
#include "procinfo.h"
#include "report.h"

#define RP_MSG_MAX 4096

/* Writes all of buf to stderr, ignoring errors (there is nowhere else to report them). */
static void write_stderr(const char *buf, size_t n)
{
	while (n) {
		ssize_t w = write(STDERR_FILENO, buf, n);
		if (w <= 0)
			return;
		buf += w;
		n -= (size_t)w;
	}
}

/* Appends to buf[*len, RP_MSG_MAX - 1), keeping room for a final '\n'. */
static void vappend(char *buf, size_t *len, const char *fmt, va_list ap)
{
	if (*len >= RP_MSG_MAX - 1)
		return;
	int n = vsnprintf(buf + *len, RP_MSG_MAX - 1 - *len, fmt, ap);
	if (n > 0)
		*len += (size_t)n < RP_MSG_MAX - 1 - *len ? (size_t)n : RP_MSG_MAX - 2 - *len;
}

static void append(char *buf, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t *len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vappend(buf, len, fmt, ap);
	va_end(ap);
}

static void finish_line(char *buf, size_t len)
{
	buf[len++] = '\n';
	write_stderr(buf, len);
}

/* Writes "PROGRAM: [FILE:LINE: ]MESSAGE\n" with one write(2) when the display level is at
 * least level; file NULL for no location. No allocation. */
static void vmessage(int level, const char *file, uint64_t line, const char *fmt, va_list ap)
{
	char buf[RP_MSG_MAX];
	size_t len = 0;

	if (at_display_level < level)
		return;
	append(buf, &len, "%s: ", at_program_name);
	if (file)
		append(buf, &len, "%s:%" PRIu64 ": ", file, line);
	vappend(buf, &len, fmt, ap);
	finish_line(buf, len);
}

void rp_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(1, NULL, 0, fmt, ap);
	va_end(ap);
}

void rp_error_at(const char *file, uint64_t line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(1, file, line, fmt, ap);
	va_end(ap);
}

void rp_verbose(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(3, NULL, 0, fmt, ap);
	va_end(ap);
}

void rp_report_stats(const struct rp_engine *e, uint64_t line, uint64_t own_extra)
{
	rp_report_stats_at(e, "line", line, own_extra);
}

void rp_report_stats_at(const struct rp_engine *e, const char *unit, uint64_t where,
			uint64_t own_extra)
{
	char buf[RP_MSG_MAX];
	size_t len = 0;
	struct mallinfo2 mi = mallinfo2();
	uint64_t own = rp_slots_resident(&e->slots) + own_extra;
	int64_t rss = rp_proc_rss();
	uint64_t rss_net = rss < 0 ? 0 : (uint64_t)rss > own ? (uint64_t)rss - own : 0;

	if (at_display_level < 2)
		return;
	append(buf, &len,
	       "stats %s=%" PRIu64 " ops=%" PRIu64 " objects=%" PRIu64 " slots=%" PRIu64
	       " requested=%" PRIu64 " arena=%zu mmap=%zu in_use=%zu free=%zu rss=%" PRIu64
	       " own=%" PRIu64,
	       unit, where, e->ops, e->live_objects, e->slots.used, e->live_bytes, mi.arena, mi.hblkhd,
	       mi.uordblks, mi.fordblks, rss_net, own);
	if (e->flags & RP_SLOP)
		append(buf, &len, " slop=%" PRIu64, e->slop_bytes);
	finish_line(buf, len);
}

void rp_report_summary(const struct rp_engine *e, const struct rp_run *run)
{
	char buf[RP_MSG_MAX];
	size_t len = 0;
	int64_t hwm = rp_proc_peak_rss();

	append(buf, &len, "allocator: %s %s\n", run->allocator, run->allocator_path);
	append(buf, &len, "replayed pid: %" PRIu32 "\n", e->pid);
	append(buf, &len, "lines of other pids: %" PRIu64 "\n", e->other_pid_events);
	append(buf, &len, "operations: %" PRIu64 "\n", e->ops);
	for (unsigned f = 0; f < AT_FUNC_COUNT; f++)
		append(buf, &len, "operations %s: %" PRIu64 "\n", at_func_name[f], e->calls[f]);
	append(buf, &len, "failed allocations: %" PRIu64 "\n", e->failed);
	append(buf, &len, "overwritten live slots: %" PRIu64 "\n", e->overwritten);
	append(buf, &len, "wall time ns: %" PRIu64 "\n", run->wall_ns);
	append(buf, &len, "ns per operation: %.1f\n",
	       e->ops ? (double)run->wall_ns / (double)e->ops : 0.0);
	append(buf, &len, "peak rss bytes: %" PRId64 "\n", hwm);
	append(buf, &len, "peak live requested bytes: %" PRIu64 "\n", e->peak_live_bytes);
	append(buf, &len, "final live requested bytes: %" PRIu64 "\n", e->live_bytes);
	append(buf, &len, "final live objects: %" PRIu64, e->live_objects);
	if (e->flags & RP_SLOP)
		append(buf, &len, "\nfinal slop bytes: %" PRIu64, e->slop_bytes);
	finish_line(buf, len);
}
