/* discover.h: which object provides a target's allocator of a family of lib/functions.h's
 * AT_FAMILIES. Each entry point looks for first, the ELF symbol of the family's first function
 * (at_family_symbol: "malloc" for the C family), which every object of the family defines. */
#ifndef ALLOCTAP_DISCOVER_H
#define ALLOCTAP_DISCOVER_H

#include <stddef.h>
#include <sys/types.h>

struct at_procmaps_entry;

/* The ELF symbol of family's first function (enum at_family), the one every object of the
 * family defines: a string of the program's, or NULL for a family out of range. */
const char *at_family_symbol(unsigned family);

/* Whether the file at path defines the function first (remembered per file and symbol). */
int at_discover_defines(const char *path, const char *first);

/* The rule: the executable if it defines first (a statically linked allocator),
 * else the first LD_PRELOAD entry that defines it, else the C library.
 * exe: path of the executable; preload: the LD_PRELOAD value resolved to paths, separated by
 * spaces or colons (may be NULL); libc: path of the C library (may be NULL).
 * Copies the chosen path to out. 0, or -1 if none of them defines first. */
int at_choose_allocator(const char *exe, const char *preload, const char *libc,
			const char *first, char *out, size_t outlen);

/* Discovery for a running process: the first object of its dynamic loader's link_map list
 * (read from its memory through the loader's _r_debug) that defines first, the loader's own
 * rule; without that list, at_choose_allocator's rule: reads /proc/PID/exe, all of
 * /proc/PID/environ and /proc/PID/maps, and opens each mapped object by the path at_mapped_path gives (the
 * executable by its link's target when that names the same file, else /proc/PID/exe). Writes
 * the chosen object's path (as the daemon opens it) to out. 0, or -1 with a reason in why (a
 * buffer of whylen bytes). */
int at_discover_pid(pid_t pid, const char *first, char *out, size_t outlen, char *why,
		    size_t whylen);

/* Discovery for a process whose dynamic loader may still be at work (held at its
 * _dl_debug_state, or attached in the middle of an exec): 0 with the path in out when the
 * loader's link_map list names an object that defines first; 1 with why, and the loader's path
 * in loader, when the loader (one with _r_debug) is still at work: its list not set up, its
 * state not RT_CONSISTENT, or nothing listed but the executable and the loader (LD_AUDIT's first
 * consistent state): the caller waits for its next consistent state. Otherwise (no such loader,
 * or a complete list without first) what at_discover_pid returns. */
int at_discover_loaded(pid_t pid, const char *first, char *out, size_t outlen, char *loader,
		       size_t loaderlen, char *why, size_t whylen);

/* Discovery for a process that has just executed a new image: its executable is mapped but its
 * libraries are not yet (the dynamic loader maps them later). Reads /proc/PID/exe and all of
 * /proc/PID/environ, and looks for LD_PRELOAD entries and the C library under the process's
 * own root. out gets the chosen object's path: the executable's path when it names the same
 * file as /proc/PID/exe, else /proc/PID/exe itself. 0, or -1 with why. */
int at_discover_exec(pid_t pid, const char *first, char *out, size_t outlen, char *why,
		     size_t whylen);

/* Discovery at an exec stop, by what the process maps: 0 with the executable's path in out when
 * it defines first; else 1 with the path of its dynamic loader (the one mapped file that is not
 * the executable; the executable itself when it is the loader, run as `ld.so PROGRAM`) in
 * loader: the allocator is among the libraries the loader will map, to be
 * found then with at_discover_pid. -1 with why (gone, or a static program without first). */
int at_discover_exec_stop(pid_t pid, const char *first, char *out, size_t outlen, char *loader,
			  size_t loaderlen, char *why, size_t whylen);

/* Whether process pid maps a file besides its executable and its dynamic loader (the loader
 * has mapped libraries). 0 also when it cannot be read. */
int at_discover_libraries_mapped(pid_t pid);

/* The path by which the daemon opens a file that process pid maps (e, from PROC/PID/maps).
 * A maps path is relative to the reader's root, except for a file of another mount namespace
 * (a container), whose path is relative to that namespace's root: so the file is PROC/PID/root
 * followed by the path for a container, and the path itself for a chrooted process of our
 * namespace. The candidate that names the mapped file (device and inode) wins, the path itself
 * first (the same file in both namespaces); when neither does
 * (an overlay file system shows the underlying file's numbers), PROC/PID/root and the path if
 * that exists, else the path. 0, or -1 when the path is cut in the maps line or does not fit
 * in out. */
int at_mapped_path(const char *proc, pid_t pid, const struct at_procmaps_entry *e, char *out,
		   size_t outlen);

/* Discovery before launch: exe is the resolved command path, envp its environment. Library
 * names without '/' are searched in the usual library directories. 0, or -1 with why. */
int at_discover_launch(const char *exe, char *const envp[], const char *first, char *out,
		       size_t outlen, char *why, size_t whylen);

/* Searches a library file name in the standard library directories. 0 with its path in out,
 * or -1. */
int at_find_library(const char *name, char *out, size_t outlen);

#endif
