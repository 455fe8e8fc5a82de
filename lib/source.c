/* source.c: format detection and one event-pull API over raw text, munged text and .atz:
 * a table of readers, one per format (source.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "display.h"
#include "prim.h"
#include "source.h"
#include "text.h"

/* Parses a decimal or hexadecimal field of a raw line: no sign, fits max. */
static int raw_number(struct at_span v, int base, uint64_t max, uint64_t *out)
{
	int neg;

	if (at_parse_pyint(v.p, v.n, base, &neg, out) < 0 || neg || *out > max)
		return -1;
	return 0;
}

/* Decides raw or munged from the first line showing a pointer field: '#' anywhere after the
 * '(' means munged, "0x" raw. Leaves s->munged at -1 for a line with neither. */
static void decide_text_kind(struct at_source *s, const char *p, size_t n)
{
	const char *open = memchr(p, '(', n);

	if (!open)
		return;
	size_t rest = n - (size_t)(open - p);
	if (memchr(open, '#', rest))
		s->munged = 1;
	else if (memmem(open, rest, "0x", 2) || memmem(open, rest, "0X", 2))
		s->munged = 0;
}

/* Parses a raw line into ev (every field must fit the event model). 0, or -1 with s->why. */
static int parse_raw(struct at_source *s, const char *p, size_t n, struct at_event *ev)
{
	struct at_raw_line l;
	struct at_span st = at_strip(p, n);
	uint64_t v;

	if (at_split_raw(st.p, st.n, &l, &s->why) < 0)
		return -1;
	int f = at_func_lookup(l.func.p, l.func.n);
	s->why = "unknown function";
	if (f < 0)
		return -1;
	s->why = "wrong number of arguments for this function";
	if (l.nargs != at_func_nargs[f])
		return -1;
	s->why = "bad process number (decimal, 0 to 4294967295)";
	if (raw_number(l.pid, 10, UINT32_MAX, &v) < 0)
		return -1;
	ev->pid = (uint32_t)v;
	s->why = "bad thread number (decimal, 0 to 4294967295)";
	if (raw_number(l.tid, 10, UINT32_MAX, &v) < 0)
		return -1;
	ev->tid = (uint32_t)v;
	ev->func = (uint8_t)f;
	ev->arg[0] = ev->arg[1] = 0;
	struct at_span arg = l.args;
	for (unsigned i = 0; i < l.nargs; i++) {
		const char *comma = memchr(arg.p, ',', arg.n);
		struct at_span a = { arg.p, comma ? (size_t)(comma - arg.p) : arg.n };
		int ptr = i == 0 && at_func_takes_pointer((unsigned)f);
		s->why = ptr ? "bad pointer argument (expected 0x and hex digits)"
			     : "bad size or alignment argument (expected a decimal number)";
		if (raw_number(a, ptr ? 16 : 10, UINT64_MAX, &ev->arg[i]) < 0)
			return -1;
		if (comma) {
			arg.n -= (size_t)(comma + 1 - arg.p);
			arg.p = comma + 1;
		}
	}
	ev->result = 0;
	ev->has_result = l.result.p[-1] == '=';
	if (ev->has_result) {
		s->why = "free and jemalloc_stats take no result";
		if (!at_func_returns_pointer((unsigned)f))
			return -1;
		s->why = "bad result (expected 0x and hex digits)";
		if (raw_number(l.result, 16, UINT64_MAX, &ev->result) < 0)
			return -1;
	}
	return 0;
}

/* ---- text: logalloc lines, raw or munged ------------------------------------------------ */

/* Text takes whatever no other format took. */
static int detect_text(const uint8_t *head, size_t n)
{
	(void)head;
	(void)n;
	return 1;
}

static int open_text(struct at_source *s, const uint8_t *head, size_t n)
{
	return at_linereader_open_fd(&s->lines, s->fd, s->name, head, n);
}

/* The next line's event: 1, 0 at the end, -1 with s->why (fatal for a read error). */
static int next_text(struct at_source *s, struct at_event *ev)
{
	const char *p;
	size_t n;

	ev->time_ns = 0;
	ev->stack = 0;
	int rc = at_linereader_next(&s->lines, &p, &n);
	if (rc <= 0) {
		if (rc < 0) {
			s->fatal = 1;
			s->why = at_linereader_strerror(errno);
		}
		return rc;
	}
	s->lineno = s->lines.lineno;
	struct at_span st = at_strip(p, n);
	s->why = "empty line";
	if (st.n == 0)
		return -1;
	if (s->munged < 0)
		decide_text_kind(s, st.p, st.n);
	if (s->munged == 1) {
		if (at_parse_munged(st.p, st.n, ev, &s->why) < 0)
			return -1;
		return 1;
	}
	return parse_raw(s, st.p, st.n, ev) < 0 ? -1 : 1;
}

