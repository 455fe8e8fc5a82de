/* discover.c: which object provides a target's allocator of a family (its malloc for the C
 * family). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "alloctap.h"
#include "caps.h"
#include "discover.h"
#include "elfsym.h"
#include "functions.h"
#include "prim.h"
#include "procfs.h"
#include "procmaps.h"

static int copy_path(char *out, size_t outlen, const char *path)
{
	if (strlen(path) >= outlen)
		return -1;
	strcpy(out, path);
	return 0;
}

/* The ELF symbol of each probed function (enum at_probe_func). */
#define AT_PROBE_SYMBOL(code, word, symbol, ...) [AT_PROBE_##code] = #symbol,
static const char *const probe_symbols[AT_PROBE_FUNC_COUNT] = {
	AT_FUNCTIONS(AT_PROBE_SYMBOL, AT_FUNC_SKIP, AT_PROBE_SYMBOL)
};

const char *at_family_symbol(unsigned family)
{
	unsigned f = at_family_first(family);

	return f < AT_PROBE_FUNC_COUNT ? probe_symbols[f] : NULL;
}

/* What the daemon asks of a file: whether it defines a function or a data object of a name
 * (and where), and whether it is a program that needs a loader, or a loader run as a program. */
enum file_question { ASK_FUNCTION, ASK_OBJECT, ASK_NEEDS_LOADER, ASK_IS_LOADER };

/* The answer read from the open file fd (owned: closed here): 1 or 0, as elfsym.h's
 * at_elf_needs_loader and at_elf_is_loader, or whether it defines the symbol (its address in
 * *vaddr then). */
static int read_answer(int fd, const char *path, enum file_question q, const char *name,
		       uint64_t *vaddr)
{
	struct at_elf e;
	const char *why;
	int rc;

	if (at_elf_open_fd(&e, fd, path, &why) < 0)
		return q == ASK_NEEDS_LOADER;
	switch (q) {
	case ASK_NEEDS_LOADER:
		rc = at_elf_has_interp(&e);
		break;
	case ASK_IS_LOADER:
		rc = at_elf_runs_as_loader(&e);
		break;
	case ASK_FUNCTION:
		rc = at_elf_find_function(&e, name, vaddr) == 1;
		break;
	default:
		rc = at_elf_find_object(&e, name, vaddr) == 1;
		break;
	}
	at_elf_close(&e);
	return rc;
}

/* Files whose answers are remembered: a traced tree executes the same few programs over and
 * over, and every process of it maps the same libraries. */
#define ANSWERS 256

/* The answers remembered: a file's (device, inode, size, change time) and the question. */
struct answer {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec ctime;
	enum file_question q;
	char name[64];
	int answer;
	uint64_t vaddr;
};

static struct answer answers[ANSWERS];
static unsigned answers_next;

/* The remembered answer to q about the file st describes, or NULL. */
static const struct answer *remembered(const struct stat *st, enum file_question q,
				       const char *name)
{
	for (unsigned i = 0; i < ANSWERS && i < answers_next; i++) {
		const struct answer *a = &answers[i];

		if (a->ino == st->st_ino && a->dev == st->st_dev && a->size == st->st_size &&
		    a->ctime.tv_sec == st->st_ctim.tv_sec && a->ctime.tv_nsec == st->st_ctim.tv_nsec &&
		    a->q == q && strcmp(a->name, name) == 0)
			return a;
	}
	return NULL;
}

/* The answer to q about the file at path (name: the symbol, or "" for the loader questions),
 * remembered per file (device, inode, size, change time) and question: at every exec and
 * every hold at the loader, each file the process maps is asked again. A file is looked up by
 * what stat(2) says of the path (which opens nothing); one not remembered is opened
 * (at_open_regular: no FIFO, no device) and its answer filed by what the descriptor names, so
 * that a path replaced between a look and a read cannot file one file's answer under another. */
