/* command.c: a request run from the trace to the output (command.h), the command's watcher
 * and writer taken from commands.h's table. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "command.h"
#include "display.h"
#include "export.h"
#include "feed.h"
#include "hints.h"
#include "json.h"
#include "output.h"
#include "render.h"
#include "units.h"

extern char **environ;

const char *rep_command_name(enum rep_command c)
{
	return rep_commands[c]->name;
}

int rep_command_parse(const char *name, enum rep_command *c)
{
	for (size_t i = 0; i < REP_CMD_COUNT; i++)
		if (strcmp(name, rep_commands[i]->name) == 0) {
			*c = (enum rep_command)i;
			return 0;
		}
	return -1;
}

/* ---- the output ------------------------------------------------------------------------ */

/* Where the command writes: standard output, a file, or the standard input of Graphviz's dot,
 * which renders into the file. */
struct out {
	FILE *f;
	const char *name;
	pid_t dot;  /* > 0: the dot process rendering into name */
};

/* Starts `dot -Tformat -o path` reading a pipe that o->f writes. 0, or -1 reported. */
static int open_dot(struct out *o, const char *path, const char *format)
{
	char type[REP_RENDER_FORMAT_MAX + 2];
	char *argv[] = { "dot", type, "-o", (char *)path, NULL };
	posix_spawn_file_actions_t fa;
	int p[2], err;

	snprintf(type, sizeof(type), "-T%s", format);
	if (pipe2(p, O_CLOEXEC) < 0) {
		at_error("%s: %s", path, strerror(errno));
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[0], STDIN_FILENO);
	err = posix_spawnp(&o->dot, "dot", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[0]);
	if (err) {
		close(p[1]);
		if (err == ENOENT)
			at_error("%s: cannot render it: Graphviz's dot is not installed (apt-get "
				 "install graphviz); -o FILE.dot writes the graph itself", path);
		else
			at_error("%s: cannot run dot: %s", path, strerror(err));
		return -1;
	}
	o->f = fdopen(p[1], "w");
	if (!o->f) {
		close(p[1]);
		return -1;
	}
	return 0;
}

/* Opens r's output: a file by lib/output.h's plain rule (never blocking on a FIFO, emptied
 * only when it is a regular file), or dot rendering into it in format (NULL: none). 0, or -1
 * reported. */
