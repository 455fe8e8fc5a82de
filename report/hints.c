/* hints.c: the debug file, package and debuginfod fetch that would name an object's unnamed
 * frames (hints.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "display.h"
#include "hints.h"

extern char **environ;

#define TEXT_(x) #x
#define TEXT(x) TEXT_(x)

/* Whether the n bytes at s are a Debian package name. */
static int package_name(const char *s, size_t n)
{
	if (n == 0 || n >= REP_PACKAGE_MAX || !((s[0] >= 'a' && s[0] <= 'z') ||
						(s[0] >= '0' && s[0] <= '9')))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '+' ||
		      s[i] == '.' || s[i] == '-'))
			return 0;
	return 1;
}

/* One line of dpkg-query -S's output (n bytes): 1 and the package in pkg when it says one
 * package owns path, else 0. */
static int owner_line(const char *line, size_t n, const char *path, char *pkg)
{
	size_t plen = strlen(path), name_len;
	const char *colon;

	/* "pkg[:arch]: PATH": the PATH is the line's end, after ": " */
	if (plen == 0 || n < plen + 3 || memcmp(line + n - plen, path, plen) != 0 ||
	    memcmp(line + n - plen - 2, ": ", 2) != 0)
		return 0;
	n -= plen + 2;
	if (memchr(line, ',', n) || memchr(line, ' ', n))
		return 0; /* several packages, or a diversion */
	colon = memchr(line, ':', n);
	name_len = colon ? (size_t)(colon - line) : n;
	if (!package_name(line, name_len))
		return 0;
	memcpy(pkg, line, name_len);
	pkg[name_len] = '\0';
	return 1;
}

int rep_dpkg_owner_parse(const char *out, size_t len, const char *path, char *pkg)
{
	const char *end = out + len;

	while (out < end) {
		const char *nl = memchr(out, '\n', (size_t)(end - out));
		size_t n = nl ? (size_t)(nl - out) : (size_t)(end - out);

		if (owner_line(out, n, path, pkg))
			return 1;
		out += n + (nl != NULL);
	}
	return 0;
}

/* Reads more of fd into out (size bytes, len used, one kept for the NUL): the count kept;
 * past size the rest is read and dropped (-1), so that the writer never dies of SIGPIPE; 0 at
 * the end or on an error. */
static ssize_t read_more(int fd, char *out, size_t size, size_t len)
{
	char drop[4096];
	ssize_t got;

	do
		got = len + 1 < size ? read(fd, out + len, size - 1 - len)
				     : read(fd, drop, sizeof(drop));
	while (got < 0 && errno == EINTR);
	if (got <= 0)
		return 0;
	return len + 1 < size ? got : -1;
}

/* Runs argv (a program found in PATH, its standard input and error /dev/null: the report may
 * be reading its own standard input): its standard output (its first size - 1 bytes,
 * NUL-terminated) in out; its length, or -1 (not run, or its exit status was not 0). */
static ssize_t run_tool(char *const argv[], char *out, size_t size)
{
	posix_spawn_file_actions_t fa;
	int p[2], status, err;
	size_t len = 0;
	ssize_t got;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	err = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	while (!err && (got = read_more(p[0], out, size, len)) != 0)
		len += got > 0 ? (size_t)got : 0;
	close(p[0]);
	out[len] = '\0';
	if (err)
		return -1;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? (ssize_t)len : -1;
}

/* The package that owns path by `dpkg-query -S path`: 1 with its name in pkg, or 0. */
static int dpkg_search(const char *path, char *pkg)
{
	char *argv[] = { "dpkg-query", "-S", (char *)path, NULL };
	char out[4096];
	ssize_t n = run_tool(argv, out, sizeof(out));

	return n > 0 && rep_dpkg_owner_parse(out, (size_t)n, path, pkg);
}

/* The package that installed path, by dpkg-query (then by its name before the merged /usr):
 * 1 with its name in pkg, or 0. */
