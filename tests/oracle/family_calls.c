/* family_calls: every function of the malloc family once or more, in the main thread, in a
 * thread that ends, and in a forked child: the oracle test's check that the preload tracer
 * writes each function as alloctapd does (aligned_alloc, pvalloc, reallocarray with and without
 * overflow, posix_memalign failing, realloc(NULL, n), realloc(p, 0), free(NULL)).
 *
 * Usage: family_calls */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* Keeps the compiler from pairing or dropping calls whose results look unused. */
static void *volatile sink;
static volatile size_t huge = SIZE_MAX / 2;

static void every_function(void)
{
	void *p;

	sink = malloc(24);
	free(sink);
	sink = calloc(3, 40);
	sink = realloc(sink, 4000);
	free(sink);
	sink = realloc(NULL, 72);
	sink = realloc(sink, 0);
	free(NULL);
	sink = memalign(64, 100);
	free(sink);
	sink = aligned_alloc(128, 256);
	free(sink);
	if (posix_memalign(&p, 32, 48) == 0)
		free(p);
	if (posix_memalign(&p, 24, 48) == 0) /* not a power of two: fails, EINVAL */
		free(p);
	sink = valloc(10);
	free(sink);
	sink = pvalloc(5000);
	free(sink);
	sink = reallocarray(NULL, 10, 12);
	p = reallocarray(sink, huge, 3); /* n*m overflows: NULL, the block stays */
	free(sink);
	sink = reallocarray(p, 0, 0);
}

static void *thread_main(void *arg)
{
	(void)arg;
	every_function();
	return NULL;
}

int main(void)
{
	pthread_t t;
	pid_t child;

	every_function();
	if (pthread_create(&t, NULL, thread_main, NULL) != 0 || pthread_join(t, NULL) != 0)
		return 1;
	child = fork();
	if (child == 0) {
		every_function();
		exit(0);
	}
	if (child < 0 || waitpid(child, NULL, 0) != child)
		return 1;
	every_function();
	return 0;
}
