/* discover.h: which object provides a target's malloc. */
#ifndef ALLOCTAP_DISCOVER_H
#define ALLOCTAP_DISCOVER_H

#include <stddef.h>
#include <sys/types.h>

/* The rule (issue 3): the executable if it defines malloc (a statically linked allocator),
 * else the first LD_PRELOAD entry that defines it, else the C library.
 * exe: path of the executable; preload: the LD_PRELOAD value resolved to paths, separated by
 * spaces or colons (may be NULL); libc: path of the C library (may be NULL).
 * Copies the chosen path to out. 0, or -1 if none of them defines malloc. */
int at_choose_allocator(const char *exe, const char *preload, const char *libc, char *out,
			size_t outlen);

/* Discovery for a running process: reads /proc/PID/exe, /proc/PID/environ and /proc/PID/maps,
 * opens objects through /proc/PID/root. Writes the chosen object's path (as the daemon opens it)
 * to out. 0, or -1 with a reason in why (a buffer of whylen bytes). */
int at_discover_pid(pid_t pid, char *out, size_t outlen, char *why, size_t whylen);

/* Discovery before launch: exe is the resolved command path, envp its environment. Library
 * names without '/' are searched in the usual library directories. 0, or -1 with why. */
int at_discover_launch(const char *exe, char *const envp[], char *out, size_t outlen,
		       char *why, size_t whylen);

/* Searches a library file name in the standard library directories. 0 with its path in out,
 * or -1. */
int at_find_library(const char *name, char *out, size_t outlen);

#endif
