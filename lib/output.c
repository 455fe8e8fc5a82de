/* output.c: buffered writer over a file descriptor, and the rules for opening an output. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output.h"
#include "prim.h"

int at_output_open_fd(struct at_output *o, int fd, const char *name)
{
	memset(o, 0, sizeof(*o));
	o->fd = fd;
	o->name = name;
	o->buf = at_map(AT_OUTPUT_BUFSIZE, 0);
	return o->buf ? 0 : -1;
}

/* ---- opening a path --------------------------------------------------------------------- */

/* Fails with err and reason (NULL: strerror(err)); closes fd if it is open. Returns -1. */
static int refuse(int fd, int err, const char *reason, const char **why)
{
	if (fd >= 0)
		close(fd);
	*why = reason ? reason : strerror(err);
	errno = err;
	return -1;
}

/* Whether a file of this kind can be an output: a regular file, a FIFO, a character device
 * (a terminal, /dev/null). NULL if so, else the reason. */
static const char *unwritable_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
	case S_IFIFO:
	case S_IFCHR:
		return NULL;
	case S_IFLNK:
		return "a symbolic link (outputs are not opened through links)";
	case S_IFDIR:
		return "a directory";
	case S_IFBLK:
		return "a block device, not a file for a log";
	}
	return "a socket, not a file for a log";
}

/* The folder path is in: its stat. 0, or -1 with errno. */
static int stat_folder(const char *path, struct stat *st)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');

	if (!slash)
		return stat(".", st);
	size_t n = slash == path ? 1 : (size_t)(slash - path);
	if (n >= sizeof(dir)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(dir, path, n);
	dir[n] = 0;
	return stat(dir, st);
}

/* The guarded rule for an existing file at path (st: its lstat). NULL if it may be written,
 * else the reason, with *err its errno. */
static const char *guard(const char *path, const struct stat *st, int *err)
{
	static char reason[96];
	struct stat dir;
	const char *kind = unwritable_kind(st->st_mode);

	*err = S_ISLNK(st->st_mode) ? ELOOP : S_ISDIR(st->st_mode) ? EISDIR : EINVAL;
	if (kind)
		return kind;
	*err = EMLINK;
	if (S_ISREG(st->st_mode) && st->st_nlink > 1) {
		snprintf(reason, sizeof(reason), "a file with %llu hard links (another name of "
			 "another file?)", (unsigned long long)st->st_nlink);
		return reason;
	}
	*err = EACCES;
	if (stat_folder(path, &dir) < 0) {
		*err = errno;
		return strerror(errno);
	}
	/* the kernel's fs.protected_regular rule, whatever that setting is */
	if ((dir.st_mode & S_ISVTX) && (dir.st_mode & (S_IWOTH | S_IWGRP)) &&
	    st->st_uid != geteuid() && st->st_uid != dir.st_uid) {
		snprintf(reason, sizeof(reason), "a file of another user (uid %u) in a sticky "
			 "shared folder", (unsigned)st->st_uid);
		return reason;
	}
	return NULL;
}

/* Opens for writing the file that pfd (an O_PATH descriptor) names, through /proc/self/fd so
 * it is that very file; without /proc, path again, checked to be the same file. */
static int open_looked_at(int pfd, const char *path, int flags, const struct stat *seen)
{
	char self[32];
	struct stat st;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	int fd = open(self, O_WRONLY | O_CLOEXEC | O_NONBLOCK | flags);
	if (fd < 0 && errno == ENOENT)
		fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW | flags);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || st.st_dev != seen->st_dev || st.st_ino != seen->st_ino) {
		close(fd);
		errno = EAGAIN;
		return -1;
	}
	return fd;
}

/* The guarded open (AT_OUTPUT_GUARDED): look at what path names without opening it, apply
 * guard(), then open it; a missing file is created 0600 with O_EXCL (a file or link that
 * appears meanwhile is looked at again). */
