/* sink.c: events to logalloc text or an .atz trace, with one error and two counters.
 *
 * The functions of the interface check what every format shares (the event's range, the
 * sink's error, whether it started, which records a version holds) and hand the rest to the
 * format's table of operations, chosen by at_sink_start: a new output format is one more table
 * and its value of enum at_sink_format. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "sink.h"
#include "sink_thread.h"
#include "text.h"

static const struct at_sink_ops text_ops, atz_ops;

/* The format's operations: a sink never started (or zeroed) is text. */
static const struct at_sink_ops *ops(const struct at_sink *s)
{
	return s->ops ? s->ops : &text_ops;
}

/* The operations of format f (a value outside the enum writes text). */
static const struct at_sink_ops *format_ops(enum at_sink_format f)
{
	static const struct at_sink_ops *const by_format[AT_FORMAT_COUNT] = {
		[AT_FORMAT_TEXT] = &text_ops,
		[AT_FORMAT_BINARY] = &atz_ops,
	};

	return (unsigned)f < AT_FORMAT_COUNT && by_format[f] ? by_format[f] : &text_ops;
}

/* Keeps err as the sink's error unless it has one. Returns -1 with errno set to the error. */
static int fail(struct at_sink *s, int err)
{
	if (!s->out.err)
		s->out.err = err ? err : EIO;
	errno = s->out.err;
	return -1;
}

static void reset(struct at_sink *s)
{
	memset(s, 0, sizeof(*s));
	s->out.fd = -1;
	s->ops = &text_ops;
}

/* The output flags of a sink's open mode, appending or not. */
static unsigned output_flags(unsigned mode, int append)
{
	return (append ? AT_OUTPUT_APPEND : 0) | (mode & AT_SINK_GUARDED ? AT_OUTPUT_GUARDED : 0);
}

int at_sink_open(struct at_sink *s, const char *path, unsigned mode)
{
	reset(s);
	s->mode = mode;
	if (at_output_open_path(&s->out, path, output_flags(mode, mode & AT_SINK_APPEND)) < 0) {
		s->open_why = s->out.why;
		s->out.name = path;
		return fail(s, errno);
	}
	s->out.whole_lines = 1; /* text until at_sink_start says otherwise */
	return 0;
}

int at_sink_open_fd(struct at_sink *s, int fd, const char *name)
{
	reset(s);
	if (at_output_open_fd(&s->out, fd, name) < 0) {
		s->out.name = name;
		return fail(s, errno);
	}
	s->out.whole_lines = 1;
	return 0;
}

const char *at_sink_open_why(const struct at_sink *s)
{
	return s->open_why ? s->open_why : strerror(s->out.err);
}

int at_sink_start(struct at_sink *s, const struct at_sink_options *opt)
{
	if (opt != &s->opt)
		s->opt = *opt;
	if (s->out.err)
		return fail(s, s->out.err);
	s->out.whole_lines = opt->format == AT_SINK_TEXT;
	const struct at_sink_ops *o = format_ops(opt->format);
	if (o->start(s) < 0)
		return fail(s, errno);
	s->ops = o;
	s->started = 1;
	s->stacks_put = 0; /* a new trace: its stack ids start at 1 */
	return 0;
}

/* Text: nothing precedes the first line. */
static int text_start(struct at_sink *s)
{
	(void)s;
	return 0;
}

/* Binary: the writer, which writes the stream header (the munged flag from the options). */
static int atz_start(struct at_sink *s)
{
	struct at_atz_options a;

	at_sink_frame_options(s, 0, &a);
	s->atz = at_atz_writer_open(&s->out, &a);
	return s->atz ? 0 : -1;
}

int at_sink_frames_possible(const struct at_sink *s)
{
	const struct at_atz_options *a = &s->opt.atz;

	return s->opt.format == AT_SINK_ATZ &&
	       (a->major == 0 || a->major == AT_ATZ_VERSION_MAJOR) &&
	       ((a->flags & AT_ATZ_FLAG_NO_STACKS) || a->minor == AT_ATZ_PYTHON_MINOR);
}

void at_sink_frame_options(const struct at_sink *s, uint32_t stacks_before,
			   struct at_atz_options *a)
{
	*a = s->opt.atz;
	if (s->opt.munged)
		a->flags |= AT_ATZ_FLAG_MUNGED;
	if (stacks_before && !(a->flags & AT_ATZ_FLAG_NO_STACKS)) {
		a->flags |= AT_ATZ_FLAG_STACKS_GO_ON;
		a->stacks_before = stacks_before;
	}
}

void at_sink_set_munged(struct at_sink *s, int munged)
{
	s->opt.munged = munged;
}

/* Text: writes the buffer out and counts the events whose lines reached the file. Lines sit
 * whole in the buffer, so after a short write the newlines written tell how many. */
