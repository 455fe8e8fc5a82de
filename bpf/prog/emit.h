/* prog/emit.h: the ring writer of the BPF program: one struct at_record per event into the events
 * ring, waking the daemon only when wakeup_bytes wait; a record the ring has no room for is
 * counted lost. Included by alloctap.bpf.c only, after maps.h. */
#ifndef ALLOCTAP_BPF_EMIT_H
#define ALLOCTAP_BPF_EMIT_H

/* Whether the record numbered seq wakes the daemon: when wakeup_bytes wait. The ring is asked
 * only at every AT_WAKEUP_CHECK-th number (a call each time), which moves the wakeup by at most
 * that many records. */
static __always_inline __u64 wakeup_flag(__u64 seq)
{
	if (seq & (AT_WAKEUP_CHECK - 1))
		return BPF_RB_NO_WAKEUP;
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ? BPF_RB_FORCE_WAKEUP
									    : BPF_RB_NO_WAKEUP;
}

/* Reserves, fills and submits one record; counts it lost when the ring is full. (Copying a
 * record from the program's stack with bpf_ringbuf_output, one call instead of two, measured
 * 20 to 40 ns slower a record.) */
static __always_inline void emit(__u64 pid_tgid, __u64 seq, __u64 seq_entry, __u32 func,
				 __u32 flags, __u64 a0, __u64 a1, __u64 result, __u64 stack)
{
	struct at_record *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);

	if (!r) {
		count_lost(AT_LOST_RECORDS);
		if (seq != seq_entry)
			count_lost(AT_LOST_REALLOCS);
		return;
	}
	r->seq = seq;
	r->seq_entry = seq_entry;
	r->pid = pid_tgid >> 32;
	r->tid = (__u32)pid_tgid;
	r->arg[0] = a0;
	r->arg[1] = a1;
	r->result = result;
	r->func = func;
	r->flags = flags;
	r->time_ns = times_on ? bpf_ktime_get_ns() : 0;
	r->stack = stack;
	bpf_ringbuf_submit(r, wakeup_flag(seq));
}

#endif
