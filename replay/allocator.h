/* allocator.h: choosing the allocator a replay runs against (--allocator), and finding out
 * which one the process really uses.
 *
 * The choice is made by re-executing /proc/self/exe with LD_PRELOAD set. The child finds the
 * marker RP_ALLOCATOR_ENV in its environment, does not re-execute again, and checks in
 * /proc/self/maps that malloc really comes from the library asked for. */
#ifndef ALLOCTAP_REPLAY_ALLOCATOR_H
#define ALLOCTAP_REPLAY_ALLOCATOR_H

#include <stddef.h>

/* Environment marker of a re-executed replayer: the library path it must run with, or
 * "glibc". */
#define RP_ALLOCATOR_ENV "ALLOCTAP_REPLAY_ALLOCATOR"

/* The library file for a name (jemalloc, tcmalloc, mimalloc), NULL for glibc, or the
 * argument itself when it contains a '/' (a PATH). Returns -1 for an unknown name. */
int rp_allocator_library(const char *name, const char **path);

/* With --allocator NAME: unless this process is already the re-executed one, re-executes
 * itself with the allocator preloaded and does not return on success. Returns 0 when the
 * process should go on replaying here, or -1 after printing an error (missing library, exec
 * failure, or a child whose malloc is not the one asked for). */
int rp_allocator_select(const char *name, char *const argv[]);

/* Identifies the allocator malloc resolves to: *name becomes "glibc", "jemalloc",
 * "tcmalloc", "mimalloc" or the library's file name, path the file (cap bytes). Returns 0, or
 * -1 with "unknown" in both if /proc/self/maps says nothing. */
int rp_allocator_identify(const char **name, char *path, size_t cap);

#endif
