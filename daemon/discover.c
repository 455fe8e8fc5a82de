/* discover.c: which object provides a target's malloc. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "caps.h"
#include "discover.h"
#include "elfsym.h"
#include "procfs.h"
#include "procmaps.h"

static int copy_path(char *out, size_t outlen, const char *path)
{
	if (strlen(path) >= outlen)
		return -1;
	strcpy(out, path);
	return 0;
}

/* Whether the file at path defines malloc, remembered per file (device, inode, size, change
 * time): a traced tree executes the same few programs over and over. */
static int defines_malloc(const char *path)
{
	static struct {
		dev_t dev;
		ino_t ino;
		off_t size;
		struct timespec ctime;
		int defines;
	} verdicts[64];
	static unsigned next;
	struct stat st;

	if (stat(path, &st) < 0)
		return 0;
	for (unsigned i = 0; i < sizeof(verdicts) / sizeof(verdicts[0]); i++)
		if (verdicts[i].ino == st.st_ino && verdicts[i].dev == st.st_dev &&
		    verdicts[i].size == st.st_size && verdicts[i].ctime.tv_sec == st.st_ctim.tv_sec &&
		    verdicts[i].ctime.tv_nsec == st.st_ctim.tv_nsec)
			return verdicts[i].defines;
	int defines = at_elf_defines_malloc(path);
	unsigned i = next++ % (sizeof(verdicts) / sizeof(verdicts[0]));
	verdicts[i].dev = st.st_dev;
	verdicts[i].ino = st.st_ino;
	verdicts[i].size = st.st_size;
	verdicts[i].ctime = st.st_ctim;
	verdicts[i].defines = defines;
	return defines;
}

int at_choose_allocator(const char *exe, const char *preload, const char *libc, char *out,
			size_t outlen)
{
	if (exe && defines_malloc(exe))
		return copy_path(out, outlen, exe);
	for (const char *p = preload; p && *p;) {
		size_t n = strcspn(p, " :");
		char one[4096];

		if (n > 0 && n < sizeof(one)) {
			memcpy(one, p, n);
			one[n] = '\0';
			if (defines_malloc(one))
				return copy_path(out, outlen, one);
		}
		p += n;
		p += strspn(p, " :");
	}
	if (libc && defines_malloc(libc))
		return copy_path(out, outlen, libc);
	return -1;
}

static const char *const library_dirs[] = {
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64",
	"/lib", "/usr/lib", "/usr/local/lib",
};

/* Searches name in the library directories under root ("" for the daemon's own root, where the
 * path is made canonical; a process's root is left as it is, since its absolute links would
 * resolve against the daemon's root). 0 with the path in out, or -1. */
static int find_library_under(const char *root, const char *name, char *out, size_t outlen)
{
	for (size_t i = 0; i < sizeof(library_dirs) / sizeof(library_dirs[0]); i++) {
		char path[4096], real[PATH_MAX];

		if ((size_t)snprintf(path, sizeof(path), "%s%s/%s", root, library_dirs[i], name) >=
			    sizeof(path) ||
		    access(path, R_OK) < 0)
			continue;
		if (*root)
			return copy_path(out, outlen, path);
		if (realpath(path, real) && copy_path(out, outlen, real) == 0)
			return 0;
	}
	return -1;
}

int at_find_library(const char *name, char *out, size_t outlen)
{
	return find_library_under("", name, out, outlen);
}

/* Resolves each LD_PRELOAD entry to a path under root (searching bare names); writes them to
 * out separated by spaces. */
static void resolve_preload(const char *root, const char *value, char *out, size_t outlen)
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
				snprintf(path, sizeof(path), "%s%s", root, name);
			else if (find_library_under(root, name, path, sizeof(path)) < 0)
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

/* The rule for an image whose libraries are not mapped (yet): its executable, its LD_PRELOAD
 * value, and the C library found under root. */
static int choose_for_image(const char *root, const char *exe, const char *preload_value,
			    char *out, size_t outlen)
{
	char preload[8192] = "", libc[4096];
	const char *libc_path = NULL;

	if (preload_value)
		resolve_preload(root, preload_value, preload, sizeof(preload));
	if (find_library_under(root, "libc.so.6", libc, sizeof(libc)) == 0)
		libc_path = libc;
	return at_choose_allocator(exe, preload, libc_path, out, outlen);
}

int at_discover_launch(const char *exe, char *const envp[], char *out, size_t outlen,
		       char *why, size_t whylen)
{
	const char *preload = NULL;

	for (char *const *e = envp; e && *e; e++)
		if (strncmp(*e, "LD_PRELOAD=", 11) == 0)
			preload = *e + 11;
	if (choose_for_image("", exe, preload, out, outlen) == 0)
		return 0;
	snprintf(why, whylen, "no malloc in %s, in LD_PRELOAD or in the C library", exe);
	return -1;
}

