/* output.h: a large write buffer over a file descriptor, and how outputs are opened.
 *
 * Writers append bytes; the buffer goes out in one write() when full or on flush. A failed
 * write (EPIPE on a closed pipe, ENOSPC, ...) is remembered: err holds the errno and every later
 * write is dropped, so callers check once, at flush time, and report the file name. A text
 * writer sets whole_lines: a write that stops inside a line (a full disk, a file size limit)
 * then takes that line's start back off a regular file, so the file ends with a whole line (on
 * a pipe or a device the bytes are gone and cannot be taken back; of a line longer than the
 * buffer, which goes out in pieces, only the last piece can be).
 *
 * Opening a path never blocks and never empties anything but a regular file: the open is
 * O_NONBLOCK (a FIFO with no reader is refused, ENXIO, instead of waiting; the flag is cleared
 * once open), without O_TRUNC (a regular file is emptied with ftruncate once it is known to be
 * one), O_CLOEXEC. Two rules:
 *
 * - plain (alloctap-munge, run by a user on the user's own files): the path is opened as any
 *   tool opens it, links followed; a new file is created 0644 less the umask.
 * - guarded (AT_OUTPUT_GUARDED: alloctapd, which runs as root next to other users' files and
 *   writes heap addresses that defeat ASLR): what the path names is looked at before it is
 *   opened (an O_PATH descriptor, then opened through /proc/self/fd, so the file checked is the
 *   file opened). Refused: a symbolic link (ELOOP; not followed, dangling or not), a
 *   directory, a block device or socket, a regular file with more than one hard link (EMLINK),
 *   and a file of another user in a sticky folder writable by others (EACCES; the rule of the
 *   kernel's fs.protected_regular, applied whatever that setting). A regular file, a FIFO with a
 *   reader or a character device is written; a missing file is created with O_EXCL, mode 0600
 *   (as perf record creates perf.data). */
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
	int whole_lines;   /* text: a write cut inside a line takes the line back (above) */
	const char *name;  /* path or "<stdout>", for messages */
	const char *why;   /* after a failed open: the reason, for "cannot open NAME: WHY" */
	size_t len;
	uint64_t written;  /* bytes handed to write() successfully */
	char *buf;         /* AT_OUTPUT_BUFSIZE bytes, mmapped */
};

/* Flags of at_output_open_path. */
enum {
	AT_OUTPUT_APPEND = 1u << 0,  /* write after what the file holds; else empty it first */
	AT_OUTPUT_GUARDED = 1u << 1, /* the guarded rule above; else the plain one */
};

/* Opens path for writing by the rules above ("-" or NULL: standard output, "<stdout>"). 0, or
 * -1 with errno and o->why, the reason to print after the path (strerror(errno) or the rule's
 * own: "a symbolic link (outputs are not opened through links)", "a FIFO with no reader"...). */
int at_output_open_path(struct at_output *o, const char *path, unsigned flags);
/* at_output_open_path(o, path, 0): plain, emptied. */
int at_output_open(struct at_output *o, const char *path);
/* at_output_open_path(o, path, AT_OUTPUT_APPEND): plain, appended to. */
int at_output_open_append(struct at_output *o, const char *path);
/* Wraps an fd the caller owns. 0, or -1 with errno. */
int at_output_open_fd(struct at_output *o, int fd, const char *name);
/* Writes out the buffer. 0, or -1 (o->err set). The buffer is then empty, but its bytes stay
 * at o->buf until the next write: after a failed flush, the first (o->written before the flush
 * subtracted from o->written after it) of them are what reached the file and stayed there
 * (with whole_lines, a line cut short and taken back is not counted). */
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