static int ask(const char *path, enum file_question q, const char *name, uint64_t *vaddr)
{
	const struct answer *known;
	const char *why;
	struct stat st;
	uint64_t where = 0;

	if (strlen(name) < sizeof(answers[0].name) && stat(path, &st) == 0 &&
	    (known = remembered(&st, q, name)) != NULL) {
		if (vaddr)
			*vaddr = known->vaddr;
		return known->answer;
	}
	int fd = at_open_regular(path, 0, &why);

	if (fd < 0)
		return q == ASK_NEEDS_LOADER; /* as elfsym.h says of a file that cannot be read */
	if (fstat(fd, &st) < 0 || strlen(name) >= sizeof(answers[0].name))
		return read_answer(fd, path, q, name, vaddr ? vaddr : &where);
	if ((known = remembered(&st, q, name)) != NULL) { /* the path's look missed it */
		close(fd);
		if (vaddr)
			*vaddr = known->vaddr;
		return known->answer;
	}
	int answer = read_answer(fd, path, q, name, &where);
	struct answer *a = &answers[answers_next++ % ANSWERS];

	if (answers_next == 2 * ANSWERS)
		answers_next = ANSWERS;
	*a = (struct answer){ .dev = st.st_dev, .ino = st.st_ino, .size = st.st_size,
			      .ctime = st.st_ctim, .q = q, .answer = answer, .vaddr = where };
	strcpy(a->name, name);
	if (vaddr)
		*vaddr = where;
	return answer;
}

/* Whether the file at path defines the function first. */
static int defines(const char *path, const char *first)
{
	return ask(path, ASK_FUNCTION, first, NULL);
}

/* at_elf_needs_loader and at_elf_is_loader, remembered. */
static int needs_loader(const char *path)
{
	return ask(path, ASK_NEEDS_LOADER, "", NULL);
}

static int is_loader(const char *path)
{
	return ask(path, ASK_IS_LOADER, "", NULL);
}

int at_discover_defines(const char *path, const char *first)
{
	return defines(path, first);
}

int at_choose_allocator(const char *exe, const char *preload, const char *libc,
			const char *first, char *out, size_t outlen)
{
	if (exe && defines(exe, first))
		return copy_path(out, outlen, exe);
	for (const char *p = preload; p && *p;) {
		size_t n = strcspn(p, " :");
		char one[4096];

		if (n > 0 && n < sizeof(one)) {
			memcpy(one, p, n);
			one[n] = '\0';
			if (defines(one, first))
				return copy_path(out, outlen, one);
		}
		p += n;
		p += strspn(p, " :");
	}
	if (libc && defines(libc, first))
		return copy_path(out, outlen, libc);
	return -1;
}

/* A list of paths separated by spaces, grown as needed: LD_PRELOAD has no length limit. */
struct path_list {
	char *text; /* NUL-terminated; NULL while empty */
	size_t used, cap;
};

/* Appends path and a space to l. 0, or -1 when out of memory. */
static int path_list_add(struct path_list *l, const char *path)
{
	size_t k = strlen(path);

	if (l->used + k + 2 > l->cap) {
		size_t cap = l->cap ? l->cap : 256;
		while (l->used + k + 2 > cap)
			cap *= 2;
		char *text = realloc(l->text, cap);
		if (!text)
			return -1;
		l->text = text;
		l->cap = cap;
	}
	memcpy(l->text + l->used, path, k);
	l->used += k;
	l->text[l->used++] = ' ';
	l->text[l->used] = '\0';
	return 0;
}

