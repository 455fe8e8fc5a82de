/* render.c: the Graphviz format of an output, by its extension (render.h). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "prim.h"
#include "render.h"

extern char **environ;

int rep_render_extension(const char *path, char *ext, size_t size)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	const char *dot = strrchr(base, '.');

	ext[0] = 0;
	if (!dot || dot == base)
		return 0;
	if (strlen(dot + 1) >= size)
		return -1;
	size_t i = 0;
	for (const char *c = dot + 1; *c; c++)
		ext[i++] = (char)tolower((unsigned char)*c);
	ext[i] = 0;
	return 0;
}

int rep_render_listed(const char *list, const char *format)
{
	const char *p = strstr(list, "Use one of:");
	size_t n = strlen(format);

	if (!p || !n)
		return 0;
	for (p += strlen("Use one of:"); *p;) {
		while (*p && isspace((unsigned char)*p))
			p++;
		size_t k = strcspn(p, " \t\r\n");
		if (k == n && strncmp(p, format, n) == 0)
			return 1;
		p += k;
	}
	return 0;
}

/* Reads fd to its end into buf (size bytes, NUL-ended; the rest is dropped). */
static void read_all(int fd, char *buf, size_t size)
{
	size_t len = 0;
	char drop[512];
	ssize_t n;

	while ((n = len + 1 < size ? at_read_some(fd, buf + len, size - 1 - len)
				   : at_read_some(fd, drop, sizeof(drop))) > 0)
		if (len + 1 < size)
			len += (size_t)n;
	buf[len] = 0;
}

int rep_render_formats(char *buf, size_t size)
{
	char *argv[] = { "dot", "-T?", NULL };
	posix_spawn_file_actions_t fa;
	int p[2], status;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, p[1], STDERR_FILENO);
	int err = posix_spawnp(&pid, "dot", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (!err) {
		read_all(p[0], buf, size);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	close(p[0]);
	errno = err;
	return err ? -1 : 0;
}

enum rep_render rep_render_of(const char *path, char *format)
{
	char list[4096];

	if (rep_render_extension(path, format, REP_RENDER_FORMAT_MAX) < 0)
		return REP_RENDER_UNKNOWN;
	if (!format[0] || strcmp(format, "dot") == 0 || strcmp(format, "gv") == 0)
		return REP_RENDER_TEXT;
	if (rep_render_formats(list, sizeof(list)) < 0)
		return REP_RENDER_NO_DOT;
	return rep_render_listed(list, format) ? REP_RENDER_DOT : REP_RENDER_UNKNOWN;
}
