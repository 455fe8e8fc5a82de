/* prog/emit.h: the ring writer of the BPF program: one struct at_record per event into the ring
 * of the CPU it runs on (event_data, event_pos: alloctap.h lays them out), waking the daemon
 * only when wakeup_records wait in that ring; a record the ring has no room for is counted
 * lost. A call recorded at once (a free) reserves its record before it reads recording again
 * (window_reserve); a call recorded at its return leaves flight once its record is reserved
 * (return_reserve).
 * Included by alloctap.bpf.c only, after maps.h and window.h. */
#ifndef ALLOCTAP_BPF_EMIT_H
#define ALLOCTAP_BPF_EMIT_H

/* A record reserved in the ring of the CPU the program runs on (the program cannot migrate). */
struct ring_slot {
	__u8 *slot;              /* its slot in the CPU's part of event_data */
	struct at_ring_pos *pos; /* the ring's positions */
	__u64 n;                 /* the record's number */
};

/* Compare-and-swaps a reservation may lose to programs that preempted it on its CPU before the
 * ring counts as full. */
#define AT_RING_TRIES 4

/* Reserves one record in this CPU's ring: 0, or -1 when the ring has no room. The position
 * moves first and the commit word is written last: until then the slot's commit word has an
 * older number, and the daemon's reading waits there. */
static __always_inline int ring_reserve(struct ring_slot *s)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__u8 *data = bpf_map_lookup_elem(&event_data, &cpu);

	s->pos = bpf_map_lookup_elem(&event_pos, &cpu);
	if (!data || !s->pos)
		return -1;
#pragma unroll
	for (int i = 0; i < AT_RING_TRIES; i++) {
		__u64 n = *(volatile __u64 *)&s->pos->producer;

		if (n + 1 - *(volatile __u64 *)&s->pos->consumer > ring_slots)
			return -1;
		if (__sync_val_compare_and_swap(&s->pos->producer, n, n + 1) == n) {
			s->n = n;
			s->slot = data + (n & (ring_slots - 1)) * AT_RING_STEP;
			return 0;
		}
	}
	return -1;
}

/* Writes the 8 bytes at offset off of the record. */
static __always_inline void ring_put(const struct ring_slot *s, __u32 off, __u64 value)
{
	*(__u64 *)(s->slot + off) = value;
}

/* Asks the daemon to wake when wakeup_records wait in the ring of s, and its consumer has
 * moved, or wakeup_records more have come, since the last wakeup asked for. Until the daemon
 * has read, another wakeup would only cost this CPU an interrupt (a self-IPI, a VM exit in a
 * guest) and tell the daemon nothing; but records it reads and cannot let out yet (the output
 * waits at a realloc's entry for its return) keep the consumer where it is, and the records
 * after them (that return among them) still wake it at every wakeup_records. A program that
 * preempts another here may wake it twice or once for both; the daemon's own poll (100 ms)
 * bounds what a lost wakeup could delay. */
static __always_inline void ring_wake_if_due(const struct ring_slot *s)
{
	__u64 producer = s->n + 1;
	__u64 consumer = *(volatile __u64 *)&s->pos->consumer;

	if (producer - consumer < wakeup_records)
		return;
	if (s->pos->woken_consumer == consumer + 1 &&
	    producer - s->pos->woken_producer < wakeup_records)
		return;
	s->pos->woken_consumer = consumer + 1;
	s->pos->woken_producer = producer;
	count_up(AT_COUNT_WAKEUPS);
	__u64 cpu = bpf_get_smp_processor_id();
	bpf_ringbuf_output(&ring_wake, &cpu, sizeof(cpu), BPF_RB_FORCE_WAKEUP);
}

_Static_assert(__builtin_offsetof(struct at_record, tid) ==
			       __builtin_offsetof(struct at_record, pid) + 4 &&
		       __builtin_offsetof(struct at_record, flags) ==
			       __builtin_offsetof(struct at_record, func) + 1 &&
		       __builtin_offsetof(struct at_record, state) ==
			       __builtin_offsetof(struct at_record, func) + 2 &&
		       __builtin_offsetof(struct at_record, number) ==
			       __builtin_offsetof(struct at_record, func) + 4 &&
		       __builtin_offsetof(struct at_record, func) + 8 == AT_RING_STEP,
	       "a record is written 8 bytes at a time, its commit word last in its slot");

/* The record's fields of 8 bytes, in order (pid with tid; func with flags, state, number). */
#define AT_REC_OFF(field) ((__u32)__builtin_offsetof(struct at_record, field))

