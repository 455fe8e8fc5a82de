/* rss.c: RSS records from /proc/PID/statm (rss.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "prim.h"
#include "rss.h"

int at_rss_read(const char *proc, pid_t pid, uint64_t pagesize, uint64_t *bytes)
{
	char path[64], buf[256];
	unsigned long long size, resident;

	snprintf(path, sizeof(path), "%s/%d/statm", proc, (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -1;
	ssize_t n = at_read_some(fd, buf, sizeof(buf) - 1);
	int err = errno;
	close(fd);
	if (n < 0) {
		errno = err;
		return -1;
	}
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &size, &resident) != 2) {
		errno = EINVAL;
		return -1;
	}
	if (resident == 0) { /* no memory at all: it has exited, and waits to be reaped */
		errno = ESRCH;
		return -1;
	}
	*bytes = (uint64_t)resident * pagesize;
	return 0;
}

unsigned at_rss_sample(const struct at_pidset *seen, uint64_t pagesize, struct at_sink *sink)
{
	struct at_sink_record r = { .kind = AT_SINK_RSS };
	unsigned written = 0;

	r.rss.time_ns = at_now_ns();
	for (uint32_t i = 0; i < AT_PIDSET_CAPACITY; i++) {
		if (!seen->slots[i])
			continue;
		r.rss.pid = seen->slots[i];
		if (at_rss_read("/proc", (pid_t)r.rss.pid, pagesize, &r.rss.bytes) < 0)
			continue; /* gone */
		if (at_sink_put_record(sink, &r) == 0)
			written++;
	}
	return written;
}
