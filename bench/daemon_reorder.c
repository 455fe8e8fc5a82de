/* daemon_reorder: what alloctapd's reorder window costs per event, next to handing the same
 * records straight to the writer. Prints one table.
 *
 * Usage: daemon_reorder [EVENTS]
 * Includes daemon/trace/reorder.c itself (the bench build links only lib/). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../daemon/trace/reorder.c"

static uint64_t emitted_sum;

static void count_emit(void *arg, const struct at_record *r)
{
	(void)arg;
	emitted_sum += r->seq;
}

/* Builds n records: frees and mallocs, one realloc in reallocs_per_1000 (two numbers), in
 * number order, then swaps neighbours within `shuffle` positions (arrival disorder). */
static struct at_record *make_records(uint64_t n, unsigned reallocs_per_1000, unsigned shuffle,
				      uint64_t *count)
{
	struct at_record *r = at_map(n * sizeof(*r), 0);
	uint64_t seq = 0, k = 0, rng = 88172645463325252ull;

	if (!r)
		exit(1);
	while (k < n) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		struct at_record *x = &r[k++];
		x->pid = 1;
		x->tid = 1 + (uint32_t)(rng % 8);
		x->arg[0] = 0x1000 + (rng >> 20) % 4096 * 16;
		x->result = 0x1000 + (rng >> 32) % 4096 * 16;
		x->func = rng % 2 ? AT_PROBE_MALLOC : AT_PROBE_FREE;
		x->seq = x->seq_entry = seq++;
		if (rng % 1000 < reallocs_per_1000) {
			x->func = AT_PROBE_REALLOC;
			x->seq = seq++;
		}
	}
	for (uint64_t i = 0; shuffle && i + shuffle < n; i += shuffle) {
		struct at_record t = r[i];
		r[i] = r[i + shuffle - 1];
		r[i + shuffle - 1] = t;
	}
	*count = seq;
	return r;
}

static double run(const struct at_record *recs, uint64_t n, uint64_t final, int direct)
{
	struct at_reorder ro;
	double t0, t1;

	if (at_reorder_init(&ro, 18, 4096, count_emit, NULL) < 0)
		exit(1);
	t0 = (double)at_now_ns();
	if (direct) {
		for (uint64_t i = 0; i < n; i++)
			count_emit(NULL, &recs[i]);
	} else {
		for (uint64_t i = 0; i < n; i++)
			at_reorder_push(&ro, &recs[i]);
		at_reorder_finish(&ro, final);
	}
	t1 = (double)at_now_ns();
	at_reorder_free(&ro);
	return (t1 - t0) / (double)n;
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 5000000;
	static const struct {
		const char *name;
		unsigned reallocs, shuffle;
	} cases[] = {
		{ "in order, no realloc", 0, 0 },
		{ "in order, 10% realloc", 100, 0 },
		{ "swaps every 4, 10% realloc", 100, 4 },
		{ "swaps every 64, 10% realloc", 100, 64 },
	};

	printf("reorder window cost per event (%llu events, best of 3)\n", (unsigned long long)n);
	printf("%-30s %14s %14s %12s\n", "records", "direct ns/ev", "reorder ns/ev", "added ns/ev");
	for (unsigned c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		uint64_t final;
		struct at_record *recs = make_records(n, cases[c].reallocs, cases[c].shuffle, &final);
		double direct = 1e30, reorder = 1e30;
		for (int rep = 0; rep < 3; rep++) {
			double d = run(recs, n, final, 1), r = run(recs, n, final, 0);
			direct = d < direct ? d : direct;
			reorder = r < reorder ? r : reorder;
		}
		printf("%-30s %14.1f %14.1f %12.1f\n", cases[c].name, direct, reorder,
		       reorder - direct);
		at_unmap(recs, n * sizeof(*recs));
	}
	return emitted_sum == 0;
}
