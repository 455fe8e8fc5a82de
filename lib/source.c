/* source.c: format detection and one event-pull API over raw text, munged text and .atz. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "display.h"
#include "prim.h"
#include "source.h"
#include "text.h"

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
	uint32_t magic = (uint32_t)head[0] | (uint32_t)head[1] << 8 | (uint32_t)head[2] << 16 |
			 (uint32_t)head[3] << 24;
	if (n == 4 && magic == AT_ATZ_LZ4_MAGIC) {
		s->kind = AT_SOURCE_BINARY;
		s->atz = at_atz_reader_open(fd, name, head, 4);
		if (!s->atz) {
			errno = ENOMEM;
			return -1;
		}
		const struct at_atz_header *h = at_atz_reader_header(s->atz);
		if (h)
			s->munged = (h->flags & AT_ATZ_FLAG_MUNGED) != 0;
		return 0;
	}
	s->kind = AT_SOURCE_TEXT;
	return at_linereader_open_fd(&s->lines, fd, name, head, (size_t)n);
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

static int next_text(struct at_source *s, struct at_event *ev)
{
	const char *p;
	size_t n;
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

int at_source_next(struct at_source *s, struct at_event *ev)
{
	if (s->fatal)
		return -1;
	if (s->kind == AT_SOURCE_TEXT) {
		ev->time_ns = 0;
		ev->stack = 0;
		return next_text(s, ev);
	}
	int rc = at_atz_next(s->atz, ev);
	if (rc < 0)
		s->fatal = 1;
	return rc;
}

void at_source_on_stack(struct at_source *s, at_atz_stack_fn fn, void *arg)
{
	if (s->kind == AT_SOURCE_BINARY && s->atz)
		at_atz_reader_on_stack(s->atz, fn, arg);
}

void at_source_on_mapping(struct at_source *s, at_atz_mapping_fn fn, void *arg)
{
	if (s->kind == AT_SOURCE_BINARY && s->atz)
		at_atz_reader_on_mapping(s->atz, fn, arg);
}

void at_source_on_rss(struct at_source *s, at_atz_rss_fn fn, void *arg)
{
	if (s->kind == AT_SOURCE_BINARY && s->atz)
		at_atz_reader_on_rss(s->atz, fn, arg);
}

void at_source_report(const struct at_source *s)
{
	if (s->kind == AT_SOURCE_BINARY) {
		const char *m = at_atz_reader_message(s->atz);
		at_error("%s", m ? m : "no error");
	} else if (s->fatal) {
		at_error("%s: %s", s->name, s->why);
	} else {
		at_error_at(s->name, s->lineno, "%s", s->why ? s->why : "no error");
	}
}

void at_source_close(struct at_source *s)
{
	if (s->kind == AT_SOURCE_BINARY)
		at_atz_reader_close(s->atz);
	else
		at_linereader_close(&s->lines);
	if (s->own_fd)
		close(s->fd);
	s->atz = NULL;
	s->own_fd = 0;
}
