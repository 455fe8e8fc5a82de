/* lost.c: counting lost events. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lost.h"

void at_lost_read(struct at_lost *l, int map_fd)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t values[ncpu > 0 ? ncpu : 1];

	for (uint32_t k = 0; k < AT_LOST_COUNT; k++) {
		l->bpf[k] = 0;
		if (ncpu > 0 && bpf_map_lookup_elem(map_fd, &k, values) == 0)
			for (int c = 0; c < ncpu; c++)
				l->bpf[k] += values[c];
	}
}

uint64_t at_lost_events(const struct at_lost *l, const struct at_reorder *r)
{
	return at_reorder_lost_events(r, l->bpf[AT_LOST_REALLOCS] + l->bpf[AT_LOST_THREAD_ENDS]) + l->bpf[AT_LOST_NO_STATE];
}

void at_lost_note(struct at_lost *l, uint64_t total, struct at_sink *s)
{
	if (total > l->reported)
		at_sink_lost(s, total - l->reported);
	l->reported = total;
}
