/* fuzz_report.c: alloctap-report's pipeline (report/command.c: the feed, the engine, the
 * sites and their symbolizer, lib/symbolize.c, and each command's writer) over an arbitrary
 * trace.
 *
 * The first two input bytes choose the request, as alloctap-report's command line would (only
 * requests its checks accept):
 *   byte 0  the command (its value modulo REP_CMD_COUNT: report/commands.h's table, in order)
 *   byte 1  bit 0: summary --json, peak --dot, export --pprof (else --folded), timeline
 *           --every 0.001 (else --churn 4096), lifetimes and layout --annotate;
 *           bits 1-3: peak --at (heap-peak, rss-peak, end, 0.5 s), export --folded --weight
 *           (in enum rep_weight's order), export --pprof --at end (else heap-peak);
 *           bits 4-5: timeline --top (0 to 3); bit 6: --pid 1; bit 7: --window 0:1
 * The rest is the trace, given as standard input (diff: as A on standard input and B in a
 * file). The output goes to /dev/null. The run must end with 0 or 1. Objects a stack trace
 * names are looked for where the trace says; debug files only in an empty folder. */
#include <fcntl.h>
#include <sys/stat.h>

#include "display.h"
#include "fuzz_input.h"
#include "report/command.h"

static char scratch[] = "/tmp/fuzz_report.XXXXXX";
static char trace_b[64], debug_dir[64];

/* The request of the two option bytes, its trace A standard input. */
static void request_of(uint8_t cmd, uint8_t opt, struct rep_request *r)
{
	memset(r, 0, sizeof(*r));
	r->command = (enum rep_command)(cmd % REP_CMD_COUNT);
	r->trace[0] = "-";
	r->trace[1] = rep_commands[r->command]->traces == 2 ? trace_b : NULL;
	r->output = "/dev/null";
	r->debug_dir = debug_dir;
	r->top = 10;
	r->heap.moment = REP_AT_PEAK;
	if (opt & 64)
		r->heap = (struct rep_heap_options){ .have_pid = 1, .pid = 1 };
	if (opt & 128) {
		r->heap.have_window = 1;
		r->heap.window_to_ns = 1000000000u;
	}
	unsigned low = opt & 1, mid = (opt >> 1) & 7;
	switch (r->command) {
	case REP_CMD_SUMMARY:
		r->json = low;
		break;
	case REP_CMD_PEAK:
		r->dot = low;
		r->heap.moment = (enum rep_moment_kind)(mid % 4);
		r->heap.moment_ns = 500000000u;
		break;
	case REP_CMD_TIMELINE:
		r->every_ns = low ? 1000000u : 0;
		r->churn_bytes = low ? 0 : 4096;
		r->top = (opt >> 4) & 3;
		break;
	case REP_CMD_EXPORT:
		r->pprof = low;
		if (low)
			r->heap.moment = mid & 1 ? REP_AT_END : REP_AT_PEAK;
		else
			r->weight = (enum rep_weight)(mid % 5);
		break;
	case REP_CMD_LIFETIMES:
	case REP_CMD_LAYOUT:
		r->annotate = low;
		break;
	default:
		break;
	}
}

/* Writes data[0..size) to trace_b. */
static void write_trace_b(const uint8_t *data, size_t size)
{
	int fd = open(trace_b, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	FUZZ_CHECK(fd >= 0);
	FUZZ_CHECK(size == 0 || write(fd, data, size) == (ssize_t)size);
	close(fd);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	at_display_level = 0;
	FUZZ_CHECK(mkdtemp(scratch) != NULL);
	snprintf(trace_b, sizeof(trace_b), "%s/b.atz", scratch);
	snprintf(debug_dir, sizeof(debug_dir), "%s/debug", scratch);
	FUZZ_CHECK(mkdir(debug_dir, 0700) == 0);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rep_request r;

	if (size < 2)
		return 0;
	request_of(data[0], data[1], &r);
	int fd = fuzz_memfd(data + 2, size - 2);
	if (fd != 0) { /* fd 0 is free after the last run: the memfd may already be it */
		FUZZ_CHECK(dup2(fd, 0) == 0);
		close(fd);
	}
	if (rep_commands[r.command]->traces == 2)
		write_trace_b(data + 2, size - 2);
	int rc = rep_run(&r);
	FUZZ_CHECK(rc == 0 || rc == 1 || rc == REP_EXIT_DAMAGED);
	close(0);
	return 0;
}
