/* libcs.h: the C libraries the running processes map (--all probes each one once). */
#ifndef ALLOCTAP_LIBCS_H
#define ALLOCTAP_LIBCS_H

#include <stdint.h>

#define AT_LIBCS_MAX 64

struct at_libcs {
	struct {
		uint64_t dev, inode; /* the file, whatever path a process reaches it by */
		char path[512];      /* as the daemon opens it (at_mapped_path in discover.h) */
	} objs[AT_LIBCS_MAX];
	unsigned n;
};

/* Adds to l, for every process under proc (normally "/proc"), the first C library its maps
 * name that defines malloc (the C family's first function), each file (device, inode) once,
 * so containers' libraries are found too. Processes that vanish or cannot be read are skipped;
 * libraries past AT_LIBCS_MAX are dropped. 0, or -1 with errno if proc cannot be read. */
int at_libcs_scan(const char *proc, struct at_libcs *l);

#endif