static int write_lines(struct at_sink *s)
{
	struct at_output *o = &s->out;
	uint64_t before = o->written;
	int rc = at_output_flush(o);

	if (rc == 0) {
		s->written += s->buffered;
	} else {
		const char *p = o->buf, *end = o->buf + (o->written - before);
		while (p < end && (p = memchr(p, '\n', (size_t)(end - p)))) {
			s->written++;
			p++;
		}
	}
	s->buffered = 0;
	return rc;
}

static int put_line(struct at_sink *s, const struct at_event *ev)
{
	struct at_output *o = &s->out;

	if (o->len + AT_LINE_MAX > AT_OUTPUT_BUFSIZE && write_lines(s) < 0)
		return fail(s, o->err);
	char *d = o->buf + o->len;
	size_t n = s->opt.munged ? at_format_munged(d, ev) : at_format_raw(d, ev);
	at_output_commit(o, n);
	s->buffered++;
	s->content_bytes += n;
	return 0;
}

int at_sink_put(struct at_sink *s, const struct at_event *ev)
{
	if (ev->func >= AT_FUNC_COUNT || ev->has_result > 1) {
		errno = EINVAL;
		return -1;
	}
	s->accepted++;
	if (s->thread) {
		at_sink_thread_put(s->thread, ev);
		return 0;
	}
	return at_sink_put_now(s, ev);
}

int at_sink_put_now(struct at_sink *s, const struct at_event *ev)
{
	if (s->out.err)
		return fail(s, s->out.err);
	if (!s->started)
		return fail(s, EINVAL);
	return ops(s)->put(s, ev);
}

/* Before anything but an event: the events queued for the writer are written. */
static void sync_writer(const struct at_sink *s)
{
	if (s->thread)
		at_sink_thread_sync(s->thread);
}

void at_sink_kick(struct at_sink *s)
{
	if (s->thread)
		at_sink_thread_kick(s->thread);
}

/* Binary: one event into the trace. */
static int atz_put(struct at_sink *s, const struct at_event *ev)
{
	int rc = at_atz_append(s->atz, ev);

	if (rc < 0 && errno == EINVAL && !s->out.err)
		s->refused++; /* a stack id not written yet: refused, as func out of range */
	return rc;
}

/* Text: records other than events print nothing. */
static int text_put_record(struct at_sink *s, const struct at_sink_record *r)
{
	(void)s;
	(void)r;
	return 0;
}

/* Binary: the record's form in the trace w writes. */
static int atz_record(struct at_atz_writer *w, const struct at_sink_record *r)
{
	switch (r->kind) {
	case AT_SINK_LOST:
		return at_atz_append_lost(w, r->lost.events);
	case AT_SINK_PROCESS:
		return at_atz_append_process(w, r->process.pid, r->process.name);
	case AT_SINK_OBJECT:
		return at_atz_append_object(w, r->object.pid, r->object.start, r->object.end,
					    r->object.offset, r->object.path);
	case AT_SINK_PROCESS_CHANGE:
		return at_atz_append_process_change(w, &r->change);
	case AT_SINK_STACK:
		return at_atz_append_stack(w, r->stack);
	case AT_SINK_MAPPING:
		return at_atz_append_mapping(w, r->mapping);
	case AT_SINK_NAMES:
		return at_atz_append_names(w, r->names);
	case AT_SINK_RSS:
		return at_atz_append_rss(w, &r->rss);
	case AT_SINK_THREAD_END:
		return at_atz_end_thread(w, r->thread.pid, r->thread.tid);
	}
	errno = EINVAL;
	return -1;
}

static int atz_put_record(struct at_sink *s, const struct at_sink_record *r)
{
	return atz_record(s->atz, r);
}

int at_sink_frame_record(struct at_atz_writer *w, const struct at_sink_record *r, uint64_t *lost)
{
	if (r->kind == AT_SINK_LOST)
		*lost += r->lost.events;
	return atz_record(w, r);
}

int at_sink_put_record(struct at_sink *s, const struct at_sink_record *r)
{
	int rc = s->thread ? at_sink_thread_put_record(s->thread, r) : -1;

	if (rc < 0 && s->thread && at_sink_thread_frames(s->thread)) {
		sync_writer(s); /* the error is the encoders' to read until they are idle */
		return fail(s, ENOMEM); /* frames encoded apart take copies alone */
	}
	if (rc < 0) {
		sync_writer(s);
		rc = at_sink_put_record_now(s, r);
	}
	if (rc == 0 && r->kind == AT_SINK_STACK)
		s->stacks_put = r->stack->id;
	return rc;
}

