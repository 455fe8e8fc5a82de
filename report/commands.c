/* commands.c: the definitions of alloctap-report's commands (commands.h): for each, its
 * operands, its options (NAME_options, whose rows the enum before them names: the writer
 * reads each value as r->opt[ROW]), its --help lines, the watcher of its pass and its writer,
 * over the engine (heap.h) and the writers of tables.c, growth.c, top.c, top_csv.c, tree.c,
 * diff.c, export.c, pprof.c, lifetimes.c, layout.c and html.c (--json and --csv: json.h,
 * csv.h). Each write_NAME below is a command's writer, each
 * NAME_start, _event, _rss, _end and _free its watcher's hook, with the contracts of struct
 * rep_command_def; rep_option_set, _row and _value are the options' accessors. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "command.h"
#include "diff.h"
#include "growth.h"
#include "display.h"
#include "heaptrack.h"
#include "html.h"
#include "layout.h"
#include "lifetimes.h"
#include "live.h"
#include "pprof.h"
#include "tables.h"
#include "top.h"
#include "top_csv.h"
#include "tree.h"

#define REP_COMMAND_ROW(id, name) [REP_CMD_##id] = &rep_cmd_##name,
const struct rep_command_def *const rep_commands[REP_CMD_COUNT] = { REP_COMMANDS(REP_COMMAND_ROW) };
#undef REP_COMMAND_ROW

/* A definition's options: the array a and its length. */
#define OPTIONS(a) .options = a, .n_options = sizeof(a) / sizeof(a[0])

void rep_option_set(struct rep_request *r, size_t row, uint64_t value, uint64_t ns)
{
	r->opt[row] = value;
	if (rep_commands[r->command]->options[row].arg != REP_ARG_MOMENT)
		return;
	r->heap.moment = (enum rep_moment_kind)value;
	if (value == REP_AT_TIME)
		r->heap.moment_ns = ns;
}

int rep_option_row(const struct rep_request *r, const char *name)
{
	const struct rep_command_def *cmd = rep_commands[r->command];

	for (size_t i = 0; i < cmd->n_options; i++)
		if (strcmp(cmd->options[i].name, name) == 0)
			return (int)i;
	return -1;
}

uint64_t rep_option_value(const struct rep_request *r, const char *name)
{
	int row = rep_option_row(r, name);

	return row < 0 ? 0 : r->opt[row];
}

const char *rep_command_list(void)
{
	static char list[256];

	if (list[0])
		return list;
	for (size_t i = 0; i < REP_CMD_COUNT; i++) {
		const char *sep = i == 0 ? "" : i + 1 == REP_CMD_COUNT ? " or " : ", ";
		size_t n = strlen(list);
		snprintf(list + n, sizeof(list) - n, "%s%s", sep, rep_commands[i]->name);
	}
	return list;
}

/* ---- summary, leaks, sizes (tables.c) ------------------------------------------------------- */

/* --json and --csv: the machine-readable outputs (json.h, csv.h); a row of each command that
 * takes them. export and html write formats of their own. */
#define JSON_ELSEWHERE "--json goes with summary, peak, leaks, top, sizes, timeline, lifetimes, " \
		       "layout and diff (export and html write formats of their own)"
#define CSV_ELSEWHERE "--csv goes with leaks, top, sizes, timeline and diff (their tables)"
#define JSON_ROW { .name = "json", .elsewhere = JSON_ELSEWHERE }
#define CSV_ROW(command) { .name = "csv", .elsewhere = CSV_ELSEWHERE, .conflicts = "json", \
			   .conflict = command " takes one of --json and --csv" }
/* --bytes: byte figures of the text exact, not in KiB, MiB, ... (units.h; report/command.c
 * sets it); JSON and CSV are exact always. */
#define BYTES_ELSEWHERE "--bytes goes with summary, peak, leaks, top, sizes, timeline, layout, " \
			"diff and html (their byte figures exact; JSON and CSV are exact always)"
#define BYTES_ROW { .name = "bytes", .elsewhere = BYTES_ELSEWHERE }
/* --follow: a binary trace still being written is read until its end mark, its end waited at
 * (report/command.c); every command takes it, top's live view with a meaning of its own. */
#define FOLLOW_ROW { .name = "follow" }

/* The output format the request asks for: --json, --csv, or text. */
static enum rep_format format_of(const struct rep_request *r)
{
	if (rep_option_value(r, "json"))
		return REP_FORMAT_JSON;
	return rep_option_value(r, "csv") ? REP_FORMAT_CSV : REP_FORMAT_TEXT;
}

enum { SUMMARY_JSON, SUMMARY_BYTES, SUMMARY_FOLLOW };
static const struct rep_option summary_options[] = {
	[SUMMARY_JSON] = JSON_ROW,
	[SUMMARY_BYTES] = BYTES_ROW,
	[SUMMARY_FOLLOW] = FOLLOW_ROW,
};

static int write_summary(FILE *f, const struct rep_request *r, struct rep_pass *a,
			 struct rep_pass *b)
{
	(void)b;
	return r->opt[SUMMARY_JSON] ? rep_write_summary_json(f, a->h) : rep_write_summary(f, a->h);
}

