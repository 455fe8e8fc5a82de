/* liveness.c: whether traced processes still run. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "liveness.h"
#include "prim.h"

int at_stat_running(const char *stat)
{
	const char *paren = strrchr(stat, ')');

	return paren && paren[1] == ' ' && paren[2] && paren[2] != 'Z' && paren[2] != 'X';
}

#define PF_KTHREAD 0x00200000ul /* include/linux/sched.h */

enum at_process_state at_stat_state(const char *stat)
{
	const char *p = strrchr(stat, ')');
	unsigned long flags;

	if (!p || p[1] != ' ' || !p[2])
		return AT_PROCESS_GONE;
	if (p[2] == 'Z' || p[2] == 'X')
		return AT_PROCESS_ZOMBIE;
	if (sscanf(p + 3, " %*d %*d %*d %*d %*d %lu", &flags) == 1 && (flags & PF_KTHREAD))
		return AT_PROCESS_KERNEL_THREAD;
	return AT_PROCESS_RUNNING;
}

enum at_process_state at_process_state(pid_t pid)
{
	char path[64], buf[512];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return AT_PROCESS_GONE;
	ssize_t n = at_read_all(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return AT_PROCESS_GONE;
	buf[n] = '\0';
	return at_stat_state(buf);
}

/* Whether pid runs; a process whose stat cannot be read does not. */
static int running(pid_t pid)
{
	return at_process_state(pid) == AT_PROCESS_RUNNING;
}

int at_any_running(const pid_t *pids, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (running(pids[i]))
			return 1;
	return 0;
}