static int dpkg_owner(const char *path, char *pkg)
{
	static const char *const merged[] = { "/usr/bin/", "/usr/sbin/", "/usr/lib/",
					      "/usr/lib32/", "/usr/lib64/", "/usr/libx32/" };

	if (path[0] != '/' || strpbrk(path, "*?[\\"))
		return 0; /* dpkg-query takes patterns: such a path would match others */
	if (dpkg_search(path, pkg))
		return 1;
	for (size_t i = 0; i < sizeof(merged) / sizeof(merged[0]); i++)
		if (strncmp(path, merged[i], strlen(merged[i])) == 0)
			return dpkg_search(path + 4, pkg);
	return 0;
}

/* The source package of installed binary package bin, into src: 1, or 0 (unknown). */
static int source_of(const char *bin, char *src)
{
	char *argv[] = { "dpkg-query", "-W", "-f=${source:Package}", (char *)bin, NULL };
	char out[REP_PACKAGE_MAX + 1];
	ssize_t n = run_tool(argv, out, sizeof(out));

	if (n <= 0 || !package_name(out, (size_t)n))
		return 0;
	memcpy(src, out, (size_t)n + 1);
	return 1;
}

/* The line of out (len bytes) after the one at p, or out + len. */
static const char *next_line(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));

	return nl ? nl + 1 : end;
}

int rep_apt_policy_knows(const char *out, size_t len, const char *name)
{
	const char *end = out + len, *p = out;
	size_t n = strlen(name);
	static const char candidate[] = "  Candidate: ", none[] = "(none)";

	while (p < end) { /* "NAME:" at the start of a line */
		const char *next = next_line(p, end);

		if (n && (size_t)(next - p) >= n + 1 && memcmp(p, name, n) == 0 && p[n] == ':' &&
		    (p + n + 1 == end || p[n + 1] == '\n'))
			break;
		p = next;
	}
	for (p = next_line(p, end); p < end && *p == ' '; p = next_line(p, end)) {
		size_t k = sizeof(candidate) - 1, line = (size_t)(next_line(p, end) - p);

		if (line > k && memcmp(p, candidate, k) == 0)
			return !(line - k >= sizeof(none) - 1 &&
				 memcmp(p + k, none, sizeof(none) - 1) == 0);
	}
	return 0;
}

/* Debian's names of the debug packages of binary package bin (source package src, or NULL),
 * in the order they are asked: BIN-dbgsym, SRC-dbg when the source's name differs, BIN-dbg.
 * How many. */
static int debug_names(const char *bin, const char *src, char names[][REP_DEBUG_MAX])
{
	int n = 0;

	snprintf(names[n++], REP_DEBUG_MAX, "%s-dbgsym", bin);
	if (src && strcmp(src, bin) != 0)
		snprintf(names[n++], REP_DEBUG_MAX, "%s-dbg", src);
	snprintf(names[n++], REP_DEBUG_MAX, "%s-dbg", bin);
	return n;
}

/* pk->tried from its n names, and pk->debug the first of them that apt-cache policy's
 * output (len bytes; NULL: none) says apt knows. */
static void choose_debug(struct rep_package *pk, char names[][REP_DEBUG_MAX], int n,
			 const char *policy, size_t len)
{
	size_t used = 0;

	pk->tried[0] = pk->debug[0] = '\0';
	for (int i = 0; i < n; i++) {
		int w = snprintf(pk->tried + used, sizeof(pk->tried) - used, "%s%s", i ? ", " : "",
				 names[i]);
		used = w < 0 || (size_t)w >= sizeof(pk->tried) - used ? sizeof(pk->tried) - 1
								       : used + (size_t)w;
		if (!pk->debug[0] && policy && rep_apt_policy_knows(policy, len, names[i]))
			memcpy(pk->debug, names[i], sizeof(pk->debug));
	}
}

/* Appends printf text to buf (size bytes, *len used, cut at the end). */
static void put(char *buf, size_t size, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*len + 1 >= size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *len, size - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len = *len + (size_t)n < size ? *len + (size_t)n : size - 1;
}

