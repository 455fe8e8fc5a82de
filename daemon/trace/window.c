/* window.c: the recording window. */
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "alloctap.h"
#include "alloctap.skel.h"
#include "display.h"
#include "window.h"

#define POLL_NS 1000000 /* 1 ms between looks at the counters */

void at_window_open(struct alloctap *skel, unsigned settle_ms)
{
	struct timespec settle = { settle_ms / 1000, (long)(settle_ms % 1000) * 1000000 };

	if (settle_ms)
		nanosleep(&settle, NULL);
	__atomic_store_n(&skel->bss->recording, 1, __ATOMIC_SEQ_CST);
}

int at_window_in_flight(struct alloctap *skel, uint64_t *calls, uint64_t *reallocs)
{
	int ncpu = libbpf_num_possible_cpus();
	uint32_t zero = 0;

	if (ncpu <= 0)
		return -1;
	uint64_t values[ncpu], sum = 0;
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.inflight), &zero, values) < 0)
		return -1;
	for (int c = 0; c < ncpu; c++)
		sum += values[c]; /* one slot alone may wrap; the sum does not */
	*calls = sum & 0xffffffffu;
	*reallocs = sum >> 32;
	return 0;
}

static uint64_t elapsed_ms(const struct timespec *since)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)(now.tv_sec - since->tv_sec) * 1000 +
	       (uint64_t)((now.tv_nsec - since->tv_nsec) / 1000000);
}

uint64_t at_window_close(struct alloctap *skel, struct ring_buffer *ring, unsigned wait_ms)
{
	struct timespec start, pause = { 0, POLL_NS };
	uint64_t calls = 0, reallocs;

	/* seq_cst: the store is ordered before the counters are read (the BPF side increments
	 * its count, then reads recording again) */
	__atomic_store_n(&skel->bss->recording, 0, __ATOMIC_SEQ_CST);
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		ring_buffer__consume(ring);
		if (at_window_in_flight(skel, &calls, &reallocs) < 0 || calls == 0 ||
		    elapsed_ms(&start) >= wait_ms)
			return calls;
		nanosleep(&pause, NULL);
	}
}

uint64_t at_window_unfinished(struct alloctap *skel)
{
	uint64_t calls, reallocs;

	if (at_window_in_flight(skel, &calls, &reallocs) < 0 || calls == 0)
		return 0;
	DISPLAYLEVEL(2, "%s: %llu call%s still unfinished at the end (a thread stopped inside "
		     "the allocator?): counted lost\n", at_program_name, (unsigned long long)calls,
		     calls == 1 ? " was" : "s were");
	return calls - reallocs;
}
