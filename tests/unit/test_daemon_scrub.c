/* test_daemon_scrub.c: unit tests of daemon/probes/scrub.c: a forked child's inherited
 * breakpoints go, in its executable mappings of the file only, at the right addresses (a mapping
 * that starts past the file's first page too); its parent keeps its own; a site whose original
 * byte is the breakpoint's stays; a process that is gone is an error; whether a child shares
 * its parent's memory (vfork). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "scrub.h"

#define PAGE 4096

/* The file's byte at offset i. */
static uint8_t file_byte(size_t i)
{
	return i == 2 * PAGE - 1 ? AT_SCRUB_BREAKPOINT : (uint8_t)(0x40 + i % 61);
}

/* Maps pages [first, first + n) of fd with prot, and plants a breakpoint at each offset of
 * plant (file offsets, inside the mapping) in the private copy. */
static uint8_t *map_planted(int fd, size_t first, size_t n, int prot, const size_t *plant,
			    unsigned nplant)
{
	uint8_t *m = mmap(NULL, n * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd,
			  (off_t)(first * PAGE));

	assert_true(m != MAP_FAILED);
	for (unsigned i = 0; i < nplant; i++)
		m[plant[i] - first * PAGE] = AT_SCRUB_BREAKPOINT;
	assert_int_equal(mprotect(m, n * PAGE, prot), 0);
	return m;
}

/* The byte at addr in process pid. */
static uint8_t byte_of(pid_t pid, const uint8_t *addr)
{
	char path[64];
	uint8_t b = 0;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &b, 1, (off_t)(uintptr_t)addr), 1);
	close(fd);
	return b;
}

static void test_scrub(void **state)
{
	(void)state;
	char path[] = "/tmp/alloctap-scrub-XXXXXX";
	int fd = mkstemp(path), go[2];
	struct stat st;
	uint8_t content[2 * PAGE];

	assert_true(fd >= 0);
	unlink(path);
	for (size_t i = 0; i < sizeof(content); i++)
		content[i] = file_byte(i);
	assert_int_equal(write(fd, content, sizeof(content)), (ssize_t)sizeof(content));
	assert_int_equal(fstat(fd, &st), 0);
	/* the sites: two on the first page, one on the second, one whose own byte is int3 */
	const struct at_site_byte sites[] = {
		{ 0, file_byte(0) }, { 100, file_byte(100) }, { PAGE + 10, file_byte(PAGE + 10) },
		{ 2 * PAGE - 1, AT_SCRUB_BREAKPOINT },
	};
	const size_t planted[] = { 0, 100 }, planted2[] = { PAGE + 10 };
	uint8_t *text = map_planted(fd, 0, 2, PROT_READ | PROT_EXEC, planted, 2);
	uint8_t *second = map_planted(fd, 1, 1, PROT_READ | PROT_EXEC, planted2, 1);
	uint8_t *data = map_planted(fd, 0, 1, PROT_READ, planted, 1); /* not executable */

	assert_int_equal(pipe(go), 0);
	pid_t child = fork();
	if (child == 0) {
		char c;
		close(go[1]);
		_exit(read(go[0], &c, 1) == 0 ? 0 : 1);
	}
	close(go[0]);
	/* text's sites 0 and 100, and second's PAGE + 10 (the same file offset in text is not
	 * planted there); the last site is int3 in the file itself */
	assert_int_equal(at_scrub_sites(child, st.st_dev, st.st_ino, sites, 4), 3);
	assert_int_equal(byte_of(child, text), file_byte(0));
	assert_int_equal(byte_of(child, text + 100), file_byte(100));
	assert_int_equal(byte_of(child, second + 10), file_byte(PAGE + 10));
	assert_int_equal(byte_of(child, text + 2 * PAGE - 1), AT_SCRUB_BREAKPOINT);
	assert_int_equal(byte_of(child, data), AT_SCRUB_BREAKPOINT); /* not code: left alone */
	assert_int_equal(text[0], AT_SCRUB_BREAKPOINT); /* the parent keeps its own */
	assert_int_equal(second[10], AT_SCRUB_BREAKPOINT);
	assert_int_equal(at_scrub_sites(child, st.st_dev, st.st_ino, sites, 4), 0); /* done */
	assert_int_equal(at_scrub_sites(child, st.st_dev, st.st_ino + 1, sites, 4), 0);
	close(go[1]);
	int status;
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_int_equal(status, 0);
	errno = 0;
	assert_int_equal(at_scrub_sites(child, st.st_dev, st.st_ino, sites, 4), -1);
	assert_int_equal(errno, ENOENT);
	munmap(text, 2 * PAGE);
	munmap(second, PAGE);
	munmap(data, PAGE);
	close(fd);
}

/* A vfork child shares its parent's memory (its breakpoints are the parent's); a fork child
 * does not; a process that is gone cannot be told. */
static void test_shares_memory(void **state)
{
	(void)state;
	int status;
	pid_t v = vfork();

	if (v == 0)
		_exit(at_scrub_shares_memory(getpid(), getppid()) == 1 ? 0 : 1);
	assert_int_equal(waitpid(v, &status, 0), v);
	assert_int_equal(status, 0);
	pid_t f = fork();
	if (f == 0) {
		pause();
		_exit(0);
	}
	assert_int_equal(at_scrub_shares_memory(f, getpid()), 0);
	kill(f, SIGKILL);
	assert_int_equal(waitpid(f, &status, 0), f);
	assert_int_equal(at_scrub_shares_memory(f, getpid()), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scrub),
		cmocka_unit_test(test_shares_memory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