/* The commit word of the record numbered n (struct at_record: func, flags, state, number). */
static __always_inline __u64 commit_word(__u64 n, __u32 func, __u32 flags, __u32 state)
{
	return (func & 0xff) | (__u64)(flags & 0xff) << 8 | (__u64)state << 16 | n << 32;
}

/* Commits the record of s, written whole, a call of func with flags: its commit word, last
 * (x86-64 keeps stores in order; the compiler is kept from moving the record's stores after
 * it), then a wakeup if one is due. */
static __always_inline void ring_commit(const struct ring_slot *s, __u32 func, __u32 flags)
{
	asm volatile("" ::: "memory");
	*(volatile __u64 *)(s->slot + AT_REC_OFF(func)) =
		commit_word(s->n, func, flags, AT_RECORD_WRITTEN);
	ring_wake_if_due(s);
}

/* Gives up the record of s, reserved and not written: the daemon passes over it. */
static __always_inline void ring_discard(const struct ring_slot *s)
{
	*(volatile __u64 *)(s->slot + AT_REC_OFF(func)) =
		commit_word(s->n, 0, 0, AT_RECORD_DISCARDED);
}

/* Fills and commits the record of s, reserved: thread id (tgid << 32 | tid), taken at time (a
 * realloc entered at time_entry). A mark (AT_PROBE_THREAD_END, AT_PROBE_REALLOC_ENTRY) has
 * zeros for the arguments, the result, the flags and the stack. */
static __always_inline void record_put(const struct ring_slot *s, __u64 id, __u64 time,
				       __u64 time_entry, __u32 func, __u32 flags, __u64 a0,
				       __u64 a1, __u64 result, __u64 stack)
{
	ring_put(s, AT_REC_OFF(time), time);
	ring_put(s, AT_REC_OFF(time_entry), time_entry);
	ring_put(s, AT_REC_OFF(pid), id >> 32 | id << 32);
	ring_put(s, AT_REC_OFF(arg), a0);
	ring_put(s, AT_REC_OFF(arg) + 8, a1);
	ring_put(s, AT_REC_OFF(result), result);
	ring_put(s, AT_REC_OFF(stack), stack);
	ring_commit(s, func, flags);
}

/* Counts lost the record of a call of function func (with its record's flags) that found no
 * room. */
static __always_inline void record_lost(__u32 func, __u32 flags)
{
	count_lost(AT_LOST_RECORDS);
	if (at_probe_reallocates(func) && !(flags & AT_REC_NO_ENTRY))
		count_lost(AT_LOST_REALLOCS);
}

/* Reserves a record for what is recorded at once (a free at its entry, a thread's end), whose
 * first read of recording found it on: 1 when s is reserved for it, 0 when recording was off
 * by then (nothing to write), -1 when the ring has no room. No in-flight count: the
 * reservation's compare-and-swap is the full barrier before the second read of recording, and
 * the daemon clears recording before it reads the producer positions, so either the daemon
 * reads up to this record or this read sees recording off (the record is then given up). */
static __always_inline int window_reserve(struct ring_slot *s)
{
	if (ring_reserve(s) < 0)
		return -1;
	if (*(volatile __u32 *)&recording)
		return 1;
	ring_discard(s);
	return 0;
}

/* Reserves the record of a call of func recorded at its return (admitted at its entry with unit
 * in flight), and takes the call out of flight: right after the reservation, not after the
 * record's stores (a locked add there would wait for them). The daemon reads the
 * producer positions once nothing is in flight, and waits at every record reserved below them
 * until it is written. 0, or -1 (counted lost) when the ring has no room. */
static __always_inline int return_reserve(struct ring_slot *s, __u64 unit, __u32 func,
					  __u32 flags)
{
	int got = ring_reserve(s);

	inflight_add(-unit);
	if (got < 0)
		record_lost(func, flags);
	return got;
}

/* The mark of a realloc's entry (AT_PROBE_REALLOC_ENTRY; the call is in flight): thread id at
 * time. 0, or -1 when the ring had no room (counted in AT_LOST_REALLOC_ENTRIES: no event is
 * lost). */
static __always_inline int emit_realloc_entry(__u64 id, __u64 time)
{
	struct ring_slot s;

	if (ring_reserve(&s) < 0) {
		count_lost(AT_LOST_REALLOC_ENTRIES);
		return -1;
	}
	record_put(&s, id, time, time, AT_PROBE_REALLOC_ENTRY, 0, 0, 0, 0, 0);
	return 0;
}

#endif
