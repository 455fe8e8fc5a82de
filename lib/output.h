/* output.h: a large write buffer over a file descriptor.
 *
 * Writers append bytes; the buffer goes out in one write() when full or on flush. A failed
 * write (EPIPE on a closed pipe, ENOSPC, ...) is remembered: err holds the errno and every later
 * write is dropped, so callers check once, at flush time, and report the file name. */
#ifndef ALLOCTAP_OUTPUT_H
#define ALLOCTAP_OUTPUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define AT_OUTPUT_BUFSIZE (1u << 20)

struct at_output {
	int fd;
	int own_fd;
	int err;           /* first errno of a failed write, 0 if none */
	const char *name;  /* path or "<stdout>", for messages */
	size_t len;
	uint64_t written;  /* bytes handed to write() successfully */
	char *buf;         /* AT_OUTPUT_BUFSIZE bytes, mmapped */
};

/* Opens path for writing (truncating), "-" or NULL for stdout. 0, or -1 with errno. */
int at_output_open(struct at_output *o, const char *path);
/* Opens path for appending (MALLOC_LOG's rule for paths). 0, or -1 with errno. */
int at_output_open_append(struct at_output *o, const char *path);
/* Wraps an fd the caller owns. 0, or -1 with errno. */
int at_output_open_fd(struct at_output *o, int fd, const char *name);
/* Writes out the buffer. 0, or -1 (o->err set). */
int at_output_flush(struct at_output *o);
/* Flushes and closes. 0, or -1 if any write failed (o->err set). */
int at_output_close(struct at_output *o);
void at_output_write_slow(struct at_output *o, const void *p, size_t n);

/* Room for at least n bytes at the returned pointer; commit them with at_output_commit. n must
 * be at most AT_OUTPUT_BUFSIZE. */
static inline char *at_output_reserve(struct at_output *o, size_t n)
{
	if (o->len + n > AT_OUTPUT_BUFSIZE)
		at_output_flush(o);
	return o->buf + o->len;
}

static inline void at_output_commit(struct at_output *o, size_t n)
{
	o->len += n;
}

static inline void at_output_write(struct at_output *o, const void *p, size_t n)
{
	if (o->len + n <= AT_OUTPUT_BUFSIZE) {
		memcpy(o->buf + o->len, p, n);
		o->len += n;
	} else {
		at_output_write_slow(o, p, n);
	}
}

#endif