/* Why a fetch failed, as people read it. */
static const char *fetch_reason(int err)
{
	switch (err) {
	case ENOENT:
		return "the servers have none";
	case ELIBACC:
		return AT_DEBUGINFOD_LIBRARY " cannot be loaded (apt-get install libdebuginfod1)";
	case EBADMSG:
		return "the file served has another build-id, and is not used";
	case ECANCELED:
		return "cut after " TEXT(AT_DEBUGINFOD_FETCH_S) " s";
	case ETIME:
	case ETIMEDOUT:
		return "timed out (DEBUGINFOD_TIMEOUT)";
	default:
		return strerror(err);
	}
}

/* The fetch's failure, after "; " or alone. */
static void put_fetch(const struct at_object_outcome *o, const char *urls, const char *id,
		      char *buf, size_t size, size_t *len)
{
	const char *why = fetch_reason(o->debuginfod_errno);

	if (!urls)
		urls = "";
	if (o->debuginfod == -2)
		put(buf, size, len, "debuginfod not asked for build-id %s (DEBUGINFOD_URLS=%s): "
			"an earlier fetch failed: %s", id, urls, why);
	else
		put(buf, size, len, "no debug file from debuginfod for build-id %s "
			"(DEBUGINFOD_URLS=%s): %s", id, urls, why);
}

/* The way to the debug file of an object with a build-id (after "...unnamed: "). */
static void put_way(const struct at_object_outcome *o, const char *debug_dir,
		    const struct rep_package *package, const char *urls, const char *id, char *buf,
		    size_t size, size_t *len)
{
	char path[PATH_MAX];

	at_debug_file_path(debug_dir, o->build_id, o->build_id_len, path, sizeof(path));
	put(buf, size, len, "its debug file by build-id, %s, would name them", path);
	if (package && package->debug[0])
		put(buf, size, len, " (Debian package %s installed the object, by dpkg -S; of its "
			"debug packages by Debian's names, %s, apt knows %s)", package->name,
		    package->tried, package->debug);
	else if (package)
		put(buf, size, len, " (Debian package %s installed the object, by dpkg -S; of its "
			"debug packages by Debian's names, %s, apt knows none: %s-dbgsym would be "
			"in the debian-debug archive)", package->name, package->tried,
		    package->name);
	if (o->debuginfod < 0) {
		put(buf, size, len, "; ");
		put_fetch(o, urls, id, buf, size, len);
	} else if (!urls || !urls[strspn(urls, " \t")]) {
		put(buf, size, len, "; or set DEBUGINFOD_URLS to fetch it from a debuginfod "
			"server");
	}
}

size_t rep_hint_text(const struct at_object_outcome *o, const char *debug_dir,
		     const struct rep_package *package, const char *urls, char *buf, size_t size)
{
	const char *slash = strrchr(o->path, '/');
	char id[2 * AT_BUILD_ID_MAX + 1] = "";
	size_t len = 0;

	for (size_t i = 0; i < o->build_id_len && i < AT_BUILD_ID_MAX; i++)
		snprintf(id + 2 * i, 3, "%02x", o->build_id[i]);
	buf[0] = '\0';
	if (!o->unnamed || o->debug_file) {
		if (o->debuginfod >= 0)
			return 0;
		put(buf, size, &len, "%s: ", o->path);
		put_fetch(o, urls, id, buf, size, &len);
		return len;
	}
	put(buf, size, &len, "%s: %" PRIu64 " frame%s left unnamed (%s+0xOFFSET): ", o->path,
	    o->unnamed, o->unnamed == 1 ? "" : "s", slash ? slash + 1 : o->path);
	if (o->build_id_len < 2)
		put(buf, size, &len, "it has no build-id, so no debug file can be found for it "
			"(link it with -Wl,--build-id, or keep its symbols)");
	else
		put_way(o, debug_dir, package, urls, id, buf, size, &len);
	return len;
}