static int open_out(struct out *o, const struct rep_request *r, const char *format)
{
	struct at_output file;

	o->dot = 0;
	o->name = r->output && strcmp(r->output, "-") != 0 ? r->output : "<stdout>";
	if (!r->output || strcmp(r->output, "-") == 0) {
		o->f = stdout;
		return 0;
	}
	if (format)
		return open_dot(o, r->output, format);
	if (at_output_open(&file, r->output) < 0) {
		at_error("cannot open %s: %s", r->output, file.why);
		return -1;
	}
	int fd = dup(file.fd);
	at_output_close(&file);
	o->f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!o->f) {
		at_error("%s: %s", r->output, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return 0;
}

/* With --dot and -o FILE: the format dot renders FILE in, into format (NULL when the DOT text
 * is written as it is). 0, or AT_EXIT_USAGE after saying why FILE cannot be rendered. */
static int dot_format(const struct rep_request *r, char *format, const char **render)
{
	*render = NULL;
	if (!rep_option_value(r, "dot") || !r->output || strcmp(r->output, "-") == 0)
		return 0;
	switch (rep_render_of(r->output, format)) {
	case REP_RENDER_TEXT:
		return 0;
	case REP_RENDER_DOT:
		*render = format;
		return 0;
	case REP_RENDER_UNKNOWN:
		at_error("%s: not a format Graphviz's dot renders (by its extension; dot -T? lists "
			 "them); -o FILE.dot writes the graph itself", r->output);
		return AT_EXIT_USAGE;
	case REP_RENDER_NO_DOT:
		break;
	}
	if (errno == ENOENT)
		at_error("%s: cannot render it: Graphviz's dot is not installed (apt-get install "
			 "graphviz); -o FILE.dot writes the graph itself", r->output);
	else
		at_error("%s: cannot run dot: %s", r->output, strerror(errno));
	return AT_EXIT_USAGE;
}

/* A write to o failed with err: said by at_write_error, but for dot's pipe closed by dot,
 * whose failure close_out says. */
static void write_failed(const struct out *o, int err)
{
	if (!(o->dot > 0 && err == EPIPE))
		at_write_error(o->name, err);
}

/* Closes the output (waiting for dot). 0, or -1 reported. */
static int close_out(struct out *o)
{
	int rc = 0, status;

	if (o->f != stdout && fclose(o->f) != 0) {
		write_failed(o, errno);
		rc = -1;
	}
	if (o->dot > 0) {
		while (waitpid(o->dot, &status, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			at_error("%s: Graphviz's dot failed (status %d)", o->name,
				 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
			rc = -1;
		}
	}
	return rc;
}

/* ---- reading a trace --------------------------------------------------------------------- */

/* An object the trace names that cannot be used: said once, at the warning level. */
static void on_problem(void *arg, const char *path, const char *why)
{
	const char *slash = strrchr(path, '/');

	(void)arg;
	at_warn("%s: %s; its frames are shown as %s+0xOFFSET", path, why, slash ? slash + 1 : path);
}

static int heap_event(void *arg, const struct at_event *ev)
{
	return rep_heap_event(arg, ev);
}

/* An RSS record: to the engine, then the command's watcher; a failure (ENOMEM) is kept for
 * the end of the pass. */
struct rss_feed {
	struct rep_heap *h;
	const struct rep_command_def *cmd; /* NULL: no watcher */
	void *state;
	int failed;
};

static void heap_rss(void *arg, const struct at_rss *m)
{
	struct rss_feed *f = arg;

	if (!f->failed && rep_heap_rss(f->h, m) < 0)
		f->failed = errno;
	else if (f->cmd && f->cmd->rss)
		f->cmd->rss(f->state, f->h, m);
}

/* What watches the first trace's pass, besides the engine: the command's own watcher. */
struct watchers {
	FILE *out;     /* the output, or spool */
	FILE *spool;   /* NULL, or where the watcher writes until the trace answers r's times */
	const struct rep_command_def *cmd;
	void *state;   /* cmd->state_size bytes */
	int started;
};

/* Creates p's engine (heap) and starts the watchers of w (NULL: none) before trace is opened.
 * 0, or -1 reported. */
static int start_pass(struct rep_pass *p, const struct rep_request *r, const char *trace, int heap,
		      struct watchers *w, struct at_source *src)
{
	enum rep_weight weight = (enum rep_weight)rep_option_value(r, "weight");

	if (rep_sites_init(&p->x, weight, r->debug_dir, on_problem, NULL) < 0) {
		at_error("%s", strerror(errno));
		return -1;
	}
	p->x_ready = 1;
	if (!heap)
		return 0;
	struct rep_heap_options o = r->heap;
	o.sizes = rep_commands[r->command]->heap_sizes;
	p->h = rep_heap_new(&p->x, &o);
	if (!p->h) {
		at_error("%s", strerror(errno));
		return -1;
	}
	if (!w || !w->cmd->start)
		return 0;
	struct rep_command_start ws = { .r = r, .h = p->h, .out = w->out, .trace = trace,
				      .munged = &src->munged };
	if (w->cmd->start(w->state, &ws) < 0)
		return -1;
	w->started = 1;
	return 0;
}

/* The wait of a command that only reads a followed trace to its end (no watcher of its own):
 * until input may be there, a tenth of a second at most (a regular file is always readable,
 * fd -1 a file not created yet: each is looked at again then). Always 0. */
static int idle_wait(void *arg, int fd)
{
	struct stat st;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	(void)arg;
	if (fd < 0 || (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)))
		p.fd = -1;
	poll(&p, 1, 100);
	return 0;
}

/* Opens trace into src, following it as it grows when r asks --follow: through the watcher's
 * wait when w watches the pass and has one (top's live view), else idle_wait. A file not
 * there yet is waited for (the wait's fd -1) as it is created. 0, or -1 reported. */
static int open_trace(struct at_source *src, const struct rep_request *r, const char *trace,
		      struct watchers *w, int *fd)
{
	const char *name;
	at_atz_wait_fn wait = idle_wait;
	void *arg = NULL;

	if (!rep_option_value(r, "follow"))
		return rep_open_input(src, trace, fd);
	if (w && w->started && w->cmd->wait) {
		wait = w->cmd->wait;
		arg = w->state;
	}
	while ((*fd = at_input_fd(trace, &name)) < 0 && errno == ENOENT)
		wait(arg, -1);
	if (*fd < 0) {
		at_error("%s: %s", trace ? trace : "<stdin>", strerror(errno));
		return -1;
	}
	if (at_source_open_follow(src, *fd, name, wait, arg) == 0)
		return 0;
	if (errno == ENOTSUP)
		at_error("%s: --follow reads a binary trace (alloctapd -f binary), not a text log",
			 name);
	else
		at_error_at(name, 1, "read error: %s", strerror(errno));
	return -1;
}

/* What the trace read into h holds of times (span.h), src its source. */
static enum rep_times trace_times(const struct at_source *src, const struct rep_heap *h)
{
	if (rep_heap_has_times(h))
		return REP_TIMES_PRESENT;
	if (!rep_heap_events_read(h))
		return REP_TIMES_NONE_EMPTY;
	return src->kind == AT_SOURCE_TEXT ? REP_TIMES_NONE_TEXT : REP_TIMES_NONE_BINARY;
}

/* Whether the trace read into h (from src) answers r's moment and time options: 0, or
 * REP_EXIT_UNANSWERABLE with the reason said, naming the trace. */
static int answerable(const struct rep_request *r, const struct rep_heap *h,
		      const struct at_source *src)
{
	uint64_t rss_peak, rss_at;
	char why[512];

	rep_heap_rss_peak(h, &rss_peak, &rss_at);
	if (r->heap.moment == REP_AT_RSS_PEAK && !rss_peak &&
	    (r->command == REP_CMD_PEAK || r->command == REP_CMD_TOP)) {
		at_error("%s: --at rss-peak: the trace has no RSS records (alloctapd writes "
			 "them into binary traces)", src->name);
		return REP_EXIT_UNANSWERABLE;
	}
	if (rep_time_check(&r->asks, trace_times(src, h), rep_heap_span(h), why, sizeof(why))) {
		at_error("%s: %s", src->name, why);
		return REP_EXIT_UNANSWERABLE;
	}
	return 0;
}

/* What JSON documents say of the filtered traces read (rep_json_set_note): each one's text. */
static char json_note[640];

/* Adds trace name's filter (its text what, sampled when sample_bytes) to the JSON note. */
static void note_filter(const char *name, const char *what, uint64_t sample_bytes)
{
	size_t n = strlen(json_note);

	snprintf(json_note + n, sizeof(json_note) - n, "%s%s holds %s%s", n ? "; " : "", name,
		 what, sample_bytes ? ": every heap figure is an estimate" : "");
	rep_json_set_note(json_note);
}

/* The filter of the trace src opened (its header's, alloctapd --min-size, --sample-bytes)
 * into p, said on stderr: a sampled trace's figures are estimates (report/sample.h), the
 * engine and the folded export scaling them. A command that describes every block (layout,
 * lifetimes) refuses a sampled trace. 0, or -1 reported. */
static int take_filter(struct rep_pass *p, const struct rep_request *r,
		       const struct at_source *src)
{
	const struct at_atz_header *hd = at_source_header(src);
	char what[200];

	if (!hd || !at_atz_filtered(hd))
		return 0;
	p->min_size = hd->min_size;
	p->sample_bytes = hd->sample_bytes;
	at_atz_filter_text(hd, what, sizeof(what));
	if (hd->sample_bytes &&
	    (r->command == REP_CMD_LAYOUT || r->command == REP_CMD_LIFETIMES)) {
		at_error("%s: the trace holds %s: %s describes every block, a sample cannot "
			 "tell it", src->name, what, rep_command_name(r->command));
		return -1;
	}
	p->x.sample_bytes = hd->sample_bytes;
	if (p->h)
		rep_heap_sampled(p->h, hd->sample_bytes);
	note_filter(src->name, what, hd->sample_bytes);
	if (hd->sample_bytes)
		at_warn("%s: the trace holds %s: every figure is an estimate, each allocation of "
			"s bytes counted as 1/(1 - exp(-s/%llu)) allocations of s bytes",
			src->name, what, (unsigned long long)hd->sample_bytes);
	else
		at_warn("%s: the trace holds %s: every figure is of those alone", src->name, what);
	return 0;
}

/* The line a text output ends with when a trace read is filtered (said of each). */
static void say_filter(FILE *f, const struct rep_pass *p, const char *name)
{
	struct at_atz_header hd = { .min_size = p->min_size, .sample_bytes = p->sample_bytes };
	char what[200];

	if (!at_atz_filtered(&hd))
		return;
	at_atz_filter_text(&hd, what, sizeof(what));
	if (p->sample_bytes)
		fprintf(f, "estimated from a sample: %s holds %s; every heap figure above is "
			"an estimate (events and RSS as recorded)\n", name, what);
	else
		fprintf(f, "%s holds %s: every figure above is of those alone\n", name, what);
}

/* Reads trace into p: through the engine when heap is set, else into the folded export alone.
 * The command's watcher, when w is given, watches the pass. Damage read past is added to
 * *damaged (1). 0; 1 on an error, reported; REP_EXIT_UNANSWERABLE when the trace cannot
 * answer r's moment or times (said). */
static int read_trace(struct rep_pass *p, const struct rep_request *r, const char *trace, int heap,
		      struct watchers *w, int *damaged)
{
	struct rep_damage d = { .strict = r->strict };
	struct at_source src = { .kind = AT_SOURCE_TEXT };
	rep_event_fn fn = heap_event;
	struct rss_feed rss = { p->h, NULL, NULL, 0 };
	void *fn_arg;
	int fd = -1, rc = 1;

	if (start_pass(p, r, trace, heap, w, &src) < 0)
		return 1;
	if (open_trace(&src, r, trace, w, &fd) < 0)
		return 1;
	if (take_filter(p, r, &src) < 0)
		goto out;
	fn_arg = p->h;
	rss.h = p->h;
	if (heap && at_source_header(&src) &&
	    (at_source_header(&src)->flags & AT_ATZ_FLAG_NO_TIMES))
		rep_heap_rss_by_position(p->h);
	if (w && w->started) {
		rss.cmd = w->cmd;
		rss.state = w->state;
	}
	if (heap)
		at_source_on_rss(&src, heap_rss, &rss);
	if (w && w->started && w->cmd->event) {
		fn = w->cmd->event;
		fn_arg = w->state;
	}
	if (heap ? rep_feed_events(&src, &p->x, fn, fn_arg, &d) : rep_feed(&src, &p->x, &d))
		goto out;
	if (rep_damaged(&d))
		*damaged = 1;
	if (rss.failed) {
		at_error("%s: %s", src.name, strerror(rss.failed));
		goto out;
	}
	if (heap) {
		rep_heap_finish(p->h);
		if ((rc = answerable(r, p->h, &src)) != 0)
			goto out;
		rc = 1;
	}
	at_verbose("%s: %zu distinct sites", src.name, rep_folded_count(p->x.folded));
	rc = 0;
out:
	at_source_close(&src);
	if (fd > 0)
		close(fd);
	return rc;
}

static void pass_free(struct rep_pass *p)
{
	rep_heap_free(p->h);
	if (p->x_ready)
		rep_sites_free(&p->x);
}

/* ---- the commands ---------------------------------------------------------------------- */

/* Whether export can add each event's weight as it comes, without the engine. */
static int plain_export(const struct rep_request *r)
{
	enum rep_weight w = (enum rep_weight)rep_option_value(r, "weight");

	return r->command == REP_CMD_EXPORT && !rep_option_value(r, "pprof") &&
	       !rep_option_value(r, "heaptrack") && !r->heap.have_pid &&
	       !r->heap.have_window && (w == REP_WEIGHT_ALLOC_COUNT || w == REP_WEIGHT_ALLOC_BYTES);
}

/* Ends the watcher of the first pass: its last output. 0; 1 on a write error (said, unless
 * write_failed keeps quiet); REP_EXIT_UNANSWERABLE when an event had no time that the watcher
 * needed (said). */
static int end_watchers(struct watchers *w, const struct rep_request *r, struct rep_pass *a,
			const struct out *out)
{
	if (!w->started || !w->cmd->end || w->cmd->end(w->state, a->h) == 0)
		return 0;
	if (errno == ENOTSUP) {
		at_error("%s: --every needs event times, and some events of this trace have none",
			 r->trace[0]);
		return REP_EXIT_UNANSWERABLE;
	}
	write_failed(out, errno);
	return 1;
}

/* Frees the watcher's state and its spool. */
static void free_watchers(struct watchers *w)
{
	if (w->state && w->cmd->free)
		w->cmd->free(w->state);
	free(w->state);
	if (w->spool)
		fclose(w->spool);
}

/* Where the watcher writes: out, or a spool when r names times, since a watcher writes during
 * the pass and whether the trace answers them (a window's end past the trace's) is known only
 * at its end; nothing is written for a question refused. 0, or -1 reported. */
static int open_spool(struct watchers *w, const struct rep_request *r, FILE *out)
{
	w->out = out;
	/* a followed trace (--follow) is written as it grows (top's live view, timeline's rows):
	 * a window it cannot answer is said at the end */
	if (!r->asks.n || !w->cmd->start || rep_option_value(r, "follow"))
		return 0;
	w->spool = tmpfile();
	if (!w->spool) {
		at_error("cannot open a temporary file: %s", strerror(errno));
		return -1;
	}
	w->out = w->spool;
	return 0;
}

/* Copies the spool, if any, to out. 0, or -1 with errno set. */
static int flush_spool(struct watchers *w, FILE *out)
{
	char buf[65536];
	size_t n;

	if (!w->spool)
		return 0;
	rewind(w->spool);
	while ((n = fread(buf, 1, sizeof(buf), w->spool)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			return -1;
	return ferror(w->spool) ? -1 : 0;
}

/* After a text output (not JSON, CSV, HTML, an export, a graph, or the live view, which says
 * it in its headings): a line for each filtered trace (say_filter). 0. */
static int write_filter(FILE *f, const struct rep_request *r, const struct rep_pass *a,
			const struct rep_pass *b)
{
	if (r->command == REP_CMD_EXPORT || r->command == REP_CMD_HTML || rep_option_value(r, "json") ||
	    rep_option_value(r, "csv") || rep_option_value(r, "dot") ||
	    (r->command == REP_CMD_TOP && rep_option_value(r, "follow")))
		return 0;
	say_filter(f, a, r->trace[0] ? r->trace[0] : "<stdin>");
	if (rep_commands[r->command]->traces == 2)
		say_filter(f, b, r->trace[1] ? r->trace[1] : "<stdin>");
	return 0;
}

int rep_run(const struct rep_request *r)
{
	const struct rep_command_def *cmd = rep_commands[r->command];
	struct rep_pass a = { 0 }, b = { 0 };
	struct watchers w = { .cmd = cmd };
	struct out out;
	char format[REP_RENDER_FORMAT_MAX];
	const char *render;
	int heap = !plain_export(r), rc = 1, damaged = 0;

	signal(SIGPIPE, SIG_IGN); /* a closed pipe becomes EPIPE: at_write_error, at_exit_status */
	rep_units_set_exact(rep_option_value(r, "bytes") != 0); /* --bytes: exact byte figures */
	if (rep_option_value(r, "pprof") && (!r->output || strcmp(r->output, "-") == 0) &&
	    isatty(STDOUT_FILENO)) {
		at_error("export --pprof writes a binary file: give -o FILE, or redirect stdout");
		return 1;
	}
	if ((rc = dot_format(r, format, &render)) != 0)
		return rc;
	rc = 1;
	if (open_out(&out, r, render) < 0)
		return 1;
	if (open_spool(&w, r, out.f) < 0)
		goto out;
	if (cmd->state_size && !(w.state = calloc(1, cmd->state_size))) {
		at_error("%s", strerror(errno));
		goto out;
	}
	if ((rc = read_trace(&a, r, r->trace[0], heap, &w, &damaged)) != 0)
		goto out;
	if (cmd->traces == 2 && (rc = read_trace(&b, r, r->trace[1], heap, NULL, &damaged)) != 0)
		goto out;
	if ((rc = end_watchers(&w, r, &a, &out)) != 0)
		goto out;
	rc = 1;
	if (flush_spool(&w, out.f) < 0 || cmd->write(out.f, r, &a, &b) < 0 ||
	    write_filter(out.f, r, &a, &b) < 0 || fflush(out.f) != 0 || ferror(out.f)) {
		write_failed(&out, errno ? errno : EIO);
		goto out;
	}
	if (!cmd->names_no_frames) {
		rep_hints_say(&a.x, r->debug_dir);
		if (cmd->traces == 2)
			rep_hints_say(&b.x, r->debug_dir);
	}
	rc = damaged ? REP_EXIT_DAMAGED : 0;
out:
	free_watchers(&w);
	if (close_out(&out) < 0 && rc != REP_EXIT_UNANSWERABLE)
		rc = 1;
	pass_free(&a);
	pass_free(&b);
	return rc;
}
