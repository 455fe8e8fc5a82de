/* preload_exec: execs a program with the oracle tracer preloaded, allocating nothing.
 *
 * Usage: preload_exec TRACER_SO LOG_PATH PROGRAM [ARG...]
 *
 * The environment is this one's, with LD_PRELOAD=TRACER_SO and ORACLE_LOG=LOG_PATH in place of
 * any earlier values. PROGRAM is a path (no PATH search). Launched by alloctapd, it makes the
 * traced pid's image before the program's own an empty prefix: `env` would make ~270 calls of
 * the C library's malloc family (setlocale) that only alloctapd would see. */
#define _GNU_SOURCE
#include <limits.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

static int is_var(const char *entry, const char *name)
{
	size_t n = strlen(name);

	return strncmp(entry, name, n) == 0 && entry[n] == '=';
}

/* Writes NAME=VALUE into buf (of PATH_MAX + 32 bytes); 0 when it does not fit. */
static int put_var(char *buf, const char *name, const char *value)
{
	size_t n = strlen(name), v = strlen(value);

	if (n + 1 + v + 1 > PATH_MAX + 32)
		return 0;
	memcpy(buf, name, n);
	buf[n] = '=';
	memcpy(buf + n + 1, value, v + 1);
	return 1;
}

static void fail(const char *msg)
{
	if (write(2, msg, strlen(msg)) < 0)
		_exit(127);
	_exit(127);
}

int main(int argc, char **argv)
{
	char preload[PATH_MAX + 32], log[PATH_MAX + 32];
	size_t n = 0;

	if (argc < 4)
		fail("usage: preload_exec TRACER_SO LOG_PATH PROGRAM [ARG...]\n");
	while (environ[n])
		n++;
	char *envp[n + 3];
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (!is_var(environ[i], "LD_PRELOAD") && !is_var(environ[i], "ORACLE_LOG"))
			envp[k++] = environ[i];
	if (!put_var(preload, "LD_PRELOAD", argv[1]) || !put_var(log, "ORACLE_LOG", argv[2]))
		fail("preload_exec: path too long\n");
	envp[k++] = preload;
	envp[k++] = log;
	envp[k] = NULL;
	execve(argv[3], argv + 3, envp);
	fail("preload_exec: exec of the program failed\n");
	return 127;
}
