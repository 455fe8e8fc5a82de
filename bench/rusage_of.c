/* rusage_of.c: what one command cost, as its parent sees it, for the scaling benchmarks (which
 * need the daemon's CPU time and peak resident set, and must run where GNU time is absent).
 *
 * Usage: rusage_of FILE COMMAND [ARG...]
 * Starts COMMAND, writes "pid N" to FILE at once (so that the caller can read the command's
 * /proc files while it runs), waits for it and then appends one line
 * "user_us U sys_us S maxrss_kb M": its user and system CPU time and its largest resident set
 * (wait4's figures: those of the command and of the children it waited for). Exits with the
 * command's status (128+N when signal N killed it), 127 when it could not be started. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* append_line: appends LINE to the file PATH; 0, or -1 when it could not be written. */
static int append_line(const char *path, const char *line)
{
	FILE *f = fopen(path, "a");

	if (!f)
		return -1;
	int bad = fputs(line, f) < 0;
	return (fclose(f) != 0 || bad) ? -1 : 0;
}

/* exit_status: the shell's exit status for wait STATUS. */
static int exit_status(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: rusage_of FILE COMMAND [ARG...]\n");
		return 2;
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("rusage_of: fork");
		return 127;
	}
	if (pid == 0) {
		execvp(argv[2], &argv[2]);
		fprintf(stderr, "rusage_of: %s: cannot run it\n", argv[2]);
		_exit(127);
	}
	char line[128];
	snprintf(line, sizeof(line), "pid %d\n", (int)pid);
	if (append_line(argv[1], line) != 0)
		fprintf(stderr, "rusage_of: %s: cannot write\n", argv[1]);
	int status;
	struct rusage ru;
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR) {
			perror("rusage_of: wait4");
			return 1;
		}
	snprintf(line, sizeof(line), "user_us %lld sys_us %lld maxrss_kb %ld\n",
		 (long long)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec,
		 (long long)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec, ru.ru_maxrss);
	if (append_line(argv[1], line) != 0)
		fprintf(stderr, "rusage_of: %s: cannot write\n", argv[1]);
	return exit_status(status);
}