const struct rep_command_def rep_cmd_summary = {
	.name = "summary",
	.traces = 1,
	.names_no_frames = 1,
	.usage =
"  summary [--json] [--bytes]\n"
"                      events, duration, calls per function, peak live bytes (the most\n"
"                      bytes asked live at once) and when, peak RSS, final live bytes and\n"
"                      blocks, temporary allocations (freed or reallocated by the very\n"
"                      next event of their thread, as heaptrack documents them), failed\n"
"                      allocations, frees of blocks not live, temporary allocations as\n"
"                      heaptrack_print counts them (a release of a block of the site and\n"
"                      size of the process's last allocation, no release in between,\n"
"                      whichever block it frees); --json: one object (keys events,\n"
"                      duration_ns, calls, peak_live_bytes, peak_live_blocks,\n"
"                      peak_live_time_ns, peak_rss_bytes, final_live_bytes,\n"
"                      final_live_blocks, temporary_allocations, failed_allocations,\n"
"                      unknown_frees, heaptrack_temporary_allocations; then\n"
"                      per_process, a list of the same with pid)\n",
	OPTIONS(summary_options),
	.write = write_summary,
};

/* leaks gathers growth and ages during the pass (growth.h), and writes at its end. */
struct leaks_state {
	struct rep_growth g;
	FILE *out;
	enum rep_format format;
};

enum { LEAKS_JSON, LEAKS_CSV, LEAKS_BYTES, LEAKS_FOLLOW };
static const struct rep_option leaks_options[] = {
	[LEAKS_JSON] = JSON_ROW,
	[LEAKS_CSV] = CSV_ROW("leaks"),
	[LEAKS_BYTES] = BYTES_ROW,
	[LEAKS_FOLLOW] = FOLLOW_ROW,
};

static int leaks_start(void *state, const struct rep_command_start *s)
{
	struct leaks_state *l = state;

	l->out = s->out;
	l->format = format_of(s->r);
	rep_growth_start(&l->g, s->h);
	return 0;
}

static int leaks_end(void *state, struct rep_heap *h)
{
	struct leaks_state *l = state;

	if (rep_growth_end(&l->g, h) < 0)
		return -1;
	if (l->format == REP_FORMAT_JSON)
		return rep_write_leaks_json(l->out, h, &l->g);
	if (l->format == REP_FORMAT_CSV)
		return rep_write_leaks_csv(l->out, h, &l->g);
	return rep_write_leaks_growth(l->out, h, &l->g);
}

static void leaks_free(void *state)
{
	rep_growth_free(&((struct leaks_state *)state)->g);
}

static int write_nothing(FILE *f, const struct rep_request *r, struct rep_pass *a,
			 struct rep_pass *b);

const struct rep_command_def rep_cmd_leaks = {
	.name = "leaks",
	.traces = 1,
	.usage =
"  leaks [--json | --csv] [--bytes]\n"
"                      what is live at the end, per site: bytes, blocks, growth since\n"
"                      T (the latest power of two of the clock at or before half the\n"
"                      trace: its time, or its events without times), the mean age of the\n"
"                      live blocks, and a kind: young (mean age under a tenth of the\n"
"                      trace: in flight, or a cache of recent blocks), growing (over a\n"
"                      quarter of its live bytes came since T: a leak), steady (held);\n"
"                      growing first (most growth first), then steady, then young.\n"
"                      --json: {\"clock\" (ns or events), \"since\" (T), \"end\",\n"
"                      \"processes\": [{\"pid\", \"live_bytes\", \"live_blocks\", \"sites\":\n"
"                      [{\"bytes\", \"blocks\", \"growth\", \"mean_age\", \"kind\", \"stack\"}]}]};\n"
"                      --csv: pid,bytes,blocks,growth,mean_age_ns (or _events),kind,stack\n",
	OPTIONS(leaks_options),
	.state_size = sizeof(struct leaks_state),
	.start = leaks_start,
	.end = leaks_end,
	.free = leaks_free,
	.write = write_nothing,
};

/* --at: peak's moment, top --by live-bytes's, and export --pprof's. */
#define AT_BAD "--at needs heap-peak, rss-peak, end or SECONDS, not: %s"
#define AT_ELSEWHERE "--at goes with peak, top and export --pprof"

/* ---- top (top.c) --------------------------------------------------------------------------- */

enum { TOP_BY, TOP_AT, TOP_LIMIT, TOP_BYTES, TOP_JSON, TOP_CSV, TOP_FOLLOW, TOP_INTERVAL };
#define FOLLOW_TEXT "top --follow writes text snapshots by live bytes: not with --json, --csv, " \
		    "--by or --at"
