/* prim.c: clock, anonymous mappings, read and write loops, opening files to read. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "prim.h"

uint64_t at_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int at_populate(void *p, size_t bytes)
{
#ifdef MADV_POPULATE_WRITE
	if (madvise(p, bytes, MADV_POPULATE_WRITE) == 0)
		return 0;
#else
	(void)p;
	(void)bytes;
#endif
	return -1;
}

/* A mapping of bytes aligned to AT_HUGE_PAGE: one of bytes + AT_HUGE_PAGE, trimmed at both
 * ends. */
static void *map_aligned(size_t bytes, int flags)
{
	char *p = mmap(NULL, bytes + AT_HUGE_PAGE, PROT_READ | PROT_WRITE, flags, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	size_t head = (AT_HUGE_PAGE - (uintptr_t)p % AT_HUGE_PAGE) % AT_HUGE_PAGE;
	if (head)
		munmap(p, head);
	munmap(p + head + bytes, AT_HUGE_PAGE - head);
	return p + head;
}

/* Without AT_MAP_HUGE, populating is MAP_POPULATE, which every kernel has. With it, the pages
 * must fault in after the huge-page advice, so populating is at_populate() afterwards. */
void *at_map(size_t bytes, unsigned flags)
{
	int mflags = MAP_PRIVATE | MAP_ANONYMOUS;

	if (flags & AT_MAP_NORESERVE)
		mflags |= MAP_NORESERVE;
	if (!(flags & AT_MAP_HUGE)) {
		if (flags & AT_MAP_POPULATE)
			mflags |= MAP_POPULATE;
		void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, mflags, -1, 0);
		return p == MAP_FAILED ? NULL : p;
	}
	void *p = map_aligned(bytes, mflags);
	if (!p)
		return NULL;
	madvise(p, bytes, MADV_HUGEPAGE); /* a hint: fine if refused */
	if (flags & AT_MAP_POPULATE)
		at_populate(p, bytes);
	return p;
}

void *at_map_readonly(int fd, size_t bytes, off_t offset)
{
	void *p = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, offset);

	return p == MAP_FAILED ? NULL : p;
}

void at_unmap(void *p, size_t bytes)
{
	if (p)
		munmap(p, bytes);
}

void *at_remap(void *p, size_t old_bytes, size_t new_bytes)
{
	void *q = mremap(p, old_bytes, new_bytes, MREMAP_MAYMOVE);

	return q == MAP_FAILED ? NULL : q;
}

ssize_t at_read_some(int fd, void *p, size_t n)
{
	ssize_t k;

	do
		k = read(fd, p, n);
	while (k < 0 && errno == EINTR);
	return k;
}

ssize_t at_read_all(int fd, void *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = at_read_some(fd, (char *)p + got, n - got);
		if (k < 0)
			return -1;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

size_t at_write_all(int fd, const void *p, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t k = write(fd, (const char *)p + done, n - done);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (k == 0) { /* no progress and no error: do not spin */
			errno = EIO;
			break;
		}
		done += (size_t)k;
	}
	return done;
}

/* What a file of this mode is, for "PATH: ..." messages. */
static const char *kind_of(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFDIR:
		return "a directory, not a regular file";
	case S_IFIFO:
		return "a FIFO, not a regular file";
	case S_IFCHR:
		return "a character device, not a regular file";
	case S_IFBLK:
		return "a block device, not a regular file";
	case S_IFSOCK:
		return "a socket, not a regular file";
	case S_IFLNK:
		return "a symbolic link, not followed";
	}
	return "not a regular file";
}

/* Fails with err and its reason; closes fd if it is open. Returns -1. */
static int open_failed(int fd, int err, const char *reason, const char **why)
{
	if (fd >= 0)
		close(fd);
	*why = reason ? reason : strerror(err);
	errno = err;
	return -1;
}

/* The file is looked at through an O_PATH descriptor first, which opens nothing (no device
 * driver's open, no FIFO wait, no read permission needed); only a regular file is then opened
 * for reading, through /proc/self/fd, which reopens the very file looked at. Without /proc the
 * path is opened again and must still name the same file. */
int at_open_regular(const char *path, int flags, const char **why)
{
	struct stat st, again;
	char self[32];
	int pfd = open(path, O_PATH | O_CLOEXEC | (flags & O_NOFOLLOW));

	if (pfd < 0)
		return open_failed(-1, errno, NULL, why);
	if (fstat(pfd, &st) < 0)
		return open_failed(pfd, errno, NULL, why);
	if (!S_ISREG(st.st_mode))
		return open_failed(pfd, S_ISDIR(st.st_mode) ? EISDIR : EINVAL, kind_of(st.st_mode),
				   why);
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	int fd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK), by_path = 0;
	if (fd < 0 && errno == ENOENT) {
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | flags);
		by_path = 1;
	}
	int err = errno;
	close(pfd);
	if (fd < 0)
		return open_failed(-1, err, NULL, why);
	if (!by_path)
		return fd;
	if (fstat(fd, &again) < 0)
		return open_failed(fd, errno, NULL, why);
	if (again.st_dev != st.st_dev || again.st_ino != st.st_ino)
		return open_failed(fd, EAGAIN, "replaced while it was being opened", why);
	return fd;
}

int at_grow(void **v, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return 0;
	size_t bigger = *cap ? 2 * *cap : 64;
	void *w = realloc(*v, bigger * size);
	if (!w)
		return -1;
	*v = w;
	*cap = bigger;
	return 0;
}
