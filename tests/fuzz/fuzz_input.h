/* fuzz_input.h: what every libFuzzer harness of tests/fuzz shares.
 *
 * A harness runs many inputs in one process, so nothing here keeps state between runs: each
 * input gets its own in-memory file (memfd, never a file on disk), closed before the run ends.
 * A broken invariant aborts, which libFuzzer reports as a crash with the input that caused it. */
#ifndef ALLOCTAP_FUZZ_INPUT_H
#define ALLOCTAP_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Aborts with the file, line and condition when cond is false. */
#define FUZZ_CHECK(cond)                                                                       \
	do {                                                                                   \
		if (!(cond)) {                                                                 \
			fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__,   \
				#cond);                                                        \
			abort();                                                               \
		}                                                                              \
	} while (0)

/* An in-memory file holding data[0..size), its offset at 0. Returns the fd; aborts if the
 * kernel refuses (that is the machine's problem, not the input's). */
static inline int fuzz_memfd(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz-input", MFD_CLOEXEC);

	FUZZ_CHECK(fd >= 0);
	for (size_t off = 0; off < size;) {
		ssize_t n = write(fd, data + off, size - off);
		FUZZ_CHECK(n > 0);
		off += (size_t)n;
	}
	FUZZ_CHECK(lseek(fd, 0, SEEK_SET) == 0);
	return fd;
}

/* The bytes written to fd so far, read back into a malloc'ed buffer (the caller frees it);
 * *size gets their count. */
static inline uint8_t *fuzz_memfd_contents(int fd, size_t *size)
{
	off_t end = lseek(fd, 0, SEEK_END);

	FUZZ_CHECK(end >= 0);
	uint8_t *p = malloc((size_t)end + 1);
	FUZZ_CHECK(p != NULL);
	FUZZ_CHECK(pread(fd, p, (size_t)end, 0) == end);
	*size = (size_t)end;
	return p;
}

/* Copies data[0..n) to a malloc'ed block of exactly n bytes, so AddressSanitizer sees any
 * read past the end (lines inside a large buffer would hide it). The caller frees it. */
static inline char *fuzz_exact_copy(const uint8_t *data, size_t n)
{
	char *p = malloc(n ? n : 1);

	FUZZ_CHECK(p != NULL);
	if (n)
		memcpy(p, data, n);
	return p;
}

#endif
