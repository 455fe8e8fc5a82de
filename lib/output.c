/* output.c: buffered writer over a file descriptor. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "output.h"

int at_output_open_fd(struct at_output *o, int fd, const char *name)
{
	memset(o, 0, sizeof(*o));
	o->fd = fd;
	o->name = name;
	o->buf = mmap(NULL, AT_OUTPUT_BUFSIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (o->buf == MAP_FAILED) {
		o->buf = NULL;
		return -1;
	}
	return 0;
}

static int open_path(struct at_output *o, const char *path, int flags)
{
	if (!path || strcmp(path, "-") == 0)
		return at_output_open_fd(o, 1, "<stdout>");
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0644);
	if (fd < 0)
		return -1;
	if (at_output_open_fd(o, fd, path) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	o->own_fd = 1;
	return 0;
}

int at_output_open(struct at_output *o, const char *path)
{
	return open_path(o, path, O_TRUNC);
}

int at_output_open_append(struct at_output *o, const char *path)
{
	return open_path(o, path, O_APPEND);
}

int at_output_flush(struct at_output *o)
{
	size_t off = 0;

	while (off < o->len && !o->err) {
		ssize_t n = write(o->fd, o->buf + off, o->len - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			o->err = errno;
			break;
		}
		off += (size_t)n;
		o->written += (uint64_t)n;
	}
	o->len = 0;
	return o->err ? -1 : 0;
}

void at_output_write_slow(struct at_output *o, const void *p, size_t n)
{
	const char *s = p;

	while (n) {
		size_t room = AT_OUTPUT_BUFSIZE - o->len;
		if (room == 0) {
			at_output_flush(o);
			continue;
		}
		size_t k = n < room ? n : room;
		memcpy(o->buf + o->len, s, k);
		o->len += k;
		s += k;
		n -= k;
	}
}

int at_output_close(struct at_output *o)
{
	int rc = at_output_flush(o);

	if (o->own_fd && close(o->fd) < 0 && !o->err) {
		o->err = errno;
		rc = -1;
	}
	if (o->buf)
		munmap(o->buf, AT_OUTPUT_BUFSIZE);
	o->buf = NULL;
	o->own_fd = 0;
	return rc;
}
