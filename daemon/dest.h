/* dest.h: the -o DEST argument (MALLOC_LOG's rule). */
#ifndef ALLOCTAP_DEST_H
#define ALLOCTAP_DEST_H

/* A DEST is a file descriptor when it is a decimal number below 10000, "-" for stdout, else a
 * path opened for append. */
struct at_dest {
	int fd;           /* -1 for a path */
	const char *path; /* NULL for a descriptor */
};

/* Parses s. 0, or -1 for an empty string. */
int at_dest_parse(const char *s, struct at_dest *d);

#endif
