/* lost.c: counting lost events. */
#include "bpf.h"
#include "lost.h"

void at_lost_read(struct at_lost *l, struct at_bpf *bpf)
{
	at_bpf_lost(bpf, l->bpf);
}

uint64_t at_lost_events(const struct at_lost *l, const struct at_reorder *r)
{
	return l->bpf[AT_LOST_RECORDS] + at_reorder_lost_events(r, l->bpf[AT_LOST_REALLOCS]) +
	       l->bpf[AT_LOST_NO_STATE] + l->bpf[AT_LOST_BLOCKS];
}

void at_lost_note(struct at_lost *l, uint64_t total, struct at_sink *s)
{
	if (total > l->reported)
		at_sink_lost(s, total - l->reported);
	l->reported = total;
}
