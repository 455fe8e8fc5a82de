/* prog/emit.h: the ring writer of the BPF program: one struct at_record per event into the ring
 * of the CPU it runs on (events), waking the daemon only when wakeup_bytes wait in that ring; a
 * record the ring has no room for is counted lost. Included by alloctap.bpf.c only, after maps.h. */
#ifndef ALLOCTAP_BPF_EMIT_H
#define ALLOCTAP_BPF_EMIT_H

/* The ring of the CPU the program runs on (NULL only if the daemon put none there). A thread
 * that migrates after this stays on the ring it reserved in: submit goes to the record's ring. */
static __always_inline void *cpu_ring(void)
{
	__u32 cpu = bpf_get_smp_processor_id();

	return bpf_map_lookup_elem(&events, &cpu);
}

/* Whether a record taken at time, in ring (this CPU's), wakes the daemon: when wakeup_bytes wait
 * in that ring, and the ring's consumer has moved, or wakeup_bytes more have come, since the
 * last wakeup asked for. The ring is asked only for one record in AT_WAKEUP_CHECK or so (a call
 * each time), chosen by the low bits of its time, which moves the wakeup by that many of the
 * ring's records on average. Until the daemon has read, another wakeup would only cost this CPU
 * an interrupt (a self-IPI, a VM exit in a guest) and tell the daemon nothing; but records it
 * reads and cannot let out yet (the output waits at a realloc's entry for its return) keep
 * the consumer where it is, and the records after them (that return among them) still wake it
 * at every wakeup_bytes. A program that preempts another here may wake it twice or once for
 * both; the daemon's own poll (100 ms) bounds what a lost wakeup could delay. */
static __always_inline __u64 wakeup_flag(void *ring, __u64 time)
{
	if ((time ^ (time >> 7)) & (AT_WAKEUP_CHECK - 1))
		return BPF_RB_NO_WAKEUP;
	if (bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) < wakeup_bytes)
		return BPF_RB_NO_WAKEUP;
	__u32 zero = 0;
	struct at_ring_woken *w = bpf_map_lookup_elem(&ring_woken, &zero);
	__u64 consumer = bpf_ringbuf_query(ring, BPF_RB_CONS_POS) + 1;
	__u64 producer = bpf_ringbuf_query(ring, BPF_RB_PROD_POS);

	if (w) {
		if (w->consumer == consumer && producer - w->producer < wakeup_bytes)
			return BPF_RB_NO_WAKEUP;
		w->consumer = consumer;
		w->producer = producer;
	}
	count_up(AT_COUNT_WAKEUPS);
	return BPF_RB_FORCE_WAKEUP;
}

/* Reserves one record in the ring of this CPU: the record (NULL when that ring is full), its
 * ring in *ring for wakeup_flag. */
static __always_inline struct at_record *reserve_record(void **ring)
{
	void *rb = cpu_ring();

	*ring = rb;
	if (!rb)
		return NULL;
	return bpf_ringbuf_reserve(rb, sizeof(struct at_record), 0);
}

/* Reserves, fills and submits one record, taken at time (a realloc entered at time_entry);
 * counts it lost when the ring is full. 0, or -1 when it was lost. (Copying a record from the program's stack with
 * bpf_ringbuf_output, one call instead of two, measured 20 to 40 ns slower a record.) */
static __always_inline int emit(__u64 pid_tgid, __u64 time, __u64 time_entry, __u32 func,
				 __u32 flags, __u64 a0, __u64 a1, __u64 result, __u64 stack)
{
	void *ring;
	struct at_record *r = reserve_record(&ring);

	if (!r) {
		count_lost(AT_LOST_RECORDS);
		if (at_probe_reallocates(func) && !(flags & AT_REC_NO_ENTRY))
			count_lost(AT_LOST_REALLOCS);
		return -1;
	}
	r->time = time;
	r->time_entry = time_entry;
	r->pid = pid_tgid >> 32;
	r->tid = (__u32)pid_tgid;
	r->arg[0] = a0;
	r->arg[1] = a1;
	r->result = result;
	r->func = func;
	r->flags = flags;
	r->time_ns = times_on ? time : 0;
	r->stack = stack;
	bpf_ringbuf_submit(r, wakeup_flag(ring, time));
	return 0;
}

/* A record that is no call (func AT_PROBE_THREAD_END or AT_PROBE_REALLOC_ENTRY) of thread id
 * at time; 0, or -1 when the ring had no room (counted in AT_LOST_THREAD_ENDS or
 * AT_LOST_REALLOC_ENTRIES: no event is lost). */
static __always_inline int emit_mark(__u64 id, __u64 time, __u32 func)
{
	void *ring;
	struct at_record *r = reserve_record(&ring);

	if (!r) {
		count_lost(func == AT_PROBE_THREAD_END ? AT_LOST_THREAD_ENDS
						       : AT_LOST_REALLOC_ENTRIES);
		return -1;
	}
	__builtin_memset(r, 0, sizeof(*r));
	r->time = r->time_entry = time;
	r->pid = id >> 32;
	r->tid = (__u32)id;
	r->func = func;
	r->time_ns = times_on ? time : 0;
	bpf_ringbuf_submit(r, wakeup_flag(ring, time));
	return 0;
}

#endif
