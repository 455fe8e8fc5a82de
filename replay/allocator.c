/* allocator.c: --allocator by re-execution with LD_PRELOAD, checked through /proc/self/maps. */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allocator.h"
#include "display.h"
#include "procinfo.h"
#include "procmaps.h"
#include "report.h"

/* Where Debian installs the machine's libraries (AT_MULTIARCH: the Makefile's). */
#define RP_LIBDIR "/usr/lib/" AT_MULTIARCH "/"

static const struct {
	const char *name;
	const char *path;
	const char *package; /* the Debian package that ships path */
} known_allocators[] = {
	{ "glibc", NULL, "libc6" },
	{ "jemalloc", RP_LIBDIR "libjemalloc.so.2", "libjemalloc2" },
	{ "tcmalloc", RP_LIBDIR "libtcmalloc_minimal.so.4", "libtcmalloc-minimal4" },
	{ "mimalloc", RP_LIBDIR "libmimalloc.so.2", "libmimalloc2.0" },
};

static const char *package_of(const char *name)
{
	for (size_t i = 0; i < sizeof(known_allocators) / sizeof(known_allocators[0]); i++)
		if (strcmp(name, known_allocators[i].name) == 0)
			return known_allocators[i].package;
	return "?";
}

int rp_allocator_library(const char *name, const char **path)
{
	if (strchr(name, '/')) {
		*path = name;
		return 0;
	}
	for (size_t i = 0; i < sizeof(known_allocators) / sizeof(known_allocators[0]); i++) {
		if (strcmp(name, known_allocators[i].name) == 0) {
			*path = known_allocators[i].path;
			return 0;
		}
	}
	return -1;
}

/* The allocator's short name for a library path. */
static const char *name_of_library(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (at_libc_of_path(path) == AT_LIBC_GLIBC)
		return "glibc";
	for (size_t i = 1; i < sizeof(known_allocators) / sizeof(known_allocators[0]); i++)
		if (strstr(base, known_allocators[i].name))
			return known_allocators[i].name;
	return base;
}

int rp_allocator_identify(const char **name, char *path, size_t cap)
{
	void *fn = dlsym(RTLD_DEFAULT, "malloc");

	if (!fn || rp_proc_mapping_path(fn, path, cap) < 0) {
		*name = "unknown";
		snprintf(path, cap, "unknown");
		return -1;
	}
	*name = name_of_library(path);
	return 0;
}

/* In the re-executed child: is malloc the one the marker asks for? */
static int check_child(const char *want)
{
	char have[PATH_MAX], real[PATH_MAX];
	const char *have_name;

	if (rp_allocator_identify(&have_name, have, sizeof(have)) < 0) {
		at_error("cannot tell from /proc/self/maps which library provides malloc");
		return -1;
	}
	if (strcmp(want, "glibc") == 0) {
		if (strcmp(have_name, "glibc") == 0)
			return 0;
		at_error("asked for glibc's malloc but malloc comes from %s", have);
		return -1;
	}
	if (!realpath(want, real)) {
		at_error("%s: %s", want, strerror(errno));
		return -1;
	}
	if (strcmp(real, have) == 0)
		return 0;
	at_error("%s was preloaded but malloc comes from %s (not a malloc library?)", want, have);
	return -1;
}

int rp_allocator_select(const char *name, char *const argv[])
{
	const char *marker = getenv(RP_ALLOCATOR_ENV);
	const char *path;

	if (marker)
		return check_child(marker);
	if (rp_allocator_library(name, &path) < 0) {
		at_error("unknown allocator '%s' (jemalloc, tcmalloc, mimalloc, glibc or a path)",
			 name);
		return -1;
	}
	if (path && access(path, R_OK) < 0) {
		if (path == name)
			at_error("%s: %s", path, strerror(errno));
		else
			at_error("%s: %s: %s (Debian package %s)", name, path, strerror(errno),
				 package_of(name));
		return -1;
	}
	if (setenv(RP_ALLOCATOR_ENV, path ? path : "glibc", 1) < 0 ||
	    (path ? setenv("LD_PRELOAD", path, 1) : unsetenv("LD_PRELOAD")) < 0) {
		at_error("setenv: %s", strerror(errno));
		return -1;
	}
	at_verbose("re-executing with %s%s", path ? "LD_PRELOAD=" : "", path ? path : "glibc");
	execv("/proc/self/exe", argv);
	at_error("cannot re-execute /proc/self/exe: %s", strerror(errno));
	return -1;
}
