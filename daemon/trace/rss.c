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

struct sample {
	struct at_sink_record r;
	uint64_t pagesize;
	struct at_sink *sink;
	unsigned written;
};

/* One process's RSS record, unless it is gone. */
static void sample_one(void *arg, pid_t pid)
{
	struct sample *s = arg;

	s->r.rss.pid = (uint32_t)pid;
	if (at_rss_read("/proc", pid, s->pagesize, &s->r.rss.bytes) < 0)
		return; /* gone */
	if (at_sink_put_record(s->sink, &s->r) == 0)
		s->written++;
}

unsigned at_rss_sample(const struct at_proctable *t, uint64_t pagesize, struct at_sink *sink)
{
	struct sample s = { .r = { .kind = AT_SINK_RSS }, .pagesize = pagesize, .sink = sink };

	s.r.rss.time_ns = at_now_ns();
	at_proctable_each(t, AT_PROC_WRITTEN, sample_one, &s);
	return s.written;
}