int at_sink_put_record_now(struct at_sink *s, const struct at_sink_record *r)
{
	if (s->out.err)
		return fail(s, s->out.err);
	if (!s->started)
		return fail(s, EINVAL);
	if (r->kind == AT_SINK_LOST)
		s->lost += r->lost.events;
	if ((r->kind == AT_SINK_STACK || r->kind == AT_SINK_MAPPING || r->kind == AT_SINK_RSS ||
	     r->kind == AT_SINK_NAMES) && s->opt.atz.major == 1)
		return 0; /* 1.x holds none of them */
	if (r->kind == AT_SINK_RSS && s->opt.atz.minor < 1)
		return 0; /* nor does 2.0 */
	/* a record the output refuses (a frame kind its version lacks) is the sink's error, said
	 * when it closes, as a write's is */
	return ops(s)->put_record(s, r) < 0 ? fail(s, errno) : 0;
}

int at_sink_lost(struct at_sink *s, uint64_t n)
{
	struct at_sink_record r = { .kind = AT_SINK_LOST, .lost = { n } };

	return n ? at_sink_put_record(s, &r) : 0;
}

int at_sink_flush(struct at_sink *s)
{
	sync_writer(s);
	if (s->out.err)
		return fail(s, s->out.err);
	return ops(s)->flush(s);
}

/* Text: writes the buffered lines out. */
static int text_flush(struct at_sink *s)
{
	return write_lines(s) < 0 ? fail(s, s->out.err) : 0;
}

/* Binary: ends the current lz4 block and writes it out (frames encoded apart went out whole,
 * each in its turn). */
static int atz_flush(struct at_sink *s)
{
	if (!s->atz)
		return at_output_flush(&s->out) < 0 ? fail(s, s->out.err) : 0;
	return at_atz_flush(s->atz);
}

/* Text: the trace ends with its last lines. */
static void text_end(struct at_sink *s)
{
	write_lines(s);
}

void at_sink_end_frame(struct at_sink *s)
{
	struct at_atz_writer *w = s->atz;
	struct at_atz_stats st;

	if (!w)
		return;
	at_atz_flush(w);
	at_atz_writer_stats(w, &st);
	s->written += st.events_written;
	s->content_bytes += st.content_bytes;
	s->atz = NULL;
	at_atz_writer_close(w);
}

/* Binary: the trace ends with its last block and end mark; its counters become the sink's. */
static void atz_end(struct at_sink *s)
{
	at_sink_end_frame(s);
	s->ops = &text_ops;
}

/* Ends the trace and closes its file (the writing thread, if any, idle). */
static int close_file(struct at_sink *s)
{
	if (s->out.buf) {
		ops(s)->end(s);
		at_output_close(&s->out);
	}
	s->bytes += s->out.written;
	s->out.written = 0;
	s->started = 0;
	return s->out.err ? -1 : 0;
}

int at_sink_close(struct at_sink *s)
{
	at_sink_thread_stop(s);
	return close_file(s);
}

/* Whether path names the file fd writes to (a link at path is not that file). */
static int same_file(int fd, const char *path)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && lstat(path, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

int at_sink_reopen(struct at_sink *s, const char *path)
{
	struct at_output next;

	sync_writer(s);
	if (s->out.err)
		return fail(s, s->out.err);
	if (s->out.buf && same_file(s->out.fd, path))
		return at_sink_flush(s) < 0 ? -1 : 1;
	if (s->thread) /* the old file's last frame ends in it */
		at_sink_thread_end_frame(s->thread);
	if (at_output_open_path(&next, path, output_flags(s->mode, 1)) < 0) {
		s->open_why = next.why;
		return -1;
	}
	if (close_file(s) < 0) {
		at_output_close(&next);
		errno = s->out.err;
		return -1;
	}
	s->out = next;
	s->open_why = NULL;
	return at_sink_start(s, &s->opt);
}

void at_sink_stats(const struct at_sink *s, struct at_sink_stats *st)
{
	sync_writer(s);
	st->accepted = s->accepted - s->refused;
	st->written = s->written;
	st->lost = s->lost;
	st->bytes = s->bytes + s->out.written;
	st->content_bytes = s->content_bytes;
	ops(s)->stats(s, st);
}

/* Text: the sink counts everything itself. */
static void text_stats(const struct at_sink *s, struct at_sink_stats *st)
{
	(void)s;
	(void)st;
}

/* Binary: the events and bytes of the trace being written. */
static void atz_stats(const struct at_sink *s, struct at_sink_stats *st)
{
	struct at_atz_stats a;

	if (!s->atz) /* frames encoded apart: counted as each went out */
		return;
	at_atz_writer_stats(s->atz, &a);
	st->written += a.events_written;
	st->content_bytes += a.content_bytes;
}

static const struct at_sink_ops text_ops = {
	.start = text_start,
	.put = put_line,
	.put_record = text_put_record,
	.flush = text_flush,
	.end = text_end,
	.stats = text_stats,
};

static const struct at_sink_ops atz_ops = {
	.start = atz_start,
	.put = atz_put,
	.put_record = atz_put_record,
	.flush = atz_flush,
	.end = atz_end,
	.stats = atz_stats,
};