static const struct rep_option top_options[] = {
	[TOP_BY] = { .name = "by", .arg = REP_ARG_WEIGHT, .value = REP_WEIGHT_LEAK_BYTES,
		     .bad = "--by needs leak-bytes, live-bytes, peak-bytes, alloc-bytes, "
			    "alloc-count, temp-count, heaptrack-temp-count or churn, not: %s",
		     .elsewhere = "--by and --limit go with top" },
	/* the moment of --by live-bytes, the one key it goes with (the others are figures of
	 * the whole trace): the row after --by's, whose value it reads */
	[TOP_AT] = { .name = "at", .arg = REP_ARG_MOMENT, .value = REP_AT_END, .bad = AT_BAD,
		     .elsewhere = AT_ELSEWHERE, .with = "by",
		     .with_values = 1u << REP_WEIGHT_LIVE_BYTES,
		     .conflict = "top --at goes with --by live-bytes (the other keys are figures "
				 "of the whole trace)" },
	[TOP_LIMIT] = { .name = "limit", .arg = REP_ARG_COUNT, .value = 20, .above_zero = 1,
			.bad = "--limit needs a count of sites above 0, not: %s",
			.elsewhere = "--by and --limit go with top" },
	[TOP_BYTES] = BYTES_ROW,
	[TOP_JSON] = JSON_ROW,
	[TOP_CSV] = CSV_ROW("top"),
	/* the live view (live.h): text, by live bytes (--by's default only, so no --at) */
	[TOP_FOLLOW] = { .name = "follow",
			 .conflicts = "json csv", .with = "by",
			 .with_values = 1u << REP_WEIGHT_LEAK_BYTES, .conflict = FOLLOW_TEXT },
	[TOP_INTERVAL] = { .name = "interval", .arg = REP_ARG_PERIOD, .value = 1000000000u,
			   .above_zero = 1, .needs = "follow",
			   .bad = "--interval needs SECONDS above 0, not: %s",
			   .elsewhere = "--interval goes with top --follow" },
};

/* top watches its pass only to follow a growing trace (--follow): the live view. */
struct top_state {
	struct rep_live l;
	int follow;
};

static int top_start(void *state, const struct rep_command_start *s)
{
	struct top_state *t = state;

	t->follow = (int)s->r->opt[TOP_FOLLOW];
	t->l.h = s->h;
	if (!t->follow)
		return 0;
	t->l = (struct rep_live){ .interval_ns = s->r->opt[TOP_INTERVAL],
				  .limit = (size_t)s->r->opt[TOP_LIMIT],
				  .exact = (int)s->r->opt[TOP_BYTES], .trace = s->trace,
				  .h = s->h };
	if (rep_live_start(&t->l, s->h, s->out) < 0) {
		at_error("%s", strerror(errno));
		return -1;
	}
	return 0;
}

static int top_event(void *state, const struct at_event *ev)
{
	struct top_state *t = state;

	return t->follow ? rep_live_event(&t->l, ev) : rep_heap_event(t->l.h, ev);
}

static int top_wait(void *state, int fd)
{
	return rep_live_wait(&((struct top_state *)state)->l, fd);
}

static int top_end(void *state, struct rep_heap *h)
{
	struct top_state *t = state;

	(void)h;
	return t->follow ? rep_live_end(&t->l) : 0;
}

static void top_free(void *state)
{
	struct top_state *t = state;

	if (t->follow)
		rep_live_free(&t->l);
}

static int write_top(FILE *f, const struct rep_request *r, struct rep_pass *a,
		     struct rep_pass *b)
{
	const struct rep_top_options o = { .by = (enum rep_weight)r->opt[TOP_BY],
					   .limit = (size_t)r->opt[TOP_LIMIT],
					   .exact = (int)r->opt[TOP_BYTES],
					   .json = (int)r->opt[TOP_JSON],
					   .at = r->heap.moment,
					   .at_ns = r->heap.moment_ns };

	(void)b;
	if (r->opt[TOP_FOLLOW])
		return 0; /* written as the trace grew, and at its end */
	if (r->opt[TOP_CSV])
		return rep_write_top_csv(f, a->h, &o);
	return rep_write_top(f, a->h, &o);
}

const struct rep_command_def rep_cmd_top = {
	.name = "top",
	.traces = 1,
	.usage =
"  top [--by W] [--at heap-peak|rss-peak|end|SECONDS] [--limit N] [--json | --csv] [--bytes]\n"
"                      the N (20) sites of most W per process, the allocation function\n"
"                      first, then its callers, each at its line where debug information\n"
"                      says (\"malloc < parse (app.c:31) < main (app.c:80)\"), the callers\n"
"                      every listed site shares said once below them; each with its share\n"
"                      of the process's total. W: leak-bytes (live at the end, the\n"
"                      default), live-bytes (live at --at's moment: the end, the default,\n"
"                      the same as leak-bytes; heap-peak, the same as peak-bytes; rss-peak\n"
"                      or SECONDS, as peak takes them; --at goes with live-bytes only),\n"
"                      peak-bytes (live at the heap peak), alloc-bytes, alloc-count,\n"
"                      temp-count (temporary allocations, as heaptrack documents them: see\n"
"                      summary), heaptrack-temp-count (as heaptrack_print counts them: see\n"
"                      summary), churn (bytes of the site's blocks released again within\n"
"                      the trace: freed, released by a realloc or replaced at their\n"
"                      address, whatever their age; temporaries are the blocks released at\n"
"                      once). --json: {\"by\", (live-bytes: \"at\", \"time_ns\"),\n"
"                      \"processes\": [{\"pid\", \"total\", \"sites\": [{\"value\", \"stack\":\n"
"                      [leaf, ..., root]}]}]}, each frame {\"function\", \"file\", \"line\",\n"
"                      \"inlined\", \"kind\"} (the last four when known, or true, or not\n"
"                      native: \"python\"); --csv:\n"
"                      pid,rank,value,process_total,stack (exact values)\n"
"  top --follow [--interval SECONDS] [--limit N] [--bytes]\n"
"                      the live view of a binary trace still being written (a file or\n"
"                      a pipe from alloctapd -o -): every SECONDS (1) of the wall clock,\n"
"                      the sites by live bytes, each with its growth since the snapshot\n"
"                      before and since the first, and its allocations per second over\n"
"                      the interval. On a terminal, redrawn in place; keys: q quits, l\n"
"                      orders by live bytes, g by growth, a by allocations per second.\n"
"                      Else a snapshot per interval, headed \"== at 3.0 s: 1.2 MiB live in\n"
"                      340 blocks\" (trace time). It ends with the final table at the\n"
"                      trace's end (alloctapd done)\n",
	OPTIONS(top_options),
	.state_size = sizeof(struct top_state),
	.start = top_start,
	.event = top_event,
	.wait = top_wait,
	.end = top_end,
	.free = top_free,
	.write = write_top,
};

