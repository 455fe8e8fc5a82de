/* test_lib_output.c: unit tests of lib/output.c, the buffered writer: the exact bytes that reach
 * the file after write, reserve/commit and flush, writes larger than the buffer, a reader
 * slower than the writer, the first errno kept (/dev/full, a closed pipe, a bad descriptor) and
 * every later write dropped, open/open_append/open_fd, what close closes, the guarded rule
 * (links, FIFOs, hard links, other users' files in sticky folders, 0600) and whole lines taken
 * back after a write cut inside one. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "output.h"

/* An empty in-memory file. */
static int memfile(void)
{
	int fd = memfd_create("output", MFD_CLOEXEC);

	assert_true(fd >= 0);
	return fd;
}

/* The size of what fd holds. */
static size_t file_size(int fd)
{
	struct stat st;

	assert_int_equal(fstat(fd, &st), 0);
	return (size_t)st.st_size;
}

/* Asserts that fd holds exactly the n bytes at want. */
static void assert_file_is(int fd, const void *want, size_t n)
{
	size_t size = file_size(fd);
	char *got = malloc(size + 1);

	assert_non_null(got);
	assert_int_equal(pread(fd, got, size, 0), (ssize_t)size);
	assert_int_equal(size, n);
	assert_memory_equal(got, want, n);
	free(got);
}

/* The byte at offset i of the test pattern: not periodic at any power of two. */
static char pattern(size_t i)
{
	return (char)((i * 31 + i / 251) & 0xff);
}

static void fill_pattern(char *p, size_t from, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = pattern(from + i);
}

/* A path in a fresh folder (made at the first call), valid until the next call. */
static char tmp_dir[64];

static const char *tmp_path(const char *name)
{
	static char path[128];

	if (!tmp_dir[0]) {
		strcpy(tmp_dir, "/tmp/test_lib_output.XXXXXX");
		assert_non_null(mkdtemp(tmp_dir));
	}
	snprintf(path, sizeof(path), "%s/%s", tmp_dir, name);
	return path;
}

/* Group teardown: removes the folder of tmp_path and what it holds. */
static int remove_tmp(void **state)
{
	(void)state;
	if (!tmp_dir[0])
		return 0;
	DIR *d = opendir(tmp_dir);
	struct dirent *e;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
	return rmdir(tmp_dir);
}

/* The content of path, NUL-terminated, in buf. */
static void read_path(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	ssize_t n = read(fd, buf, cap - 1);
	assert_true(n >= 0);
	buf[n] = 0;
	close(fd);
}

