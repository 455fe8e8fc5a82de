/* discover.c: which object provides a target's malloc. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "discover.h"
#include "elfsym.h"
#include "maps.h"

static int copy_path(char *out, size_t outlen, const char *path)
{
	if (strlen(path) >= outlen)
		return -1;
	strcpy(out, path);
	return 0;
}

int at_choose_allocator(const char *exe, const char *preload, const char *libc, char *out,
			size_t outlen)
{
	if (exe && at_elf_defines_malloc(exe))
		return copy_path(out, outlen, exe);
	for (const char *p = preload; p && *p;) {
		size_t n = strcspn(p, " :");
		char one[4096];

		if (n > 0 && n < sizeof(one)) {
			memcpy(one, p, n);
			one[n] = '\0';
			if (at_elf_defines_malloc(one))
				return copy_path(out, outlen, one);
		}
		p += n;
		p += strspn(p, " :");
	}
	if (libc && at_elf_defines_malloc(libc))
		return copy_path(out, outlen, libc);
	return -1;
}

static const char *const library_dirs[] = {
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64",
	"/lib", "/usr/lib", "/usr/local/lib",
};

int at_find_library(const char *name, char *out, size_t outlen)
{
	for (size_t i = 0; i < sizeof(library_dirs) / sizeof(library_dirs[0]); i++) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/%s", library_dirs[i], name);
		if (access(path, R_OK) == 0 && realpath(path, out) && strlen(out) < outlen)
			return 0;
	}
	return -1;
}

/* Resolves each LD_PRELOAD entry to a path (searching bare names); writes them to out
 * separated by spaces. */
static void resolve_preload(const char *value, char *out, size_t outlen)
{
	size_t used = 0;

	out[0] = '\0';
	for (const char *p = value; *p;) {
		size_t n = strcspn(p, " :");
		char name[1024], path[4096];

		if (n > 0 && n < sizeof(name)) {
			memcpy(name, p, n);
			name[n] = '\0';
			if (strchr(name, '/'))
				snprintf(path, sizeof(path), "%s", name);
			else if (at_find_library(name, path, sizeof(path)) < 0)
				path[0] = '\0';
			size_t k = strlen(path);
			if (k && used + k + 2 < outlen) {
				memcpy(out + used, path, k);
				used += k;
				out[used++] = ' ';
				out[used] = '\0';
			}
		}
		p += n;
		p += strspn(p, " :");
	}
}

int at_discover_launch(const char *exe, char *const envp[], char *out, size_t outlen,
		       char *why, size_t whylen)
{
	char preload[8192] = "", libc[4096];
	const char *libc_path = NULL;

	for (char *const *e = envp; e && *e; e++)
		if (strncmp(*e, "LD_PRELOAD=", 11) == 0)
			resolve_preload(*e + 11, preload, sizeof(preload));
	if (at_find_library("libc.so.6", libc, sizeof(libc)) == 0)
		libc_path = libc;
	if (at_choose_allocator(exe, preload, libc_path, out, outlen) == 0)
		return 0;
	snprintf(why, whylen, "no malloc in %s, in LD_PRELOAD or in the C library", exe);
	return -1;
}

struct pid_objects {
	pid_t pid;
	const char *preload_names; /* LD_PRELOAD as in the environment */
	char preload[8192];        /* the mapped objects that match it, as /proc/PID/root paths */
	char libc[4096];
};

/* Whether a mapped path matches an LD_PRELOAD entry (same path or same base name). */
static int matches_preload(const char *path, const char *names)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	for (const char *p = names; p && *p;) {
		size_t n = strcspn(p, " :");
		const char *nb = memrchr(p, '/', n);
		size_t off = nb ? (size_t)(nb + 1 - p) : 0;

		if ((n == strlen(path) && memcmp(p, path, n) == 0) ||
		    (n - off == strlen(base) && memcmp(p + off, base, n - off) == 0))
			return 1;
		p += n;
		p += strspn(p, " :");
	}
	return 0;
}

static int note_object(const struct at_map_entry *e, void *arg)
{
	struct pid_objects *o = arg;
	char path[4096];

	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)o->pid, e->path);
	if (!o->libc[0] && at_is_libc_path(e->path))
		snprintf(o->libc, sizeof(o->libc), "%s", path);
	if (matches_preload(e->path, o->preload_names) && !strstr(o->preload, path)) {
		size_t used = strlen(o->preload);
		if (used + strlen(path) + 2 < sizeof(o->preload))
			snprintf(o->preload + used, sizeof(o->preload) - used, "%s ", path);
	}
	return 0;
}

/* Reads LD_PRELOAD from /proc/PID/environ into buf ("" when unset). */
static void read_preload_env(pid_t pid, char *buf, size_t len)
{
	char path[64], env[65536];
	int fd;
	ssize_t n;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, env, sizeof(env) - 1);
	close(fd);
	if (n <= 0)
		return;
	env[n] = '\0';
	for (char *p = env; p < env + n; p += strlen(p) + 1)
		if (strncmp(p, "LD_PRELOAD=", 11) == 0)
			snprintf(buf, len, "%s", p + 11);
}

int at_discover_pid(pid_t pid, char *out, size_t outlen, char *why, size_t whylen)
{
	struct pid_objects o = { .pid = pid };
	char maps[64], exe[4096], preload_names[4096];
	unsigned long bad = 0;

	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	if (access(exe, F_OK) < 0 && errno == ENOENT) {
		snprintf(why, whylen, "no process %d", (int)pid);
		return -1;
	}
	read_preload_env(pid, preload_names, sizeof(preload_names));
	o.preload_names = preload_names;
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	int rc = at_maps_for_each(maps, note_object, &o, &bad);
	if (rc == -1) {
		snprintf(why, whylen, "cannot read %s: %s", maps, strerror(errno));
		return -1;
	}
	if (rc == -2) {
		snprintf(why, whylen, "%s:%lu: malformed line", maps, bad);
		return -1;
	}
	if (at_choose_allocator(exe, o.preload, o.libc[0] ? o.libc : NULL, out, outlen) == 0)
		return 0;
	snprintf(why, whylen, "process %d has no malloc in its executable, LD_PRELOAD or C library",
		 (int)pid);
	return -1;
}