/* "" when pid's root is the daemon's, else PROC/PID/root (a chroot or a container). */
static void process_root(const char *proc, pid_t pid, char *root, size_t len)
{
	struct stat ours, theirs;

	snprintf(root, len, "%s/%d/root", proc, (int)pid);
	if (stat("/", &ours) == 0 && stat(root, &theirs) == 0 && ours.st_dev == theirs.st_dev &&
	    ours.st_ino == theirs.st_ino)
		root[0] = '\0';
}

int at_mapped_path(const char *proc, pid_t pid, const struct at_procmaps_entry *e, char *out,
		   size_t outlen)
{
	uint64_t dev = makedev(e->dev_major, e->dev_minor);
	char rooted[4096];

	if (e->path_truncated)
		return -1;
	int n = snprintf(rooted, sizeof(rooted), "%s/%d/root%s", proc, (int)pid, e->path);
	int fits = n > 0 && (size_t)n < sizeof(rooted);
	if (at_same_file(e->path, dev, e->inode)) /* the path names that very file here too */
		return copy_path(out, outlen, e->path);
	if (fits && at_same_file(rooted, dev, e->inode))
		return copy_path(out, outlen, rooted);
	if (fits && access(rooted, F_OK) == 0)
		return copy_path(out, outlen, rooted);
	return copy_path(out, outlen, e->path);
}

struct pid_objects {
	pid_t pid;
	const char *preload_names; /* LD_PRELOAD as in the environment */
	char preload[8192];        /* the mapped objects that match it, as the daemon opens them */
	char libc[4096];
};

/* Whether the entry's base name (n bytes at name) names the mapped file e in the directory of
 * opened, the path by which the daemon opens it: a preload named by a link to it (a soname,
 * libtcmalloc_minimal.so.4 for libtcmalloc_minimal.so.4.5.10). */
static int names_in_its_directory(const char *name, size_t n, const char *opened,
				  const struct at_procmaps_entry *e)
{
	const char *slash = strrchr(opened, '/');
	char candidate[4096];

	if (!slash || n == 0 ||
	    (size_t)snprintf(candidate, sizeof(candidate), "%.*s/%.*s", (int)(slash - opened),
			     opened, (int)n, name) >= sizeof(candidate))
		return 0;
	return at_same_file(candidate, makedev(e->dev_major, e->dev_minor), e->inode);
}

/* Whether the mapped file e (opened: the path by which the daemon opens it) is an LD_PRELOAD
 * entry: the same path or base name, or an entry's base name that names it in its own
 * directory. */
static int matches_preload(const struct at_procmaps_entry *e, const char *opened,
			   const char *names)
{
	const char *path = e->path, *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	for (const char *p = names; p && *p;) {
		size_t n = strcspn(p, " :");
		const char *nb = memrchr(p, '/', n);
		size_t off = nb ? (size_t)(nb + 1 - p) : 0;

		if ((n == strlen(path) && memcmp(p, path, n) == 0) ||
		    (n - off == strlen(base) && memcmp(p + off, base, n - off) == 0) ||
		    names_in_its_directory(p + off, n - off, opened, e))
			return 1;
		p += n;
		p += strspn(p, " :");
	}
	return 0;
}

/* Notes a mapped object that is the C library or an LD_PRELOAD entry. A path that cannot be
 * opened whole (longer than the buffers) is passed over. */
static int note_object(const struct at_procmaps_entry *e, void *arg)
{
	struct pid_objects *o = arg;
	char path[4096];

	if (at_mapped_path("/proc", o->pid, e, path, sizeof(path)) < 0)
		return 0;
	if (!o->libc[0] && at_is_libc_path(e->path))
		snprintf(o->libc, sizeof(o->libc), "%s", path);
	if (matches_preload(e, path, o->preload_names) && !strstr(o->preload, path)) {
		size_t used = strlen(o->preload);
		if (used + strlen(path) + 2 < sizeof(o->preload))
			snprintf(o->preload + used, sizeof(o->preload) - used, "%s ", path);
	}
	return 0;
}

/* LD_PRELOAD of pid, from all of its environment, copied to buf ("" when unset). */
static void read_preload_env(pid_t pid, char *buf, size_t len)
{
	char *env;
	size_t n;

	buf[0] = '\0';
	if (at_proc_read("/proc", pid, "environ", &env, &n) < 0)
		return;
	const char *v = at_environ_get(env, n, "LD_PRELOAD");
	if (v)
		snprintf(buf, len, "%s", v);
	free(env);
}

/* The executable's path as the daemon names it: the link's target when it names the same file
 * as PROC/PID/exe, else PROC/PID/exe (a deleted file, a path of another namespace). */
