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

/* Runs `dpkg-query -S path`: its standard output (at most size - 1 bytes, NUL-terminated) in
 * out; its length, or -1 (not run, or it failed: no package owns path). */
static ssize_t dpkg_query(const char *path, char *out, size_t size)
{
	char *argv[] = { "dpkg-query", "-S", (char *)path, NULL };
	posix_spawn_file_actions_t fa;
	int p[2], status, err;
	size_t len = 0;
	ssize_t got;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	err = posix_spawnp(&pid, "dpkg-query", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	while (!err && len + 1 < size &&
	       ((got = read(p[0], out + len, size - 1 - len)) > 0 || (got < 0 && errno == EINTR)))
		len += got > 0 ? (size_t)got : 0;
	close(p[0]);
	out[len] = '\0';
	if (err)
		return -1;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? (ssize_t)len : -1;
}

/* The package that installed path, by dpkg-query (then by its name before the merged /usr):
 * 1 with its name in pkg, or 0. */
static int dpkg_owner(const char *path, char *pkg)
{
	static const char *const merged[] = { "/usr/bin/", "/usr/sbin/", "/usr/lib/",
					      "/usr/lib32/", "/usr/lib64/", "/usr/libx32/" };
	char out[4096];
	ssize_t n;

	if (path[0] != '/' || strpbrk(path, "*?[\\"))
		return 0; /* dpkg-query takes patterns: such a path would match others */
	n = dpkg_query(path, out, sizeof(out));
	if (n > 0 && rep_dpkg_owner_parse(out, (size_t)n, path, pkg))
		return 1;
	for (size_t i = 0; i < sizeof(merged) / sizeof(merged[0]); i++)
		if (strncmp(path, merged[i], strlen(merged[i])) == 0) {
			n = dpkg_query(path + 4, out, sizeof(out));
			return n > 0 && rep_dpkg_owner_parse(out, (size_t)n, path + 4, pkg);
		}
	return 0;
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
static void put_way(const struct at_object_outcome *o, const char *debug_dir, const char *package,
		    const char *urls, const char *id, char *buf, size_t size, size_t *len)
{
	char path[PATH_MAX];

	at_debug_file_path(debug_dir, o->build_id, o->build_id_len, path, sizeof(path));
	put(buf, size, len, "its debug file by build-id, %s, would name them", path);
	if (package)
		put(buf, size, len, " (Debian package %s installed the object, by dpkg -S; "
			"Debian's debug files of a package are in PKG-dbgsym, here %s-dbgsym, of "
			"the debian-debug archive, or in PKG-dbg for a few)", package, package);
	if (o->debuginfod < 0) {
		put(buf, size, len, "; ");
		put_fetch(o, urls, id, buf, size, len);
	} else if (!urls || !urls[strspn(urls, " \t")]) {
		put(buf, size, len, "; or set DEBUGINFOD_URLS to fetch it from a debuginfod "
			"server");
	}
}

size_t rep_hint_text(const struct at_object_outcome *o, const char *debug_dir,
		     const char *package, const char *urls, char *buf, size_t size)
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

/* What rep_hints_say passes to each object's call. */
struct hints {
	const char *debug_dir;
	const char *urls;
};

static void say_object(void *arg, const struct at_object_outcome *o)
{
	const struct hints *h = arg;
	char text[AT_DISPLAY_MAX], pkg[REP_PACKAGE_MAX];
	int wanted = o->unnamed && !o->debug_file && o->build_id_len >= 2;

	if (rep_hint_text(o, h->debug_dir, wanted && dpkg_owner(o->path, pkg) ? pkg : NULL, h->urls,
			  text, sizeof(text)))
		at_warn("%s", text);
}

void rep_hints_say(const struct rep_sites *x, const char *debug_dir)
{
	struct hints h = { debug_dir, getenv("DEBUGINFOD_URLS") };

	if (x->symbolizer)
		at_symbolizer_objects(x->symbolizer, say_object, &h);
}