/* One object to speak of: its outcome (path and build-id copied), and its package. */
struct entry {
	struct at_object_outcome o;
	char *path;
	uint8_t id[AT_BUILD_ID_MAX];
	int has_package;              /* pk and names are set */
	struct rep_package pk;
	char names[3][REP_DEBUG_MAX]; /* its debug packages to ask apt about */
	int nnames;
};

/* The objects of a symbolizer, collected so that apt is asked once for all. */
struct entries {
	struct entry *e;
	size_t n, cap;
	int failed; /* out of memory: the objects past it were not kept */
};

static void collect(void *arg, const struct at_object_outcome *o)
{
	struct entries *es = arg;

	if (es->failed || (!o->unnamed && o->debuginfod >= 0))
		return; /* nothing to say of it */
	if (es->n == es->cap) {
		size_t cap = es->cap ? 2 * es->cap : 8;
		struct entry *a = realloc(es->e, cap * sizeof(*a));

		if (!a) {
			es->failed = 1;
			return;
		}
		es->e = a;
		es->cap = cap;
	}
	struct entry *e = &es->e[es->n];
	*e = (struct entry){ .o = *o, .path = strdup(o->path) };
	if (!e->path) {
		es->failed = 1;
		return;
	}
	memcpy(e->id, o->build_id, o->build_id_len);
	e->o.path = e->path;
	e->o.build_id = e->id;
	es->n++;
}

/* Finds the package of e's object when a debug file is wanted: dpkg-query's. */
static void find_package(struct entry *e)
{
	char src[REP_PACKAGE_MAX];

	if (!e->o.unnamed || e->o.debug_file || e->o.build_id_len < 2 ||
	    !dpkg_owner(e->path, e->pk.name))
		return;
	e->has_package = 1;
	e->nnames = debug_names(e->pk.name, source_of(e->pk.name, src) ? src : NULL, e->names);
}

/* `apt-cache policy` of every debug package name of es, once (it reads apt's lists whole,
 * about a second): its output in *out (malloc'ed) and its length, or -1 (no name, or apt-cache
 * missing or failed: nothing known). */
static ssize_t ask_apt(const struct entries *es, char **out)
{
	enum { OUT_MAX = 1 << 20 };
	size_t n = 0;
	char **argv = malloc((3 * es->n + 3) * sizeof(*argv));
	ssize_t len = -1;

	*out = NULL;
	if (!argv)
		return -1;
	argv[n++] = "apt-cache";
	argv[n++] = "policy";
	for (size_t i = 0; i < es->n; i++)
		for (int k = 0; es->e[i].has_package && k < es->e[i].nnames; k++)
			argv[n++] = es->e[i].names[k];
	argv[n] = NULL;
	if (n > 2 && (*out = malloc(OUT_MAX)))
		len = run_tool(argv, *out, OUT_MAX);
	free(argv);
	return len;
}

/* Says the warning of each object of es, its debug package chosen from apt's answer. */
static void say_entries(struct entries *es, const char *debug_dir)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	char text[AT_DISPLAY_MAX], *policy;
	ssize_t len;

	for (size_t i = 0; i < es->n; i++)
		find_package(&es->e[i]);
	len = ask_apt(es, &policy);
	for (size_t i = 0; i < es->n; i++) {
		struct entry *e = &es->e[i];

		if (e->has_package)
			choose_debug(&e->pk, e->names, e->nnames, len > 0 ? policy : NULL,
				     len > 0 ? (size_t)len : 0);
		if (rep_hint_text(&e->o, debug_dir, e->has_package ? &e->pk : NULL, urls, text,
				  sizeof(text)))
			at_warn("%s", text);
	}
	free(policy);
}

void rep_hints_say(const struct rep_sites *x, const char *debug_dir)
{
	struct entries es = { 0 };

	if (!x->symbolizer)
		return;
	at_symbolizer_objects(x->symbolizer, collect, &es);
	say_entries(&es, debug_dir);
	if (es.failed)
		at_warn("%s", strerror(ENOMEM)); /* some objects' words were lost */
	for (size_t i = 0; i < es.n; i++)
		free(es.e[i].path);
	free(es.e);
}