enum { SIZES_JSON, SIZES_CSV, SIZES_BYTES, SIZES_FOLLOW };
static const struct rep_option sizes_options[] = {
	[SIZES_JSON] = JSON_ROW,
	[SIZES_CSV] = CSV_ROW("sizes"),
	[SIZES_BYTES] = BYTES_ROW,
	[SIZES_FOLLOW] = FOLLOW_ROW,
};

static int write_sizes(FILE *f, const struct rep_request *r, struct rep_pass *a,
			 struct rep_pass *b)
{
	(void)b;
	if (r->opt[SIZES_JSON])
		return rep_write_sizes_json(f, a->h);
	return r->opt[SIZES_CSV] ? rep_write_sizes_csv(f, a->h) : rep_write_sizes(f, a->h);
}

const struct rep_command_def rep_cmd_sizes = {
	.name = "sizes",
	.traces = 1,
	.heap_sizes = 1,
	.usage =
"  sizes [--json | --csv] [--bytes]\n"
"                      calls and bytes per log2 size bucket, and the site of most bytes;\n"
"                      --json: {\"buckets\": [{\"min\", \"max\", \"calls\", \"bytes\",\n"
"                      \"top_site\": {\"pid\", \"stack\"}}]}; --csv: min,max,calls,bytes,\n"
"                      top_site_pid,top_site_stack\n",
	OPTIONS(sizes_options),
	.write = write_sizes,
};

/* ---- peak (tree.c) ------------------------------------------------------------------------ */


enum { PEAK_DOT, PEAK_AT, PEAK_MIN_PERCENT, PEAK_JSON, PEAK_DEPTH, PEAK_BOTTOM_UP, PEAK_BYTES,
       PEAK_FOLLOW };
static const struct rep_option peak_options[] = {
	[PEAK_DOT] = { .name = "dot", .elsewhere = "--dot goes with peak" },
	[PEAK_AT] = { .name = "at", .arg = REP_ARG_MOMENT, .value = REP_AT_PEAK, .bad = AT_BAD,
		      .elsewhere = AT_ELSEWHERE },
	[PEAK_MIN_PERCENT] = { .name = "min-percent", .arg = REP_ARG_COUNT, .value = 1,
			       .bad = "--min-percent needs a whole percent from 0 to 100, not: %s",
			       .elsewhere = "--min-percent goes with peak" },
	[PEAK_JSON] = { .name = "json", .elsewhere = JSON_ELSEWHERE, .conflicts = "dot",
			.conflict = "peak takes one of --json and --dot" },
	[PEAK_DEPTH] = { .name = "depth", .arg = REP_ARG_COUNT, .value = 0,
			 .bad = "--depth needs a count of levels (0: all), not: %s",
			 .elsewhere = "--depth and --bottom-up go with peak" },
	[PEAK_BOTTOM_UP] = { .name = "bottom-up",
			     .elsewhere = "--depth and --bottom-up go with peak" },
	[PEAK_BYTES] = BYTES_ROW,
	[PEAK_FOLLOW] = FOLLOW_ROW,
};

/* The moment of the tree, in its title: "heap peak", "RSS peak", "end" or "S.UUUUUU s". */
static int write_peak(FILE *f, const struct rep_request *r, struct rep_pass *a,
			 struct rep_pass *b)
{
	char what[48];
	const struct rep_tree_options o = {
		.min_percent = (unsigned)(r->opt[PEAK_MIN_PERCENT] > 100 ? 100
									 : r->opt[PEAK_MIN_PERCENT]),
		.depth = (unsigned)(r->opt[PEAK_DEPTH] > UINT_MAX ? UINT_MAX : r->opt[PEAK_DEPTH]),
		.bottom_up = (int)r->opt[PEAK_BOTTOM_UP],
	};

