/* procmaps.h: /proc/PID/maps parsed without allocating, and the file names of C libraries.
 *
 * A maps file is read with at_linereader_open_buffer() (lib/linereader.h) into a buffer the
 * caller gives, on its stack say: read(2), no stdio, no malloc, no mapping, so a replay can
 * read its own maps while the allocator under test is loaded. A line longer than the buffer
 * is never cut silently: its entry says that its path was truncated, and how long it is. */
#ifndef ALLOCTAP_PROCMAPS_H
#define ALLOCTAP_PROCMAPS_H

#include <stddef.h>
#include <stdint.h>

#include "linereader.h"

/* A buffer that holds any maps line: a PATH_MAX path, the fields, " (deleted)". */
#define AT_PROCMAPS_BUF 8192

/* ---- /proc/PID/maps --------------------------------------------------------------------- */

/* One line of /proc/PID/maps: "start-end perms offset major:minor inode   path". */
struct at_procmaps_entry {
	uint64_t start, end, offset, inode;
	unsigned dev_major, dev_minor;
	char perms[5];
	const char *path;       /* NUL-terminated, in the parsed line: "" for anonymous memory,
				 * "[heap]", "[stack]"... for the kernel's names, a file's path
				 * with " (deleted)" after it when the file is gone */
	size_t path_len;        /* of the whole path, even when truncated */
	int path_truncated;     /* path holds only the first bytes of a longer path */
};

/* Parses one maps line in place; a '\n' may end it (it becomes a NUL). Returns 0, or -1 when
 * the line does not have the shape above (end below start, a number too big, two lines...).
 * The entry's path is not truncated. */
int at_procmaps_parse_line(char *line, struct at_procmaps_entry *e);

/* The next entry of a maps file opened with at_linereader_open_buffer(): 1 (e valid until
 * the next call), 0 at the end, -1 on a read error (errno set), -2 on a malformed line (its
 * number in r->lineno). A line longer than the buffer gives an entry with path_truncated set
 * (at least the buffer's size - 65 bytes of the line are kept). */
int at_procmaps_next(struct at_linereader *r, struct at_procmaps_entry *e);

/* Calls fn for every file-backed mapping (a path starting with '/' and an inode) of the maps
 * file at path, in file order, until fn returns non-zero (that value is returned); the reader
 * buffer is AT_PROCMAPS_BUF bytes on the stack, so a truncated path is possible only for a path
 * longer than PATH_MAX, and fn sees path_truncated. Returns 0 at the end, -1 with errno if the
 * file cannot be read, -2 on a malformed line (*bad_line, if not NULL, set to its number). */
int at_procmaps_for_each_file(const char *path,
			      int (*fn)(const struct at_procmaps_entry *e, void *arg), void *arg,
			      unsigned long *bad_line);

/* ---- C library names ------------------------------------------------------------------ */

enum at_libc {
	AT_LIBC_NONE = 0,
	AT_LIBC_GLIBC,          /* "libc.so.6", "libc-2.31.so" */
	AT_LIBC_MUSL,           /* "ld-musl-ARCH.so.1", "libc.musl-ARCH.so.1" */
};

/* Which C library a path names, by its file name (the part after the last '/'). */
enum at_libc at_libc_of_path(const char *path);

/* Whether a path names a C library, glibc or musl. */
static inline int at_is_libc_path(const char *path)
{
	return at_libc_of_path(path) != AT_LIBC_NONE;
}

#endif
