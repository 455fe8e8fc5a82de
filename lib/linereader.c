/* linereader.c: line reader over an mmapped, growing buffer, or over the caller's buffer. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "linereader.h"
#include "prim.h"

#define AT_LINEREADER_INITIAL (1u << 20)

int at_linereader_open_fd(struct at_linereader *r, int fd, const char *name,
			  const void *preload, size_t preload_len)
{
	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->name = name;
	r->max_line = AT_LINEREADER_MAX_LINE;
	r->cap = AT_LINEREADER_INITIAL;
	while (r->cap < preload_len)
		r->cap *= 2;
	r->buf = at_map(r->cap, 0);
	if (!r->buf)
		return -1;
	if (preload_len)
		memcpy(r->buf, preload, preload_len);
	r->end = preload_len;
	return 0;
}

int at_input_fd(const char *path, const char **name)
{
	if (!path || strcmp(path, "-") == 0) {
		*name = "<stdin>";
		return 0;
	}
	*name = path;
	return open(path, O_RDONLY | O_CLOEXEC);
}

int at_linereader_open(struct at_linereader *r, const char *path)
{
	const char *name;
	int fd = at_input_fd(path, &name);

	if (fd < 0)
		return -1;
	if (at_linereader_open_fd(r, fd, name, NULL, 0) < 0) {
		int e = errno;
		if (fd != 0)
			close(fd);
		errno = e;
		return -1;
	}
	r->own_fd = fd != 0;
	return 0;
}

int at_linereader_open_buffer(struct at_linereader *r, const char *path, char *buf,
			      size_t cap)
{
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	if (cap < AT_LINEREADER_MIN_BUF) {
		errno = EINVAL;
		return -1;
	}
	const char *why;
	r->fd = at_open_regular(path, 0, &why); /* never blocks on a FIFO */
	if (r->fd < 0)
		return -1;
	r->own_fd = 1;
	r->name = path;
	r->buf = buf;
	r->cap = cap;
	r->callers_buf = 1;
	return 0;
}

/* Makes room after end: moves unread bytes to the front, or doubles the mapping when the
 * unread part already fills it (a line longer than the buffer). */
static int make_room(struct at_linereader *r)
{
	if (r->start > 0) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->start = 0;
		return 0;
	}
	if (r->cap >= r->max_line) {
		errno = EMSGSIZE;
		return -1;
	}
	void *p = at_remap(r->buf, r->cap, r->cap * 2);
	if (!p)
		return -1;
	r->buf = p;
	r->cap *= 2;
	return 0;
}

/* The first `skip` bytes of data after a cut line's kept part go through the buffer's last
 * bytes while the rest of that line is read and dropped. */
#define CUT_SKIP 64

/* In the caller's buffer, filled by one line without its '\n': keeps the line's first bytes,
 * reads and drops the rest of it through the buffer's last CUT_SKIP bytes, and leaves what
 * follows its '\n' there. */
static int cut_line(struct at_linereader *r, const char **line, size_t *len)
{
	size_t keep = r->cap - 1 - CUT_SKIP;
	char *skip = r->buf + keep + 1;
	size_t total = r->cap;

	for (;;) {
		ssize_t n = at_read_some(r->fd, skip, CUT_SKIP);
		if (n < 0)
			return -1;
		if (n == 0) {
			r->eof = 1;
			r->start = r->end = 0;
			r->bytes += total;
			break;
		}
		char *nl = memchr(skip, '\n', (size_t)n);
		if (nl) {
			total += (size_t)(nl - skip);
			r->start = (size_t)(nl + 1 - r->buf);
			r->end = (size_t)(skip + n - r->buf);
			r->bytes += total + 1;
			break;
		}
		total += (size_t)n;
	}
	r->buf[keep] = '\0';
	*line = r->buf;
	*len = keep;
	r->cut_len = total;
	r->lineno++;
	return 1;
}

int at_linereader_next(struct at_linereader *r, const char **line, size_t *len)
{
	size_t scanned = r->start;

	r->cut_len = 0;
	for (;;) {
		char *nl = memchr(r->buf + scanned, '\n', r->end - scanned);
		if (nl) {
			*line = r->buf + r->start;
			*len = (size_t)(nl - (r->buf + r->start));
			if (r->callers_buf)
				*nl = '\0';
			r->bytes += *len + 1;
			r->start = (size_t)(nl - r->buf) + 1;
			r->lineno++;
			return 1;
		}
		if (r->eof) {
			if (r->start == r->end)
				return 0;
			*line = r->buf + r->start;
			*len = r->end - r->start;
			if (r->callers_buf) /* end < cap: the read that saw the end had room */
				r->buf[r->end] = '\0';
			r->bytes += *len;
			r->start = r->end;
			r->lineno++;
			return 1;
		}
		scanned = r->end;
		if (r->end == r->cap) {
			if (r->start == 0 && r->callers_buf)
				return cut_line(r, line, len);
			size_t done = scanned - r->start;
			if (make_room(r) < 0)
				return -1;
			scanned = r->start + done;
		}
		ssize_t n = at_read_some(r->fd, r->buf + r->end, r->cap - r->end);
		if (n < 0)
			return -1;
		if (n == 0)
			r->eof = 1;
		r->end += (size_t)n;
	}
}

void at_linereader_close(struct at_linereader *r)
{
	if (!r->callers_buf)
		at_unmap(r->buf, r->cap);
	if (r->own_fd)
		close(r->fd);
	r->buf = NULL;
	r->own_fd = 0;
}

const char *at_linereader_strerror(int err)
{
	if (err == EMSGSIZE)
		return "a line longer than 64 MiB (no log line is: not a log?)";
	return strerror(err);
}