	(void)b;
	if (r->opt[PEAK_JSON])
		return rep_write_tree_json(f, a->h, r->heap.moment, r->heap.moment_ns, &o);
	if (r->heap.moment == REP_AT_TIME)
		snprintf(what, sizeof(what), "%" PRIu64 ".%06" PRIu64 " s",
			 r->heap.moment_ns / 1000000000u, r->heap.moment_ns % 1000000000u / 1000u);
	else
		snprintf(what, sizeof(what), "%s", r->heap.moment == REP_AT_PEAK     ? "heap peak"
						   : r->heap.moment == REP_AT_RSS_PEAK ? "RSS peak"
										       : "end");
	return r->opt[PEAK_DOT] ? rep_write_dot(f, a->h, r->heap.moment, what, &o)
		      : rep_write_tree(f, a->h, r->heap.moment, what, &o);
}

const struct rep_command_def rep_cmd_peak = {
	.name = "peak",
	.traces = 1,
	.usage =
"  peak [--at heap-peak|rss-peak|end|SECONDS] [--min-percent P] [--depth D] [--bottom-up]\n"
"       [--dot [-o FILE] | --json] [--bytes]\n"
"                      the top-down call tree of the bytes live at the heap peak (the\n"
"                      default), when the RSS was at its most (RSS records: binary\n"
"                      traces), at the end, or SECONDS after the first event (a trace\n"
"                      with times): bytes, percent and blocks per frame (a function, with\n"
"                      its line while it has one), the frames under P% (1) of the\n"
"                      process's bytes left out, and said; --depth: D levels (0, the\n"
"                      default: all), deeper frames left out, and said; --bottom-up: each\n"
"                      allocation function first, then its callers; --dot: a\n"
"                      Graphviz graph (frames under 1% left out); with -o FILE, rendered\n"
"                      by Graphviz's dot in the format FILE's extension names (png, svg,\n"
"                      pdf, any that dot -T? lists; .dot, .gv or none: the graph's text);\n"
"                      an extension dot does not list, or no dot, is a usage error;\n"
"                      --json: {\"at\", \"time_ns\", \"min_percent\", \"depth\", \"bottom_up\",\n"
"                      \"processes\": [{\"pid\", \"bytes\", \"blocks\", \"callees\" (bottom-up:\n"
"                      \"callers\"): [F], \"left_out\": {\"frames\", \"bytes\", \"deeper\"}}]},\n"
"                      F {\"function\", \"file\", \"line\", \"kind\" (not native: \"python\"),\n"
"                      \"bytes\", \"blocks\", \"callees\": [F]}\n",
	OPTIONS(peak_options),
	.write = write_peak,
};

/* ---- timeline (tables.c) ---------------------------------------------------------------- */

#define TIMELINE_ELSEWHERE "--every, --churn and --top go with timeline"

enum { TIMELINE_EVERY, TIMELINE_CHURN, TIMELINE_TOP, TIMELINE_JSON, TIMELINE_CSV,
       TIMELINE_BYTES, TIMELINE_FOLLOW };
static const struct rep_option timeline_options[] = {
	[TIMELINE_EVERY] = { .name = "every", .arg = REP_ARG_SECONDS, .above_zero = 1,
			     .bad = "--every needs SECONDS above 0, not: %s",
			     .elsewhere = TIMELINE_ELSEWHERE, .one_of = 1 },
	[TIMELINE_CHURN] = { .name = "churn", .arg = REP_ARG_BYTES, .above_zero = 1,
			     .bad = "--churn needs BYTES above 0, not: %s",
			     .elsewhere = TIMELINE_ELSEWHERE, .one_of = 1 },
	[TIMELINE_TOP] = { .name = "top", .arg = REP_ARG_COUNT, .value = 10,
			   .bad = "--top needs a count, not: %s", .elsewhere = TIMELINE_ELSEWHERE },
	[TIMELINE_JSON] = JSON_ROW,
	[TIMELINE_CSV] = CSV_ROW("timeline"),
	[TIMELINE_BYTES] = BYTES_ROW,
	[TIMELINE_FOLLOW] = FOLLOW_ROW,
};