static void close_text(struct at_source *s)
{
	at_linereader_close(&s->lines);
}

static const struct at_source_reader text_reader = {
	.kind = AT_SOURCE_TEXT,
	.lines = 1,
	.unit = "line",
	.units = "lines",
	.detect = detect_text,
	.open = open_text,
	.next = next_text,
	.close = close_text,
};

/* ---- binary: an .atz trace (lib/atz_read.c) ------------------------------------------- */

/* An lz4 frame's magic number. */
static int detect_atz(const uint8_t *head, size_t n)
{
	return n == 4 && ((uint32_t)head[0] | (uint32_t)head[1] << 8 | (uint32_t)head[2] << 16 |
			  (uint32_t)head[3] << 24) == AT_ATZ_LZ4_MAGIC;
}

/* Takes the reader r opened on s (NULL: out of memory): raw or munged as its header says,
 * when it could be read. 0, or -1 with errno. */
static int took_atz(struct at_source *s, struct at_atz_reader *r)
{
	s->atz = r;
	if (!s->atz) {
		errno = ENOMEM;
		return -1;
	}
	const struct at_atz_header *h = at_atz_reader_header(s->atz);
	if (h)
		s->munged = (h->flags & AT_ATZ_FLAG_MUNGED) != 0;
	return 0;
}

/* Opens the reader. */
static int open_atz(struct at_source *s, const uint8_t *head, size_t n)
{
	return took_atz(s, at_atz_reader_open(s->fd, s->name, head, n));
}

/* The next event; any error is fatal. */
static int next_atz(struct at_source *s, struct at_event *ev)
{
	int rc = at_atz_next(s->atz, ev);

	if (rc < 0)
		s->fatal = 1;
	return rc;
}

static void atz_on_stack(struct at_source *s, at_atz_stack_fn fn, void *arg)
{
	if (s->atz)
		at_atz_reader_on_stack(s->atz, fn, arg);
}

static void atz_on_mapping(struct at_source *s, at_atz_mapping_fn fn, void *arg)
{
	if (s->atz)
		at_atz_reader_on_mapping(s->atz, fn, arg);
}

static void atz_on_names(struct at_source *s, at_atz_names_fn fn, void *arg)
{
	if (s->atz)
		at_atz_reader_on_names(s->atz, fn, arg);
}

static void atz_on_rss(struct at_source *s, at_atz_rss_fn fn, void *arg)
{
	if (s->atz)
		at_atz_reader_on_rss(s->atz, fn, arg);
}

static const struct at_atz_header *atz_header(const struct at_source *s)
{
	return s->atz ? at_atz_reader_header(s->atz) : NULL;
}

/* Its header was read and it stopped at damage (truncated, a corrupt block, a read error),
 * not at a stream this reader cannot read at all (not a trace, a newer version). */
static int atz_readable_damage(const struct at_source *s)
{
	enum at_atz_status st = at_atz_reader_status(s->atz);

	return at_atz_reader_header(s->atz) &&
	       (st == AT_ATZ_ERR_TRUNCATED || st == AT_ATZ_ERR_CORRUPT || st == AT_ATZ_ERR_IO);
}

static const char *atz_message(const struct at_source *s)
{
	return at_atz_reader_message(s->atz);
}

static void close_atz(struct at_source *s)
{
	at_atz_reader_close(s->atz);
}

static const struct at_source_reader atz_reader = {
	.kind = AT_SOURCE_BINARY,
	.unit = "event",
	.units = "events",
	.detect = detect_atz,
	.open = open_atz,
	.next = next_atz,
	.on_stack = atz_on_stack,
	.on_mapping = atz_on_mapping,
	.on_names = atz_on_names,
	.on_rss = atz_on_rss,
	.header = atz_header,
	.readable_damage = atz_readable_damage,
	.message = atz_message,
	.close = close_atz,
};

/* The readers, tried in order: text, which takes anything, last. */
static const struct at_source_reader *const readers[] = { &atz_reader, &text_reader };

/* ---- the source ------------------------------------------------------------------------- */

int at_source_open_fd(struct at_source *s, int fd, const char *name)
{
	uint8_t head[4];

	memset(s, 0, sizeof(*s));
	s->fd = fd;
	s->name = name;
	s->munged = -1;
	ssize_t n = at_read_all(fd, head, sizeof(head));
	if (n < 0)
		return -1;
	for (const struct at_source_reader *const *r = readers;; r++)
		if ((*r)->detect(head, (size_t)n)) {
			s->reader = *r;
			s->kind = (*r)->kind;
			return (*r)->open(s, head, (size_t)n);
		}
}

