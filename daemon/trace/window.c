/* window.c: the recording window. */
#include <time.h>

#include "alloctap.h"
#include "bpf.h"
#include "display.h"
#include "reorder.h"
#include "window.h"

#define POLL_NS 1000000 /* 1 ms between looks at the counters */

void at_window_open(struct at_bpf *bpf, unsigned settle_ms)
{
	struct timespec settle = { settle_ms / 1000, (long)(settle_ms % 1000) * 1000000 };

	if (settle_ms)
		nanosleep(&settle, NULL);
	at_bpf_set_recording(bpf, 1);
}

int at_window_in_flight(struct at_bpf *bpf, uint64_t *calls, uint64_t *reallocs)
{
	uint64_t sum;

	if (at_bpf_in_flight(bpf, &sum) < 0)
		return -1;
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

uint64_t at_window_close(struct at_bpf *bpf, struct at_reorder *merge, unsigned wait_ms)
{
	struct timespec start, pause = { 0, POLL_NS };
	uint64_t calls = 0, reallocs;

	/* ordered before the counters and the producer positions are read (the BPF side counts a
	 * call up, or reserves a free's record, then reads recording again) */
	at_bpf_set_recording(bpf, 0);
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		int unreadable = at_window_in_flight(bpf, &calls, &reallocs) < 0;

		/* nothing in flight: every record of the window is reserved below the producer
		 * positions this drain reads; those still being written are waited for */
		at_bpf_ring_woken(bpf);
		at_reorder_drain(merge, at_bpf_clock(bpf));
		if (unreadable || (calls == 0 && !at_reorder_unwritten(merge)) ||
		    elapsed_ms(&start) >= wait_ms)
			return calls;
		nanosleep(&pause, NULL);
	}
}

uint64_t at_window_unfinished(struct at_bpf *bpf)
{
	uint64_t calls, reallocs;

	if (at_window_in_flight(bpf, &calls, &reallocs) < 0 || calls == 0)
		return 0;
	DISPLAYLEVEL(2, "%s: %llu call%s still unfinished at the end (a thread stopped inside "
		     "the allocator?): counted lost\n", at_program_name, (unsigned long long)calls,
		     calls == 1 ? " was" : "s were");
	return calls - reallocs;
}
