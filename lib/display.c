/* display.c: leveled messages on stderr, one write(2) each. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "display.h"
#include "prim.h"

int at_display_level = 2;
int at_display_line_open;
const char *at_program_name = "alloctap";

static void vappend(struct at_message *m, const char *fmt, va_list ap)
{
	size_t room = sizeof(m->buf) - m->len;
	int n = vsnprintf(m->buf + m->len, room, fmt, ap);

	if (n < 0)
		return;
	if ((size_t)n < room) {
		m->len += (size_t)n;
		return;
	}
	/* cut: "..." in place of the end, one byte left for the newline a line ends with */
	memcpy(m->buf + sizeof(m->buf) - 4, "...", 3);
	m->len = sizeof(m->buf) - 1;
	if (fmt[0] && fmt[strlen(fmt) - 1] == '\n')
		m->buf[m->len++] = '\n';
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
	vappend(&m, fmt, ap);
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
