/* export.c: events to folded lines, weighed on their sites (report/sites.h). */
#include "export.h"
#include "sample.h"

int rep_export_event(struct rep_sites *x, const struct at_event *ev, uint32_t stack)
{
	int64_t entry;

	if (!rep_is_allocation(ev))
		return 0;
	entry = rep_sites_line(x, stack, ev->func);
	if (entry < 0)
		return -1;
	uint64_t weight = rep_event_weight(ev, x->weight);
	if (x->sample_bytes) { /* an estimate: what the allocation stands for */
		struct rep_estimate e = rep_sample_estimate(
			rep_event_weight(ev, REP_WEIGHT_ALLOC_BYTES), x->sample_bytes,
			rep_sample_key(ev));
		weight = x->weight == REP_WEIGHT_ALLOC_COUNT ? e.count : e.bytes;
	}
	rep_folded_add(x->folded, entry, weight);
	return 0;
}

int rep_export_write(struct rep_sites *x, FILE *out)
{
	int rc = rep_folded_write(x->folded, out);

	rep_sites_forget_entries(x); /* the entries moved: no cached line is valid now */
	return rc;
}
