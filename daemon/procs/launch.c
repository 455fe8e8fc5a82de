/* launch.c: starting a command held before exec. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "display.h"
#include "launch.h"
#include "prim.h"

extern char **environ;

int at_launch_resolve(const char *cmd, char *out, size_t outlen)
{
	if (strchr(cmd, '/')) {
		struct stat st;

		if (stat(cmd, &st) < 0)
			return -1;
		if (!S_ISREG(st.st_mode)) {
			errno = S_ISDIR(st.st_mode) ? EISDIR : EACCES;
			return -1;
		}
		if (access(cmd, X_OK) < 0)
			return -1;
		if (strlen(cmd) >= outlen) {
			errno = ENAMETOOLONG;
			return -1;
		}
		strcpy(out, cmd);
		return 0;
	}
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, ":");
		int k = snprintf(out, outlen, "%.*s%s%s", (int)n, p, n ? "/" : "", cmd);

		if (k > 0 && (size_t)k < outlen && access(out, X_OK) == 0)
			return 0;
		p += n;
		if (*p == ':')
			p++;
	}
	errno = ENOENT;
	return -1;
}

/* "PROGRAM: exec of the command failed\n" on stderr in one write, put together by hand: the
 * child formats nothing (lib/display.h's at_program_name names the program). */
static void say_exec_failed(void)
{
	static const char tail[] = ": exec of the command failed\n";
	char msg[128];
	size_t n = strnlen(at_program_name, sizeof(msg) - sizeof(tail));

	memcpy(msg, at_program_name, n);
	memcpy(msg + n, tail, sizeof(tail) - 1);
	if (write(2, msg, n + sizeof(tail) - 1) < 0)
		_exit(127);
}

void at_launch_raise_nofile(struct at_launch *l)
{
	struct rlimit raised;

	if (getrlimit(RLIMIT_NOFILE, &l->nofile) < 0 || l->nofile.rlim_cur >= l->nofile.rlim_max)
		return;
	raised = (struct rlimit){ l->nofile.rlim_max, l->nofile.rlim_max };
	l->nofile_raised = setrlimit(RLIMIT_NOFILE, &raised) == 0;
}

int at_launch_set_priority(struct at_launch *l, int nice)
{
	id_t self = (id_t)syscall(SYS_gettid);
	int before;

	errno = 0;
	before = getpriority(PRIO_PROCESS, self);
	if (errno)
		return -1;
	if (before == nice)
		return 0;
	if (setpriority(PRIO_PROCESS, self, nice) < 0)
		return -1;
	l->nice = before;
	l->nice_set = 1;
	return 0;
}

/* The child: waits for the go byte, then execs, with the limits and the priority the daemon
 * had. Only system calls from here on. */
static void run_child(const struct at_launch *l, int wait_fd, const char *path,
		      char *const argv[])
{
	char go;
	ssize_t n;

	n = at_read_some(wait_fd, &go, 1);
	if (n != 1)
		_exit(127);
	close(wait_fd);
	if (l->nofile_raised && setrlimit(RLIMIT_NOFILE, &l->nofile) < 0)
		_exit(127);
	if (l->nice_set && setpriority(PRIO_PROCESS, 0, l->nice) < 0)
		_exit(127);
	execve(path, argv, environ);
	say_exec_failed();
	_exit(127);
}

int at_launch_start(struct at_launch *l, const char *path, char *const argv[])
{
	int fds[2];

	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	l->pid = fork();
	if (l->pid < 0) {
		int e = errno;
		close(fds[0]);
		close(fds[1]);
		errno = e;
		return -1;
	}
	if (l->pid == 0) {
		close(fds[1]);
		run_child(l, fds[0], path, argv);
	}
	close(fds[0]);
	l->go_fd = fds[1];
	return 0;
}

int at_launch_release(struct at_launch *l)
{
	char go = 'g';
	int rc = write(l->go_fd, &go, 1) == 1 ? 0 : -1;

	close(l->go_fd);
	l->go_fd = -1;
	return rc;
}

void at_launch_abort(struct at_launch *l)
{
	if (l->go_fd >= 0)
		close(l->go_fd);
	l->go_fd = -1;
	if (l->pid > 0)
		waitpid(l->pid, NULL, 0);
}
