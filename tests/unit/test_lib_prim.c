/* test_lib_prim.c: unit tests of lib/prim.c: the clock, anonymous mappings for each flag,
 * remapping, populating, the read and write loops under short counts, signals and errors, and
 * opening a regular file to read (every other kind refused without blocking). */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "prim.h"

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/* Pages of [p, p + bytes) resident now. */
static size_t resident_pages(void *p, size_t bytes)
{
	size_t page = page_size(), n = (bytes + page - 1) / page, count = 0;
	unsigned char *vec = malloc(n);

	assert_non_null(vec);
	assert_int_equal(mincore(p, bytes, vec), 0);
	for (size_t i = 0; i < n; i++)
		count += vec[i] & 1;
	free(vec);
	return count;
}

static void test_clock(void **state)
{
	(void)state;
	uint64_t a = at_now_ns();
	struct timespec nap = { 0, 2000000 };
	nanosleep(&nap, NULL);
	uint64_t b = at_now_ns();
	assert_true(b >= a + 2000000);
	assert_true(b - a < 10ull * 1000000000u);
	uint64_t ms = at_now_ms();
	double s = at_now_seconds();
	assert_true(ms >= b / 1000000 && ms <= b / 1000000 + 10000);
	assert_true(s * 1e9 >= (double)b && s * 1e9 < (double)b + 10e9);
}

/* Every flag combination: zero-filled, writable, exactly as long as asked, huge ones aligned,
 * populated ones resident at once and the others not. */
static void test_map_flags(void **state)
{
	(void)state;
	static const struct {
		unsigned flags;
		size_t bytes;
	} cases[] = {
		{ 0, 4096 },
		{ 0, 1000 },
		{ 0, 3u << 20 },
		{ AT_MAP_POPULATE, 256u << 10 },
		{ AT_MAP_NORESERVE, 64u << 20 },
		{ AT_MAP_NORESERVE | AT_MAP_POPULATE, 1u << 20 },
		{ AT_MAP_HUGE, AT_HUGE_PAGE },
		{ AT_MAP_HUGE, 3 * AT_HUGE_PAGE },
		{ AT_MAP_HUGE | AT_MAP_POPULATE, 2 * AT_HUGE_PAGE },
		{ AT_MAP_HUGE | AT_MAP_NORESERVE, 4 * AT_HUGE_PAGE },
	};
	size_t page = page_size();

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t bytes = cases[i].bytes, pages = (bytes + page - 1) / page;
		unsigned flags = cases[i].flags;
		unsigned char *p = at_map(bytes, flags);

		assert_non_null(p);
		assert_int_equal((uintptr_t)p % page, 0);
		if (flags & AT_MAP_HUGE)
			assert_int_equal((uintptr_t)p % AT_HUGE_PAGE, 0);
		size_t resident = resident_pages(p, bytes);
		if (flags & AT_MAP_POPULATE) {
			/* MAP_POPULATE always; MADV_POPULATE_WRITE where the kernel has it */
			if (!(flags & AT_MAP_HUGE) || at_populate(p, bytes) == 0)
				assert_int_equal(resident_pages(p, bytes), pages);
		} else {
			assert_int_equal(resident, 0);
		}
		for (size_t k = 0; k < bytes; k += page / 2)
			assert_int_equal(p[k], 0);
		assert_int_equal(p[bytes - 1], 0);
		memset(p, 0xa5, bytes);
		/* at_unmap(p, bytes) releases all of it (a huge-page mapping was trimmed to it) */
		at_unmap(p, bytes);
		unsigned char v;
		assert_int_equal(mincore(p, page, &v), -1);
		assert_int_equal(mincore(p + (pages - 1) * page, page, &v), -1);
	}
	at_unmap(NULL, 4096); /* ignored */
	errno = 0;
	assert_null(at_map((size_t)1 << 62, 0));
	assert_int_equal(errno, ENOMEM);
}

/* A read-only view of a file shows what is written to the file later. */
static void test_map_readonly(void **state)
{
	(void)state;
	size_t page = page_size();
	int fd = memfd_create("view", 0);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)(2 * page)), 0);
	const unsigned char *v = at_map_readonly(fd, page, (off_t)page);
	assert_non_null(v);
	assert_int_equal(v[0], 0);
	assert_int_equal(pwrite(fd, "xy", 2, (off_t)page), 2);
	assert_int_equal(v[0], 'x');
	assert_int_equal(v[1], 'y');
	at_unmap((void *)v, page);
	errno = 0;
	assert_null(at_map_readonly(-1, page, 0));
	assert_int_equal(errno, EBADF);
	close(fd);
}

