/* sample.h: a sampled trace's figures as estimates of the whole (alloctapd --sample-bytes N),
 * as pprof scales a sampled heap profile.
 *
 * Each thread's allocated bytes are a Poisson process with one point per N bytes on average,
 * and an allocation is recorded when a point falls in it: one of s bytes with probability
 * p = 1 - exp(-s/N). A recorded allocation then stands for 1/p allocations and s/p bytes
 * (pprof's scaleHeapSample), which makes every sum over recorded allocations an unbiased
 * estimate of the sum over all of them. The engine (report/heap.c) counts blocks in whole
 * numbers: an allocation's count is 1/p rounded down or up, up with probability the fraction
 * of 1/p, chosen by a hash of the event (so the estimate stays unbiased and a trace always
 * reports the same figures). */
#ifndef ALLOCTAP_REPORT_SAMPLE_H
#define ALLOCTAP_REPORT_SAMPLE_H

#include <stdint.h>

#include "event.h"

/* What one recorded allocation stands for. */
struct rep_estimate {
	uint64_t bytes; /* s/p, rounded to the nearest byte (saturated) */
	uint64_t count; /* 1/p, rounded down or up as above; at least 1 */
};

/* The estimate of an allocation of size bytes in a trace sampled at one per sample_bytes
 * bytes (0: not sampled: size and 1), key telling the event apart (any 64-bit value that
 * differs between events; the same key gives the same count). */
struct rep_estimate rep_sample_estimate(uint64_t size, uint64_t sample_bytes, uint64_t key);

/* The key of an allocation event for rep_sample_estimate: its process, thread, time and
 * block, so that every reader of the trace draws the same counts. */
static inline uint64_t rep_sample_key(const struct at_event *ev)
{
	return ev->time_ns ^ ((uint64_t)ev->pid << 40) ^ ((uint64_t)ev->tid << 20) ^ ev->result;
}

/* 1/p for an allocation of size bytes sampled at one per sample_bytes bytes (1 when either is
 * 0: an allocation of 0 bytes is never sampled, and stands for itself if recorded). */
double rep_sample_scale(uint64_t size, uint64_t sample_bytes);

#endif
