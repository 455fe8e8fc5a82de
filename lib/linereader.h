/* linereader.h: reads a file or stdin line by line.
 *
 * The buffer is mmapped (never malloc'ed), so a replay that reads through it leaves the
 * allocator under test untouched. It grows (mremap) only when a line is longer than anything
 * seen so far, so there is no allocation per line, and lines may be long: any line shorter
 * than max_line bytes (AT_LINEREADER_MAX_LINE, 64 MiB, unless lowered); a longer one fails the
 * read with EMSGSIZE rather than growing the buffer without end on an input such as /dev/zero
 * (no log line comes near it). A line is handed out without its '\n'; a CR before the '\n' is
 * kept (callers decide); a last line without '\n' is still a line.
 *
 * Or the buffer is the caller's (on its stack, say: for small files such as those of /proc):
 * then nothing is mapped at all, each line is NUL-terminated in the buffer, and a line longer
 * than the buffer is cut, never silently: r->cut_len says how long it was. */
#ifndef ALLOCTAP_LINEREADER_H
#define ALLOCTAP_LINEREADER_H

#include <stddef.h>
#include <stdint.h>

struct at_linereader {
	int fd;
	int own_fd;           /* close fd at the end */
	const char *name;     /* for messages: the path, or "<stdin>" */
	char *buf;            /* mmapped */
	size_t cap;           /* bytes mapped */
	size_t start, end;    /* unread bytes are buf[start, end) */
	int eof;
	uint64_t lineno;      /* number of the line last returned, from 1 */
	uint64_t bytes;       /* bytes consumed so far (the offset of the next line) */
	int callers_buf;      /* buf is the caller's: never grown nor unmapped */
	size_t cut_len;       /* 0, or the whole length of the line last returned, which did not
			       * fit the caller's buffer and was cut */
	size_t max_line;      /* the longest line the mmapped buffer grows to hold */
};

#define AT_LINEREADER_MAX_LINE ((size_t)64 << 20)

/* The smallest caller's buffer: a cut line keeps cap - 65 bytes or more. */
#define AT_LINEREADER_MIN_BUF 256

/* Opens an input for reading: path, or standard input for NULL or "-". Returns the fd (0 for
 * standard input, which the caller must not close) with *name set to path or "<stdin>", or -1
 * with errno set. */
int at_input_fd(const char *path, const char **name);

/* Opens path ("-" or NULL for stdin). Returns 0, or -1 with errno set. */
int at_linereader_open(struct at_linereader *r, const char *path);
/* Starts reading an fd the caller already has open; the first `preload` bytes of data
 * (already read from fd by a format sniffer) are fed first. Returns 0, or -1 with errno. */
int at_linereader_open_fd(struct at_linereader *r, int fd, const char *name,
			  const void *preload, size_t preload_len);
/* Opens path for reading into the caller's buffer buf of cap bytes (at least
 * AT_LINEREADER_MIN_BUF): a regular file only, as the files of /proc are (at_open_regular: a
 * FIFO is refused, never waited on). Returns 0, or -1 with errno (EINVAL for a buffer too small
 * or a file of another kind, EISDIR for a directory). */
int at_linereader_open_buffer(struct at_linereader *r, const char *path, char *buf,
			      size_t cap);
/* Next line: 1 with line and len set (valid until the next call), 0 at end of input, -1 on a
 * read error (errno set; EMSGSIZE: a line longer than max_line, see at_linereader_strerror). In the caller's buffer, line is NUL-terminated, and a cut line has
 * len its kept bytes and r->cut_len its whole length (0 for a line that fits). */
int at_linereader_next(struct at_linereader *r, const char **line, size_t *len);
void at_linereader_close(struct at_linereader *r);
/* The reason to print for an errno at_linereader_next left: strerror's, but for EMSGSIZE a
 * sentence about the line limit. */
const char *at_linereader_strerror(int err);

#endif