static void test_remap(void **state)
{
	(void)state;
	size_t page = page_size();
	static const size_t sizes[][2] = { { 1, 2 }, { 4, 64 }, { 256, 512 }, { 64, 8 } };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t from = sizes[i][0] * page, to = sizes[i][1] * page;
		unsigned char *p = at_map(from, 0);
		assert_non_null(p);
		for (size_t k = 0; k < from; k++)
			p[k] = (unsigned char)(k * 7);
		unsigned char *q = at_remap(p, from, to);
		assert_non_null(q);
		size_t kept = from < to ? from : to;
		for (size_t k = 0; k < kept; k++)
			assert_int_equal(q[k], (unsigned char)(k * 7));
		for (size_t k = kept; k < to; k++)
			assert_int_equal(q[k], 0);
		at_unmap(q, to);
	}
	/* a failed remap leaves the old mapping as it was */
	unsigned char *p = at_map(page, 0);
	assert_non_null(p);
	p[0] = 42;
	errno = 0;
	assert_null(at_remap(p, page, (size_t)1 << 62));
	assert_true(errno == EINVAL || errno == ENOMEM);
	assert_int_equal(p[0], 42);
	at_unmap(p, page);
}

static void test_populate(void **state)
{
	(void)state;
	size_t page = page_size(), bytes = 64 * page;
	unsigned char *p = at_map(bytes, 0);

	assert_non_null(p);
	assert_int_equal(resident_pages(p, bytes), 0);
	if (at_populate(p + 8 * page, 16 * page) == 0) {
		assert_int_equal(resident_pages(p, bytes), 16);
		assert_int_equal(resident_pages(p + 8 * page, 16 * page), 16);
	} else {
		assert_int_equal(resident_pages(p, bytes), 0); /* a kernel without it */
	}
	at_unmap(p, bytes);
}

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted++;
}

/* Installs on_signal for SIGUSR1 without SA_RESTART, so blocked reads and writes see EINTR. */
static void interrupt_without_restart(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);
}

/* Waits for a child, through the signals it may still send. Returns its exit status. */
static int wait_child(pid_t pid)
{
	int status;
	pid_t r;

	do
		r = waitpid(pid, &status, 0);
	while (r < 0 && errno == EINTR);
	assert_int_equal(r, pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* The pattern byte at offset k. */
static unsigned char pattern(size_t k)
{
	return (unsigned char)(k * 31 + 7);
}

/* A child that writes n pattern bytes to fd in pieces of `piece`, signalling the parent
 * before each piece and sleeping between them, then exits. */
static pid_t slow_writer(int fd, size_t n, size_t piece)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid)
		return pid;
	unsigned char buf[4096];
	struct timespec nap = { 0, 3000000 };
	for (size_t off = 0; off < n; off += piece) {
		size_t k = n - off < piece ? n - off : piece;
		for (size_t i = 0; i < k; i++)
			buf[i] = pattern(off + i);
		kill(getppid(), SIGUSR1);
		nanosleep(&nap, NULL);
		if (write(fd, buf, k) != (ssize_t)k)
			_exit(1);
	}
	_exit(0);
}

static void test_read_all(void **state)
{
	(void)state;
	static const struct {
		size_t sent, piece, asked;
	} cases[] = {
		{ 10, 1, 10 },    { 100, 7, 100 },   { 4000, 1000, 4000 },
		{ 100, 30, 40 },  { 10, 3, 20 },     { 0, 1, 5 },
	};
	interrupt_without_restart();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int fds[2];
		unsigned char got[4096];

		assert_int_equal(pipe(fds), 0);
		interrupted = 0;
		pid_t pid = slow_writer(fds[1], cases[i].sent, cases[i].piece);
		close(fds[1]);
		ssize_t n = at_read_all(fds[0], got, cases[i].asked);
		size_t want = cases[i].sent < cases[i].asked ? cases[i].sent : cases[i].asked;
		assert_int_equal(n, (ssize_t)want);
		for (size_t k = 0; k < want; k++)
			assert_int_equal(got[k], pattern(k));
		close(fds[0]);
		wait_child(pid);
		if (cases[i].sent > cases[i].piece)
			assert_true(interrupted > 0);
	}
	errno = 0;
	assert_int_equal(at_read_all(-1, &(char){ 0 }, 1), -1);
	assert_int_equal(errno, EBADF);
	assert_int_equal(at_read_all(-1, NULL, 0), 0);
}

/* write_all through a pipe whose reader is slow and signals the writer: short writes and
 * EINTR both happen, every byte arrives in order. */