int at_source_open_follow(struct at_source *s, int fd, const char *name, at_atz_wait_fn wait,
			  void *arg)
{
	uint8_t head[4];
	size_t n = 0;
	ssize_t k = 1;

	memset(s, 0, sizeof(*s));
	s->fd = fd;
	s->name = name;
	s->munged = -1;
	while (n < sizeof(head) && (k = at_atz_follow_read(fd, head + n, sizeof(head) - n, wait,
							    arg)) > 0)
		n += (size_t)k;
	if (k < 0)
		return -1;
	s->reader = &atz_reader;
	s->kind = AT_SOURCE_BINARY;
	if (n == sizeof(head) && !detect_atz(head, n)) {
		s->reader = &text_reader;
		s->kind = AT_SOURCE_TEXT;
		errno = ENOTSUP;
		return -1;
	}
	return took_atz(s, at_atz_reader_open_follow(fd, name, head, n, wait, arg));
}

int at_source_open(struct at_source *s, const char *path)
{
	const char *name;
	int fd = at_input_fd(path, &name);

	if (fd < 0)
		return -1;
	if (at_source_open_fd(s, fd, name) < 0) {
		int e = errno;
		if (fd != 0)
			close(fd);
		errno = e;
		return -1;
	}
	s->own_fd = fd != 0;
	return 0;
}

/* The reader of s: text for a source never opened (zeroed). */
static const struct at_source_reader *reader(const struct at_source *s)
{
	return s->reader ? s->reader : &text_reader;
}

int at_source_next(struct at_source *s, struct at_event *ev)
{
	if (s->fatal)
		return -1;
	return reader(s)->next(s, ev);
}

void at_source_on_stack(struct at_source *s, at_atz_stack_fn fn, void *arg)
{
	if (reader(s)->on_stack)
		reader(s)->on_stack(s, fn, arg);
}

void at_source_on_mapping(struct at_source *s, at_atz_mapping_fn fn, void *arg)
{
	if (reader(s)->on_mapping)
		reader(s)->on_mapping(s, fn, arg);
}

void at_source_on_names(struct at_source *s, at_atz_names_fn fn, void *arg)
{
	if (reader(s)->on_names)
		reader(s)->on_names(s, fn, arg);
}

void at_source_on_rss(struct at_source *s, at_atz_rss_fn fn, void *arg)
{
	if (reader(s)->on_rss)
		reader(s)->on_rss(s, fn, arg);
}

void at_source_report(const struct at_source *s)
{
	if (reader(s)->message) {
		const char *m = reader(s)->message(s);
		at_error("%s", m ? m : "no error");
	} else if (s->fatal) {
		at_error("%s: %s", s->name, s->why);
	} else {
		at_error_at(s->name, s->lineno, "%s", s->why ? s->why : "no error");
	}
}

void at_source_close(struct at_source *s)
{
	if (reader(s)->close)
		reader(s)->close(s);
	if (s->own_fd)
		close(s->fd);
	s->atz = NULL;
	s->own_fd = 0;
}

uint64_t at_source_place(const struct at_source *s, uint64_t events)
{
	return reader(s)->lines ? s->lineno : events;
}

const char *at_source_unit(const struct at_source *s)
{
	return reader(s)->unit;
}

const char *at_source_units(const struct at_source *s)
{
	return reader(s)->units;
}

int at_source_is_lines(const struct at_source *s)
{
	return reader(s)->lines;
}

void at_source_report_at(const struct at_source *s, uint64_t events, const char *why)
{
	if (reader(s)->lines)
		at_error_at(s->name, s->lineno, "%s", why);
	else
		at_error("%s: %s %" PRIu64 ": %s", s->name, reader(s)->unit, events, why);
}

int at_source_empty_line(const struct at_source *s)
{
	return reader(s)->lines && !s->fatal && s->why && strcmp(s->why, "empty line") == 0;
}

const struct at_atz_header *at_source_header(const struct at_source *s)
{
	return reader(s)->header ? reader(s)->header(s) : NULL;
}

int at_source_readable_damage(const struct at_source *s)
{
	return reader(s)->readable_damage && reader(s)->readable_damage(s);
}

const char *at_source_message(const struct at_source *s)
{
	return reader(s)->message ? reader(s)->message(s) : NULL;
}

int at_source_refuse_filtered(const struct at_source *s, const char *doing)
{
	const struct at_atz_header *h = at_source_header(s);
	char what[200];

	if (!h || !at_atz_filtered(h))
		return 0;
	at_error("%s: the trace holds %s: %s needs every call", s->name,
		 at_atz_filter_text(h, what, sizeof(what)), doing);
	return -1;
}
