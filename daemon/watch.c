/* watch.c: --watch, the daemon, its viewer and the process that waits for both (watch.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "display.h"
#include "watch.h"

#define VIEWER "alloctap-report"

static int ready_fd = -1; /* the daemon's end of the pipe that says it is attached */
static volatile sig_atomic_t daemon_pid;

/* SIGTERM to the supervisor: passed on to the daemon, which ends the trace as on its own. */
static void pass_on(int sig)
{
	if (daemon_pid > 0)
		kill(daemon_pid, sig);
}

/* The viewer's process: standard input the trace's pipe (or the -o path followed), then the
 * viewer beside alloctapd's own file, else the one on PATH. Never returns. */
static void run_viewer(int data, const char *path)
{
	char self[PATH_MAX], exe[PATH_MAX + sizeof(VIEWER)];
	char *argv[] = { VIEWER, "top", "--follow", (char *)(path ? path : "-"), NULL };
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	if (data >= 0 && (dup2(data, 0) < 0 || close(data) < 0))
		_exit(127);
	if (n > 0) {
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			snprintf(exe, sizeof(exe), "%s/%s", self, VIEWER);
			execv(exe, argv);
		}
	}
	execvp(VIEWER, argv);
	at_error("--watch: cannot run %s: %s (it is installed beside alloctapd)", VIEWER,
	       strerror(errno));
	_exit(127);
}

int at_watch_status(int d, int v, int viewer_first)
{
	if (WIFSIGNALED(d) && WTERMSIG(d) == SIGPIPE && viewer_first)
		return WIFEXITED(v) ? WEXITSTATUS(v) : 0; /* the view was quit: the trace ended */
	if (WIFEXITED(d) && WEXITSTATUS(d) != 0)
		return WEXITSTATUS(d); /* the daemon's error, or the command's status */
	if (WIFEXITED(v) && WEXITSTATUS(v) != 0)
		return WEXITSTATUS(v);
	if (WIFSIGNALED(v) && WTERMSIG(v) != SIGINT && WTERMSIG(v) != SIGTERM)
		return 128 + WTERMSIG(v);
	return WIFEXITED(d) ? WEXITSTATUS(d) : 128 + WTERMSIG(d);
}

/* Waits for the daemon and the viewer; ends the trace when the viewer ends first. Never
 * returns. */
static void supervise(pid_t daemon, pid_t viewer)
{
	int d = 0, v = 0, left = 2, viewer_first = 0, st;

	while (left > 0) {
		pid_t p = waitpid(-1, &st, 0);
		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0)
			break;
		if (p == daemon) {
			d = st;
			left--;
			daemon_pid = 0;
		} else if (p == viewer) {
			v = st;
			left--;
			viewer_first = daemon_pid > 0;
			if (viewer_first)
				kill(daemon, SIGINT);
		}
	}
	exit(at_watch_status(d, v, viewer_first));
}

/* The supervisor, once the daemon is started: waits for it to be attached, starts the viewer,
 * then waits for both. Never returns. */
static void wait_ready(pid_t daemon, int ready, int data, const char *path)
{
	char c;
	ssize_t n;
	int st;

	while ((n = read(ready, &c, 1)) < 0 && errno == EINTR)
		;
	close(ready);
	if (n != 1) { /* the daemon ended before it was attached: its message is said */
		while (waitpid(daemon, &st, 0) < 0 && errno == EINTR)
			;
		exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	}
	pid_t viewer = fork();
	if (viewer == 0)
		run_viewer(data, path);
	if (viewer < 0) {
		at_error("--watch: cannot start the viewer: %s", strerror(errno));
		kill(daemon, SIGINT);
	}
	if (data >= 0)
		close(data);
	supervise(daemon, viewer);
}

int at_watch_split(struct at_session_options *o)
{
	int data[2] = { -1, -1 }, ready[2];

	if (!o->watch)
		return 0;
	if (pipe2(ready, O_CLOEXEC) < 0 || (!o->dest.path && pipe2(data, O_CLOEXEC) < 0)) {
		at_error("--watch: cannot make a pipe: %s", strerror(errno));
		return -1;
	}
	pid_t daemon = fork();
	if (daemon < 0) {
		at_error("--watch: cannot start the daemon's process: %s", strerror(errno));
		return -1;
	}
	if (daemon == 0) {
		close(ready[0]);
		ready_fd = ready[1];
		if (data[1] >= 0) {
			close(data[0]);
			o->dest.fd = data[1];
		}
		return 0;
	}
	close(ready[1]);
	if (data[1] >= 0)
		close(data[1]);
	daemon_pid = daemon;
	signal(SIGINT, SIG_IGN); /* Ctrl-C reaches the daemon and the viewer themselves */
	signal(SIGTERM, pass_on);
	wait_ready(daemon, ready[0], data[0], o->dest.path);
	return -1; /* not reached */
}

void at_watch_ready(void)
{
	if (ready_fd < 0)
		return;
	if (write(ready_fd, "", 1) < 0) {
		/* the supervisor is gone: the trace goes on unwatched */
	}
	close(ready_fd);
	ready_fd = -1;
}
