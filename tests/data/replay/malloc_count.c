/* malloc_count.c: an LD_PRELOAD library for tests/replay_cli.sh that counts every call of the
 * malloc family the process makes (forwarding to glibc's __libc_* entry points) and prints
 * the counts on stderr at exit, in the replay summary's words:
 *   malloc_count malloc=N calloc=N realloc=N free=N memalign=N posix_memalign=N
 *                aligned_alloc=N valloc=N
 * The test compares them with the calls the log asks for: any allocation the replayer made
 * for itself shows up as a difference. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);

static unsigned long n_malloc, n_calloc, n_realloc, n_free, n_memalign, n_posix_memalign,
	n_aligned_alloc, n_valloc;

void *malloc(size_t n)
{
	n_malloc++;
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
	n_calloc++;
	return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
	n_realloc++;
	return __libc_realloc(p, n);
}

void free(void *p)
{
	n_free++;
	__libc_free(p);
}

void *memalign(size_t a, size_t n)
{
	n_memalign++;
	return __libc_memalign(a, n);
}

int posix_memalign(void **out, size_t a, size_t n)
{
	n_posix_memalign++;
	if (a < sizeof(void *) || (a & (a - 1)))
		return EINVAL;
	void *p = __libc_memalign(a, n);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void *aligned_alloc(size_t a, size_t n)
{
	n_aligned_alloc++;
	return __libc_memalign(a, n);
}

void *valloc(size_t n)
{
	n_valloc++;
	return __libc_valloc(n);
}

__attribute__((destructor)) static void print_counts(void)
{
	char buf[256];
	int n = snprintf(buf, sizeof(buf),
			 "malloc_count malloc=%lu calloc=%lu realloc=%lu free=%lu memalign=%lu "
			 "posix_memalign=%lu aligned_alloc=%lu valloc=%lu\n",
			 n_malloc, n_calloc, n_realloc, n_free, n_memalign, n_posix_memalign,
			 n_aligned_alloc, n_valloc);
	if (n > 0 && write(2, buf, (size_t)n) < 0)
		return;
}