static void write_path(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static int fd_is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

/* Nothing reaches the file before a flush; flush writes the bytes in order, counts them, and
 * empties the buffer; a flush with nothing buffered writes nothing. */
static void test_write_then_flush(void **state)
{
	(void)state;
	struct at_output o;
	int fd = memfile();

	assert_int_equal(at_output_open_fd(&o, fd, "memfd"), 0);
	assert_int_equal(o.fd, fd);
	assert_string_equal(o.name, "memfd");
	assert_int_equal(o.err, 0);
	assert_int_equal(o.len, 0);
	assert_int_equal(o.written, 0);
	at_output_write(&o, "1 1 malloc(8)=", 14);
	at_output_write(&o, "#1\n", 3);
	at_output_write(&o, "", 0);
	assert_int_equal(o.len, 17);
	assert_int_equal(file_size(fd), 0);
	assert_int_equal(at_output_flush(&o), 0);
	assert_int_equal(o.len, 0);
	assert_int_equal(o.written, 17);
	assert_file_is(fd, "1 1 malloc(8)=#1\n", 17);
	assert_int_equal(at_output_flush(&o), 0);
	assert_int_equal(o.written, 17);
	at_output_write(&o, "1 1 free(#1)\n", 13);
	assert_int_equal(at_output_flush(&o), 0);
	assert_int_equal(o.written, 30);
	assert_file_is(fd, "1 1 malloc(8)=#1\n1 1 free(#1)\n", 30);
	assert_int_equal(at_output_close(&o), 0);
	assert_null(o.buf);
	close(fd);
}

/* reserve hands out the place after the buffered bytes; only what is committed is written. */
static void test_reserve_commit(void **state)
{
	(void)state;
	struct at_output o;
	int fd = memfile();

	assert_int_equal(at_output_open_fd(&o, fd, "memfd"), 0);
	at_output_write(&o, "ab", 2);
	char *p = at_output_reserve(&o, 64);
	assert_ptr_equal(p, o.buf + 2);
	memcpy(p, "cdefgh", 6);
	at_output_commit(&o, 3);
	p = at_output_reserve(&o, 10);
	assert_ptr_equal(p, o.buf + 5);
	at_output_commit(&o, 0);
	at_output_write(&o, "Z", 1);
	assert_int_equal(o.len, 6);
	assert_int_equal(at_output_close(&o), 0);
	assert_file_is(fd, "abcdeZ", 6);
	close(fd);
}

/* A reservation that does not fit flushes first; one that fits exactly does not. */
static void test_reserve_flushes_when_full(void **state)
{
	(void)state;
	struct at_output o;
	int fd = memfile();
	char *want = malloc(AT_OUTPUT_BUFSIZE + 8);

	assert_non_null(want);
	fill_pattern(want, 0, AT_OUTPUT_BUFSIZE + 8);
	assert_int_equal(at_output_open_fd(&o, fd, "memfd"), 0);
	at_output_write(&o, want, AT_OUTPUT_BUFSIZE - 8);
	char *p = at_output_reserve(&o, 8);
	assert_ptr_equal(p, o.buf + AT_OUTPUT_BUFSIZE - 8);
	assert_int_equal(o.written, 0);
	memcpy(p, want + AT_OUTPUT_BUFSIZE - 8, 4);
	at_output_commit(&o, 4);
	p = at_output_reserve(&o, 8);
	assert_ptr_equal(p, o.buf);
	assert_int_equal(o.written, AT_OUTPUT_BUFSIZE - 4);
	assert_int_equal(file_size(fd), AT_OUTPUT_BUFSIZE - 4);
	memcpy(p, want + AT_OUTPUT_BUFSIZE - 4, 8);
	at_output_commit(&o, 8);
	p = at_output_reserve(&o, AT_OUTPUT_BUFSIZE);
	assert_ptr_equal(p, o.buf);
	assert_int_equal(o.written, AT_OUTPUT_BUFSIZE + 4);
	assert_int_equal(at_output_close(&o), 0);
	assert_file_is(fd, want, AT_OUTPUT_BUFSIZE + 4);
	free(want);
	close(fd);
}

/* Writes around and beyond the buffer size, after 0 or 100 buffered bytes: the file gets
 * every byte in order, and exactly the whole buffers go out before the final flush. */
static void test_large_writes(void **state)
{
	(void)state;
	static const struct {
		size_t before, n;
	} cases[] = {
		{ 0, AT_OUTPUT_BUFSIZE - 1 },
		{ 0, AT_OUTPUT_BUFSIZE },
		{ 0, AT_OUTPUT_BUFSIZE + 1 },
		{ 0, 3 * AT_OUTPUT_BUFSIZE + 12345 },
		{ 100, AT_OUTPUT_BUFSIZE - 100 },
		{ 100, AT_OUTPUT_BUFSIZE - 99 },
		{ 100, 2 * AT_OUTPUT_BUFSIZE },
	};
	size_t max = 3 * AT_OUTPUT_BUFSIZE + 12345 + 100;
	char *want = malloc(max);

	assert_non_null(want);
	fill_pattern(want, 0, max);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct at_output o;
		size_t total = cases[c].before + cases[c].n;
		int fd = memfile();

		assert_int_equal(at_output_open_fd(&o, fd, "memfd"), 0);
		at_output_write(&o, want, cases[c].before);
		at_output_write(&o, want + cases[c].before, cases[c].n);
		size_t whole = total / AT_OUTPUT_BUFSIZE * AT_OUTPUT_BUFSIZE;
		if (total % AT_OUTPUT_BUFSIZE == 0 && whole)
			whole -= AT_OUTPUT_BUFSIZE; /* a full buffer waits for the next write */
		if (o.written != whole)
			fail_msg("case %zu: %llu bytes written before the flush, want %zu", c,
				 (unsigned long long)o.written, whole);
		assert_int_equal(o.len, total - whole);
		assert_int_equal(at_output_flush(&o), 0);
		assert_int_equal(o.written, total);
		assert_file_is(fd, want, total);
		assert_int_equal(at_output_close(&o), 0);
		close(fd);
	}
	free(want);
}