static int timeline_start(void *state, const struct rep_command_start *s)
{
	struct rep_timeline *t = state;

	*t = (struct rep_timeline){ .out = s->out, .every_ns = s->r->opt[TIMELINE_EVERY],
				    .churn_bytes = s->r->opt[TIMELINE_CHURN],
				    .top = (size_t)s->r->opt[TIMELINE_TOP],
				    .format = format_of(s->r),
				    .flush = (int)s->r->opt[TIMELINE_FOLLOW] };
	if (rep_timeline_start(t, s->h) < 0) {
		at_error("a file for the series: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int timeline_end(void *state, struct rep_heap *h)
{
	return rep_timeline_end(state, h);
}

static void timeline_free(void *state)
{
	struct rep_timeline *t = state;

	if (t->series)
		fclose(t->series);
}

/* Written as the pass went, and by its end. */
static int write_nothing(FILE *f, const struct rep_request *r, struct rep_pass *a,
			 struct rep_pass *b)
{
	(void)f;
	(void)r;
	(void)a;
	(void)b;
	return 0;
}

const struct rep_command_def rep_cmd_timeline = {
	.name = "timeline",
	.traces = 1,
	.usage =
"  timeline --every SECONDS | --churn BYTES [--top N] [--json | --csv] [--bytes]\n"
"                      snapshots (every SECONDS of trace time, one for a run of periods\n"
"                      without events; or each time the live bytes\n"
"                      moved by BYTES): live bytes and RSS, then the N (10) sites holding\n"
"                      most, with their allocations and frees since the last snapshot and\n"
"                      in all; then the series of live bytes and RSS. --json:\n"
"                      {\"every_ns\", \"churn_bytes\", \"snapshots\": [{\"snapshot\",\n"
"                      \"time_ns\", \"events\", \"live_bytes\", \"live_blocks\", \"rss_bytes\",\n"
"                      \"sites\": [{\"pid\", \"live_bytes\", \"live_blocks\", \"allocs\", \"frees\",\n"
"                      \"allocs_all\", \"frees_all\", \"stack\"}]}]}; --csv: a record per\n"
"                      site of each snapshot, the snapshot's fields first\n",
	OPTIONS(timeline_options),
	.one_of = "timeline needs one of --every SECONDS and --churn BYTES",
	.state_size = sizeof(struct rep_timeline),
	.start = timeline_start,
	.end = timeline_end,
	.free = timeline_free,
	.write = write_nothing,
};

/* ---- lifetimes (lifetimes.c) ------------------------------------------------------------ */

/* --annotate: lifetimes', and layout's. */
#define ANNOTATE_ELSEWHERE "--annotate goes with lifetimes and layout"

enum { LIFETIMES_ANNOTATE, LIFETIMES_HIST, LIFETIMES_JSON, LIFETIMES_FOLLOW };
static const struct rep_option lifetimes_options[] = {
	[LIFETIMES_ANNOTATE] = { .name = "annotate", .elsewhere = ANNOTATE_ELSEWHERE },
	[LIFETIMES_HIST] = { .name = "hist", .elsewhere = "--hist goes with lifetimes",
			     .conflicts = "annotate",
			     .conflict = "lifetimes takes one of --annotate and --hist" },
	[LIFETIMES_JSON] = { .name = "json", .elsewhere = JSON_ELSEWHERE, .conflicts = "annotate",
			     .conflict = "lifetimes takes one of --annotate and --json" },
	[LIFETIMES_FOLLOW] = FOLLOW_ROW,
};

static int lifetimes_start(void *state, const struct rep_command_start *s)
{
	rep_lifetimes_start(state, s->h, s->out, (int)s->r->opt[LIFETIMES_ANNOTATE], s->munged);
	((struct rep_lifetimes *)state)->json = (int)s->r->opt[LIFETIMES_JSON];
	return 0;
}

static int lifetimes_event(void *state, const struct at_event *ev)
{
	return rep_lifetimes_event(state, ev);
}

static int lifetimes_end(void *state, struct rep_heap *h)
{
	(void)h;
	return rep_lifetimes_end(state);
}

const struct rep_command_def rep_cmd_lifetimes = {
	.name = "lifetimes",
	.traces = 1,
	.usage =
"  lifetimes [--annotate | --hist] [--json]\n"
"                      --annotate: the trace, each free and realloc followed by \"# S bytes,\n"
"                      allocated N lines ago\" (and the lifetime in ns), at column 50, as\n"
"                      Compact Memory Traces' lifetimes.py writes; --hist (the default):\n"
"                      lifetimes in events and ns (log2) against size (log2); --json:\n"
"                      {\"blocks_freed\", \"still_live\", \"temporary\", \"by_events\": [C],\n"
"                      \"timed\", \"by_ns\": [C]}, C {\"lifetime_min\", \"lifetime_max\",\n"
"                      \"size_min\", \"size_max\", \"blocks\"}, each cell that counted\n",
	OPTIONS(lifetimes_options),
	.state_size = sizeof(struct rep_lifetimes),
	.start = lifetimes_start,
	.event = lifetimes_event,
	.end = lifetimes_end,
	.write = write_nothing,
};

/* ---- layout (layout.c) ------------------------------------------------------------------ */

enum { LAYOUT_ANNOTATE, LAYOUT_JSON, LAYOUT_BYTES, LAYOUT_FOLLOW };
static const struct rep_option layout_options[] = {
	[LAYOUT_ANNOTATE] = { .name = "annotate", .elsewhere = ANNOTATE_ELSEWHERE },
	[LAYOUT_JSON] = { .name = "json", .elsewhere = JSON_ELSEWHERE, .conflicts = "annotate",
			  .conflict = "layout takes one of --annotate and --json" },
	[LAYOUT_BYTES] = BYTES_ROW,
	[LAYOUT_FOLLOW] = FOLLOW_ROW,
};

static int layout_start(void *state, const struct rep_command_start *s)
{
	rep_layout_start(state, s->h, s->out, (int)s->r->opt[LAYOUT_ANNOTATE], s->munged);
	((struct rep_layout *)state)->json = (int)s->r->opt[LAYOUT_JSON];
	return 0;
}

static int layout_event(void *state, const struct at_event *ev)
{
	return rep_layout_event(state, ev);
}

static int layout_end(void *state, struct rep_heap *h)
{
	(void)h;
	return rep_layout_end(state);
}

static void layout_free(void *state)
{
	rep_layout_free(state);
}

const struct rep_command_def rep_cmd_layout = {
	.name = "layout",
	.traces = 1,
	.usage =
"  layout [--annotate | --json] [--bytes]\n"
"                      --annotate: the trace with overhead.py's notes (the nearest live\n"
"                      blocks below and above and the gaps to them, the block's pages, the\n"
"                      pages that came into use or went out of it); without: the gaps and\n"
"                      the pages in use; --json: {\"blocks_placed\", \"gap_below\",\n"
"                      \"gap_above\" (each {\"none\", \"overlap\", \"buckets\": [{\"min\", \"max\",\n"
"                      \"blocks\"}]}), \"page_bytes\", \"pages_end\", \"live_bytes_end\",\n"
"                      \"pages_max\", \"pages_max_after_event\", \"live_bytes_at_pages_max\"}\n",
	OPTIONS(layout_options),
	.state_size = sizeof(struct rep_layout),
	.start = layout_start,
	.event = layout_event,
	.end = layout_end,
	.free = layout_free,
	.write = write_nothing,
};

/* ---- diff (diff.c) ---------------------------------------------------------------------- */

enum { DIFF_JSON, DIFF_CSV, DIFF_BYTES, DIFF_FOLLOW };
static const struct rep_option diff_options[] = {
	[DIFF_JSON] = JSON_ROW,
	[DIFF_CSV] = CSV_ROW("diff"),
	[DIFF_BYTES] = BYTES_ROW,
	[DIFF_FOLLOW] = FOLLOW_ROW,
};

static int write_diff(FILE *f, const struct rep_request *r, struct rep_pass *a,
			 struct rep_pass *b)
{
	return rep_write_diff(f, a->h, &a->x, b->h, &b->x, format_of(r));
}

const struct rep_command_def rep_cmd_diff = {
	.name = "diff",
	.traces = 2,
	.usage =
"  diff [--json | --csv] [--bytes] TRACE_A TRACE_B\n"
"                      per site, allocations, bytes live at the peak and at the end in both,\n"
"                      and the changes, the largest change of peak bytes first; --json:\n"
"                      {\"sites\": [{\"allocs_a\", \"allocs_b\", \"allocs_change\", \"peak_a\",\n"
"                      ..., \"leak_change\", \"stack\"}]}; --csv: the same fields\n",
	OPTIONS(diff_options),
	.write = write_diff,
};

/* ---- export (export.c, pprof.c, heaptrack.c) ------------------------------------------- */

/* export with a weight of the whole pass, or a selection: each site's figure onto its line. */
#define EXPORT_ELSEWHERE "--folded, --pprof, --heaptrack and --weight go with export"

enum { EXPORT_PPROF, EXPORT_FOLDED, EXPORT_WEIGHT, EXPORT_AT, EXPORT_HEAPTRACK, EXPORT_FOLLOW };
static const struct rep_option export_options[] = {
	[EXPORT_PPROF] = { .name = "pprof", .elsewhere = EXPORT_ELSEWHERE, .one_of = 1 },
	[EXPORT_FOLDED] = { .name = "folded", .elsewhere = EXPORT_ELSEWHERE, .one_of = 1 },
	[EXPORT_WEIGHT] = { .name = "weight", .arg = REP_ARG_WEIGHT, .value = REP_WEIGHT_ALLOC_COUNT,
			    .bad = "--weight needs alloc-count, alloc-bytes, peak-bytes, "
				   "leak-bytes, temp-count, heaptrack-temp-count or churn, not: %s",
			    /* live-bytes is the last weight: top's, with its moment */
			    .allowed = (1u << REP_WEIGHT_LIVE_BYTES) - 1,
			    .refused = "export --folded --weight takes alloc-count, alloc-bytes, "
				       "peak-bytes, leak-bytes, temp-count, heaptrack-temp-count or "
				       "churn; live-bytes goes with top",
			    .elsewhere = EXPORT_ELSEWHERE, .conflicts = "pprof",
			    .conflict = "--weight goes with --folded: a pprof profile holds "
					"every weight" },
	/* in use at the end, unless --at heap-peak */
	[EXPORT_AT] = { .name = "at", .arg = REP_ARG_MOMENT, .value = REP_AT_END, .bad = AT_BAD,
			.elsewhere = AT_ELSEWHERE, .needs = "pprof",
			.allowed = 1u << REP_AT_PEAK | 1u << REP_AT_END,
			.refused = "export --pprof takes --at heap-peak or end" },
	[EXPORT_HEAPTRACK] = { .name = "heaptrack", .elsewhere = EXPORT_ELSEWHERE, .one_of = 1,
			       .conflicts = "weight",
			       .conflict = "--weight goes with --folded: a heaptrack file holds "
					   "every allocation" },
	[EXPORT_FOLLOW] = FOLLOW_ROW,
};

/* export --heaptrack writes as the events come (heaptrack.h); the other formats at the end,
 * the events going to the engine alone. */
struct export_state {
	struct rep_heaptrack file;
	struct rep_heap *h;
	int heaptrack;
};

static int export_start(void *state, const struct rep_command_start *s)
{
	struct export_state *e = state;
	const struct rep_request *r = s->r;
	const char *o = r->output;
	size_t n = o ? strlen(o) : 0;

	e->h = s->h;
	e->heaptrack = (int)r->opt[EXPORT_HEAPTRACK];
	if (!e->heaptrack)
		return 0;
	if (rep_heaptrack_start(&e->file, s->out, n > 3 && strcmp(o + n - 3, ".gz") == 0, s->h,
				rep_heap_namer(s->h), s->trace, r->heap.have_pid, r->heap.pid) < 0) {
		at_error("%s", strerror(errno));
		return -1;
	}
	return 0;
}

static int export_event(void *state, const struct at_event *ev)
{
	struct export_state *e = state;

	return e->heaptrack ? rep_heaptrack_event(&e->file, ev) : rep_heap_event(e->h, ev);
}

static void export_rss(void *state, struct rep_heap *h, const struct at_rss *m)
{
	struct export_state *e = state;

	(void)h;
	if (e->heaptrack)
		rep_heaptrack_rss(&e->file, m);
}

static int export_end(void *state, struct rep_heap *h)
{
	struct export_state *e = state;

	(void)h;
	return e->heaptrack ? rep_heaptrack_end(&e->file) : 0;
}

static void export_free(void *state)
{
	struct export_state *e = state;

	rep_heaptrack_free(&e->file);
}

static void weigh_sites(struct rep_pass *p, enum rep_weight w)
{
	const struct rep_site *sites;
	size_t n = rep_heap_sites(p->h, &sites);

	for (size_t i = 0; i < n; i++)
		rep_folded_add(p->x.folded, sites[i].entry, rep_site_weight(&sites[i], w));
}

static int write_export(FILE *f, const struct rep_request *r, struct rep_pass *a,
			 struct rep_pass *b)
{
	(void)b;
	if (r->opt[EXPORT_HEAPTRACK])
		return 0; /* written by the pass */
	if (r->opt[EXPORT_PPROF])
		return rep_write_pprof(f, a->h, &a->x, r->heap.moment);
	if (a->h)
		weigh_sites(a, (enum rep_weight)r->opt[EXPORT_WEIGHT]);
	return rep_export_write(&a->x, f);
}

const struct rep_command_def rep_cmd_export = {
	.name = "export",
	.traces = 1,
	.usage =
"  export --folded [--weight W]\n"
"                      one line per distinct stack, frames root first separated by ';',\n"
"                      then a space and its weight (flamegraph.pl, inferno, speedscope and\n"
"                      Pyroscope read it); lines sorted by stack text, lines of weight 0\n"
"                      left out. W: alloc-count (default), alloc-bytes, peak-bytes (live at\n"
"                      the heap peak), leak-bytes (live at the end), temp-count,\n"
"                      heaptrack-temp-count (heaptrack_print's rule, see summary), churn\n"
"                      (bytes released again: see top)\n"
"  export --pprof [--at heap-peak|end] [-o FILE]\n"
"                      a gzip'd pprof profile (go tool pprof, Pyroscope, Parca): Go's heap\n"
"                      sample types alloc_objects, alloc_space, inuse_objects, inuse_space\n"
"                      (in use at the end, or at the heap peak), a pid label per sample\n"
"  export --heaptrack [-o FILE]\n"
"                      heaptrack's data file (heaptrack_print, heaptrack_gui): one process\n"
"                      (--pid PID when the trace has several), its allocations and frees in\n"
"                      order, its stacks with inlined frames, times, RSS; plain text, or\n"
"                      gzip'd when FILE ends in .gz\n",
	OPTIONS(export_options),
	.one_of = "export needs one output format: --folded, --pprof or --heaptrack",
	.state_size = sizeof(struct export_state),
	.start = export_start,
	.event = export_event,
	.rss = export_rss,
	.end = export_end,
	.free = export_free,
	.write = write_export,
};

/* ---- html (html.c) ---------------------------------------------------------------------- */

enum { HTML_BYTES, HTML_FOLLOW };
static const struct rep_option html_options[] = {
	[HTML_BYTES] = BYTES_ROW,
	[HTML_FOLLOW] = FOLLOW_ROW,
};

/* The page's state and where it is written. */
struct html_state {
	struct rep_html page;
	FILE *out;
};

static int html_start(void *state, const struct rep_command_start *s)
{
	struct html_state *w = state;

	w->out = s->out;
	rep_html_start(&w->page, s->h, s->trace);
	return 0;
}

static void html_rss(void *state, struct rep_heap *h, const struct at_rss *m)
{
	struct html_state *w = state;

	rep_html_rss(&w->page, h, m);
}

static int html_end(void *state, struct rep_heap *h)
{
	struct html_state *w = state;

	return rep_write_html(w->out, &w->page, h);
}

static void html_free(void *state)
{
	rep_html_free(&((struct html_state *)state)->page);
}

const struct rep_command_def rep_cmd_html = {
	.name = "html",
	.traces = 1,
	.output_is = "the page",
	OPTIONS(html_options),
	.usage =
"  html -o FILE [--bytes]\n"
"                      one self-contained page: live bytes and RSS over time (click a\n"
"                      moment, drag a window); for it flame graphs of what is live, of\n"
"                      allocations, temporaries and leaks (zoom, search, tooltips); a\n"
"                      sortable table of sites, bottom-up or top-down; the top sites\n",
	.state_size = sizeof(struct html_state),
	.start = html_start,
	.rss = html_rss,
	.end = html_end,
	.free = html_free,
	.write = write_nothing,
};