static void exe_path(pid_t pid, char *out, size_t outlen)
{
	char link[64], target[4096];
	struct stat st;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(link, target, sizeof(target) - 1);
	if (n > 0 && stat(link, &st) == 0) {
		target[n] = '\0';
		if (at_same_file(target, (uint64_t)st.st_dev, (uint64_t)st.st_ino) &&
		    copy_path(out, outlen, target) == 0)
			return;
	}
	snprintf(out, outlen, "%s", link);
}

int at_discover_pid(pid_t pid, char *out, size_t outlen, char *why, size_t whylen)
{
	struct pid_objects o = { .pid = pid };
	char maps[64], exe[4096], preload_names[4096];
	unsigned long bad = 0;

	char target[16];

	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	if (readlink(exe, target, sizeof(target)) < 0 && errno != ENAMETOOLONG) {
		/* no such process, or another user's: its maps would read as empty */
		if (errno == ENOENT)
			snprintf(why, whylen, "no process %d", (int)pid);
		else
			snprintf(why, whylen, "cannot read %s: %s%s", exe, strerror(errno),
				 errno == EACCES || errno == EPERM ? at_caps_hint(AT_CAPS_OTHER_PROCESS)
								   : "");
		return -1;
	}
	exe_path(pid, exe, sizeof(exe));
	read_preload_env(pid, preload_names, sizeof(preload_names));
	o.preload_names = preload_names;
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	int rc = at_procmaps_for_each_file(maps, note_object, &o, &bad);
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

int at_discover_exec(pid_t pid, char *out, size_t outlen, char *why, size_t whylen)
{
	char exe[4096], root[64];
	char *env = NULL;
	size_t n = 0;

	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	if (access(exe, F_OK) < 0) {
		snprintf(why, whylen, "no process %d", (int)pid);
		return -1;
	}
	exe_path(pid, exe, sizeof(exe));
	process_root("/proc", pid, root, sizeof(root));
	at_proc_read("/proc", pid, "environ", &env, &n);
	const char *preload = env ? at_environ_get(env, n, "LD_PRELOAD") : NULL;
	int rc = choose_for_image(root, exe, preload, out, outlen);
	free(env);
	if (rc == 0)
		return 0;
	snprintf(why, whylen, "process %d (%s) has no malloc in its executable, LD_PRELOAD or C "
		 "library", (int)pid, exe);
	return -1;
}

struct interpreter {
	pid_t pid;
	uint64_t exe_dev, exe_inode;
	char *out;
	size_t outlen;
	int found;
};

/* The first mapped file that is not the executable: the program's interpreter. */
static int note_interpreter(const struct at_procmaps_entry *e, void *arg)
{
	struct interpreter *in = arg;

	if (makedev(e->dev_major, e->dev_minor) == in->exe_dev && e->inode == in->exe_inode)
		return 0;
	in->found = at_mapped_path("/proc", in->pid, e, in->out, in->outlen) == 0;
	return 1;
}

int at_discover_exec_stop(pid_t pid, char *out, size_t outlen, char *loader, size_t loaderlen,
			  char *why, size_t whylen)
{
	struct interpreter in = { .pid = pid, .out = loader, .outlen = loaderlen };
	char exe[4096], maps[64];
	struct stat st;

	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	if (stat(exe, &st) < 0) {
		snprintf(why, whylen, "no process %d", (int)pid);
		return -1;
	}
	in.exe_dev = st.st_dev;
	in.exe_inode = st.st_ino;
	exe_path(pid, exe, sizeof(exe));
	if (defines_malloc(exe))
		return copy_path(out, outlen, exe);
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	at_procmaps_for_each_file(maps, note_interpreter, &in, NULL);
	if (in.found)
		return 1;
	snprintf(why, whylen, "process %d (%s) has no malloc in its executable and no dynamic "
		 "loader", (int)pid, exe);
	return -1;
}

struct other_files {
	uint64_t exe_dev, exe_inode, first_dev, first_inode;
	unsigned n; /* distinct files other than the executable, up to 2 */
};

/* Counts the files other than the executable (the loader first), up to two. */
static int note_other_file(const struct at_procmaps_entry *e, void *arg)
{
	struct other_files *o = arg;
	uint64_t dev = makedev(e->dev_major, e->dev_minor);

	if ((dev == o->exe_dev && e->inode == o->exe_inode) ||
	    (o->n && dev == o->first_dev && e->inode == o->first_inode))
		return 0;
	if (o->n++ == 0) {
		o->first_dev = dev;
		o->first_inode = e->inode;
	}
	return o->n >= 2;
}

int at_discover_libraries_mapped(pid_t pid)
{
	struct other_files o = { 0 };
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (stat(path, &st) < 0)
		return 0;
	o.exe_dev = st.st_dev;
	o.exe_inode = st.st_ino;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	at_procmaps_for_each_file(path, note_other_file, &o, NULL);
	return o.n >= 2;
}
