/* thread_calls.c: an LD_PRELOAD library for tests/replay_threads.sh that writes one line per
 * call of malloc, calloc, realloc and free to the file named by THREAD_CALLS, as
 *   OSTID FUNC SIZE
 * where SIZE is the size asked for, or for free the size of the block freed (0 for NULL), and
 * realloc writes the size of the block it released on a "realloc-free" line first. The
 * replayer's main thread (OSTID = pid) is marked "main". Blocks are tracked in a fixed table
 * guarded by a spin lock; lines go out with one write(2) each (O_APPEND), so they are never
 * interleaved. Calls are forwarded to glibc's __libc_* entry points. */
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

#define TABLE (1u << 20)
static struct { uintptr_t p; size_t n; } table[TABLE];
static atomic_flag lock = ATOMIC_FLAG_INIT;
static int fd = -2;

static void put(uintptr_t p, size_t n)
{
	while (atomic_flag_test_and_set(&lock))
		;
	for (uint32_t h = (uint32_t)((p >> 4) * 2654435761u) & (TABLE - 1);; h = (h + 1) & (TABLE - 1))
		if (table[h].p == 0 || table[h].p == p) {
			table[h].p = p;
			table[h].n = n;
			break;
		}
	atomic_flag_clear(&lock);
}

/* Removes p; returns its size. Backward-shift deletion keeps the probe chains whole. */
static size_t take(uintptr_t p)
{
	size_t n = 0;
	uint32_t h = (uint32_t)((p >> 4) * 2654435761u) & (TABLE - 1);

	if (!p)
		return 0;
	while (atomic_flag_test_and_set(&lock))
		;
	for (; table[h].p; h = (h + 1) & (TABLE - 1))
		if (table[h].p == p)
			break;
	if (table[h].p == p) {
		n = table[h].n;
		uint32_t hole = h;
		for (uint32_t j = (h + 1) & (TABLE - 1); table[j].p; j = (j + 1) & (TABLE - 1)) {
			uint32_t home = (uint32_t)((table[j].p >> 4) * 2654435761u) & (TABLE - 1);
			if (((j - home) & (TABLE - 1)) >= ((j - hole) & (TABLE - 1))) {
				table[hole] = table[j];
				hole = j;
			}
		}
		table[hole].p = 0;
	}
	atomic_flag_clear(&lock);
	return n;
}

static void note(const char *func, size_t n)
{
	char line[96];

	if (fd == -2) {
		const char *path = getenv("THREAD_CALLS");
		fd = path ? open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600) : -1;
	}
	if (fd < 0)
		return;
	long tid = syscall(SYS_gettid);
	int len = tid == getpid() ? snprintf(line, sizeof(line), "main %s %zu\n", func, n)
				  : snprintf(line, sizeof(line), "%ld %s %zu\n", tid, func, n);
	if (write(fd, line, (size_t)len) < 0)
		return;
}

void *malloc(size_t n)
{
	void *p = __libc_malloc(n);
	put((uintptr_t)p, n);
	note("malloc", n);
	return p;
}

void *calloc(size_t n, size_t m)
{
	void *p = __libc_calloc(n, m);
	put((uintptr_t)p, n * m);
	note("calloc", n * m);
	return p;
}

void *realloc(void *old, size_t n)
{
	note("realloc-free", take((uintptr_t)old));
	void *p = __libc_realloc(old, n);
	put((uintptr_t)p, n);
	note("realloc", n);
	return p;
}

void free(void *p)
{
	note("free", take((uintptr_t)p));
	__libc_free(p);
}
