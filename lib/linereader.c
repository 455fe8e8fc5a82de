/* linereader.c: line reader over an mmapped, growing buffer. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "linereader.h"

#define AT_LINEREADER_INITIAL (1u << 20)

int at_linereader_open_fd(struct at_linereader *r, int fd, const char *name,
			  const void *preload, size_t preload_len)
{
	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->name = name;
	r->cap = AT_LINEREADER_INITIAL;
	while (r->cap < preload_len)
		r->cap *= 2;
	r->buf = mmap(NULL, r->cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r->buf == MAP_FAILED) {
		r->buf = NULL;
		return -1;
	}
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
	void *p = mremap(r->buf, r->cap, r->cap * 2, MREMAP_MAYMOVE);
	if (p == MAP_FAILED)
		return -1;
	r->buf = p;
	r->cap *= 2;
	return 0;
}

int at_linereader_next(struct at_linereader *r, const char **line, size_t *len)
{
	size_t scanned = r->start;

	for (;;) {
		char *nl = memchr(r->buf + scanned, '\n', r->end - scanned);
		if (nl) {
			*line = r->buf + r->start;
			*len = (size_t)(nl - (r->buf + r->start));
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
			r->bytes += *len;
			r->start = r->end;
			r->lineno++;
			return 1;
		}
		scanned = r->end;
		if (r->end == r->cap) {
			size_t done = scanned - r->start;
			if (make_room(r) < 0)
				return -1;
			scanned = r->start + done;
		}
		ssize_t n = read(r->fd, r->buf + r->end, r->cap - r->end);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			r->eof = 1;
		r->end += (size_t)n;
	}
}

void at_linereader_close(struct at_linereader *r)
{
	if (r->buf)
		munmap(r->buf, r->cap);
	if (r->own_fd)
		close(r->fd);
	r->buf = NULL;
	r->own_fd = 0;
}