static void test_write_all(void **state)
{
	(void)state;
	size_t n = 1u << 20;
	unsigned char *data = malloc(n);
	int fds[2];

	assert_non_null(data);
	for (size_t k = 0; k < n; k++)
		data[k] = pattern(k);
	interrupt_without_restart();
	assert_int_equal(pipe(fds), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		unsigned char buf[8192];
		size_t off = 0;
		struct timespec nap = { 0, 1000000 };
		close(fds[1]);
		for (;;) {
			if (off % (64u << 10) < sizeof(buf)) {
				kill(getppid(), SIGUSR1);
				nanosleep(&nap, NULL);
			}
			ssize_t k = read(fds[0], buf, sizeof(buf));
			if (k <= 0)
				break;
			for (ssize_t i = 0; i < k; i++)
				if (buf[i] != pattern(off + (size_t)i))
					_exit(2);
			off += (size_t)k;
		}
		_exit(off == (1u << 20) ? 0 : 3);
	}
	close(fds[0]);
	interrupted = 0;
	assert_int_equal(at_write_all(fds[1], data, n), n);
	close(fds[1]);
	assert_int_equal(wait_child(pid), 0);
	assert_true(interrupted > 0);

	/* a pipe nobody reads: the count written before EPIPE */
	signal(SIGPIPE, SIG_IGN);
	assert_int_equal(pipe(fds), 0);
	close(fds[0]);
	errno = 0;
	assert_int_equal(at_write_all(fds[1], data, 100), 0);
	assert_int_equal(errno, EPIPE);
	close(fds[1]);
	errno = 0;
	assert_int_equal(at_write_all(-1, data, 1), 0);
	assert_int_equal(errno, EBADF);
	assert_int_equal(at_write_all(-1, data, 0), 0);
	free(data);
}

/* at_open_regular on path: the fd (checked to be close-on-exec and readable), or -1 with
 * *why and errno as the function left them. Never blocks: an alarm kills a hang. */
static int open_regular(const char *path, int flags, const char **why, int *err)
{
	*why = NULL;
	alarm(5);
	int fd = at_open_regular(path, flags, why);
	*err = errno;
	alarm(0);
	if (fd >= 0) {
		assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
		assert_int_equal(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDONLY);
	} else {
		assert_non_null(*why);
	}
	return fd;
}

/* A regular file opens (through a link too, unless O_NOFOLLOW); a FIFO with no writer, a
 * directory, /dev/null, a link with O_NOFOLLOW, a dangling link and a missing file are refused
 * with a reason naming what they are. */
static void test_open_regular(void **state)
{
	(void)state;
	char dir[] = "/tmp/test_lib_prim.XXXXXX", path[128], buf[8];
	const char *why;
	int err, fd;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/file", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "data", 4), 4);
	close(fd);
	fd = open_regular(path, O_NOFOLLOW, &why, &err);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf)), 4);
	assert_memory_equal(buf, "data", 4);
	close(fd);

	char link[128], dangling[128], fifo[128];
	snprintf(link, sizeof(link), "%s/link", dir);
	snprintf(dangling, sizeof(dangling), "%s/dangling", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(symlink("/nonexistent/file", dangling), 0);
	assert_int_equal(mkfifo(fifo, 0600), 0);

	fd = open_regular(link, 0, &why, &err); /* followed without O_NOFOLLOW */
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(open_regular(link, O_NOFOLLOW, &why, &err), -1);
	assert_string_equal(why, "a symbolic link, not followed");
	assert_int_equal(open_regular(dangling, O_NOFOLLOW, &why, &err), -1);
	assert_string_equal(why, "a symbolic link, not followed");
	assert_int_equal(open_regular(dangling, 0, &why, &err), -1);
	assert_int_equal(err, ENOENT);
	assert_string_equal(why, strerror(ENOENT));
	assert_int_equal(open_regular(fifo, 0, &why, &err), -1);
	assert_string_equal(why, "a FIFO, not a regular file");
	assert_int_equal(err, EINVAL);
	assert_int_equal(open_regular(dir, 0, &why, &err), -1);
	assert_string_equal(why, "a directory, not a regular file");
	assert_int_equal(err, EISDIR);
	assert_int_equal(open_regular("/dev/null", 0, &why, &err), -1);
	assert_string_equal(why, "a character device, not a regular file");
	assert_int_equal(open_regular("/nonexistent/x", O_NOFOLLOW, &why, &err), -1);
	assert_int_equal(err, ENOENT);

	/* /proc files are regular files: the daemon reads them this way */
	fd = open_regular("/proc/self/maps", O_NOFOLLOW, &why, &err);
	assert_true(fd >= 0);
	assert_true(read(fd, buf, 1) == 1);
	close(fd);

	/* no read permission: refused by the open, with its reason */
	if (geteuid() != 0) {
		assert_int_equal(chmod(path, 0), 0);
		assert_int_equal(open_regular(path, 0, &why, &err), -1);
		assert_int_equal(err, EACCES);
	}
	unlink(path);
	unlink(link);
	unlink(dangling);
	unlink(fifo);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clock),     cmocka_unit_test(test_map_flags),
		cmocka_unit_test(test_remap),     cmocka_unit_test(test_populate),
		cmocka_unit_test(test_read_all),  cmocka_unit_test(test_write_all),
		cmocka_unit_test(test_map_readonly), cmocka_unit_test(test_open_regular),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
