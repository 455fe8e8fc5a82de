/* maps.h: reading /proc/PID/maps. */
#ifndef ALLOCTAP_MAPS_H
#define ALLOCTAP_MAPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One line of /proc/PID/maps. path points into the parsed line (NUL-terminated there); it is
 * empty for anonymous mappings. */
struct at_map_entry {
	uint64_t start, end, offset, inode;
	unsigned dev_major, dev_minor;
	char perms[5];
	const char *path;
};

/* Parses one maps line in place ("start-end perms offset maj:min inode   path"). The line is
 * modified: the newline after the path becomes a NUL.
 * Returns 0, or -1 when the line does not have that shape. */
int at_maps_parse_line(char *line, struct at_map_entry *e);

/* Calls fn for every file-backed mapping of the maps file at path, in file order, until fn
 * returns non-zero (that value is returned). Returns 0 at the end, -1 with errno if the file
 * cannot be read, -2 on a malformed line (*bad_line set to its number). */
int at_maps_for_each(const char *path, int (*fn)(const struct at_map_entry *e, void *arg),
		     void *arg, unsigned long *bad_line);

/* Whether a path names a C library ("libc.so.6", "libc-2.31.so", "libc.musl-x86_64.so.1",
 * "ld-musl-x86_64.so.1"). */
int at_is_libc_path(const char *path);

#endif