/* The machine's multiarch directories (AT_MULTIARCH: its arch.mk), then the others. */
static const char *const library_dirs[] = {
	"/lib/" AT_MULTIARCH, "/usr/lib/" AT_MULTIARCH, "/lib64", "/usr/lib64",
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

/* Resolves each LD_PRELOAD entry to a path under root (searching bare names) and appends it
 * to out; an entry longer than a path can be names no file and is passed over. 0, or -1 when
 * out of memory. */
static int resolve_preload(const char *root, const char *value, struct path_list *out)
{
	for (const char *p = value; *p;) {
		size_t n = strcspn(p, " :");
		char name[PATH_MAX], path[PATH_MAX + 64];

		if (n > 0 && n < sizeof(name)) {
			memcpy(name, p, n);
			name[n] = '\0';
			if (strchr(name, '/'))
				snprintf(path, sizeof(path), "%s%s", root, name);
			else if (find_library_under(root, name, path, sizeof(path)) < 0)
				path[0] = '\0';
			if (path[0] && path_list_add(out, path) < 0)
				return -1;
		}
		p += n;
		p += strspn(p, " :");
	}
	return 0;
}

/* Whether exe is a statically linked program without the function first (none that alloctapd
 * can find: stripped, or an allocator under other names): then no object of its process has
 * one. When so, says it in why. */
static int static_without(const char *exe, const char *first, char *why, size_t whylen)
{
	if (defines(exe, first) || needs_loader(exe) || is_loader(exe))
		return 0;
	snprintf(why, whylen, "%s is statically linked and has no symbol for %s (stripped?): "
		 "its allocator cannot be found", exe, first);
	return 1;
}

/* The rule for an image whose libraries are not mapped (yet): its executable, its LD_PRELOAD
 * value, and the C library found under root (none for a statically linked program). */
static int choose_for_image(const char *root, const char *exe, const char *preload_value,
			    const char *first, char *out, size_t outlen)
{
	if (!needs_loader(exe))
		return at_choose_allocator(exe, NULL, NULL, first, out, outlen);
	struct path_list preload = { 0 };
	char libc[4096];
	const char *libc_path = NULL;

	if (preload_value && resolve_preload(root, preload_value, &preload) < 0) {
		free(preload.text);
		return -1;
	}
	if (find_library_under(root, "libc.so.6", libc, sizeof(libc)) == 0)
		libc_path = libc;
	int rc = at_choose_allocator(exe, preload.text, libc_path, first, out, outlen);
	free(preload.text);
	return rc;
}

int at_discover_launch(const char *exe, char *const envp[], const char *first, char *out,
		       size_t outlen, char *why, size_t whylen)
{
	const char *preload = NULL;

	for (char *const *e = envp; e && *e; e++)
		if (strncmp(*e, "LD_PRELOAD=", 11) == 0)
			preload = *e + 11;
	if (choose_for_image("", exe, preload, first, out, outlen) == 0)
		return 0;
	if (static_without(exe, first, why, whylen))
		return -1;
	snprintf(why, whylen, "no %s in %s, in LD_PRELOAD or in the C library", first, exe);
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
	struct path_list preload;  /* the mapped objects that match it, as the daemon opens them */
	int out_of_memory;
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
	if (matches_preload(e, path, o->preload_names) &&
	    (!o->preload.text || !strstr(o->preload.text, path)) &&
	    path_list_add(&o->preload, path) < 0) {
		o->out_of_memory = 1;
		return 1;
	}
	return 0;
}

/* LD_PRELOAD of pid, from all of its environment, whole: a string the caller frees, NULL when
 * unset or unreadable (or out of memory). */
static char *read_preload_env(pid_t pid)
{
	char *env, *value = NULL;
	size_t n;

	if (at_proc_read("/proc", pid, "environ", &env, &n) < 0)
		return NULL;
	const char *v = at_environ_get(env, n, "LD_PRELOAD");
	if (v)
		value = strdup(v);
	free(env);
	return value;
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

/* The file-backed entries of a process's maps file, copied at one read: the passes of
 * choose_by_link_map all see one state of the process (stopped), and the kernel writes out
 * the whole maps file however little of it a pass looks at. */
struct mapped_files {
	struct at_procmaps_entry *v; /* each path its own allocation */
	size_t n, cap;
};

/* at_procmaps_for_each_file's callback: copies e. */
static int copy_entry(const struct at_procmaps_entry *e, void *arg)
{
	struct mapped_files *m = arg;
	char *path = strdup(e->path);

	if (!path || at_grow((void **)&m->v, &m->cap, m->n, sizeof(*m->v)) < 0) {
		free(path);
		return -1;
	}
	m->v[m->n] = *e;
	m->v[m->n++].path = path;
	return 0;
}

static void free_mapped_files(struct mapped_files *m)
{
	for (size_t i = 0; i < m->n; i++)
		free((char *)m->v[i].path);
	free(m->v);
	memset(m, 0, sizeof(*m));
}

/* Reads the file-backed entries of maps into m (as at_procmaps_for_each_file passes them). 0,
 * or -1 when the file cannot be read, has a malformed line or memory runs out (m is empty). */
static int read_mapped_files(struct mapped_files *m, const char *maps)
{
	memset(m, 0, sizeof(*m));
	if (at_procmaps_for_each_file(maps, copy_entry, m, NULL) == 0)
		return 0;
	free_mapped_files(m);
	return -1;
}

/* Calls fn for each entry of m in order, until it returns non-zero (that value is returned);
 * 0 at the end. */
static int each_mapped_file(const struct mapped_files *m,
			    int (*fn)(const struct at_procmaps_entry *e, void *arg), void *arg)
{
	for (size_t i = 0; i < m->n; i++) {
		int stop = fn(&m->v[i], arg);

		if (stop)
			return stop;
	}
	return 0;
}

/* The dynamic loader a process maps, found by the loader's _r_debug: the first mapped object
 * (at file offset 0, other than the executable unless the executable is the loader, run as
 * `ld.so PROGRAM`) whose symbols define it. */
struct loader_debug {
	pid_t pid;
	uint64_t exe_dev, exe_inode;
	int exe_is_loader;
	uint64_t r_debug; /* its address in the process; 0 until found */
	uint64_t dev, inode; /* the loader's file */
	char path[4096];     /* the loader's path as the daemon opens it */
};

/* Notes e when it is the start of the loader: _r_debug's address is its load address plus the
 * symbol's value (a shared object's first PT_LOAD is at 0). Stops at the loader. */
static int note_loader_debug(const struct at_procmaps_entry *e, void *arg)
{
	struct loader_debug *l = arg;
	uint64_t dev = makedev(e->dev_major, e->dev_minor), vaddr;
	char path[4096];

	if (e->offset != 0 ||
	    (!l->exe_is_loader && dev == l->exe_dev && e->inode == l->exe_inode) ||
	    at_mapped_path("/proc", l->pid, e, path, sizeof(path)) < 0)
		return 0;
	int found = ask(path, ASK_OBJECT, "_r_debug", &vaddr);

	if (found) {
		l->r_debug = e->start + vaddr;
		l->dev = dev;
		l->inode = e->inode;
		snprintf(l->path, sizeof(l->path), "%s", path);
	}
	return found;
}

/* Reads len bytes at addr of process pid. 0, or -1. */
static int read_remote(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

/* Reads the NUL-terminated string at addr of process pid into out. 0, or -1 when it cannot be
 * read or does not fit. */
static int read_remote_string(pid_t pid, uint64_t addr, char *out, size_t outlen)
{
	size_t used = 0;

	while (used < outlen) {
		/* up to the end of addr's page, so a string that ends before an unmapped page reads */
		size_t chunk = 4096 - ((addr + used) & 4095);
		if (chunk > outlen - used)
			chunk = outlen - used;
		if (read_remote(pid, addr + used, out + used, chunk) < 0)
			return -1;
		char *nul = memchr(out + used, '\0', chunk);
		if (nul)
			return 0;
		used += chunk;
	}
	return -1;
}

/* The link_map fields alloctapd reads (<link.h>, the public part of glibc's struct). */
#define AT_R_DEBUG_MAP 8
#define AT_LINK_MAP_NAME 8
#define AT_LINK_MAP_NEXT 24
#define AT_LINK_MAP_MAX 65536 /* objects walked at most: a list that loops ends */

/* The objects of a process's link_map list, in its order, as the daemon names them. */
struct link_objects {
	pid_t pid;
	size_t n, cap;
	struct link_object {
		uint64_t dev, inode; /* the file the process's path names, in its namespace */
		char *path;          /* as the daemon opens it (at_mapped_path); NULL until found */
	} *objects;
};

/* Gives each listed object whose file e maps the path by which the daemon opens it. */
static int name_listed_object(const struct at_procmaps_entry *e, void *arg)
{
	struct link_objects *l = arg;
	uint64_t dev = makedev(e->dev_major, e->dev_minor);
	char path[4096];

	for (size_t i = 0; i < l->n; i++)
		if (!l->objects[i].path && l->objects[i].dev == dev &&
		    l->objects[i].inode == e->inode &&
		    at_mapped_path("/proc", l->pid, e, path, sizeof(path)) == 0)
			l->objects[i].path = strdup(path);
	return 0;
}

/* Appends the object whose path (in the process's namespace) is name: its device and inode,
 * through PROC/PID/root. An object that cannot be found there (the vDSO's bare name) is passed
 * over. 0, or -1 when out of memory. */
static int list_object(struct link_objects *l, const char *name)
{
	char rooted[4096 + 64];
	struct stat st;

	snprintf(rooted, sizeof(rooted), "/proc/%d/root%s", (int)l->pid, name);
	if (name[0] != '/' || stat(rooted, &st) < 0)
		return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct link_object *o = realloc(l->objects, cap * sizeof(*o));
		if (!o)
			return -1;
		l->objects = o;
		l->cap = cap;
	}
	l->objects[l->n++] = (struct link_object){ .dev = st.st_dev, .inode = st.st_ino };
	return 0;
}

/* Reads the names of the link_map list that starts at map (after the executable's entry) into
 * l. 0, or -1 when the list cannot be read. */
static int read_link_map(struct link_objects *l, uint64_t map)
{
	char name[4096];

	for (unsigned i = 0; map && i < AT_LINK_MAP_MAX; i++) {
		uint64_t name_addr;

		if (read_remote(l->pid, map + AT_LINK_MAP_NAME, &name_addr, sizeof(name_addr)) < 0)
			return -1;
		if (name_addr && read_remote_string(l->pid, name_addr, name, sizeof(name)) == 0 &&
		    list_object(l, name) < 0)
			return -1;
		if (read_remote(l->pid, map + AT_LINK_MAP_NEXT, &map, sizeof(map)) < 0)
			return -1;
	}
	return 0;
}

/* Whether the list l names an object other than the executable and the loader d (the program,
 * first in the list, does not count when the executable is the loader). */
static int lists_a_library(const struct link_objects *l, const struct loader_debug *d)
{
	for (size_t i = d->exe_is_loader ? 1 : 0; i < l->n; i++)
		if ((l->objects[i].dev != d->dev || l->objects[i].inode != d->inode) &&
		    (l->objects[i].dev != d->exe_dev || l->objects[i].inode != d->exe_inode))
			return 1;
	return 0;
}

/* The loader's rule: the first object of the process's link_map list (the executable, the
 * LD_PRELOAD objects, the needed libraries breadth first, then what dlopen added) that defines
 * the function first; exe names the executable (the list's first entry). The list is read from the
 * process's memory through its loader's _r_debug; each object is opened by the path of the file
 * the process maps (at_mapped_path). 0 with the path in out; 1 when the loader is still at work:
 * the list is not set up, the loader's state is not RT_CONSISTENT, or no object but the
 * executable and the loader is listed yet (with LD_AUDIT the loader is consistent once before
 * the program's libraries are listed); 2 when the list is complete but no object in it defines
 * first; -1 when there is no list to read (no loader with _r_debug). When the executable is the
 * loader itself (`ld.so PROGRAM`), the list's first entry is the program, named by its path,
 * and is read too. loader (may be NULL) gets the loader's path when one is found. */
static int choose_by_link_map(pid_t pid, const char *exe, const char *first, char *out,
			      size_t outlen, char *loader, size_t loaderlen)
{
	struct loader_debug d = { .pid = pid };
	struct link_objects l = { .pid = pid };
	struct mapped_files files;
	char maps[64];
	struct stat st;
	uint64_t map, next;
	uint32_t state;

	snprintf(maps, sizeof(maps), "/proc/%d/exe", (int)pid);
	if (stat(maps, &st) < 0)
		return -1;
	d.exe_dev = st.st_dev;
	d.exe_inode = st.st_ino;
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	if (read_mapped_files(&files, maps) < 0)
		return -1;
	each_mapped_file(&files, note_loader_debug, &d);
	if (!d.r_debug && !defines(exe, first) && (d.exe_is_loader = is_loader(exe)))
		each_mapped_file(&files, note_loader_debug, &d);
	int rc = -1;
	if (!d.r_debug)
		goto out;
	if (loader)
		snprintf(loader, loaderlen, "%s", d.path);
	rc = 1;
	if (read_remote(pid, d.r_debug + AT_R_DEBUG_MAP, &map, sizeof(map)) < 0 || !map ||
	    read_remote(pid, map + AT_LINK_MAP_NEXT, &next, sizeof(next)) < 0 ||
	    read_remote(pid, d.r_debug + AT_R_DEBUG_STATE, &state, sizeof(state)) < 0 ||
	    state != AT_RT_CONSISTENT)
		goto out;
	if (defines(exe, first)) {
		rc = copy_path(out, outlen, exe);
		goto out;
	}
	rc = read_link_map(&l, d.exe_is_loader ? map : next) < 0 ? -1 : 2;
	if (rc == 2)
		each_mapped_file(&files, name_listed_object, &l);
	for (size_t i = 0; rc == 2 && i < l.n; i++)
		if (l.objects[i].path && defines(l.objects[i].path, first))
			rc = copy_path(out, outlen, l.objects[i].path) == 0 ? 0 : -1;
	if (rc == 2 && !lists_a_library(&l, &d))
		rc = 1;
	for (size_t i = 0; i < l.n; i++)
		free(l.objects[i].path);
	free(l.objects);
out:
	free_mapped_files(&files);
	return rc;
}

int at_discover_pid(pid_t pid, const char *first, char *out, size_t outlen, char *why,
		    size_t whylen)
{
	struct pid_objects o = { .pid = pid };
	char maps[64], exe[4096];
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
	if (choose_by_link_map(pid, exe, first, out, outlen, NULL, 0) == 0)
		return 0;
	char *preload_names = read_preload_env(pid);
	o.preload_names = preload_names;
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	int rc = at_procmaps_for_each_file(maps, note_object, &o, &bad);
	free(preload_names);
	if (o.out_of_memory)
		snprintf(why, whylen, "process %d: out of memory for its LD_PRELOAD objects",
			 (int)pid);
	else if (rc == -1)
		snprintf(why, whylen, "cannot read %s: %s", maps, strerror(errno));
	else if (rc == -2)
		snprintf(why, whylen, "%s:%lu: malformed line", maps, bad);
	else if (at_choose_allocator(exe, o.preload.text, o.libc[0] ? o.libc : NULL, first, out,
				     outlen) == 0) {
		free(o.preload.text);
		return 0;
	} else if (!static_without(exe, first, why, whylen))
		snprintf(why, whylen, "process %d has no %s in its executable, LD_PRELOAD or C "
			 "library", (int)pid, first);
	free(o.preload.text);
	return -1;
}

int at_discover_loaded(pid_t pid, const char *first, char *out, size_t outlen, char *loader,
		       size_t loaderlen, char *why, size_t whylen)
{
	char exe[4096];
	struct stat st;

	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	if (stat(exe, &st) < 0)
		return at_discover_pid(pid, first, out, outlen, why, whylen); /* says why */
	exe_path(pid, exe, sizeof(exe));
	int rc = choose_by_link_map(pid, exe, first, out, outlen, loader, loaderlen);
	if (rc == 0)
		return 0;
	if (rc != 1) /* no list to read, or one complete without first: as for any process */
		return at_discover_pid(pid, first, out, outlen, why, whylen);
	snprintf(why, whylen, "process %d: its dynamic loader has not listed its libraries yet",
		 (int)pid);
	return 1;
}

int at_discover_exec(pid_t pid, const char *first, char *out, size_t outlen, char *why,
		     size_t whylen)
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
	int rc = choose_for_image(root, exe, preload, first, out, outlen);
	free(env);
	if (rc == 0)
		return 0;
	if (static_without(exe, first, why, whylen))
		return -1;
	snprintf(why, whylen, "process %d (%s) has no %s in its executable, LD_PRELOAD or C "
		 "library", (int)pid, exe, first);
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

int at_discover_exec_stop(pid_t pid, const char *first, char *out, size_t outlen, char *loader,
			  size_t loaderlen, char *why, size_t whylen)
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
	if (defines(exe, first))
		return copy_path(out, outlen, exe);
	if (is_loader(exe)) /* `ld.so PROGRAM`: held at the loader's own _dl_debug_state */
		return copy_path(loader, loaderlen, exe) == 0 ? 1 : -1;
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	at_procmaps_for_each_file(maps, note_interpreter, &in, NULL);
	if (in.found)
		return 1;
	if (static_without(exe, first, why, whylen))
		return -1;
	snprintf(why, whylen, "process %d (%s) has no %s in its executable and no dynamic "
		 "loader", (int)pid, exe, first);
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