struct drain {
	int fd;
	size_t got;
	int bad; /* the offset + 1 of the first unexpected byte, 0 if none */
};

/* Reads fd to its end in small pieces, checking every byte against the pattern. */
static void *drain_pipe(void *arg)
{
	struct drain *d = arg;
	char buf[1000];
	ssize_t n;

	while ((n = read(d->fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++)
			if (!d->bad && buf[i] != pattern(d->got + (size_t)i))
				d->bad = (int)(d->got + (size_t)i) + 1;
		d->got += (size_t)n;
		usleep(50);
	}
	return NULL;
}

/* A pipe of one page whose reader is slower than the writer: write(2) takes part of the buffer
 * at a time, and every byte still arrives, in order. */
static void test_slow_reader(void **state)
{
	(void)state;
	struct at_output o;
	struct drain d = { 0 };
	pthread_t reader;
	int fds[2];
	size_t n = 2 * AT_OUTPUT_BUFSIZE + 777;
	char *data = malloc(n);

	assert_non_null(data);
	fill_pattern(data, 0, n);
	assert_int_equal(pipe(fds), 0);
	assert_true(fcntl(fds[1], F_SETPIPE_SZ, 4096) >= 4096);
	d.fd = fds[0];
	assert_int_equal(pthread_create(&reader, NULL, drain_pipe, &d), 0);
	assert_int_equal(at_output_open_fd(&o, fds[1], "pipe"), 0);
	at_output_write(&o, data, n);
	assert_int_equal(at_output_close(&o), 0);
	assert_int_equal(o.written, n);
	close(fds[1]);
	pthread_join(reader, NULL);
	close(fds[0]);
	assert_int_equal(d.bad, 0);
	assert_int_equal(d.got, n);
	free(data);
}

/* /dev/full: the flush fails with ENOSPC and says so; the error stays; close reports it. */
static void test_dev_full(void **state)
{
	(void)state;
	struct at_output o;

	assert_int_equal(at_output_open(&o, "/dev/full"), 0);
	assert_string_equal(o.name, "/dev/full");
	at_output_write(&o, "x\n", 2);
	assert_int_equal(o.err, 0);
	assert_int_equal(at_output_flush(&o), -1);
	assert_int_equal(o.err, ENOSPC);
	assert_int_equal(o.written, 0);
	assert_int_equal(o.len, 0);
	at_output_write(&o, "y\n", 2);
	assert_int_equal(at_output_flush(&o), -1);
	assert_int_equal(o.err, ENOSPC);
	assert_int_equal(at_output_close(&o), -1);
	assert_int_equal(o.err, ENOSPC);
}

/* A write error reached by a write larger than the buffer: the error is kept, the rest of the
 * write is dropped. */
static void test_dev_full_large_write(void **state)
{
	(void)state;
	struct at_output o;
	size_t n = 3 * AT_OUTPUT_BUFSIZE;
	char *data = calloc(1, n);

	assert_non_null(data);
	assert_int_equal(at_output_open(&o, "/dev/full"), 0);
	at_output_write(&o, data, n);
	assert_int_equal(o.err, ENOSPC);
	assert_int_equal(o.written, 0);
	assert_int_equal(at_output_close(&o), -1);
	free(data);
}

/* A pipe whose reader is gone: EPIPE (SIGPIPE ignored, as the programs do); then the fd is
 * made to fail differently (ENOSPC), then to work: the first errno stays, nothing more is
 * written, and every flush and the close say -1. */
static void test_first_errno_kept(void **state)
{
	(void)state;
	struct at_output o;
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	int fds[2], full = open("/dev/full", O_WRONLY), mem = memfile();

	assert_true(full >= 0);
	assert_int_equal(sigaction(SIGPIPE, &ign, &old), 0);
	assert_int_equal(pipe(fds), 0);
	close(fds[0]);
	assert_int_equal(at_output_open_fd(&o, fds[1], "<stdout>"), 0);
	at_output_write(&o, "1 1 malloc(8)=#1\n", 17);
	assert_int_equal(at_output_flush(&o), -1);
	assert_int_equal(o.err, EPIPE);

	assert_int_equal(dup2(full, fds[1]), fds[1]);
	at_output_write(&o, "more\n", 5);
	assert_int_equal(at_output_flush(&o), -1);
	assert_int_equal(o.err, EPIPE);

	assert_int_equal(dup2(mem, fds[1]), fds[1]);
	at_output_write(&o, "more\n", 5);
	char *p = at_output_reserve(&o, 4);
	memcpy(p, "abc\n", 4);
	at_output_commit(&o, 4);
	assert_int_equal(at_output_flush(&o), -1);
	assert_int_equal(o.err, EPIPE);
	assert_int_equal(o.written, 0);
	assert_int_equal(file_size(mem), 0);
	assert_int_equal(at_output_close(&o), -1);
	assert_int_equal(o.err, EPIPE);
	assert_int_equal(file_size(mem), 0);

	assert_int_equal(sigaction(SIGPIPE, &old, NULL), 0);
	close(fds[1]);
	close(full);
	close(mem);
}

/* A descriptor that is not open: EBADF at the first flush. */
static void test_bad_fd(void **state)
{
	(void)state;
	struct at_output o;
	int fd = memfile();

	close(fd);
	assert_int_equal(at_output_open_fd(&o, fd, "fd"), 0);
	at_output_write(&o, "x", 1);
	assert_int_equal(at_output_flush(&o), -1);
	assert_int_equal(o.err, EBADF);
	assert_int_equal(at_output_close(&o), -1);
}

/* open truncates an existing file and creates a missing one with mode 0644 (umask 022); the
 * descriptor is close-on-exec; the name is the path. */
static void test_open_truncates(void **state)
{
	(void)state;
	struct at_output o;
	char got[256];
	struct stat st;
	mode_t mask = umask(022);
	const char *path = tmp_path("trunc.log");

	write_path(path, "an older, longer content\n");
	assert_int_equal(at_output_open(&o, path), 0);
	assert_string_equal(o.name, path);
	assert_true(fcntl(o.fd, F_GETFD) & FD_CLOEXEC);
	at_output_write(&o, "new\n", 4);
	assert_int_equal(at_output_close(&o), 0);
	read_path(path, got, sizeof(got));
	assert_string_equal(got, "new\n");

	path = tmp_path("created.log");
	assert_int_equal(at_output_open(&o, path), 0);
	assert_int_equal(at_output_close(&o), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(st.st_size, 0);
	umask(mask);
}

/* open_append keeps what the file holds and adds after it, also after another writer. */
static void test_open_append(void **state)
{
	(void)state;
	struct at_output o;
	char got[256];
	const char *path = tmp_path("append.log");

	write_path(path, "1 1 malloc(8)=0x10\n");
	assert_int_equal(at_output_open_append(&o, path), 0);
	assert_string_equal(o.name, path);
	assert_true(fcntl(o.fd, F_GETFD) & FD_CLOEXEC);
	at_output_write(&o, "2 2 free(0x10)\n", 15);
	assert_int_equal(at_output_flush(&o), 0);
	int other = open(path, O_WRONLY | O_APPEND);
	assert_true(other >= 0);
	assert_int_equal(write(other, "other\n", 6), 6);
	close(other);
	at_output_write(&o, "3 3 jemalloc_stats()\n", 21);
	assert_int_equal(at_output_close(&o), 0);
	read_path(path, got, sizeof(got));
	assert_string_equal(got,
			    "1 1 malloc(8)=0x10\n2 2 free(0x10)\nother\n3 3 jemalloc_stats()\n");

	path = tmp_path("append-new.log");
	assert_int_equal(at_output_open_append(&o, path), 0);
	at_output_write(&o, "x\n", 2);
	assert_int_equal(at_output_close(&o), 0);
	read_path(path, got, sizeof(got));
	assert_string_equal(got, "x\n");
}

/* Paths that cannot be opened: -1 with the errno of open(2). */
static void test_open_errors(void **state)
{
	(void)state;
	static const struct {
		const char *path;
		int append, err;
	} cases[] = {
		{ "/nonexistent/dir/out", 0, ENOENT },
		{ "/nonexistent/dir/out", 1, ENOENT },
		{ "/tmp", 0, EISDIR },
		{ "/tmp", 1, EISDIR },
		{ "/proc/self/cmdline/x", 0, ENOTDIR },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct at_output o;
		errno = 0;
		int rc = cases[c].append ? at_output_open_append(&o, cases[c].path)
					 : at_output_open(&o, cases[c].path);
		if (rc != -1 || errno != cases[c].err)
			fail_msg("%s (append %d): %d, errno %d, want -1, errno %d", cases[c].path,
				 cases[c].append, rc, errno, cases[c].err);
	}
}

/* NULL and "-" are standard output, named "<stdout>", which close leaves open. */
static void test_stdout(void **state)
{
	(void)state;
	const char *paths[] = { NULL, "-" };

	for (size_t i = 0; i < 2; i++) {
		struct at_output o;
		assert_int_equal(at_output_open(&o, paths[i]), 0);
		assert_int_equal(o.fd, 1);
		assert_string_equal(o.name, "<stdout>");
		assert_int_equal(at_output_close(&o), 0);
		assert_true(fd_is_open(1));
		assert_int_equal(at_output_open_append(&o, paths[i]), 0);
		assert_int_equal(o.fd, 1);
		assert_string_equal(o.name, "<stdout>");
		assert_int_equal(at_output_close(&o), 0);
		assert_true(fd_is_open(1));
	}
}

/* close writes what is buffered; it closes the descriptors open and open_append made, not
 * the one open_fd was given. */
static void test_close(void **state)
{
	(void)state;
	struct at_output o;
	char got[64];
	const char *path = tmp_path("close.log");
	int fd = memfile();

	assert_int_equal(at_output_open_fd(&o, fd, "memfd"), 0);
	at_output_write(&o, "pending\n", 8);
	assert_int_equal(at_output_close(&o), 0);
	assert_null(o.buf);
	assert_true(fd_is_open(fd));
	assert_file_is(fd, "pending\n", 8);
	close(fd);

	assert_int_equal(at_output_open(&o, path), 0);
	fd = o.fd;
	at_output_write(&o, "pending\n", 8);
	assert_int_equal(at_output_close(&o), 0);
	assert_false(fd_is_open(fd));
	read_path(path, got, sizeof(got));
	assert_string_equal(got, "pending\n");

	assert_int_equal(at_output_open_append(&o, path), 0);
	fd = o.fd;
	assert_int_equal(at_output_close(&o), 0);
	assert_false(fd_is_open(fd));
}

/* Opens path with flags under an alarm (a hang fails the test): rc, errno in *err, the reason
 * in *why, and the output closed again when the open worked. */
static int open_flags(const char *path, unsigned flags, int *err, const char **why)
{
	struct at_output o;

	alarm(5);
	errno = 0;
	int rc = at_output_open_path(&o, path, flags);
	*err = errno;
	alarm(0);
	*why = rc < 0 ? o.why : NULL;
	if (rc == 0) {
		assert_true(fcntl(o.fd, F_GETFD) & FD_CLOEXEC);
		assert_false(fcntl(o.fd, F_GETFL) & O_NONBLOCK);
		assert_int_equal(at_output_close(&o), 0);
	} else {
		assert_non_null(*why);
	}
	return rc;
}

/* The guarded rule: a symbolic link (to a file or dangling) is refused and its target left
 * alone, nothing created where a dangling link points; a FIFO with no reader is refused at once
 * (by both rules), one with a reader written; a directory refused; a new file made 0600
 * whatever the umask. */
static void test_guarded_links_fifos_modes(void **state)
{
	(void)state;
	const unsigned g = AT_OUTPUT_GUARDED;
	char victim[128], link[128], dangling[128], target[128], fifo[128], got[64];
	const char *why;
	int err;

	snprintf(victim, sizeof(victim), "%s", tmp_path("victim"));
	snprintf(link, sizeof(link), "%s", tmp_path("link.log"));
	snprintf(dangling, sizeof(dangling), "%s", tmp_path("dangling.log"));
	snprintf(target, sizeof(target), "%s", tmp_path("chosen-by-the-link"));
	snprintf(fifo, sizeof(fifo), "%s", tmp_path("fifo"));
	write_path(victim, "precious\n");
	assert_int_equal(symlink(victim, link), 0);
	assert_int_equal(symlink(target, dangling), 0);
	assert_int_equal(mkfifo(fifo, 0600), 0);

	for (unsigned append = 0; append <= AT_OUTPUT_APPEND; append += AT_OUTPUT_APPEND) {
		assert_int_equal(open_flags(link, g | append, &err, &why), -1);
		assert_int_equal(err, ELOOP);
		assert_string_equal(why, "a symbolic link (outputs are not opened through links)");
		assert_int_equal(open_flags(dangling, g | append, &err, &why), -1);
		assert_int_equal(err, ELOOP);
		assert_int_equal(access(target, F_OK), -1);
		assert_int_equal(open_flags(fifo, g | append, &err, &why), -1);
		assert_int_equal(err, ENXIO);
		assert_string_equal(why, "a FIFO with no reader");
		assert_int_equal(open_flags(fifo, append, &err, &why), -1); /* plain: no wait either */
		assert_int_equal(err, ENXIO);
		assert_int_equal(open_flags(tmp_dir, g | append, &err, &why), -1);
		assert_int_equal(err, EISDIR);
	}
	read_path(victim, got, sizeof(got));
	assert_string_equal(got, "precious\n");
	/* the plain rule follows links, as any tool does */
	assert_int_equal(open_flags(link, AT_OUTPUT_APPEND, &err, &why), 0);

	/* a FIFO with a reader is written, never truncated */
	int rd = open(fifo, O_RDONLY | O_NONBLOCK);
	assert_true(rd >= 0);
	struct at_output o;
	assert_int_equal(at_output_open_path(&o, fifo, g), 0);
	at_output_write(&o, "through\n", 8);
	assert_int_equal(at_output_close(&o), 0);
	assert_int_equal(read(rd, got, sizeof(got)), 8);
	close(rd);

	/* character devices are outputs too */
	assert_int_equal(open_flags("/dev/null", g, &err, &why), 0);

	/* a new file is 0600 whatever the umask; an existing one keeps its mode */
	mode_t mask = umask(0);
	struct stat st;
	const char *fresh = tmp_path("fresh.log");
	assert_int_equal(open_flags(fresh, g | AT_OUTPUT_APPEND, &err, &why), 0);
	assert_int_equal(stat(fresh, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	fresh = tmp_path("fresh.atz");
	assert_int_equal(open_flags(fresh, g, &err, &why), 0);
	assert_int_equal(stat(fresh, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	umask(mask);
	unlink(link);
	unlink(dangling);
	unlink(fifo);
}

/* The guarded rule on existing regular files: one with another hard link is refused (and not
 * emptied); one of another user in a sticky folder writable by others is refused (root only:
 * the test makes the file nobody's); our own is emptied (truncate) or appended to. */
static void test_guarded_existing_files(void **state)
{
	(void)state;
	const unsigned g = AT_OUTPUT_GUARDED;
	char mine[128], other[128], got[64];
	const char *why;
	int err;

	snprintf(mine, sizeof(mine), "%s", tmp_path("mine.atz"));
	snprintf(other, sizeof(other), "%s", tmp_path("other-name"));
	write_path(mine, "an old trace\n");
	assert_int_equal(link(mine, other), 0);
	assert_int_equal(open_flags(mine, g, &err, &why), -1);
	assert_int_equal(err, EMLINK);
	assert_string_equal(why, "a file with 2 hard links (another name of another file?)");
	read_path(mine, got, sizeof(got));
	assert_string_equal(got, "an old trace\n");
	unlink(other);
	struct at_output o;
	assert_int_equal(at_output_open_path(&o, mine, g | AT_OUTPUT_APPEND), 0);
	at_output_write(&o, "more\n", 5);
	assert_int_equal(at_output_close(&o), 0);
	read_path(mine, got, sizeof(got));
	assert_string_equal(got, "an old trace\nmore\n");
	assert_int_equal(at_output_open_path(&o, mine, g), 0);
	at_output_write(&o, "new\n", 4);
	assert_int_equal(at_output_close(&o), 0);
	read_path(mine, got, sizeof(got));
	assert_string_equal(got, "new\n");

	if (geteuid() != 0)
		return;
	char sticky[128], planted[160];
	snprintf(sticky, sizeof(sticky), "%s", tmp_path("sticky"));
	assert_int_equal(mkdir(sticky, 0777), 0);
	assert_int_equal(chmod(sticky, 01777), 0);
	snprintf(planted, sizeof(planted), "%s/x.log", sticky);
	write_path(planted, "nobody's\n");
	assert_int_equal(chown(planted, 65534, 65534), 0);
	for (unsigned append = 0; append <= AT_OUTPUT_APPEND; append += AT_OUTPUT_APPEND) {
		assert_int_equal(open_flags(planted, g | append, &err, &why), -1);
		assert_int_equal(err, EACCES);
		assert_string_equal(why, "a file of another user (uid 65534) in a sticky shared "
			    "folder");
	}
	read_path(planted, got, sizeof(got));
	assert_string_equal(got, "nobody's\n");
	/* the folder's owner may own it: then it is fine (the kernel's rule too) */
	assert_int_equal(chown(sticky, 65534, 65534), 0);
	assert_int_equal(open_flags(planted, g | AT_OUTPUT_APPEND, &err, &why), 0);
	/* root's own file there is fine */
	assert_int_equal(chown(sticky, 0, 0), 0);
	assert_int_equal(chown(planted, 0, 0), 0);
	assert_int_equal(open_flags(planted, g | AT_OUTPUT_APPEND, &err, &why), 0);
	unlink(planted);
	rmdir(sticky);
}

/* The plain rule empties only a regular file (with ftruncate, once it knows): a character
 * device is written as it is. */
static void test_plain_truncates_regular_files_only(void **state)
{
	(void)state;
	struct at_output o;

	assert_int_equal(at_output_open(&o, "/dev/null"), 0);
	at_output_write(&o, "x", 1);
	assert_int_equal(at_output_close(&o), 0);
}

/* Whole lines: a write cut inside a line (a file size limit, in a child) takes the line's
 * start back off a regular file; without whole_lines the bytes stay. */
static void test_whole_lines_take_back(void **state)
{
	(void)state;
	for (int whole = 0; whole <= 1; whole++) {
		char path[] = "/tmp/test_lib_output.cut.XXXXXX";
		int fd = mkstemp(path);
		assert_true(fd >= 0);
		close(fd);
		pid_t child = fork();
		assert_true(child >= 0);
		if (child == 0) {
			struct rlimit lim = { 50, 50 };
			struct at_output out;
			signal(SIGXFSZ, SIG_IGN);
			if (setrlimit(RLIMIT_FSIZE, &lim) < 0 || at_output_open(&out, path) < 0)
				_exit(1);
			out.whole_lines = whole;
			for (int i = 0; i < 10; i++)
				at_output_write(&out, "0123456789abcdef\n", 17); /* 17-byte lines */
			int rc = at_output_close(&out);
			_exit(rc == -1 && out.err == EFBIG && out.written == (whole ? 34 : 50) ? 0
												  : 2);
		}
		int status;
		assert_int_equal(waitpid(child, &status, 0), child);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
		char got[128];
		read_path(path, got, sizeof(got));
		assert_int_equal(strlen(got), whole ? 34 : 50);
		if (whole)
			assert_string_equal(got, "0123456789abcdef\n0123456789abcdef\n");
		unlink(path);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_then_flush),
		cmocka_unit_test(test_reserve_commit),
		cmocka_unit_test(test_reserve_flushes_when_full),
		cmocka_unit_test(test_large_writes),
		cmocka_unit_test(test_slow_reader),
		cmocka_unit_test(test_dev_full),
		cmocka_unit_test(test_dev_full_large_write),
		cmocka_unit_test(test_first_errno_kept),
		cmocka_unit_test(test_bad_fd),
		cmocka_unit_test(test_open_truncates),
		cmocka_unit_test(test_open_append),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_stdout),
		cmocka_unit_test(test_close),
		cmocka_unit_test(test_guarded_links_fifos_modes),
		cmocka_unit_test(test_guarded_existing_files),
		cmocka_unit_test(test_plain_truncates_regular_files_only),
		cmocka_unit_test(test_whole_lines_take_back),
	};
	return cmocka_run_group_tests(tests, NULL, remove_tmp);
}
