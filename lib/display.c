/* display.c: leveled messages on stderr, one write(2) each. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "display.h"
#include "prim.h"

int at_display_level = 2;
int at_display_line_open;
const char *at_program_name = "alloctap";
static int reader_gone; /* a write met EPIPE: the program ends as killed by SIGPIPE */

/* How byte c of a message is written: 0 as it is, else escaped ("\\x1b"). keep_newline: a
 * newline stays a line break (text a caller assembles line by line); otherwise it is escaped
 * too (the body of an at_say line, which gets its own newline). Control characters reach no
 * terminal raw: a path or a name from a trace or another process may hold an escape sequence
 * that would rewrite the screen or forge a line. */
static int escaped(unsigned char c, unsigned char next, int keep_newline)
{
	if (c == '\t' || (c == '\n' && keep_newline))
		return 0;
	if (c < 0x20 || c == 0x7f)
		return 1;
	return c == 0xc2 && next >= 0x80 && next <= 0x9f; /* a C1 control in UTF-8 */
}

/* Appends the n bytes of text to m, control characters escaped (escaped()). What does not
 * fit, or all of it when cut (the text was cut before), ends in "...", one byte left for the
 * newline the text ended with. */
static void append_escaped(struct at_message *m, const char *text, size_t n, int keep_newline,
			   int cut)
{
	static const char digits[] = "0123456789abcdef";
	size_t end = sizeof(m->buf) - 1; /* the last byte is for a line's newline */

	int full = 0, c1 = 0;

	for (size_t i = 0; i < n && !full; i++) {
		unsigned char c = (unsigned char)text[i];
		unsigned char next = i + 1 < n ? (unsigned char)text[i + 1] : 0;
		int esc = c1 || escaped(c, next, keep_newline);

		c1 = c == 0xc2 && esc; /* the second byte of a C1 control goes escaped too */
		if (m->len + (esc ? 4 : 1) > end) {
			full = cut = 1;
		} else if (!esc) {
			m->buf[m->len++] = (char)c;
		} else {
			m->buf[m->len++] = '\\';
			m->buf[m->len++] = 'x';
			m->buf[m->len++] = digits[c >> 4];
			m->buf[m->len++] = digits[c & 15];
		}
	}
	if (!cut)
		return;
	if (m->len > end - 3)
		m->len = end - 3;
	memcpy(m->buf + m->len, "...", 3);
	m->len += 3;
	if (n && text[n - 1] == '\n')
		m->buf[m->len++] = '\n';
}

/* Formats fmt into m, escaped (append_escaped). */
static void vappend_as(struct at_message *m, int keep_newline, const char *fmt, va_list ap)
{
	char text[AT_DISPLAY_MAX];
	int n = vsnprintf(text, sizeof(text), fmt, ap);
	int cut = 0;

	if (n < 0)
		return;
	if ((size_t)n >= sizeof(text)) {
		n = (int)sizeof(text) - 1;
		cut = 1;
		if (fmt[0] && fmt[strlen(fmt) - 1] == '\n')
			text[n - 1] = '\n';
	}
	append_escaped(m, text, (size_t)n, keep_newline, cut);
}

static void vappend(struct at_message *m, const char *fmt, va_list ap)
{
	vappend_as(m, 1, fmt, ap);
}

void at_message_append(struct at_message *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vappend(m, fmt, ap);
	va_end(ap);
}

/* Writes the message whole, keeping errno as it was (callers often print strerror after). */
static void emit(const struct at_message *m)
{
	static const char erase[] = "\r\033[K";
	int saved = errno;
	size_t off = 0;

	if (at_display_line_open) {
		at_display_line_open = 0;
		at_write_all(STDERR_FILENO, erase, sizeof(erase) - 1);
	}
	while (off < m->len) {
		ssize_t n = write(STDERR_FILENO, m->buf + off, m->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	errno = saved;
}

void at_message_emit(int l, const struct at_message *m)
{
	if (at_display_level >= l)
		emit(m);
}

static void vline(int level, const char *file, uint64_t line, const char *fmt, va_list ap)
{
	struct at_message m = { .len = 0 };

	if (at_display_level < level)
		return;
	at_message_append(&m, "%s: ", at_program_name);
	if (file)
		at_message_append(&m, "%s:%llu: ", file, (unsigned long long)line);
	vappend_as(&m, 0, fmt, ap);
	if (m.len < sizeof(m.buf))
		m.buf[m.len++] = '\n';
	emit(&m);
}

void at_vdisplay(int l, const char *fmt, va_list ap)
{
	struct at_message m = { .len = 0 };

	if (at_display_level < l)
		return;
	vappend(&m, fmt, ap);
	emit(&m);
}

void at_display(int l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	at_vdisplay(l, fmt, ap);
	va_end(ap);
}

void at_display_progress(const char *fmt, ...)
{
	struct at_message m = { .buf = "\r", .len = 1 };
	va_list ap;

	va_start(ap, fmt);
	vappend(&m, fmt, ap);
	va_end(ap);
	emit(&m);
	at_display_line_open = 1;
}

void at_say(int l, const char *file, uint64_t line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline(l, file, line, fmt, ap);
	va_end(ap);
}

int at_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline(1, NULL, 0, fmt, ap);
	va_end(ap);
	at_display(1, "Try '%s --help'.\n", at_program_name);
	return AT_EXIT_USAGE;
}

void at_display_step(int step)
{
	int l = at_display_level + step;

	at_display_level = l < 0 ? 0 : l > 4 ? 4 : l;
}

int at_write_error(const char *name, int err)
{
	if (err == EPIPE) {
		if (!reader_gone)
			at_verbose("%s: the reader went away; output stopped", name);
		reader_gone = 1;
		return 1;
	}
	at_error("%s: write error: %s", name, strerror(err ? err : EIO));
	return 0;
}

int at_reader_gone(void)
{
	return reader_gone;
}

int at_exit_status(int status)
{
	sigset_t set;

	if (!reader_gone)
		return status;
	signal(SIGPIPE, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(SIGPIPE);
	return 128 + SIGPIPE;
}
