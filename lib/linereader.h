/* linereader.h: reads a file or stdin line by line, lines of any length.
 *
 * The buffer is mmapped (never malloc'ed), so a replay that reads through it leaves the
 * allocator under test untouched. It grows (mremap) only when a line is longer than anything
 * seen so far, so there is no allocation per line. A line is handed out without its '\n';
 * a CR before the '\n' is kept (callers decide); a last line without '\n' is still a line. */
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
};

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
/* Next line: 1 with line and len set (valid until the next call), 0 at end of input, -1 on a
 * read error (errno set). */
int at_linereader_next(struct at_linereader *r, const char **line, size_t *len);
void at_linereader_close(struct at_linereader *r);

#endif
