/* latency.h: the time of each replayed call, in log-linear histograms kept in mapped memory,
 * so that recording a time never calls the allocator under test.
 *
 * The clock is CLOCK_MONOTONIC through the vDSO (clock_gettime makes no system call); it is
 * read just before and just after the allocator's function, and its own cost is not subtracted
 * (rp_clock_cost_ns measures it, and the report prints it). A histogram has 16 buckets per
 * power of two: times under 16 ns are exact, a larger one is known within 1/16 of its value.
 * Percentiles are the lower bound of the bucket holding the value of that rank; max is exact. */
#ifndef ALLOCTAP_REPLAY_LATENCY_H
#define ALLOCTAP_REPLAY_LATENCY_H

#include <stdint.h>
#include <time.h>

#include "event.h"

#define RP_LAT_SUB_BITS 4
#define RP_LAT_SUB (1u << RP_LAT_SUB_BITS)
#define RP_LAT_BUCKETS 976   /* 16 exact buckets, then 16 for each power of two from 2^4 to 2^63 */
#define RP_LAT_CLASSES 65    /* size classes: 0 for 0 bytes, k + 1 for [2^k, 2^(k+1)) */

/* The times of one function (and, with sizes, one size class). */
struct rp_lat_cell {
	uint64_t count, sum, max;
	uint64_t bucket[RP_LAT_BUCKETS];
};

struct rp_latency {
	int by_size;              /* cells per size class (--latency=size), else one per function */
	struct rp_lat_cell *cell; /* [AT_FUNC_COUNT][RP_LAT_CLASSES], mapped, touched pages only */
};

/* Maps the cells. 0, or -1 with errno. */
int rp_latency_init(struct rp_latency *l, int by_size);
void rp_latency_fini(struct rp_latency *l);

static inline uint64_t rp_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The bucket of a time, and the lowest time of a bucket. */
static inline unsigned rp_lat_bucket(uint64_t ns)
{
	if (ns < RP_LAT_SUB)
		return (unsigned)ns;
	unsigned e = 63u - (unsigned)__builtin_clzll(ns);
	return (e - RP_LAT_SUB_BITS + 1) * RP_LAT_SUB +
	       (unsigned)((ns >> (e - RP_LAT_SUB_BITS)) & (RP_LAT_SUB - 1));
}
uint64_t rp_lat_bucket_low(unsigned b);

/* The size class of a request: 0 for 0 bytes, k + 1 for sizes in [2^k, 2^(k+1)). */
static inline unsigned rp_lat_class(uint64_t size)
{
	return size ? 64u - (unsigned)__builtin_clzll(size) : 0;
}

static inline struct rp_lat_cell *rp_lat_cell_of(const struct rp_latency *l, unsigned func,
						 unsigned cls)
{
	return &l->cell[func * RP_LAT_CLASSES + cls];
}

/* Records one call of func asking size bytes (the freed block's size for free) that took ns. */
static inline void rp_latency_add(struct rp_latency *l, unsigned func, uint64_t size, uint64_t ns)
{
	struct rp_lat_cell *c = rp_lat_cell_of(l, func, l->by_size ? rp_lat_class(size) : 0);

	c->count++;
	c->sum += ns;
	if (ns > c->max)
		c->max = ns;
	c->bucket[rp_lat_bucket(ns)]++;
}

/* Adds every count of from into into (the per-thread histograms of a threaded replay). */
void rp_latency_merge(struct rp_latency *into, const struct rp_latency *from);

/* The time of rank ceil(q * count) (at least 1), as the lower bound of its bucket; 0 for an
 * empty cell. q in (0, 1]. */
uint64_t rp_lat_percentile(const struct rp_lat_cell *c, double q);

/* What one rp_clock_ns() costs, in ns: the median of 9 runs of 10,000 back-to-back reads. */
double rp_clock_cost_ns(void);

/* Prints, through lib/display at level 0 (asked for), the clock line and one line per
 * function (and size class) that was called:
 *   latency FUNC[ SIZES]: count=N mean=X p50=N p90=N p99=N p99.9=N max=N
 * SIZES is "LOW-HIGH" bytes of the class ("0" for size 0). With -v (level 3) every non-empty
 * bucket follows its line: "  histogram FUNC[ SIZES] LOW_NS: COUNT". */
void rp_latency_report(const struct rp_latency *l);

#endif
