/* pairloop.c: the traced program of the probe benchmarks: a tight loop of malloc+free pairs.
 *
 * Usage: pairloop PAIRS [THREADS [DEPTH]]
 * Each thread makes PAIRS malloc+free pairs, DEPTH (default 0) frames below its start routine
 * (for the cost of stacks: each frame a function of its own that calls the next), over a fixed mix of sizes (16 B to 4 KiB, the range
 * of most allocations) and the program prints one line: "pairs=N threads=T ns_per_pair=X", the
 * wall time of the whole run divided by the pairs of one thread (so with 2 threads a value equal
 * to the 1-thread one means perfect scaling). It waits for a newline on stdin first when
 * PAIRLOOP_WAIT is set, so a tracer can attach before the loop starts. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "prim.h"

static const size_t sizes[8] = { 16, 24, 32, 48, 64, 128, 512, 4096 };
static long pairs;

static long depth;

static uintptr_t loop(void)
{
	uintptr_t sink = 0;

	for (long i = 0; i < pairs; i++) {
		void *p = malloc(sizes[i & 7]);
		sink ^= (uintptr_t)p;
		free(p);
	}
	return sink;
}

/* level frames, then the loop; noipa and the addition after the call keep every frame. */
__attribute__((noipa)) static uintptr_t descend(long level)
{
	if (level <= 0)
		return loop();
	return descend(level - 1) + (uintptr_t)level;
}

static void *run(void *arg)
{
	(void)arg;
	return (void *)descend(depth);
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: pairloop PAIRS [THREADS [DEPTH]]\n");
		return 2;
	}
	pairs = atol(argv[1]);
	int threads = argc > 2 ? atoi(argv[2]) : 1;
	depth = argc > 3 ? atol(argv[3]) : 0;
	if (pairs <= 0 || threads < 1 || threads > 64 || depth < 0 || depth > 1000) {
		fprintf(stderr, "pairloop: PAIRS must be > 0, THREADS 1 to 64, DEPTH 0 to 1000\n");
		return 2;
	}
	if (getenv("PAIRLOOP_WAIT")) {
		int c;
		while ((c = getchar()) != '\n' && c != EOF)
			;
	}
	pthread_t tid[64];
	double t0 = (double)at_now_ns();
	for (int t = 1; t < threads; t++)
		if (pthread_create(&tid[t], NULL, run, NULL) != 0) {
			fprintf(stderr, "pairloop: pthread_create failed\n");
			return 1;
		}
	run(NULL);
	for (int t = 1; t < threads; t++)
		pthread_join(tid[t], NULL);
	double t1 = (double)at_now_ns();
	printf("pairs=%ld threads=%d ns_per_pair=%.1f\n", pairs, threads, (t1 - t0) / pairs);
	return 0;
}