static int open_guarded(const char *path, int flags, const char **why)
{
	for (int tries = 0; tries < 3; tries++) {
		struct stat st;
		int err, pfd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);

		if (pfd < 0 && errno == ENOENT) {
			int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC |
					    flags, 0600);
			if (fd >= 0 || errno != EEXIST)
				return fd >= 0 ? fd : refuse(-1, errno, NULL, why);
			continue;
		}
		if (pfd < 0)
			return refuse(-1, errno, NULL, why);
		if (fstat(pfd, &st) < 0)
			return refuse(pfd, errno, NULL, why);
		const char *reason = guard(path, &st, &err);
		if (reason)
			return refuse(pfd, err, reason, why);
		int fd = open_looked_at(pfd, path, flags, &st);
		err = errno;
		close(pfd);
		if (fd >= 0)
			return fd;
		if (err != EAGAIN)
			return refuse(-1, err, err == ENXIO ? "a FIFO with no reader" : NULL, why);
	}
	return refuse(-1, EAGAIN, "replaced again and again while it was being opened", why);
}

/* The plain open: what path names, links followed, created 0644 (less the umask). */
static int open_plain(const char *path, int flags, const char **why)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK | flags, 0644);

	if (fd < 0)
		return refuse(-1, errno, errno == ENXIO ? "a FIFO with no reader" : NULL, why);
	return fd;
}

/* Both opens never block (O_NONBLOCK, cleared once open) and never truncate at open: only a
 * regular file is emptied, and only after the checks. */
int at_output_open_path(struct at_output *o, const char *path, unsigned flags)
{
	const char *why = NULL;
	int oflags = flags & AT_OUTPUT_APPEND ? O_APPEND : 0;
	struct stat st;

	if (!path || strcmp(path, "-") == 0)
		return at_output_open_fd(o, 1, "<stdout>");
	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->name = path;
	int fd = flags & AT_OUTPUT_GUARDED ? open_guarded(path, oflags, &why)
					   : open_plain(path, oflags, &why);
	if (fd < 0) {
		o->why = why;
		return -1;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fstat(fd, &st) < 0 || fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 ||
	    (S_ISREG(st.st_mode) && !(flags & AT_OUTPUT_APPEND) && ftruncate(fd, 0) < 0)) {
		refuse(fd, errno, NULL, &why);
		o->why = why;
		return -1;
	}
	if (at_output_open_fd(o, fd, path) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		o->name = path;
		o->why = strerror(e);
		return -1;
	}
	o->own_fd = 1;
	return 0;
}

int at_output_open(struct at_output *o, const char *path)
{
	return at_output_open_path(o, path, 0);
}

int at_output_open_append(struct at_output *o, const char *path)
{
	return at_output_open_path(o, path, AT_OUTPUT_APPEND);
}

/* ---- writing ---------------------------------------------------------------------------- */

/* After a write that stopped inside the buffer (n of its bytes written): in whole-line mode,
 * the bytes after the last newline written are taken back, if the output is a regular file
 * that still ends with them (no other writer came after). */
static void take_back_partial_line(struct at_output *o, size_t n)
{
	struct stat st;
	size_t keep = n;

	while (keep && o->buf[keep - 1] != '\n')
		keep--;
	size_t partial = n - keep;
	if (!partial || fstat(o->fd, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	off_t end = lseek(o->fd, 0, SEEK_CUR);
	if (end < (off_t)partial || st.st_size != end)
		return;
	if (ftruncate(o->fd, end - (off_t)partial) == 0) {
		lseek(o->fd, end - (off_t)partial, SEEK_SET);
		o->written -= partial;
	}
}

int at_output_flush(struct at_output *o)
{
	if (o->len && !o->err) {
		size_t n = at_write_all(o->fd, o->buf, o->len);
		o->written += n;
		if (n < o->len) {
			o->err = errno ? errno : EIO;
			if (o->whole_lines)
				take_back_partial_line(o, n);
		}
	}
	o->len = 0;
	return o->err ? -1 : 0;
}
void at_output_write_slow(struct at_output *o, const void *p, size_t n)
{
	const char *s = p;

	while (n) {
		size_t room = AT_OUTPUT_BUFSIZE - o->len;
		if (room == 0) {
			at_output_flush(o);
			continue;
		}
		size_t k = n < room ? n : room;
		memcpy(o->buf + o->len, s, k);
		o->len += k;
		s += k;
		n -= k;
	}
}

int at_output_close(struct at_output *o)
{
	int rc = at_output_flush(o);

	if (o->own_fd && close(o->fd) < 0 && !o->err) {
		o->err = errno;
		rc = -1;
	}
	at_unmap(o->buf, AT_OUTPUT_BUFSIZE);
	o->buf = NULL;
	o->own_fd = 0;
	return rc;
}
