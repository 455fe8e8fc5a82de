/* fuzz_report.c: alloctap-report's pipeline (report/command.c: the feed, the engine, the
 * sites and their symbolizer, lib/symbolize.c, and each command's writer) over an arbitrary
 * trace.
 *
 * The first two input bytes choose the request, as alloctap-report's command line would (only
 * requests its checks accept), from report/commands.h's table:
 *   byte 0  the command (its value modulo REP_CMD_COUNT: the table's order)
 *   byte 1  bits 0-5: the command's own options, row by row in its definition's order, read
 *           as a number v: each option takes v's low bit (given or not: v /= 2) and, given and
 *           with an argument, one of its kind's samples (v % n, v /= n; below); then the
 *           table's checks are made true: none of the one_of options given, the last of them
 *           is (its first sample); several, the first only; an option one of whose conflicts is
 *           given, whose needs is not, whose sample it does not allow, or whose with
 *           option's value (given or its default) is not of its with_values, is not given.
 *           Samples: SECONDS 0.001; BYTES 4096; COUNT 0 to 3; MOMENT heap-peak, end,
 *           0.5 s, rss-peak (enum rep_moment_kind's order); WEIGHT enum rep_weight's order;
 *           PERIOD 0.001. --follow is never given (it waits for a trace that grows).
 *           bit 6: --pid 1; bit 7: --window 0:1
 * The rest is the trace, given as standard input (diff: as A on standard input and B in a
 * file). The output goes to /dev/null. The run must end with 0 or 1. Objects a stack trace
 * names are looked for where the trace says; debug files only in an empty folder. */
#include <fcntl.h>
#include <sys/stat.h>

#include "display.h"
#include "fuzz_input.h"
#include "report/command.h"
#include "report/span.h"

static char scratch[] = "/tmp/fuzz_report.XXXXXX";
static char trace_b[64], debug_dir[64];

/* The samples of an argument's kind (above), their count in *n. */
static const uint64_t *samples(enum rep_arg arg, size_t *n)
{
	static const uint64_t seconds[] = { 1000000u }, bytes[] = { 4096 },
			      counts[] = { 0, 1, 2, 3 },
			      moments[] = { REP_AT_PEAK, REP_AT_END, REP_AT_TIME, REP_AT_RSS_PEAK },
			      weights[] = { 0, 1, 2, 3, 4, 5, 6, 7 }, flag[] = { 1 };
	static const struct {
		const uint64_t *s;
		size_t n;
	} kinds[] = {
		[REP_ARG_NONE] = { flag, 1 },       [REP_ARG_SECONDS] = { seconds, 1 },
		[REP_ARG_BYTES] = { bytes, 1 },     [REP_ARG_COUNT] = { counts, 4 },
		[REP_ARG_MOMENT] = { moments, 4 }, [REP_ARG_WEIGHT] = { weights, 8 },
		[REP_ARG_PERIOD] = { seconds, 1 },
	};

	*n = kinds[arg].n;
	return kinds[arg].s;
}

/* The row of cmd's option named name, or -1. */
static int row_of(const struct rep_command_def *cmd, const char *name)
{
	for (size_t i = 0; i < cmd->n_options; i++)
		if (strcmp(cmd->options[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* Whether cmd's option named name is on. */
static int is_on(const struct rep_command_def *cmd, const int *on, const char *name)
{
	int row = row_of(cmd, name);

	return row >= 0 && on[row];
}

/* Whether any of cmd's options named in names (separated by a space) is on. */
static int any_on(const struct rep_command_def *cmd, const int *on, const char *names)
{
	char name[64];

	for (const char *p = names; *p; p += strcspn(p, " "), p += *p == ' ') {
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(p, " "), p);
		if (is_on(cmd, on, name))
			return 1;
	}
	return 0;
}

/* Makes the options on (values in value) a request cmd's checks accept (above). */
static void make_valid(const struct rep_command_def *cmd, int *on, uint64_t *value)
{
	size_t n, first = cmd->n_options, last = cmd->n_options;

	for (size_t i = 0; i < cmd->n_options; i++)
		if (cmd->options[i].one_of) {
			if (on[i] && first == cmd->n_options)
				first = i;
			else
				on[i] = 0;
			last = i;
		}
	if (cmd->one_of && first == cmd->n_options) {
		on[last] = 1;
		value[last] = samples(cmd->options[last].arg, &n)[0];
	}
	for (size_t i = 0; i < cmd->n_options; i++) {
		const struct rep_option *o = &cmd->options[i];

		if ((o->conflicts && any_on(cmd, on, o->conflicts)) ||
		    (o->needs && !is_on(cmd, on, o->needs)) ||
		    (o->allowed && !(o->allowed & 1u << value[i])) ||
		    strcmp(o->name, "follow") == 0) /* it waits for a trace that grows */
			on[i] = 0;
		int w = o->with ? row_of(cmd, o->with) : -1;
		if (w >= 0 && !(o->with_values & 1u << (on[w] ? value[w] : cmd->options[w].value)))
			on[i] = 0;
	}
}

/* The request of the two option bytes, its trace A standard input. */
static void request_of(uint8_t c, uint8_t opt, struct rep_request *r)
{
	memset(r, 0, sizeof(*r));
	r->command = (enum rep_command)(c % REP_CMD_COUNT);
	r->trace[0] = "-";
	r->trace[1] = rep_commands[r->command]->traces == 2 ? trace_b : NULL;
	r->output = "/dev/null";
	r->debug_dir = debug_dir;
	if (opt & 64)
		r->heap = (struct rep_heap_options){ .have_pid = 1, .pid = 1 };
	if (opt & 128) {
		r->heap.have_window = 1;
		r->heap.window_to_ns = 1000000000u;
	}

	const struct rep_command_def *cmd = rep_commands[r->command];
	int on[REP_OPTIONS_MAX] = { 0 };
	uint64_t value[REP_OPTIONS_MAX] = { 0 }, v = opt & 63;
	size_t n;

	for (size_t i = 0; i < cmd->n_options; i++) {
		on[i] = (int)(v & 1);
		v /= 2;
		if (!on[i])
			continue;
		const uint64_t *s = samples(cmd->options[i].arg, &n);
		value[i] = s[v % n];
		v /= n;
	}
	make_valid(cmd, on, value);
	for (size_t i = 0; i < cmd->n_options; i++) {
		const struct rep_option *o = &cmd->options[i];

		if (!o->needs || is_on(cmd, on, o->needs))
			rep_option_set(r, i, on[i] ? value[i] : o->value, 500000000u);
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
	/* a time or moment the trace cannot answer (an --at on a trace without times) is refused */
	FUZZ_CHECK(rc == 0 || rc == 1 || rc == REP_EXIT_DAMAGED || rc == REP_EXIT_UNANSWERABLE);
	close(0);
	return 0;
}
