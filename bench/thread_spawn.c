/* thread_spawn.c: a process that creates threads one batch after another, each thread making
 * one malloc+free pair and ending, for the follow benchmarks (bench/follow_bench.sh): what a
 * followed process pays for each thread it creates (every thread of a followed process is a
 * tracee, whose creation stops until the daemon takes it in).
 *
 * Usage: thread_spawn THREADS [BATCH]   (BATCH threads at once, default 32, at most 256)
 * Prints "us_per_thread N.NN": the wall time from the first creation to the last join, over
 * THREADS. Exits 1 when a thread cannot be created, 2 on bad usage. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BATCH_MAX 256

static void *work(void *arg)
{
	char *p = malloc(40);

	if (p)
		p[0] = 1;
	free(p);
	return arg;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	long threads = argc > 1 ? atol(argv[1]) : 0, batch = argc > 2 ? atol(argv[2]) : 32;
	pthread_t t[BATCH_MAX];
	pthread_attr_t attr;

	if (argc < 2 || argc > 3 || threads < 1 || batch < 1 || batch > BATCH_MAX) {
		fprintf(stderr, "usage: thread_spawn THREADS [BATCH]  (BATCH 1 to %d)\n", BATCH_MAX);
		return 2;
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	double start = now_us();
	for (long done = 0; done < threads;) {
		long n = threads - done < batch ? threads - done : batch;

		for (long k = 0; k < n; k++)
			if (pthread_create(&t[k], &attr, work, NULL) != 0) {
				fprintf(stderr, "thread_spawn: cannot create thread %ld\n", done + k);
				return 1;
			}
		for (long k = 0; k < n; k++)
			pthread_join(t[k], NULL);
		done += n;
	}
	printf("us_per_thread %.2f\n", (now_us() - start) / (double)threads);
	return 0;
}
