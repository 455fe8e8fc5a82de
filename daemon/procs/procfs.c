/* procfs.c: what the daemon reads about a process under /proc. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "prim.h"
#include "procfs.h"

int at_proc_read(const char *proc, pid_t pid, const char *name, char **buf, size_t *len)
{
	char path[256];
	size_t cap = 4096, used = 0;
	char *b = NULL;

	snprintf(path, sizeof(path), "%s/%d/%s", proc, (int)pid, name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	for (;;) {
		if (!b || used + 1 >= cap) {
			char *nb = realloc(b, b ? cap *= 2 : cap);
			if (!nb)
				goto fail;
			b = nb;
		}
		ssize_t n = at_read_some(fd, b + used, cap - 1 - used);
		if (n < 0)
			goto fail;
		if (n == 0)
			break;
		used += (size_t)n;
	}
	close(fd);
	b[used] = '\0';
	*buf = b;
	*len = used;
	return 0;
fail:;
	int e = errno;
	free(b);
	close(fd);
	errno = e;
	return -1;
}

const char *at_environ_get(const char *env, size_t len, const char *name)
{
	size_t n = strlen(name);
	const char *found = NULL;

	for (const char *p = env, *end = env + len; p < end;) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		size_t k = nul ? (size_t)(nul - p) : (size_t)(end - p);

		if (nul && k > n && memcmp(p, name, n) == 0 && p[n] == '=')
			found = p + n + 1;
		p += k + 1;
	}
	return found;
}

/* /proc/TID/status read into buf (size bytes), NUL-terminated: 0, or -1 if it cannot be read. */
static int read_status(pid_t tid, char *buf, size_t size)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t k = at_read_all(fd, buf, size - 1);
	close(fd);
	if (k <= 0)
		return -1;
	buf[k] = '\0';
	return 0;
}

/* The text after "FIELD:" in status text; NULL if it has none. */
static const char *find_field(const char *status, const char *field)
{
	size_t n = strlen(field);

	for (const char *p = status; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, field, n) == 0 && p[n] == ':')
			return p + n + 1;
	return NULL;
}

/* The text after "FIELD:" in /proc/TID/status, read into buf (size bytes); NULL if it cannot
 * be read. */
static const char *status_field(pid_t tid, const char *field, char *buf, size_t size)
{
	return read_status(tid, buf, size) == 0 ? find_field(buf, field) : NULL;
}

long at_proc_status_field(pid_t tid, const char *field)
{
	char buf[2048];
	const char *v = status_field(tid, field, buf, sizeof(buf));

	return v ? strtol(v, NULL, 10) : -1;
}

void at_proc_ids(pid_t tid, long *tgid, long *ppid)
{
	char buf[2048];
	const char *t = NULL, *p = NULL;

	if (read_status(tid, buf, sizeof(buf)) == 0) {
		t = find_field(buf, "Tgid");
		p = find_field(buf, "PPid");
	}
	*tgid = t ? strtol(t, NULL, 10) : -1;
	*ppid = p ? strtol(p, NULL, 10) : -1;
}

int at_proc_alive(pid_t tid)
{
	char buf[2048];
	const char *v = status_field(tid, "State", buf, sizeof(buf));

	v = v ? v + strspn(v, " \t") : NULL;
	return v && *v != 'Z' && *v != 'X';
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t at_realtime_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

uint64_t at_proc_start_ns(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long long ticks;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t k = at_read_all(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (k <= 0)
		return 0;
	buf[k] = '\0';
	/* field 22, counted after the command name's closing parenthesis (field 2) */
	char *p = strrchr(buf, ')');
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &ticks) != 1)
		return 0;
	long hz = sysconf(_SC_CLK_TCK);
	uint64_t since_boot = (uint64_t)ticks * (1000000000u / (uint64_t)(hz > 0 ? hz : 100));
	uint64_t boot = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_BOOTTIME);
	return boot + since_boot;
}

int at_same_file(const char *path, uint64_t dev, uint64_t inode)
{
	struct stat st;

	return stat(path, &st) == 0 && (uint64_t)st.st_dev == dev && (uint64_t)st.st_ino == inode;
}
