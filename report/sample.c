/* sample.c: a sampled allocation's estimate (sample.h). */
#include <math.h>

#include "sample.h"
#include "u64map.h"

double rep_sample_scale(uint64_t size, uint64_t sample_bytes)
{
	if (!size || !sample_bytes)
		return 1.0;
	/* -expm1(-x) is 1 - exp(-x) without the loss of 1 - exp(-x) for a small x */
	return 1.0 / -expm1(-(double)size / (double)sample_bytes);
}

struct rep_estimate rep_sample_estimate(uint64_t size, uint64_t sample_bytes, uint64_t key)
{
	struct rep_estimate e = { size, 1 };

	if (!sample_bytes)
		return e;
	double w = rep_sample_scale(size, sample_bytes), whole = floor(w);
	double bytes = nearbyint((double)size * w);
	/* a uniform number in [0, 1) from the key: 53 bits of its mix */
	double u = (double)(rep_u64map_mix(key) >> 11) * (1.0 / 9007199254740992.0);

	e.bytes = bytes >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)bytes;
	e.count = whole >= 18446744073709551615.0 ? UINT64_MAX
						  : (uint64_t)whole + (u < w - whole ? 1 : 0);
	return e;
}
